//! sbcast's command line: the job from -j or the allocation, SOURCE and
//! DEST, piece sizes, and Slurm's optional values kept with a warning.

use spur_client::cli::sbcast::{job_of, parse, paths};
use std::path::Path;

fn argv(line: &str) -> Vec<String> {
    line.split_whitespace().map(String::from).collect()
}

#[test]
fn the_job_is_j_else_the_allocations() {
    let a = parse(&argv("-j 12.3 a b")).unwrap();
    assert_eq!(job_of(&a, Some("99")), Ok(12));
    let a = parse(&argv("a b")).unwrap();
    assert_eq!(job_of(&a, Some("99")), Ok(99));
    assert!(job_of(&a, None).unwrap_err().contains("SLURM_JOB_ID"));
    assert!(parse(&argv("-j x a b")).unwrap_err().contains("--jobid: 'x' is not a job id"));
}

#[test]
fn dest_is_made_absolute_and_two_words_are_needed() {
    let a = parse(&argv("-f -p src out/file")).unwrap();
    assert!(a.force && a.preserve);
    assert_eq!(paths(&a, Path::new("/work")).unwrap(), ("src".to_string(), "/work/out/file".to_string()));
    let a = parse(&argv("src /tmp/x")).unwrap();
    assert_eq!(paths(&a, Path::new("/work")).unwrap().1, "/tmp/x");
    assert!(paths(&parse(&argv("src")).unwrap(), Path::new("/")).unwrap_err().contains("SOURCE and DEST"));
}

#[test]
fn sizes_and_optional_values() {
    assert_eq!(parse(&argv("-s 64k a b")).unwrap().piece, Some(64 << 10));
    assert_eq!(parse(&argv("-s 9m a b")).unwrap().piece, Some(1 << 20), "capped at 1M");
    assert!(parse(&argv("-s lots a b")).unwrap_err().contains("--size"));
    for flags in ["-Clz4", "--compress=zlib", "-C"] {
        let a = parse(&argv(&format!("{flags} a b"))).unwrap();
        assert_eq!((a.warnings.len(), a.words.len()), (1, 2), "{flags}: {:?}", a.warnings);
    }
    let a = parse(&argv("--send-libs=no a b")).unwrap();
    assert_eq!((a.warnings.len(), a.words.len()), (1, 2));
}
