//! Every option of sbatch, srun and salloc that Slurm 25.05's man pages
//! list (the data in `tests/slurm/*.options`, extracted by
//! `tests/slurm/extract_options.py`) is accepted by the command's table with
//! a plausible value, under its long name and its short letter: either it
//! takes effect (no warning), or it prints exactly one warning saying why it
//! has no effect on Spur (and the command's page of the manual names it),
//! or it is refused with a reason (a short list).
//! Parse only: no controller.

use spur_client::cli::getopt::Probe;
use spur_client::cli::{salloc, sbatch, srun};

/// Options refused on purpose, and the words of the refusal.
const REFUSED: &[(&str, &str, &str)] = &[("srun", "het-group", "heterogeneous jobs are not supported")];

/// (command, implemented, accepted with a warning, refused): the closing
/// table's numbers; a change to a command's options changes them here.
const COUNTS: &[(&str, usize, usize, usize)] =
    &[("sbatch", 77, 32, 0), ("srun", 83, 44, 1), ("salloc", 63, 32, 0)];

fn options(cmd: &str) -> Vec<(String, Option<char>)> {
    let path = format!("{}/tests/slurm/{cmd}.options", env!("CARGO_MANIFEST_DIR"));
    let text = std::fs::read_to_string(&path).unwrap();
    let mut lines = text.lines();
    let head = lines.next().unwrap();
    assert!(head.starts_with("# from SchedMD/slurm slurm-25-05-8-1 doc/man/man1/"), "{path}: {head}");
    lines
        .map(|l| match l.split_once('\t') {
            Some((long, short)) => (long.to_string(), short.chars().next()),
            None => (l.to_string(), None),
        })
        .collect()
}

/// A value each option takes as Slurm's users would give it.
fn plausible(long: &str, nodefile: &str) -> String {
    match long {
        "time" | "time-min" => "10".into(),
        "begin" => "now+1hour".into(),
        "deadline" => "now+2hours".into(),
        "dependency" => "afterok:1".into(),
        "array" => "1-3".into(),
        "constraint" | "prefer" => "gpu".into(),
        "mail-type" => "END".into(),
        "mail-user" => "ops@example.org".into(),
        "signal" => "USR1@60".into(),
        "licenses" => "lic:1".into(),
        "gres" => "gpu:1".into(),
        "mem" | "mem-per-cpu" | "mem-per-gpu" | "tmp" => "1G".into(),
        "nodelist" | "exclude" => "n[1-2]".into(),
        "nodefile" => nodefile.into(),
        "open-mode" => "append".into(),
        "kill-on-invalid-dep" => "yes".into(),
        "clusters" => "spur".into(),
        "uid" => "alice".into(),
        "gid" => "users".into(),
        "mpi" => "none".into(),
        "export" => "ALL".into(),
        "distribution" => "block".into(),
        "cpu-bind" => "map_cpu:0".into(),
        "tres-per-task" => "cpu=1".into(),
        _ => "1".into(),
    }
}

fn probe(cmd: &str, args: &[String]) -> Result<Probe, String> {
    match cmd {
        "sbatch" => sbatch::probe(args),
        "srun" => srun::probe(args),
        _ => salloc::probe(args),
    }
}

/// Tries `flag` alone, then with a value (`--x=v`, or `-x v`).
fn given(cmd: &str, flag: &str, value: &str, long: bool) -> Result<Probe, String> {
    match probe(cmd, &[flag.to_string()]) {
        Err(e) if e.contains("needs a value") => {
            let args = if long {
                vec![format!("{flag}={value}")]
            } else {
                vec![flag.to_string(), value.to_string()]
            };
            probe(cmd, &args)
        }
        other => other,
    }
}

#[test]
fn every_option_of_slurm_s_man_pages_is_accepted() {
    let dir = tempfile::tempdir().unwrap();
    let nodefile = dir.path().join("hosts");
    std::fs::write(&nodefile, "n1\nn2\n").unwrap();
    let nodefile = nodefile.display().to_string();
    let mut failures = vec![];
    for &(cmd, want_done, want_warned, want_refused) in COUNTS {
        let (mut done, mut warned, mut refused) = (0, 0, 0);
        let page = format!("{}/../docs/src/commands/{cmd}.md", env!("CARGO_MANIFEST_DIR"));
        let page = std::fs::read_to_string(&page).unwrap_or_else(|e| panic!("{page}: {e}"));
        for (long, short) in options(cmd) {
            let value = plausible(&long, &nodefile);
            let as_long = given(cmd, &format!("--{long}"), &value, true);
            match (&as_long, REFUSED.iter().find(|(c, l, _)| *c == cmd && *l == long)) {
                (Err(e), Some((_, _, words))) if e.contains(words) => refused += 1,
                (Err(e), _) => failures.push(format!("{cmd} --{long}={value}: {e}")),
                (Ok(_), Some(_)) => failures.push(format!("{cmd} --{long}: accepted, but should be refused")),
                (Ok(p), None) if p.applied != [long.as_str()] => {
                    failures.push(format!("{cmd} --{long}: applied {:?}", p.applied));
                }
                (Ok(p), None) => match p.warnings.as_slice() {
                    [] => done += 1,
                    [w] if w.starts_with(&format!("{cmd}: warning: --{long} has no effect on Spur: ")) => {
                        warned += 1;
                        // The command's page of the manual says why, too.
                        if !page.contains(&format!("`--{long}`")) {
                            failures.push(format!("docs/src/commands/{cmd}.md does not name `--{long}`"));
                        }
                    }
                    ws => failures.push(format!("{cmd} --{long}: warnings {ws:?}")),
                },
            }
            if let Some(c) = short {
                match (given(cmd, &format!("-{c}"), &value, false), &as_long) {
                    (Ok(p), Ok(l)) if p == *l => {}
                    (Err(e), Err(l)) if e == *l || e.contains("not supported") => {}
                    (got, _) => failures.push(format!("{cmd} -{c} is not --{long}: {got:?}")),
                }
            }
        }
        eprintln!(
            "{cmd}: {} options: {done} implemented, {warned} with a warning, {refused} refused",
            done + warned + refused
        );
        if (done, warned, refused) != (want_done, want_warned, want_refused) {
            failures.push(format!(
                "{cmd}: counts ({done}, {warned}, {refused}), expected ({want_done}, {want_warned}, {want_refused})"
            ));
        }
    }
    assert!(failures.is_empty(), "{}", failures.join("\n"));
}

#[test]
fn a_noted_option_warns_once_however_often_it_is_given() {
    let args: Vec<String> =
        ["--bb=a", "--bb", "b", "--contiguous", "-N2"].iter().map(|s| s.to_string()).collect();
    let p = sbatch::probe(&args).unwrap();
    assert_eq!(p.applied, ["bb", "bb", "contiguous", "nodes"]);
    assert_eq!(p.warnings.len(), 2, "{:?}", p.warnings);
    assert!(p.warnings[0].starts_with("sbatch: warning: --bb has no effect on Spur: burst buffers"));
}
