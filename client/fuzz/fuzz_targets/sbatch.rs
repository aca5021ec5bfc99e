//! A batch script's `#SBATCH` lines: `directives` keeps to the `#SBATCH`
//! lines and their bytes, and sbatch accepts the script or refuses it naming
//! the script or the line, in a message bounded by that line.
#![no_main]

use libfuzzer_sys::fuzz_target;
use spur_client::cli::sbatch::{Prepared, directives, prepare};
use std::path::Path;

fuzz_target!(|text: &str| {
    let line_of = |n: usize| text.lines().nth(n - 1).unwrap_or_default();
    for (n, words) in directives(text) {
        let line = line_of(n);
        assert!(line.starts_with("#SBATCH"), "line {n}: {line:?}");
        assert!(words.iter().map(String::len).sum::<usize>() <= line.len());
    }
    let read = |_: Option<&str>| Ok(text.to_string());
    match prepare(&["job.sh".to_string()], Path::new("/work"), read) {
        Ok(Prepared::Submit(sub)) => assert_eq!(sub.spec.script, text),
        Ok(Prepared::Help) => {}
        Err(e) => match e.strip_prefix("#SBATCH on line ") {
            Some(rest) => {
                let n: usize = rest.split(':').next().and_then(|n| n.parse().ok()).expect("a line number");
                let line = line_of(n);
                assert!(line.starts_with("#SBATCH"), "line {n}: {line:?}");
                assert!(e.len() <= 2 * line.len() + 512, "{e}");
            }
            None => assert!(e.starts_with("script 'job.sh'") && e.len() <= 512, "{e}"),
        },
    }
});
