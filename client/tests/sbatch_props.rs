//! sbatch's `#SBATCH` lines, fed scripts of up to 1 MiB of mixed lines:
//! directives with known and unknown option names, values with quotes,
//! backslashes, `#` and blanks, comments, and lines up to the full size. Each
//! script is accepted or refused without panicking; a refusal names the
//! script or the `#SBATCH` line it comes from, and no output grows past the
//! line it came from by more than a constant.

use proptest::prelude::*;
use spur_client::cli::sbatch::{Prepared, directives, prepare};
use std::path::Path;

/// The largest script: sbatch reads whole files, so the test does too.
const MAX_SCRIPT: usize = 1 << 20;

/// Option names as a directive spells them: known ones, unknown ones, and
/// getopt's corner cases (`--`, `-`, bundled short flags).
const OPTS: &[&str] = &[
    "-J",
    "--job-name",
    "-A",
    "--account",
    "-p",
    "--partition",
    "-N",
    "--nodes",
    "-n",
    "--ntasks",
    "-c",
    "--mem",
    "--mem-per-cpu",
    "--gres",
    "--gpus",
    "-G",
    "-C",
    "--constraint",
    "-d",
    "--dependency",
    "-a",
    "--array",
    "--export",
    "--mail-type",
    "--mail-user",
    "--signal",
    "-b",
    "--begin",
    "--deadline",
    "--time-min",
    "--nice",
    "--open-mode",
    "-t",
    "--time",
    "-w",
    "--nodelist",
    "-x",
    "--priority",
    "--exclusive",
    "-L",
    "--licenses",
    "-H",
    "--hold",
    "--requeue",
    "-o",
    "--output",
    "-e",
    "--error",
    "--comment",
    "--annotation",
    "-M",
    "--clusters",
    "-D",
    "--chdir",
    "--wrap",
    "--uid",
    "--gid",
    "--help",
    "--parsable",
    "-W",
    "--test-only",
    "--colour",
    "-Z",
    "--",
    "-",
    "-Hh",
    "-NJ",
    "--job-name=",
    "---",
    "--mem=",
];

/// Pieces of values: numbers, units, quoting, Slurm's punctuation.
const VALUES: &[&str] = &[
    "1",
    "0",
    "-1",
    "4294967296",
    "99999999999999999999",
    "4G",
    "1T",
    "K",
    "gpu:2",
    "node[01-99]",
    "1-00:00:00",
    "now+1hour",
    "afterok:12",
    "0-9%2",
    "a=b",
    "=",
    ",",
    ":",
    "[",
    "]",
    "\"",
    "\\",
    "\\\"",
    "#",
    " ",
    "\t",
    "%j",
    "é",
    "\u{1b}",
    "ALL",
    "none",
    "yes",
    "no",
    "x",
];

/// A value of a few pieces; rarely one piece repeated to a long line.
fn value() -> impl Strategy<Value = String> {
    prop_oneof![
        12 => prop::collection::vec(prop::sample::select(VALUES), 0..8).prop_map(|v| v.concat()),
        // No NUL nor CR: a script holding one is refused whole, before its lines.
        2 => prop::collection::vec(any::<char>(), 0..12)
            .prop_map(|v| v.into_iter().filter(|c| !matches!(c, '\0' | '\r')).collect()),
        1 => (prop::sample::select(VALUES), 1..MAX_SCRIPT / 2).prop_map(|(p, n)| p.repeat(n / p.len().max(1))),
    ]
}

fn directive() -> impl Strategy<Value = String> {
    let sep = prop::sample::select(&[" ", "\t", "  ", "", " \\\n"][..]);
    let joiner = prop::sample::select(&["=", " ", "", "\"", " \""][..]);
    (sep, prop::sample::select(OPTS), joiner, value(), prop::option::of(value())).prop_map(
        |(s, o, j, v, tail)| match tail {
            Some(t) => format!("#SBATCH{s}{o}{j}{v} # {t}"),
            None => format!("#SBATCH{s}{o}{j}{v}"),
        },
    )
}

