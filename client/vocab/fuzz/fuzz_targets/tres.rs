//! TRES strings: refused, or at most one value per TRES, reading back the
//! same once printed.
#![no_main]

use libfuzzer_sys::fuzz_target;
use spur_vocab::tres::{TRES, format_map, parse_map, parse_patch};

fuzz_target!(|s: &str| {
    if let Ok(p) = parse_patch(s) {
        assert!(p.set.len() <= TRES.len());
    }
    if let Ok(m) = parse_map(s) {
        assert_eq!(parse_map(&format_map(&m)), Ok(m), "{s}");
    }
});
