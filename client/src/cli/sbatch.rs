//! `sbatch` (also `spur submit`): builds a `JobSpec` from the command line and
//! the script's `#SBATCH` lines, and submits it. Options stop at the script
//! name, as Slurm's getopt does (`+`), so the script's own arguments are never
//! taken for sbatch options. `#SBATCH` lines are read until the first line that
//! is neither a comment nor blank; the command line is applied after them, so
//! it overrides them.

use super::fmt::status;
use crate::conn::{self, Identity};
use crate::vocab::hostlist;
use crate::vocab::time::parse_limit;
use spur_proto::v1 as pb;
use std::io::{IsTerminal, Read};
use std::path::Path;

pub const USAGE: &str = "\
usage: sbatch [OPTIONS] SCRIPT | sbatch [OPTIONS] --wrap=\"COMMAND\" | sbatch [OPTIONS] < SCRIPT
  -J, --job-name=NAME      -A, --account=ACCOUNT    -p, --partition=P    -q, --qos=QOS
  -N, --nodes=N            -n, --ntasks=N           -c, --cpus-per-task=N
  --mem=SIZE               per node: MB, or with a K/M/G/T suffix
  --gres=gpu[:N]           GPUs per node (also --gpus-per-node=N)
  -t, --time=LIMIT         minutes, hh:mm[:ss], d-hh[:mm[:ss]], or UNLIMITED
  -w, --nodelist=LIST      -x, --exclude=LIST       -L, --licenses=NAME[:N],...
  --priority=N             --exclusive              -H, --hold
  --requeue | --no-requeue -o, --output=PATH        -e, --error=PATH    (%j is the job id)
  --comment=TEXT           -D, --chdir=DIR          --parsable (print only the job id)
#SBATCH lines at the top of the script set defaults; the command line overrides them.";

/// `(short, long, takes a value)`.
const OPTS: &[(Option<char>, &str, bool)] = &[
    (Some('J'), "job-name", true),
    (Some('A'), "account", true),
    (Some('p'), "partition", true),
    (Some('q'), "qos", true),
    (Some('N'), "nodes", true),
    (Some('n'), "ntasks", true),
    (Some('c'), "cpus-per-task", true),
    (None, "mem", true),
    (None, "gres", true),
    (None, "gpus-per-node", true),
    (Some('t'), "time", true),
    (Some('w'), "nodelist", true),
    (Some('x'), "exclude", true),
    (None, "priority", true),
    (None, "exclusive", false),
    (Some('L'), "licenses", true),
    (Some('H'), "hold", false),
    (None, "requeue", false),
    (None, "no-requeue", false),
    (Some('o'), "output", true),
    (Some('e'), "error", true),
    (None, "comment", true),
    (None, "parsable", false),
    (Some('D'), "chdir", true),
    (None, "wrap", true),
    (Some('Q'), "quiet", false),
    (Some('h'), "help", false),
    (None, "usage", false),
    (None, "controller", true),
];

