//! Array expressions and job references: refused, or a set within the
//! caps that reads back the same once printed.
#![no_main]

use libfuzzer_sys::fuzz_target;
use spur_vocab::array::{ArraySpec, JobRef, MAX_ARRAY_PARTS, MAX_TASK_ID, TaskSet, parse_refs};

fuzz_target!(|s: &str| {
    if let Ok(t) = TaskSet::parse(s) {
        assert!(t.len() <= u64::from(MAX_TASK_ID) + 1);
        let shown = t.to_string();
        assert!(shown.split(',').count() <= MAX_ARRAY_PARTS);
        assert_eq!(TaskSet::parse(&shown).as_ref(), Ok(&t), "{s} printed as {shown}");
        if t.len() <= 10_000 {
            let v: Vec<u32> = t.iter().collect();
            assert!(v.windows(2).all(|w| w[0] < w[1]) && v.iter().all(|i| t.contains(*i)));
            let (half, rest) =
                (t.intersect(&TaskSet::parse("0-4000000:2").unwrap()), t.minus(&TaskSet::range(0, 99)));
            assert!(half.iter().all(|i| i % 2 == 0 && t.contains(i)));
            assert!(rest.iter().all(|i| i > 99 && t.contains(i)));
        }
    }
    if let Ok(a) = ArraySpec::parse(s, 1001) {
        assert!(a.tasks.len() <= 1001);
    }
    let _ = JobRef::parse(s);
    let _ = parse_refs(&[s]);
});
