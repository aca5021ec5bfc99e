//! The run arithmetic against a plain reference: sets of small indexes as
//! sorted vectors, over every combination of a few ranges and steps.

use super::*;

fn members(runs: &[Run]) -> Vec<u32> {
    runs.iter().flat_map(|&(a, b, s)| (a..=b).step_by(s as usize)).collect()
}

fn reference(progs: &[Run]) -> Vec<u32> {
    let mut v: Vec<u32> = progs.iter().flat_map(|&(a, b, s)| (a..=b).step_by(s as usize)).collect();
    v.sort_unstable();
    v.dedup();
    v
}

const ALL: Budget = Budget { runs: usize::MAX, work: u64::MAX };

/// A few progressions within 0..40 from a counter, so every case is reproducible.
fn progs(mut seed: u64, n: usize) -> Vec<Run> {
    let mut next = || {
        seed = seed.wrapping_mul(6364136223846793005).wrapping_add(1442695040888963407);
        (seed >> 33) as u32
    };
    (0..n)
        .map(|_| {
            let a = next() % 40;
            let b = a + next() % 20;
            let s = 1 + next() % 6;
            clip((a, b, s), a, b).unwrap()
        })
        .collect()
}

#[test]
fn union_intersect_and_minus_agree_with_the_reference() {
    for seed in 0..3000u64 {
        let (p, q) = (progs(seed, 1 + (seed % 5) as usize), progs(seed ^ 0xabcdef, 1 + (seed % 3) as usize));
        let (a, b) = (union(p.clone(), ALL).unwrap(), union(q.clone(), ALL).unwrap());
        assert!(is_normal(&a) && is_normal(&b), "{p:?} -> {a:?}");
        assert_eq!(members(&a), reference(&p), "union of {p:?} gave {a:?}");
        let (ra, rb) = (reference(&p), reference(&q));
        let both: Vec<u32> = ra.iter().copied().filter(|i| rb.contains(i)).collect();
        let only: Vec<u32> = ra.iter().copied().filter(|i| !rb.contains(i)).collect();
        let (i, m) = (intersect(&a, &b), minus(&a, &b));
        assert!(is_normal(&i) && is_normal(&m), "{a:?} {b:?} -> {i:?} {m:?}");
        assert_eq!(members(&i), both, "{a:?} ∩ {b:?} gave {i:?}");
        assert_eq!(members(&m), only, "{a:?} - {b:?} gave {m:?}");
    }
}

#[test]
fn canonical_runs_depend_on_the_members_only() {
    for seed in 0..2000u64 {
        let p = progs(seed, 3);
        let a = union(p.clone(), ALL).unwrap();
        let singles: Vec<Run> = reference(&p).into_iter().map(|i| (i, i, 1)).collect();
        assert_eq!(canonical(&a), canonical(&singles), "{p:?}: {a:?}");
        assert_eq!(members(&canonical(&a)), reference(&p));
    }
}

#[test]
fn the_issue_example_merges_into_one_run_by_its_period() {
    let p = vec![(0, 4_000_000, 2), (1, 3_999_999, 2), (1, 3_999_999, 2)];
    let tight = Budget { runs: 10, work: 100 };
    assert_eq!(union(p, tight).unwrap(), [(0, 4_000_000, 1)]);
    // Steps 3 and 7 repeat every 21: the period's pattern is repeated.
    let p = vec![(0, 209, 3), (0, 209, 7)];
    let got = union(p.clone(), ALL).unwrap();
    assert_eq!(members(&got), reference(&p));
    // Steps 4 and 6 at one residue class of 2: one run of step 2.
    let p = vec![(0, 4_000_000, 4), (2, 3_999_998, 4)];
    assert_eq!(union(p, tight).unwrap(), [(0, 4_000_000, 2)]);
}

#[test]
fn fragmenting_and_costly_unions_are_refused() {
    // Two members of every four: a million runs, refused at the cap.
    let p = vec![(0, 4_000_000, 4), (1, 3_999_997, 4)];
    assert_eq!(union(p, Budget { runs: 10_000, work: 1 << 24 }), Err(Refused::Runs));
    // Coprime large steps over the whole range: the bitmap costs more than allowed.
    let p = vec![(0, 4_000_000, 65_521), (0, 4_000_000, 65_519), (1, 4_000_000, 1_000_003)];
    assert_eq!(union(p.clone(), Budget { runs: 10_000, work: 1000 }), Err(Refused::Work));
    assert_eq!(members(&union(p.clone(), ALL).unwrap()), reference(&p));
}

#[test]
fn decompose_writes_runs_as_people_do() {
    let mut bits = [0u64; 1];
    for i in [0, 2, 3, 4, 5, 6, 8, 12, 20, 23, 26, 29] {
        bits[0] |= 1 << i;
    }
    let mut out = vec![];
    decompose(&bits, 64, |r| out.push(r));
    assert_eq!(out, [(0, 0, 1), (2, 6, 1), (8, 8, 1), (12, 12, 1), (20, 29, 3)]);
}
