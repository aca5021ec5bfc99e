//! `sbatch` (also `spur submit`): builds a `JobSpec` from the command line and
//! the script's `#SBATCH` lines, and submits it. Options stop at the script
//! name, as Slurm's getopt does (`+`), so the script's own arguments are never
//! taken for sbatch options. `#SBATCH` lines are read until the first line that
//! is neither a comment nor blank; the command line is applied after them, so
//! it overrides them.

use super::cluster;
use super::family::{Family, Request, why};
use super::fmt::status;
use super::getopt::{Arg, Mode, Opt, Spec, check, ignored, join, maybe, switch, value};
pub use super::submit_opts::directives;
use super::submit_opts::{annotation, check_script, export, open_mode, parse_when, yes_no};
use crate::conn::{self, Identity};
use crate::vocab::array::ArraySpec;
use chrono::{DateTime, Local};
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
  --comment=TEXT           -D, --chdir=DIR          --parsable (print only the job id; ID;CLUSTER with -M)
  --annotation=KEY=VALUE   for provisioner definitions' matching and policies (repeatable)
  -M, --clusters=NAME,...  this controller's cluster (or all); the reply names it; others are errors
  --test-only              check the job and say when and where it would start; submit nothing
  --uid=USER --gid=GROUP   run the job as this user / group (a name or number; Operators and up)
#SBATCH lines at the top of the script set defaults; the command line overrides them.
Every option of Slurm's sbatch is accepted; one Spur has no mechanism for prints one warning.";

/// sbatch's options, one line each; the command line and `#SBATCH` lines both
/// read them. Options stop at the script name (getopt's `+`).
static OPTIONS: Spec<State> = Spec { opts: OPTS, mode: Mode::Leading, noun: "option" };
const OPTS: &[Opt<State>] = &join::<State, { OWN.len() + Family::<State>::OPTS.len() }>(OWN, Family::OPTS);
/// sbatch's own options; the family's ([`Family`]) are srun's and salloc's too.
const OWN: &[Opt<State>] = &[
    check("a/array", |s, v| {
        ArraySpec::parse(&v, u64::MAX)
            .map(|_| s.sub.spec.array = v.trim().to_string())
            .map_err(|e| format!("--array: {e}"))
    }),
    check("-/kill-on-invalid-dep", |s, v| {
        yes_no("kill-on-invalid-dep", &v).map(|b| s.sub.spec.kill_on_invalid_dep = b)
    }),
    value("-/export", |s, v| s.sub.export = Some(v)),
    value("-/export-file", |s, v| s.sub.export_file = Some(v)),
    check("-/open-mode", |s, v| open_mode(&v).map(|m| s.sub.spec.open_mode = m)),
    switch("W/wait", |s| s.sub.wait = true),
    switch("-/test-only", |s| s.sub.test_only = true),
    check("-/uid", |s, v| as_who("uid", "user", &v).map(|u| s.sub.spec.as_user = u)),
    check("-/gid", |s, v| as_who("gid", "group", &v).map(|g| s.sub.spec.as_group = g)),
    switch("-/requeue", |s| s.sub.spec.requeue = Some(true)),
    switch("-/no-requeue", |s| s.sub.spec.requeue = Some(false)),
    value("o/output", |s, v| s.sub.spec.stdout_path = v),
    value("e/error", |s, v| s.sub.spec.stderr_path = v),
    check("-/annotation", annotate),
    switch("-/parsable", |s| s.sub.parsable = true),
    value("D/chdir", |s, v| s.chdir = Some(v)),
    value("-/wrap", |s, v| s.wrap = Some(v)),
    // Spur reads no `#PBS` lines, which is what the option asks.
    switch("-/ignore-pbs", |_| {}),
    switch("Q/quiet", |_| {}),
    switch("v/verbose", |s| s.sub.verbose = s.sub.verbose.saturating_add(1)),
    // Answered before the script is read (`version_asked`).
    switch("V/version", |_| {}),
    switch("h/help", |s| s.help = true),
    switch("-/usage", |s| s.help = true),
    value("-/controller", |s, v| s.sub.controller = Some(v)),
    ignored("-/batch", why::FEATURES),
    // `[=timeout][S|L]`: the node's login shell answers within Slurm's default 8 s.
    maybe("-/get-user-env", |s, _| {
        s.sub.get_user_env = true;
        Ok(())
    }),
    value("i/input", |s, v| s.sub.spec.input = v),
    switch("O/overcommit", |s| s.sub.spec.overcommit = true),
    maybe("-/propagate", |s, v| {
        s.sub.propagate = Some(v.unwrap_or_default());
        Ok(())
    }),
    check("-/wait-all-nodes", |_, v| super::family::wait_all_nodes(&v)),
];

