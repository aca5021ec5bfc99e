//! sbatch's filename patterns: every pattern character yields at most one
//! field or one number, so the expansion is bounded by the pattern.
#![no_main]

use libfuzzer_sys::fuzz_target;
use spur_vocab::jobs::{PathVars, StepVars, expand_path, expand_step_path};

fuzz_target!(|s: &str| {
    let name = "a-job-name-of-forty-characters-or-so-xyz";
    let j = PathVars { job_id: u64::MAX, user: "alice", name, node: "n3", array: Some((7, u32::MAX)) };
    let step = StepVars { step: u32::MAX, task: u32::MAX, node_index: u32::MAX };
    let most = s.len() * (32 + name.len());
    assert!(expand_path(s, &j).len() <= most);
    assert!(expand_step_path(s, &j, &step).len() <= most);
});
