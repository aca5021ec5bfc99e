//! `--dependency`: refused, or at most MAX_ITEMS items that read back the
//! same once printed.
#![no_main]

use libfuzzer_sys::fuzz_target;
use spur_vocab::depend::{Dependency, MAX_ITEMS};

fuzz_target!(|s: &str| {
    if let Ok(d) = Dependency::parse(s) {
        assert!(d.items.len() <= MAX_ITEMS);
        assert_eq!(Dependency::parse(&d.to_string()), Ok(d), "{s}");
    }
});
