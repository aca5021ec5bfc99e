//! Hostlists: refused, or at most the names and lengths they were bounded
//! to, and compressing them gives them back.
#![no_main]

use libfuzzer_sys::fuzz_target;
use spur_vocab::hostlist;
use std::collections::BTreeSet;

fuzz_target!(|s: &str| {
    let _ = hostlist::count(s);
    if let Ok(names) = hostlist::expand_bounded(s, 1000, 64) {
        assert!(names.len() <= 1000);
        assert!(names.iter().all(|n| n.len() <= 20 * 64));
        let back: BTreeSet<String> =
            hostlist::expand(&hostlist::compress(&names)).unwrap().into_iter().collect();
        assert_eq!(back, names.into_iter().collect::<BTreeSet<_>>(), "{s}");
    }
});