/// Parses sbatch's options only (no script, command or controller): what
/// they set and the warnings they print.
pub fn probe(args: &[String]) -> Result<crate::cli::getopt::Probe, String> {
    crate::cli::getopt::probe(&OPTIONS, "sbatch", args)
}

/// Options that make no sense inside a script.
const COMMAND_LINE_ONLY: &[&str] = &["wrap", "controller", "help", "usage"];

type Parsed = Vec<Arg<State>>;

/// getopt with `+`: options until the first word or `--`; returns the options
/// and the words from there on (the script and its arguments).
fn getopt(args: &[String]) -> Result<(Parsed, Vec<String>), String> {
    let mut opts = vec![];
    let mut words = vec![];
    for item in OPTIONS.items(args) {
        match item? {
            Arg::Word(w) => words.push(w),
            flag => opts.push(flag),
        }
    }
    Ok((opts, words))
}

fn apply(st: &mut State, opts: &Parsed) -> Result<(), String> {
    for item in opts {
        if let Arg::Flag(o, v) = item {
            o.apply(st, v.clone())?;
            st.noted.push(o);
        }
    }
    Ok(())
}

/// What to submit, and how to report it.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Submission {
    pub spec: pb::JobSpec,
    pub parsable: bool,
    pub controller: Option<String>,
    /// `-W/--wait`: return once the job has ended, with its exit code.
    pub wait: bool,
    /// `--test-only`: the checks and the expected start; nothing is submitted.
    pub test_only: bool,
    /// `--export`, `--begin`, `--deadline` as given: [`Submission::resolve`]
    /// reads them against the submitter's environment and clock.
    pub export: Option<String>,
    pub begin: Option<String>,
    pub deadline: Option<String>,
    /// `-M`: the clusters named; checked against the controller's before submitting.
    pub clusters: Vec<String>,
    /// `--export-file`: a file (or an open descriptor's number) of `NAME=value`
    /// lines, added to the exported environment.
    pub export_file: Option<String>,
    /// One line for each option given that has no effect on Spur.
    pub warnings: Vec<String>,
    /// `--propagate[=...]` as given (empty: ALL).
    pub propagate: Option<String>,
    /// `--get-user-env`: the node loads the user's login environment under the job's.
    pub get_user_env: bool,
    /// `-v` (repeatable): Slurm's defined-options table on stderr.
    pub verbose: u8,
}

