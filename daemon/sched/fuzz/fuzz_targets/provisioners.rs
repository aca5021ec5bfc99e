//! provisioners.yaml and its memory sizes: refused, or within the caps.
#![no_main]

use libfuzzer_sys::fuzz_target;
use spur_sched::provision::{self, MAX_DEFINITIONS};

fuzz_target!(|text: &str| {
    if let Ok(p) = provision::parse(text, 1) {
        assert!(p.defs.len() <= MAX_DEFINITIONS);
    }
    if let Ok(n) = provision::parse_memory(text) {
        assert!(n > 0);
    }
});