/// One line: mostly directives, some comments, blanks, look-alikes, commands.
fn line() -> impl Strategy<Value = String> {
    prop_oneof![
        10 => directive(),
        2 => value().prop_map(|v| format!("# {v}")),
        1 => Just(String::new()),
        1 => Just("#SBATCH".to_string()),
        1 => value().prop_map(|v| format!("#SBATCHX{v}")),
        1 => value().prop_map(|v| format!("  #SBATCH {v}")),
        1 => value(),
        1 => Just("srun hostname".to_string()),
    ]
}

fn script() -> impl Strategy<Value = String> {
    let shebang = prop_oneof![
        8 => prop::sample::select(&["#!/bin/bash\n", "#!/bin/sh\n"][..]),
        1 => prop::sample::select(&["", "#!\r\n", "echo\n"][..]),
    ];
    // Rarely a NUL or a CR, which refuse the whole script.
    let tail = prop_oneof![18 => Just(""), 1 => Just("echo \0\n"), 1 => Just("echo\r\n")];
    (shebang, prop::collection::vec(line(), 0..40), tail).prop_map(|(s, lines, tail)| {
        let mut text = format!("{s}{}\n{tail}", lines.join("\n"));
        if text.len() > MAX_SCRIPT {
            let mut end = MAX_SCRIPT;
            while !text.is_char_boundary(end) {
                end -= 1;
            }
            text.truncate(end);
        }
        text
    })
}

/// The script's line `n` (1-based), as `directives` counts them.
fn line_of(script: &str, n: usize) -> &str {
    script.lines().nth(n - 1).unwrap_or_default()
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 96, ..ProptestConfig::default() })]

    /// `directives` returns `#SBATCH` lines only, each split into words no
    /// longer together than the line they came from.
    #[test]
    fn directives_come_from_sbatch_lines_and_stay_within_them(text in script()) {
        let mut last = 0;
        for (n, words) in directives(&text) {
            prop_assert!(n > last, "line numbers increase");
            last = n;
            let line = line_of(&text, n);
            prop_assert!(line.starts_with("#SBATCH"), "line {n} is {line:?}");
            let bytes: usize = words.iter().map(String::len).sum();
            prop_assert!(bytes <= line.len(), "line {n}: {bytes} bytes of words from {}", line.len());
            prop_assert!(words.len() <= line.len());
        }
    }

    /// `prepare` on the script: a submission holding the script as read,
    /// or an error naming the script or the `#SBATCH` line, no longer than
    /// that line (it may quote it twice) and a sentence.
    #[test]
    fn sbatch_accepts_or_refuses_naming_the_line(text in script()) {
        let read = |_: Option<&str>| Ok(text.clone());
        match prepare(&["job.sh".to_string()], Path::new("/work"), read) {
            Ok(Prepared::Submit(sub)) => {
                prop_assert_eq!(&sub.spec.script, &text);
                prop_assert!(sub.spec.name.len() <= text.len().max(8));
                prop_assert!(sub.spec.comment.len() <= text.len());
            }
            Ok(Prepared::Help) => {}
            Err(e) => {
                if let Some(rest) = e.strip_prefix("#SBATCH on line ") {
                    let n: usize = rest.split(':').next().unwrap_or_default().parse().unwrap_or(0);
                    prop_assert!(n > 0, "no line number: {}", &e[..e.len().min(200)]);
                    let line = line_of(&text, n);
                    prop_assert!(line.starts_with("#SBATCH"), "line {n} is {:?}", &line[..line.len().min(200)]);
                    prop_assert!(e.len() <= 2 * line.len() + 512, "{} bytes for a line of {}", e.len(), line.len());
                } else {
                    prop_assert!(e.starts_with("script 'job.sh'"), "{}", &e[..e.len().min(200)]);
                    prop_assert!(e.len() <= 512, "{}", &e[..e.len().min(200)]);
                }
            }
        }
    }
}