impl Submission {
    /// Fills in what depends on where and when sbatch runs: the exported
    /// environment (Slurm's default `--export=ALL`, with `SLURM_EXPORT_ENV`
    /// recording a non-default choice for srun) and the begin and deadline times.
    pub fn resolve(&mut self, env: &[(String, String)], now: DateTime<Local>) -> Result<(), String> {
        let chosen = self.export.clone().unwrap_or_default();
        let mut vars = export(&chosen, env)?;
        if let Some(f) = &self.export_file {
            for (k, v) in export_file(f)? {
                vars.retain(|(ok, _)| *ok != k);
                vars.push((k, v));
            }
        }
        if !chosen.trim().is_empty() {
            vars.retain(|(k, _)| k != "SLURM_EXPORT_ENV");
            vars.push(("SLURM_EXPORT_ENV".into(), chosen.trim().to_string()));
        }
        if self.spec.overcommit {
            // Slurm's output variable; srun in the job reads it as -O.
            vars.retain(|(k, _)| k != "SLURM_OVERCOMMIT");
            vars.push(("SLURM_OVERCOMMIT".into(), "1".into()));
        }
        if self.get_user_env {
            vars.retain(|(k, _)| k != "SLURM_GET_USER_ENV");
            vars.push(("SLURM_GET_USER_ENV".into(), "1".into()));
        }
        if let Some(p) = &self.propagate {
            let limits = std::fs::read_to_string("/proc/self/limits").unwrap_or_default();
            for (k, v) in super::submit_opts::propagate(Some(p), &limits)? {
                vars.retain(|(ok, _)| *ok != k);
                vars.push((k, v));
            }
        }
        self.spec.env = vars.into_iter().map(|(key, value)| pb::KeyValue { key, value }).collect();
        let when = |flag, v: &Option<String>| v.as_deref().map(|v| parse_when(flag, v, now)).transpose();
        self.spec.begin_ms = when("begin", &self.begin)?.unwrap_or(0);
        self.spec.deadline_ms = when("deadline", &self.deadline)?.unwrap_or(0);
        Ok(())
    }
}

#[derive(Default)]
struct State {
    sub: Submission,
    chdir: Option<String>,
    wrap: Option<String>,
    help: bool,
    /// The flags given with no effect on Spur, for their warnings.
    noted: Vec<&'static Opt<State>>,
    /// Annotations before this index came from `#SBATCH` lines: the command
    /// line may override their values, but one source may not repeat a key.
    layer: usize,
}

impl Request for State {
    fn spec(&mut self) -> &mut pb::JobSpec {
        &mut self.sub.spec
    }
    fn begin(&mut self, v: String) {
        self.sub.begin = Some(v);
    }
    fn deadline(&mut self, v: String) {
        self.sub.deadline = Some(v);
    }
    fn clusters(&mut self, names: Vec<String>) {
        self.sub.clusters = names;
    }
}

/// `--annotation KEY=VALUE`, kept in the order given.
fn annotate(st: &mut State, v: String) -> Result<(), String> {
    let (key, value) = annotation(&v)?;
    let all = &mut st.sub.spec.annotations;
    match all.iter().position(|kv| kv.key == key) {
        Some(i) if i >= st.layer => return Err(format!("--annotation: key '{key}' is given twice")),
        Some(i) => all[i].value = value,
        None => all.push(pb::KeyValue { key, value }),
    }
    Ok(())
}

