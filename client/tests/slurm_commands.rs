//! Every option Slurm 25.05's man pages list for sdiag (and the other
//! commands added beside it) is accepted: read from `tests/slurm/<cmd>.options`
//! (extracted by `tests/slurm/extract_commands.py`), given a plausible value,
//! and parsed by the command's own table. Each either does what Slurm's does
//! (no warning) or prints exactly one warning line saying why it has no effect.

use spur_client::cli::getopt::{Opt, Set};
use std::path::Path;

/// `(long, short)` per line of a data file; the first line names its source.
fn options(cmd: &str) -> Vec<(String, String)> {
    let path = Path::new(env!("CARGO_MANIFEST_DIR")).join(format!("tests/slurm/{cmd}.options"));
    let text = std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
    let mut lines = text.lines();
    let head = lines.next().unwrap_or_default();
    assert!(head.starts_with("# from SchedMD/slurm slurm-25-05-8-1"), "{cmd}.options: {head}");
    lines
        .filter(|l| !l.trim().is_empty())
        .map(|l| {
            let (long, short) = l.split_once('\t').unwrap_or((l, ""));
            (long.to_string(), short.to_string())
        })
        .collect()
}

/// Checks every listed option; returns (Slurm's count, implemented, accepted with a warning).
fn check<T>(
    cmd: &str,
    opts: &[Opt<T>],
    value: fn(&str) -> &'static str,
    parse: fn(&[String]) -> Result<T, String>,
    warnings: fn(&T) -> &[String],
) -> (usize, usize, usize) {
    let (mut done, mut warned) = (0, 0);
    let listed = options(cmd);
    for (long, short) in &listed {
        let opt = opts
            .iter()
            .find(|o| {
                if long.is_empty() {
                    o.short().map(String::from) == Some(short.clone())
                } else {
                    o.long() == long
                }
            })
            .unwrap_or_else(|| panic!("{cmd}: Slurm's option '{long}' ({short}) is not in the table"));
        // The letter is Slurm's (on this line, or on the alias it shares it with: `-o, --format, --fields`).
        if !short.is_empty() {
            let letter = |o: &Opt<T>| o.short().map(String::from) == Some(short.clone());
            assert!(
                letter(opt) || opts.iter().any(letter),
                "{cmd}: no -{short} (Slurm's letter of --{long})"
            );
        }
        let flag = if long.is_empty() { format!("-{short}") } else { format!("--{long}") };
        let mut argv = vec![flag.clone()];
        if !matches!(opt.set, Set::Switch(_)) {
            argv.push(value(if long.is_empty() { short } else { long }).to_string());
        }
        let args = parse(&argv).unwrap_or_else(|e| panic!("{cmd} {argv:?}: {e}"));
        match warnings(&args) {
            [] => done += 1,
            [w] => {
                assert!(w.starts_with(&format!("{cmd}: warning: ")), "{cmd} {flag}: {w}");
                warned += 1;
            }
            many => panic!("{cmd} {flag}: more than one warning: {many:?}"),
        }
    }
    (listed.len(), done, warned)
}

#[test]
fn every_sdiag_option_is_accepted() {
    use spur_client::cli::sdiag;
    let value = |name: &str| if name == "cluster" { "spur" } else { "x" };
    let counts = check("sdiag", sdiag::OPTS, value, sdiag::parse, |a| &a.warnings);
    eprintln!("sdiag: Slurm {} / implemented {} / warned {}", counts.0, counts.1, counts.2);
    assert_eq!(counts, (11, 11, 0));
    // Slurm's --json=PARSER: the parser is dropped with one warning.
    let a = sdiag::parse(&["--json=v0.0.42".to_string()]).unwrap();
    assert!(a.json);
    assert_eq!(a.warnings.len(), 1, "{:?}", a.warnings);
}

#[test]
fn every_sreport_option_is_accepted() {
    use spur_client::cli::sreport;
    let value = |name: &str| match name {
        "cluster" => "spur",
        "t" => "hours",
        "tres" => "gres/gpu",
        _ => "x",
    };
    let counts = check("sreport", sreport::OPTS, value, sreport::parse, |a| &a.warnings);
    eprintln!("sreport: Slurm {} / implemented {} / warned {}", counts.0, counts.1, counts.2);
    // --federation, --local, --tres (other than cpu) and --verbose change nothing here.
    assert_eq!(counts, (13, 9, 4));
    let a = sreport::parse(&["-T".to_string(), "cpu".to_string()]).unwrap();
    assert!(a.warnings.is_empty(), "{:?}", a.warnings);
}

#[test]
fn every_sstat_option_is_accepted() {
    use spur_client::cli::sstat;
    let value = |name: &str| match name {
        "jobs" => "12.0",
        "format" | "fields" => "JobID,MaxRSS",
        _ => "x",
    };
    let counts = check("sstat", sstat::OPTS, value, sstat::parse, |a| &a.warnings);
    eprintln!("sstat: Slurm {} / implemented {} / warned {}", counts.0, counts.1, counts.2);
    // --verbose changes nothing here.
    assert_eq!(counts, (14, 13, 1));
}

#[test]
fn every_sbcast_option_is_accepted() {
    use spur_client::cli::sbcast;
    let value = |name: &str| match name {
        "jobid" => "12",
        "size" => "64k",
        "exclude" | "nodelist" => "node01",
        "timeout" | "treewidth" => "4",
        _ => "x",
    };
    let counts = check("sbcast", sbcast::OPTS, value, sbcast::parse, |a| &a.warnings);
    eprintln!("sbcast: Slurm {} / implemented {} / warned {}", counts.0, counts.1, counts.2);
    // Compression, no-allocation and its nodelist, libraries, timeout, fan-out and -v change nothing here.
    assert_eq!(counts, (13, 6, 7));
}

#[test]
fn every_sattach_option_is_accepted() {
    use spur_client::cli::sattach;
    let value = |_: &str| "1";
    let counts = check("sattach", sattach::OPTS, value, sattach::parse, |a| &a.warnings);
    eprintln!("sattach: Slurm {} / implemented {} / warned {}", counts.0, counts.1, counts.2);
    // --input-filter and --pty (output only) and --verbose change nothing here.
    assert_eq!(counts, (11, 8, 3));
}