type Opt = (&'static str, Option<String>);

/// getopt with `+`: options until the first word or `--`; returns the options
/// and the words from there on (the script and its arguments).
pub fn getopt(args: &[String]) -> Result<(Vec<Opt>, Vec<String>), String> {
    let mut out = vec![];
    let mut i = 0;
    while let Some(tok) = args.get(i) {
        i += 1;
        if tok == "--" {
            break;
        }
        if let Some(body) = tok.strip_prefix("--") {
            let (name, inline) = body.split_once('=').map_or((body, None), |(n, v)| (n, Some(v.to_string())));
            let exact = OPTS.iter().find(|o| o.1 == name);
            let mut hits = OPTS.iter().filter(|o| !name.is_empty() && o.1.starts_with(name));
            let o = match (exact, hits.next(), hits.next()) {
                (Some(o), _, _) | (None, Some(o), None) => o,
                (None, Some(_), Some(_)) => return Err(format!("ambiguous option '--{name}'")),
                _ => return Err(format!("unrecognised option '--{name}'")),
            };
            let value = match (o.2, inline) {
                (true, Some(v)) => Some(v),
                (true, None) => {
                    i += 1;
                    Some(
                        args.get(i - 1)
                            .cloned()
                            .ok_or_else(|| format!("option '--{}' needs a value", o.1))?,
                    )
                }
                (false, Some(_)) => return Err(format!("option '--{}' takes no value", o.1)),
                (false, None) => None,
            };
            out.push((o.1, value));
        } else if tok.len() > 1 && tok.starts_with('-') {
            // Bundled short options (`-Hn4`); one with a value takes the rest of the word.
            for (k, c) in tok.char_indices().skip(1) {
                let o = OPTS
                    .iter()
                    .find(|o| o.0 == Some(c))
                    .ok_or_else(|| format!("unrecognised option '-{c}'"))?;
                if !o.2 {
                    out.push((o.1, None));
                    continue;
                }
                let rest = &tok[k + c.len_utf8()..];
                let v = if rest.is_empty() {
                    i += 1;
                    args.get(i - 1).cloned().ok_or_else(|| format!("option '-{c}' needs a value"))?
                } else {
                    rest.to_string()
                };
                out.push((o.1, Some(v)));
                break;
            }
        } else {
            i -= 1;
            break;
        }
    }
    Ok((out, args[i.min(args.len())..].to_vec()))
}

/// The words of the `#SBATCH` lines, with their line numbers. Words split on
/// blanks; `"..."` and `\` quote; an unquoted `#` starts a comment (as Slurm).
pub fn directives(script: &str) -> Vec<(usize, Vec<String>)> {
    let mut out = vec![];
    for (n, line) in script.lines().enumerate() {
        let t = line.trim_end_matches('\r');
        if let Some(rest) = t.strip_prefix("#SBATCH").filter(|r| r.is_empty() || r.starts_with([' ', '\t'])) {
            out.push((n + 1, words(rest)));
        } else if !t.starts_with('#') && !t.trim().is_empty() {
            break;
        }
    }
    out
}

fn words(line: &str) -> Vec<String> {
    let (mut out, mut cur, mut quoted, mut any) = (vec![], String::new(), false, false);
    let mut chars = line.chars();
    while let Some(c) = chars.next() {
        match c {
            '\\' => {
                cur.extend(chars.next());
                any = true;
            }
            '"' => (quoted, any) = (!quoted, true),
            '#' if !quoted => break,
            c if c.is_whitespace() && !quoted => {
                if any {
                    out.push(std::mem::take(&mut cur));
                }
                any = false;
            }
            c => {
                cur.push(c);
                any = true;
            }
        }
    }
    if any {
        out.push(cur);
    }
    out
}

/// What to submit, and how to report it.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Submission {
    pub spec: pb::JobSpec,
    pub parsable: bool,
    pub controller: Option<String>,
}

#[derive(Debug, Default)]
struct State {
    sub: Submission,
    chdir: Option<String>,
    wrap: Option<String>,
    help: bool,
}

/// A count option: a whole number from 1 to `u32::MAX`, as Slurm's fields hold.
pub fn count(name: &str, v: &str) -> Result<u32, String> {
    let t = v.trim();
    match t.parse::<u32>() {
        Ok(n) if n > 0 => Ok(n),
        _ if name == "nodes" && t.contains('-') => {
            Err(format!("--nodes: '{v}': node ranges are not supported; give one count"))
        }
        Err(e) if *e.kind() == std::num::IntErrorKind::PosOverflow => {
            Err(format!("--{name}: '{v}' is out of range (at most {})", u32::MAX))
        }
        _ => Err(format!("--{name}: '{v}' is not a positive whole number")),
    }
}

/// `--mem`: MB by default; K, M, G, T suffixes (powers of 1024), rounded up to whole MB.
pub fn parse_mem(v: &str) -> Result<u64, String> {
    let bad = || format!("--mem: '{v}' is not a size (MB, or a number with K, M, G or T)");
    let t = v.trim();
    let (num, shift) = match t.char_indices().last() {
        Some((i, c)) if c.is_ascii_alphabetic() => {
            let mult = match c.to_ascii_uppercase() {
                'K' => -10,
                'M' => 0,
                'G' => 10,
                'T' => 20,
                _ => return Err(bad()),
            };
            (&t[..i], mult)
        }
        _ => (t, 0),
    };
    if num.is_empty() || !num.bytes().all(|b| b.is_ascii_digit()) {
        return Err(bad());
    }
    let n: u64 = num.parse().map_err(|_| bad())?;
    if shift < 0 { Ok(n.div_ceil(1024)) } else { n.checked_mul(1 << shift).ok_or_else(bad) }
}

