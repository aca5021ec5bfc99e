//! Time limits, durations and Slurm's date-times: refused, or a value
//! within the largest limit that reads back the same once printed.
#![no_main]

use chrono::{Local, TimeZone};
use libfuzzer_sys::fuzz_target;
use spur_vocab::time::{
    Lean, MAX_TIME_LIMIT_MINUTES, TimeLimit, format_minutes, parse_limit, parse_seconds, parse_when,
};

fuzz_target!(|s: &str| {
    if let Ok(m) = parse_limit(s) {
        assert!(m <= MAX_TIME_LIMIT_MINUTES);
        assert_eq!(parse_limit(&format_minutes(m)), Ok(m), "{s}");
    }
    let _ = parse_seconds(s);
    let _ = TimeLimit::parse_request(s);
    let now = Local.with_ymd_and_hms(2026, 3, 10, 14, 30, 0).unwrap();
    for lean in [Lean::Past, Lean::Future] {
        let _ = parse_when(s, now, lean);
    }
});