/// `--uid`/`--gid`: a name or a number, sent as given. Whether the caller
/// may submit as them (Operator and up, Slurm's root) and whether they exist
/// is the controller's to decide, where the user database is the one jobs run under.
fn as_who(flag: &str, what: &str, v: &str) -> Result<String, String> {
    match v.trim() {
        "" => Err(format!("--{flag}: needs a {what} name or number")),
        t => Ok(t.to_string()),
    }
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
    apply(&mut st, &cli)?;
    if st.help {
        return Ok(Prepared::Help);
    }
    // sbatch [options] script [args...]: the words after the script are its $1, $2, ...
    let (mut script_args, mut command) = (vec![], String::new());
    let (script, default_name) = match (&st.wrap, rest.split_first()) {
        (Some(_), Some((s, _))) => {
            return Err(format!("script arguments ('{s}') are not permitted with --wrap"));
        }
        (Some(cmd), None) => (format!("#!/bin/sh\n{cmd}\n"), "wrap".to_string()),
        (None, Some((path, args))) => {
            let text = read(Some(path))?;
            check_script(&text, &format!("script '{path}'"))?;
            let name = Path::new(path).file_name().map_or(path.clone(), |n| n.to_string_lossy().into_owned());
            script_args = args.to_vec();
            // Slurm's Command=: the script's path, made absolute.
            command = cwd.join(path).to_string_lossy().into_owned();
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
        for item in opts {
            if let Arg::Flag(o, v) = item {
                if COMMAND_LINE_ONLY.contains(&o.long()) {
                    return Err(at(format!("--{} is only accepted on the command line", o.long())));
                }
                o.apply(&mut st, v).map_err(at)?;
                st.noted.push(o);
            }
        }
    }
    st.layer = st.sub.spec.annotations.len();
    apply(&mut st, &cli)?;
    let mut sub = st.sub;
    sub.warnings = super::getopt::warnings("sbatch", st.noted.iter().copied());
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
    s.script_args = script_args;
    s.command = command;
    s.submit_line = super::family::submit_line("sbatch", argv);
    Ok(Prepared::Submit(Box::new(sub)))
}

/// `--export-file`: `NAME=value` items, one a line or NUL apart, from a
/// file or (a number) an open descriptor, as Slurm reads them.
pub fn export_file(f: &str) -> Result<Vec<(String, String)>, String> {
    let path = match f.trim().parse::<u32>() {
        Ok(fd) => format!("/dev/fd/{fd}"),
        Err(_) => f.to_string(),
    };
    let text = std::fs::read(&path).map_err(|e| format!("--export-file: cannot read '{f}': {e}"))?;
    let text = String::from_utf8_lossy(&text);
    let mut out = vec![];
    for item in text.split(['\0', '\n']).filter(|l| !l.trim().is_empty()) {
        match item.split_once('=') {
            Some((k, v)) if !k.is_empty() && !k.contains(char::is_whitespace) => {
                out.push((k.to_string(), v.to_string()));
            }
            _ => return Err(format!("--export-file: '{item}' in '{f}' is not NAME=value")),
        }
    }
    Ok(out)
}

/// `-V/--version` on the command line: sbatch prints its version and submits nothing.
fn version_asked(argv: &[String]) -> Result<bool, String> {
    Ok(getopt(argv)?.0.iter().any(|a| matches!(a, Arg::Flag(o, _) if o.long() == "version")))
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

/// The line sbatch prints for an accepted job; `cluster` when `-M` named
/// one, as Slurm adds it then (`ID;CLUSTER` with `--parsable`).
pub fn accepted(id: u64, parsable: bool, cluster: Option<&str>) -> String {
    // An array is one job id, as Slurm prints it.
    match (parsable, cluster) {
        (true, None) => format!("{id}\n"),
        (true, Some(c)) => format!("{id};{c}\n"),
        (false, None) => format!("Submitted batch job {id}\n"),
        (false, Some(c)) => format!("Submitted batch job {id} on cluster {c}\n"),
    }
}

async fn run(argv: &[String]) -> Result<(String, Option<i32>), String> {
    let cwd = std::env::current_dir().map_err(|e| format!("cannot read the current directory: {e}"))?;
    if version_asked(argv)? {
        return Ok((super::family::version(), None));
    }
    let mut sub = match prepare(argv, &cwd, read_script)? {
        Prepared::Help => return Ok((format!("{USAGE}\n"), None)),
        Prepared::Submit(s) => s,
    };
    for w in &sub.warnings {
        super::output::complain(w);
    }
    super::family::say_defined_options("sbatch", &sub.spec, sub.verbose);
    let env: Vec<(String, String)> = std::env::vars_os()
        .map(|(k, v)| (k.to_string_lossy().into_owned(), v.to_string_lossy().into_owned()))
        .collect();
    sub.resolve(&env, Local::now())?;
    let mut c = conn::connect_flag(sub.controller.as_deref(), Identity::local()).await?;
    let cluster = cluster::resolve(&mut c, &sub.clusters).await?;
    let req = pb::SubmitRequest { spec: Some(sub.spec.clone()) };
    if sub.test_only {
        let resp =
            c.jobs.test_submit(req).await.map_err(|e| format!("Job submission failed: {}", status(e)))?;
        super::output::complain(&super::family::expected_start("sbatch", &resp.into_inner()));
        return Ok((String::new(), None));
    }
    // Slurm's wording; the controller's message carries the reason code and its facts.
    let resp = c.jobs.submit(req).await.map_err(|e| format!("Batch job submission failed: {}", status(e)))?;
    let id = resp.into_inner().job_id;
    let line = accepted(id, sub.parsable, cluster.as_deref());
    if !sub.wait {
        return Ok((line, None));
    }
    if super::output::emit("sbatch", &line) != 0 {
        return Err("cannot write to standard output".into());
    }
    Ok((String::new(), Some(wait_for(&mut c, id).await?)))
}

/// `--wait`: polls the job (sbatch's own way, every few seconds at most)
/// until it has ended; its exit code, or 1 for an end without one.
async fn wait_for(c: &mut conn::Clients, id: u64) -> Result<i32, String> {
    let mut pause = std::time::Duration::from_millis(100);
    loop {
        for history in ["no", "yes"] {
            let filter = [("id", id.to_string()), ("view", "brief".into()), ("history", history.into())];
            let filter = filter.into_iter().map(|(k, value)| pb::KeyValue { key: k.into(), value }).collect();
            let resp = c.jobs.list_jobs(pb::ListRequest { filter }).await.map_err(status)?.into_inner();
            if let Some(j) = resp.jobs.iter().find(|j| j.id == id) {
                match j.job_state() {
                    s if s.is_active() => break,
                    crate::vocab::jobs::JobState::Completed => return Ok(0),
                    _ => return Ok(if j.exit_code > 0 { j.exit_code } else { 1 }),
                }
            }
        }
        tokio::time::sleep(pause).await;
        pause = (pause * 2).min(std::time::Duration::from_secs(2));
    }
}

/// Runs sbatch with its arguments (without `argv[0]`); returns the exit code.
pub async fn main(argv: &[String]) -> i32 {
    match run(argv).await {
        Ok((_, Some(code))) => code,
        Ok((out, None)) => super::output::emit("sbatch", &out),
        Err(e) => {
            super::output::complain(&format!("sbatch: error: {}", e.replace('\n', " ")));
            1
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn spec(args: &[&str]) -> Result<(pb::JobSpec, Vec<String>), String> {
        let (opts, words) = getopt(&args.iter().map(|s| s.to_string()).collect::<Vec<_>>())?;
        let mut st = State::default();
        apply(&mut st, &opts)?;
        Ok((st.sub.spec, words))
    }

    #[test]
    fn options_take_every_getopt_spelling() {
        let (s, words) =
            spec(&["-Hn4", "-pgpu", "-J", "x", "--qos=hi", "--mem", "2G", "--job=y", "a.sh", "-N2"]).unwrap();
        assert!(s.hold);
        assert_eq!((s.ntasks, s.partition.as_str(), s.qos.as_str(), s.mem_mb), (4, "gpu", "hi", 2048));
        // The last of two spellings wins, and options stop at the script.
        assert_eq!(s.name, "y");
        assert_eq!(words, ["a.sh", "-N2"]);
        assert_eq!(spec(&["--", "-H"]).unwrap().1, ["-H"]);
        assert_eq!(spec(&["--gpus-per-node", "gpu:2"]).unwrap().0.gpus_per_node, 2);
    }

    #[test]
    fn bad_options_are_named() {
        let e = |args: &[&str]| spec(args).unwrap_err();
        assert_eq!(e(&["--bogus"]), "unrecognised option '--bogus'");
        assert_eq!(e(&["-Hz"]), "unrecognised option '-z' in '-Hz'");
        assert_eq!(e(&["-z"]), "unrecognised option '-z'");
        assert_eq!(e(&["--no"]), "ambiguous option '--no'");
        assert_eq!(e(&["-t"]), "option '-t' needs a value");
        assert_eq!(e(&["--hold=1"]), "option '--hold' takes no value");
        assert!(e(&["-N", "x"]).starts_with("--nodes:"));
    }
}