/// `--gres=gpu:N` (or `gpu`, `gres/gpu:N`, `none`): GPUs per node.
pub fn parse_gres(v: &str) -> Result<u32, String> {
    let mut gpus = 0;
    for item in v.split(',').map(str::trim).filter(|s| !s.is_empty()) {
        if item.eq_ignore_ascii_case("none") {
            continue;
        }
        let item = item.strip_prefix("gres/").unwrap_or(item);
        gpus = match item.split(':').collect::<Vec<_>>().as_slice() {
            ["gpu"] => 1,
            ["gpu", n] => {
                n.parse::<u32>().map_err(|_| format!("--gres: '{item}': '{n}' is not a GPU count"))?
            }
            ["gpu", _, _] => return Err(format!("--gres: '{item}': GPU types are not supported; use gpu:N")),
            _ => return Err(format!("--gres: '{item}': unknown GRES (Spur schedules gpu[:N] only)")),
        };
    }
    Ok(gpus)
}

fn apply(st: &mut State, name: &str, v: Option<String>) -> Result<(), String> {
    let v = v.unwrap_or_default();
    let s = &mut st.sub.spec;
    let hosts = |flag: &str| hostlist::count(&v).map(|_| v.clone()).map_err(|e| format!("--{flag}: {e}"));
    match name {
        "job-name" => s.name = v,
        "account" => s.account = v,
        "partition" => s.partition = v,
        "qos" => s.qos = v,
        "nodes" => s.num_nodes = count(name, &v)?,
        "ntasks" => s.ntasks = count(name, &v)?,
        "cpus-per-task" => s.cpus_per_task = count(name, &v)?,
        "mem" => s.mem_mb = parse_mem(&v)?,
        "gres" => s.gpus_per_node = parse_gres(&v)?,
        "gpus-per-node" => s.gpus_per_node = parse_gres(&format!("gpu:{}", v.trim_start_matches("gpu:")))?,
        // Slurm reads 0, UNLIMITED and INFINITE as no limit. The request has no
        // "unlimited" of its own, so they leave the limit to the controller's defaults.
        "time" if ["0", "unlimited", "infinite"].iter().any(|u| v.trim().eq_ignore_ascii_case(u)) => {
            s.time_limit_minutes = None
        }
        "time" => s.time_limit_minutes = Some(parse_limit(&v).map_err(|e| format!("--time: {e}"))?),
        "nodelist" => s.nodelist = hosts(name)?,
        "exclude" => s.exclude = hosts(name)?,
        "priority" => match v.trim().parse::<i64>() {
            Ok(p) if p >= 0 => s.priority = Some(p),
            _ => return Err(format!("--priority: '{v}' is not a whole number of zero or more")),
        },
        "exclusive" => s.exclusive = true,
        "licenses" => {
            crate::vocab::licenses::parse_request(&v).map_err(|e| format!("--licenses: {e}"))?;
            s.licenses = v
        }
        "hold" => s.hold = true,
        "requeue" => s.requeue = Some(true),
        "no-requeue" => s.requeue = Some(false),
        "output" => s.stdout_path = v,
        "error" => s.stderr_path = v,
        "comment" => s.comment = v,
        "chdir" => st.chdir = Some(v),
        "parsable" => st.sub.parsable = true,
        "wrap" => st.wrap = Some(v),
        "help" | "usage" => st.help = true,
        "controller" => st.sub.controller = Some(v),
        _ => {}
    }
    Ok(())
}

/// Slurm's checks on a script, before anything is sent.
fn check_script(script: &str, what: &str) -> Result<(), String> {
    if script.trim().is_empty() {
        return Err(format!("{what} is empty"));
    }
    if !script.starts_with("#!") {
        return Err(format!(
            "{what} does not look like a batch script: the first line must start with #! and an interpreter"
        ));
    }
    if script.contains('\0') {
        return Err(format!("{what} contains a NUL character"));
    }
    if script.contains("\r\n") {
        return Err(format!("{what} contains DOS line breaks (\\r\\n); convert it with dos2unix"));
    }
    Ok(())
}

/// What `prepare` produced.
#[derive(Debug, Clone, PartialEq)]
pub enum Prepared {
    Help,
    Submit(Box<Submission>),
}

