//! The values of sbatch's options: counts, host lists, sizes, GRES,
//! `--export`, `--signal`, `--mail-type`, `--mail-user`, `--open-mode`, `--annotation`, and
//! `--begin`/`--deadline` (Slurm's date-times, parsed in spur-vocab); the
//! script's `#SBATCH` lines; and Slurm's checks on a batch script. Pure: the
//! environment and the clock come from the caller.

use crate::vocab::hostlist;
use crate::vocab::time::Lean;
use chrono::{DateTime, Local};
use spur_vocab::signal::WarnSignal;

/// `--mem`/`--mem-per-cpu`: MB by default; K, M, G, T suffixes (powers of
/// 1024) with an optional B (`1GB`), rounded up to whole MB.
pub fn parse_mem(flag: &str, v: &str) -> Result<u64, String> {
    let bad = || format!("--{flag}: '{v}' is not a size (MB, or a number with K, M, G or T, optionally B)");
    let t = v.trim();
    let t =
        t.strip_suffix(['B', 'b']).filter(|r| r.ends_with(|c: char| c.is_ascii_alphabetic())).unwrap_or(t);
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

/// A host list option, checked as a hostlist and kept as given.
pub fn hosts(flag: &str, v: &str) -> Result<String, String> {
    hostlist::count(v).map(|_| v.to_string()).map_err(|e| format!("--{flag}: {e}"))
}

/// A yes/no option's value (`y`, `no`, any case).
pub fn yes_no(flag: &str, v: &str) -> Result<bool, String> {
    match v.trim().to_ascii_lowercase().as_str() {
        "yes" | "y" => Ok(true),
        "no" | "n" => Ok(false),
        _ => Err(format!("--{flag}: '{v}' is not yes or no")),
    }
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

/// `--annotation KEY=VALUE`: the key must be a word, since definitions'
/// conditions and policies match on it; the value may be anything, even empty.
pub fn annotation(v: &str) -> Result<(String, String), String> {
    let Some((key, value)) = v.split_once('=') else {
        return Err(format!("--annotation: '{v}' is not KEY=VALUE"));
    };
    if key.is_empty() {
        return Err(format!("--annotation: '{v}' has no key before '='"));
    }
    if key.contains(char::is_whitespace) {
        return Err(format!("--annotation: key '{key}' contains whitespace"));
    }
    Ok((key.to_string(), value.to_string()))
}

/// Slurm's checks on a script, before anything is sent.
pub fn check_script(script: &str, what: &str) -> Result<(), String> {
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

/// `--gpus=N`, `--gpus-per-task=N` (also `gpu:N`): a count.
pub fn parse_gpu_count(flag: &str, v: &str) -> Result<u32, String> {
    let n = v.trim().strip_prefix("gpu:").unwrap_or(v.trim());
    if n.contains(':') {
        return Err(format!("--{flag}: '{v}': GPU types are not supported; give a count"));
    }
    n.parse::<u32>().map_err(|_| format!("--{flag}: '{v}' is not a GPU count"))
}

/// `--export`: which of the submitter's variables the job gets, in Slurm's
/// order (`ALL` loads everything, explicit `NAME=value` items fill in what the
/// environment lacks; without `ALL` only the named ones and `SLURM_*`).
pub fn export(spec: &str, env: &[(String, String)]) -> Result<Vec<(String, String)>, String> {
    let items: Vec<&str> = spec.split(',').map(str::trim).filter(|s| !s.is_empty()).collect();
    let upper = |s: &str| s.to_ascii_uppercase();
    let mut all = false;
    let mut named: Vec<(String, Option<String>)> = vec![];
    for item in &items {
        match upper(item).as_str() {
            "ALL" => all = true,
            "NONE" | "NIL" if items.len() == 1 => {}
            "NONE" | "NIL" => return Err(format!("--export: '{item}' cannot be combined with variables")),
            _ => match item.split_once('=') {
                Some((k, v)) => named.push((k.to_string(), Some(v.to_string()))),
                None => named.push((item.to_string(), None)),
            },
        }
        if let Some((k, _)) = named.last()
            && (k.is_empty() || k.contains(char::is_whitespace))
        {
            return Err(format!("--export: '{item}' is not a variable name"));
        }
    }
    if items.is_empty() {
        all = true;
    }
    let mut out: Vec<(String, String)> = if all {
        env.to_vec()
    } else {
        env.iter().filter(|(k, _)| k.starts_with("SLURM_")).cloned().collect()
    };
    for (k, v) in named {
        let have = out.iter().any(|(ok, _)| *ok == k);
        match v {
            // With ALL the caller's own value wins, as the man page says.
            Some(v) if !(all && have) => {
                out.retain(|(ok, _)| *ok != k);
                out.push((k, v));
            }
            None if !have => {
                if let Some(found) = env.iter().find(|(ek, _)| *ek == k) {
                    out.push(found.clone());
                }
            }
            _ => {}
        }
    }
    Ok(out)
}

/// `--signal=[{R|B}:]SIG[@secs]`: checked, kept as given (the controller
/// parses it again with the same [`WarnSignal`] to act on it).
pub fn check_signal(v: &str) -> Result<String, String> {
    WarnSignal::parse(v).map(|_| v.trim().to_string()).map_err(|e| format!("--signal: {e}"))
}

/// `--mail-type`: Slurm's names, as a comma list; checked, kept as given.
pub fn check_mail_type(v: &str) -> Result<String, String> {
    spur_vocab::mail::MailTypes::parse(v).map_err(|e| format!("--mail-type: {e}"))?;
    Ok(v.trim().to_ascii_uppercase())
}

/// `--mail-user`: one address, checked as the controller checks it
/// (`spur_vocab::mail::check_user`), trimmed.
pub fn check_mail_user(v: &str) -> Result<String, String> {
    spur_vocab::mail::check_user(v).map(str::to_string).map_err(|e| format!("--mail-user: {e}"))
}

/// `--open-mode=append|truncate`.
pub fn open_mode(v: &str) -> Result<String, String> {
    match v.trim().to_ascii_lowercase().as_str() {
        "a" | "append" => Ok("append".into()),
        "t" | "truncate" => Ok("truncate".into()),
        _ => Err(format!("--open-mode: '{v}' is not append or truncate")),
    }
}

/// `--begin`/`--deadline` (and scontrol's `StartTime=`): Slurm's
/// date-times read as a request's, so a bare hour or `midnight` is the next
/// one; as Unix ms in local time.
pub fn parse_when(flag: &str, raw: &str, now: DateTime<Local>) -> Result<i64, String> {
    crate::vocab::time::parse_when(raw, now, Lean::Future).map_err(|e| format!("--{flag}: {e}"))
}

/// Slurm's `--propagate` names and the rows of `/proc/self/limits` they read.
const RLIMITS: &[(&str, &str)] = &[
    ("AS", "Max address space"),
    ("CORE", "Max core file size"),
    ("CPU", "Max cpu time"),
    ("DATA", "Max data size"),
    ("FSIZE", "Max file size"),
    ("MEMLOCK", "Max locked memory"),
    ("NOFILE", "Max open files"),
    ("NPROC", "Max processes"),
    ("RSS", "Max resident set"),
    ("STACK", "Max stack size"),
];

/// `--propagate[=ALL|NONE|NAME,...]`: the submitter's soft limits as
/// `SLURM_RLIMIT_NAME=value` (a number, or `unlimited`), as Slurm's
/// variables carry them; the node sets them on the job's tasks. `limits` is
/// the text of `/proc/self/limits`.
pub fn propagate(spec: Option<&str>, limits: &str) -> Result<Vec<(String, String)>, String> {
    let spec = spec.map(str::trim).filter(|s| !s.is_empty()).unwrap_or("ALL");
    let mut names: Vec<&str> = vec![];
    for item in spec.split(',').map(str::trim) {
        match item.to_ascii_uppercase().as_str() {
            "ALL" => names.extend(RLIMITS.iter().map(|(n, _)| *n)),
            "NONE" => {}
            up => match RLIMITS.iter().find(|(n, _)| *n == up) {
                Some((n, _)) => names.push(n),
                None => {
                    let known: Vec<&str> = RLIMITS.iter().map(|(n, _)| *n).collect();
                    return Err(format!(
                        "--propagate: '{item}' is not a limit (ALL, NONE, {})",
                        known.join(", ")
                    ));
                }
            },
        }
    }
    let mut out = vec![];
    for (name, row) in RLIMITS.iter().filter(|(n, _)| names.contains(n)) {
        let soft = limits
            .lines()
            .find_map(|l| l.strip_prefix(row))
            .and_then(|rest| rest.split_whitespace().next())
            .ok_or_else(|| format!("--propagate: cannot read the {name} limit from /proc/self/limits"))?;
        out.push((format!("SLURM_RLIMIT_{name}"), soft.to_string()));
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn kv(pairs: &[(&str, &str)]) -> Vec<(String, String)> {
        pairs.iter().map(|(k, v)| (k.to_string(), v.to_string())).collect()
    }

    #[test]
    fn sizes_take_slurms_suffixes_with_an_optional_b() {
        for (v, mb) in
            [("1GB", 1024), ("1G", 1024), ("512", 512), ("2048K", 2), ("1kb", 1), ("1T", 1 << 20), ("3MB", 3)]
        {
            assert_eq!(parse_mem("mem", v), Ok(mb), "{v}");
        }
        for v in ["", "G", "1.5G", "1X", "1GBB", "-1"] {
            assert!(parse_mem("mem", v).unwrap_err().starts_with("--mem: "), "{v}");
        }
    }

    #[test]
    fn propagate_reads_the_soft_limits_it_names() {
        let limits = "Limit  Soft Limit  Hard Limit  Units\nMax cpu time  unlimited  unlimited  seconds\n\
            Max open files  777  20000  files\nMax core file size  0  unlimited  bytes\n";
        assert_eq!(
            propagate(Some("nofile,CORE"), limits).unwrap(),
            kv(&[("SLURM_RLIMIT_CORE", "0"), ("SLURM_RLIMIT_NOFILE", "777")])
        );
        assert!(propagate(Some("NONE"), limits).unwrap().is_empty());
        assert!(propagate(Some("CPU"), limits).unwrap() == kv(&[("SLURM_RLIMIT_CPU", "unlimited")]));
        assert!(propagate(Some("FOO"), limits).unwrap_err().starts_with("--propagate: 'FOO' is not a limit"));
        assert!(propagate(None, limits).unwrap_err().contains("cannot read the AS limit"));
    }

    #[test]
    fn export_follows_the_man_page() {
        let env = kv(&[("PATH", "/bin"), ("HOME", "/h"), ("SLURM_CONF", "/c"), ("EDITOR", "vi")]);
        assert_eq!(export("", &env).unwrap(), env);
        assert_eq!(export("ALL", &env).unwrap(), env);
        assert_eq!(export("NONE", &env).unwrap(), kv(&[("SLURM_CONF", "/c")]));
        assert_eq!(
            export("EDITOR,ARG1=test", &env).unwrap(),
            kv(&[("SLURM_CONF", "/c"), ("EDITOR", "vi"), ("ARG1", "test")])
        );
        // With ALL, the caller's value wins over the given one.
        let all = export("ALL,EDITOR=emacs,NEW=1", &env).unwrap();
        assert!(all.contains(&("EDITOR".into(), "vi".into())) && all.contains(&("NEW".into(), "1".into())));
        assert!(export("NONE,X", &env).unwrap_err().contains("cannot be combined"));
        assert!(export("=x", &env).unwrap_err().contains("not a variable name"));
    }

    #[test]
    fn signals_mail_types_and_open_modes_are_checked() {
        assert_eq!(check_signal("B:USR1@90").unwrap(), "B:USR1@90");
        assert!(check_signal("SIGTERM").is_ok() && check_signal("10@60").is_ok());
        assert!(check_signal("FOO@1").unwrap_err().contains("'FOO' is not a signal"));
        assert!(check_signal("USR1@x").unwrap_err().contains("'@x'"));
        assert_eq!(check_mail_type("end,fail").unwrap(), "END,FAIL");
        assert!(check_mail_type("END,SOMETIMES").unwrap_err().contains("'SOMETIMES'"));
        assert_eq!(check_mail_user(" ops@example.org").unwrap(), "ops@example.org");
        assert!(check_mail_user("x;reboot").unwrap_err().starts_with("--mail-user: 'x;reboot' holds ';'"));
        assert!(check_mail_user("").unwrap_err().starts_with("--mail-user: needs an address"));
        assert_eq!(open_mode("a").unwrap(), "append");
        assert!(open_mode("x").is_err());
    }

    #[test]
    fn begin_leans_to_the_future_and_names_the_flag() {
        use chrono::TimeZone;
        let now = Local.with_ymd_and_hms(2026, 3, 10, 14, 30, 0).unwrap();
        let at = |y, m, d, h, mi| Local.with_ymd_and_hms(y, m, d, h, mi, 0).unwrap().timestamp_millis();
        let w = |s: &str| parse_when("begin", s, now).unwrap();
        assert_eq!(w("now+2hours"), now.timestamp_millis() + 7_200_000);
        assert_eq!(w("10:00"), at(2026, 3, 11, 10, 0), "a past hour is tomorrow's");
        assert_eq!(w("midnight"), at(2026, 3, 11, 0, 0));
        assert_eq!(w("0401"), at(2026, 4, 1, 0, 0));
        assert_eq!(w("04/01/27T09:00"), at(2027, 4, 1, 9, 0));
        for bad in ["later", "now+5fortnights", "13/45", "25:00", "2026-02-30"] {
            assert!(
                parse_when("begin", bad, now).unwrap_err().starts_with(&format!("--begin: '{bad}'")),
                "{bad}"
            );
        }
    }
}