/// Builds the submission. `read(None)` reads the script from stdin,
/// `read(Some(path))` from a file; `cwd` resolves relative paths. No network.
pub fn prepare(
    argv: &[String],
    cwd: &Path,
    read: impl Fn(Option<&str>) -> Result<String, String>,
) -> Result<Prepared, String> {
    let (cli, rest) = getopt(argv)?;
    let mut st = State::default();
    for (name, v) in &cli {
        apply(&mut st, name, v.clone())?;
    }
    if st.help {
        return Ok(Prepared::Help);
    }
    let (script, default_name) = match (&st.wrap, rest.split_first()) {
        (Some(_), Some((s, _))) => return Err(format!("a script ('{s}') cannot be given with --wrap")),
        (Some(cmd), None) => (format!("#!/bin/sh\n{cmd}\n"), "wrap".to_string()),
        (None, Some((path, args))) => {
            if let Some(a) = args.first() {
                return Err(format!(
                    "script arguments are not supported yet ('{a}'); put them in the script or use --wrap"
                ));
            }
            let text = read(Some(path))?;
            check_script(&text, &format!("script '{path}'"))?;
            let name = Path::new(path).file_name().map_or(path.clone(), |n| n.to_string_lossy().into_owned());
            (text, name)
        }
        (None, None) => {
            let text = read(None)?;
            check_script(&text, "the script read from standard input")?;
            (text, "sbatch".to_string())
        }
    };
    // Directives first, then the command line again on top of them.
    st = State::default();
    for (line, words) in directives(&script) {
        let at = |e: String| format!("#SBATCH on line {line}: {e}");
        let (opts, extra) = getopt(&words).map_err(at)?;
        if let Some(w) = extra.first() {
            return Err(at(format!("unexpected argument '{w}'")));
        }
        for (name, v) in opts {
            if matches!(name, "wrap" | "controller" | "help" | "usage") {
                return Err(at(format!("--{name} is only accepted on the command line")));
            }
            apply(&mut st, name, v).map_err(at)?;
        }
    }
    for (name, v) in cli {
        apply(&mut st, name, v)?;
    }
    let mut sub = st.sub;
    let s = &mut sub.spec;
    let workdir = st.chdir.as_deref().map_or_else(|| cwd.to_path_buf(), |d| cwd.join(d));
    s.workdir = workdir.to_string_lossy().into_owned();
    if s.name.is_empty() {
        s.name = default_name;
    }
    if s.stdout_path.is_empty() {
        s.stdout_path = "slurm-%j.out".into();
    }
    // Relative paths are the job's working directory's, as Slurm resolves them.
    for p in [&mut s.stdout_path, &mut s.stderr_path] {
        if !p.is_empty() && !p.starts_with('/') {
            *p = workdir.join(&*p).to_string_lossy().into_owned();
        }
    }
    s.script = script;
    Ok(Prepared::Submit(Box::new(sub)))
}

/// Reads the script as the `spur` binary does: a file, or stdin when it is not a terminal.
fn read_script(path: Option<&str>) -> Result<String, String> {
    let mut bytes = vec![];
    match path {
        Some(p) => bytes = std::fs::read(p).map_err(|e| format!("cannot read script '{p}': {e}"))?,
        None if std::io::stdin().is_terminal() => {
            return Err("no batch script given (name a script, pipe one in, or use --wrap)".into());
        }
        None => {
            std::io::stdin()
                .read_to_end(&mut bytes)
                .map_err(|e| format!("cannot read standard input: {e}"))?;
        }
    }
    String::from_utf8(bytes).map_err(|_| format!("script '{}' is not UTF-8 text", path.unwrap_or("-")))
}

/// The line sbatch prints for an accepted job.
pub fn accepted(id: u64, parsable: bool) -> String {
    if parsable { format!("{id}\n") } else { format!("Submitted batch job {id}\n") }
}

async fn run(argv: &[String]) -> Result<String, String> {
    let cwd = std::env::current_dir().map_err(|e| format!("cannot read the current directory: {e}"))?;
    let sub = match prepare(argv, &cwd, read_script)? {
        Prepared::Help => return Ok(format!("{USAGE}\n")),
        Prepared::Submit(s) => s,
    };
    let mut c = conn::connect_flag(sub.controller.as_deref(), Identity::local()).await?;
    let req = pb::SubmitRequest { spec: Some(sub.spec) };
    // Slurm's wording; the controller's message carries the reason code and its facts.
    let resp = c.jobs.submit(req).await.map_err(|e| format!("Batch job submission failed: {}", status(e)))?;
    Ok(accepted(resp.into_inner().job_id, sub.parsable))
}

/// Runs sbatch with its arguments (without argv[0]); returns the exit code.
pub async fn main(argv: &[String]) -> i32 {
    match run(argv).await {
        Ok(out) => super::output::emit("sbatch", &out),
        Err(e) => {
            super::output::complain(&format!("sbatch: error: {}", e.replace('\n', " ")));
            1
        }
    }
}
