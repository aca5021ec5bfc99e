//! The arithmetic behind `TaskSet`: sets of task indexes as sorted runs
//! `(first, last, step)` whose spans never overlap, so that a lookup is a
//! binary search and every set operation is one merge-like pass, costing
//! the runs it reads and writes, never the indexes they stand for.
//!
//! Only the union of overlapping *stepped* ranges (`0-99:2,1-99:3`) needs
//! more: such a union repeats with the period of the steps' least common
//! multiple, so one period is worked out in a bitmap and repeated; the
//! work it takes is counted against a budget, so no expression can make
//! a parse slow, whatever its overlaps.

/// `(first, last, step)`: the members `first, first+step, ..., last`;
/// `last` is a member, and a single member has step 1.
pub(crate) type Run = (u32, u32, u32);

/// What a union may cost: the most runs its result may have, and the most
/// steps merging overlapping stepped ranges may take.
#[derive(Debug, Clone, Copy)]
pub(crate) struct Budget {
    pub runs: usize,
    pub work: u64,
}

/// Why a union was refused: which of the budget's two it would exceed.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Refused {
    Runs,
    Work,
}

/// The run of `(a, b, s)`'s members within `[lo, hi]`, if any.
pub(crate) fn clip((a, b, s): Run, lo: u32, hi: u32) -> Option<Run> {
    let (lo, hi) = (lo.max(a), hi.min(b));
    if lo > hi {
        return None;
    }
    // In u64: a stored run may sit near u32::MAX, where the next member would not fit.
    let first = u64::from(a) + u64::from(lo - a).div_ceil(u64::from(s)) * u64::from(s);
    let last = a + (hi - a) / s * s;
    (first <= u64::from(last)).then(|| single_or(first as u32, last, s))
}

fn single_or(first: u32, last: u32, s: u32) -> Run {
    if first == last { (first, first, 1) } else { (first, last, s) }
}

/// Appends `r` (which starts past `out`'s last run), joining it to that
/// run when both are plain ranges (or singles) that touch.
pub(crate) fn push_join(out: &mut Vec<Run>, r: Run) {
    if let Some(l) = out.last_mut()
        && l.2 == 1
        && r.2 == 1
        && u64::from(r.0) <= u64::from(l.1) + 1
    {
        l.1 = l.1.max(r.1);
        return;
    }
    out.push(r);
}

/// Whether `runs` are sorted with spans apart, each well formed.
pub(crate) fn is_normal(runs: &[Run]) -> bool {
    let ok = |&(a, b, s): &Run| s > 0 && a <= b && (b - a).is_multiple_of(s) && (a < b || s == 1);
    runs.iter().all(ok) && runs.windows(2).all(|w| w[0].1 < w[1].0)
}

/// The union of progressions (any order, any overlap) as normal runs.
pub(crate) fn union(mut progs: Vec<Run>, budget: Budget) -> Result<Vec<Run>, Refused> {
    progs.sort_unstable();
    progs.dedup();
    let mut out: Vec<Run> = Vec::new();
    let mut work = 0u64;
    let mut i = 0;
    while i < progs.len() {
        // A cluster: progressions whose spans overlap, directly or through others.
        let (lo, mut hi) = (progs[i].0, progs[i].1);
        let mut j = i + 1;
        while j < progs.len() && progs[j].0 <= hi {
            hi = hi.max(progs[j].1);
            j += 1;
        }
        let cluster = &progs[i..j];
        if cluster.len() == 1 {
            push_join(&mut out, cluster[0]);
        } else if cluster.iter().all(|r| r.2 == 1) {
            push_join(&mut out, (lo, hi, 1));
        } else {
            let mut merged = vec![];
            merge_cluster(cluster, &mut merged, &mut work, budget)?;
            join_steps(merged, &mut out);
        }
        if out.len() > budget.runs {
            return Err(Refused::Runs);
        }
        i = j;
    }
    Ok(out)
}

/// Appends merged runs, joining those the segments cut apart where they
/// continue one another at one step (`0`, `2-98:2`, `100` is `0-100:2`).
fn join_steps(merged: Vec<Run>, out: &mut Vec<Run>) {
    let mut merged = merged.into_iter();
    // The first run joins what came before only as plain ranges do.
    if let Some(r) = merged.next() {
        push_join(out, r);
    }
    merged.for_each(|r| push_steps(out, r));
}

/// Appends `r` (which starts past `out`'s last run), joining it to that run
/// when they continue one another, plain or at one step.
pub(crate) fn push_steps(out: &mut Vec<Run>, r: Run) {
    if let Some(l) = out.last_mut() {
        let (single_l, single_r) = (l.0 == l.1, r.0 == r.1);
        if !single_l && l.2 > 1 && r.0 - l.1 == l.2 && (single_r || r.2 == l.2) {
            l.1 = r.1;
            return;
        }
        if single_l && !single_r && r.2 > 1 && r.0 - l.1 == r.2 {
            *l = (l.0, r.1, r.2);
            return;
        }
    }
    push_join(out, r);
}

/// Merges progressions whose spans overlap: between consecutive starts and
/// ends, the same progressions cover the whole segment, which is resolved at once.
fn merge_cluster(cluster: &[Run], out: &mut Vec<Run>, work: &mut u64, budget: Budget) -> Result<(), Refused> {
    let mut cuts: Vec<u64> = cluster.iter().flat_map(|r| [u64::from(r.0), u64::from(r.1) + 1]).collect();
    cuts.sort_unstable();
    cuts.dedup();
    let mut active: Vec<Run> = Vec::new();
    let mut next = 0;
    for w in cuts.windows(2) {
        // Segments lie within the cluster's span, which is within u32.
        let (x, y) = (w[0] as u32, (w[1] - 1) as u32);
        while next < cluster.len() && cluster[next].0 <= x {
            active.push(cluster[next]);
            next += 1;
        }
        active.retain(|r| r.1 >= x);
        *work += active.len() as u64;
        if *work > budget.work {
            return Err(Refused::Work);
        }
        segment(&active, x, y, out, work, budget)?;
        if out.len() > budget.runs {
            return Err(Refused::Runs);
        }
    }
    Ok(())
}

/// The union of `active` (each covering all of `[x, y]`) within `[x, y]`.
fn segment(
    active: &[Run],
    x: u32,
    y: u32,
    out: &mut Vec<Run>,
    work: &mut u64,
    budget: Budget,
) -> Result<(), Refused> {
    if x == y {
        // One index (every single lands here): a member when any progression has it.
        if active.iter().any(|r| (x - r.0).is_multiple_of(r.2)) {
            push_join(out, (x, x, 1));
        }
        return Ok(());
    }
    if active.iter().any(|r| r.2 == 1) {
        push_join(out, (x, y, 1));
        return Ok(());
    }
    // The distinct progressions here, as (step, residue).
    let mut classes: Vec<(u32, u32)> = active.iter().map(|r| (r.2, r.0 % r.2)).collect();
    classes.sort_unstable();
    classes.dedup();
    if classes.len() <= 1 {
        if let Some(r) = active.first().and_then(|r| clip(*r, x, y)) {
            push_join(out, r);
        }
        return Ok(());
    }
    let len = u64::from(y - x) + 1;
    let period = classes.iter().try_fold(1u64, |l, &(s, _)| {
        let l = lcm(l, u64::from(s));
        (l < len).then_some(l)
    });
    let plen = period.unwrap_or(len);
    *work += plen / 64 + classes.iter().map(|&(s, _)| plen / u64::from(s) + 1).sum::<u64>();
    if *work > budget.work {
        return Err(Refused::Work);
    }
    // The members within [x, x + plen), as a bitmap.
    let mut bits = vec![0u64; plen.div_ceil(64) as usize];
    for &(s, r) in &classes {
        let s = u64::from(s);
        let mut m = (u64::from(r) + s - u64::from(x) % s) % s;
        while m < plen {
            bits[(m / 64) as usize] |= 1 << (m % 64);
            m += s;
        }
    }
    let mut runs = vec![];
    decompose(&bits, plen, |r| runs.push(r));
    let Some(period) = period else {
        // The segment whole: its runs, in place.
        runs.into_iter().for_each(|(a, b, s)| push_join(out, (a + x, b + x, s)));
        return Ok(());
    };
    let count: u64 = runs.iter().map(|&(a, b, s)| u64::from((b - a) / s) + 1).sum();
    let step = period.checked_div(count).filter(|g| period % count == 0 && is_progression(&runs, *g));
    if let Some(step) = step {
        // One progression with a step dividing the period: one run for the segment.
        if let Some(r) = clip((x + runs[0].0, y, step as u32), x, y) {
            push_join(out, r);
        }
        return Ok(());
    }
    // Each period adds at least one run (it has a gap), so the runs cap
    // stops this loop early for a pattern that fragments.
    for p in 0..len.div_ceil(period) {
        let base = u64::from(x) + p * period;
        for &(a, b, s) in &runs {
            let first = base + u64::from(a);
            if first > u64::from(y) {
                break;
            }
            let r = (first as u32, (base + u64::from(b)).min(u64::from(y)) as u32, s);
            if let Some(r) = clip(r, r.0, r.1) {
                push_join(out, r);
            }
            if out.len() > budget.runs {
                return Err(Refused::Runs);
            }
        }
    }
    Ok(())
}

/// Whether the runs of one period are the members `f, f+g, f+2g, ...` with no gap.
fn is_progression(runs: &[Run], g: u64) -> bool {
    let mut want = u64::from(runs[0].0);
    for &(a, b, s) in runs {
        if u64::from(a) != want || (a < b && u64::from(s) != g) {
            return false;
        }
        want = u64::from(b) + g;
    }
    true
}

fn gcd(mut a: u64, mut b: u64) -> u64 {
    while b != 0 {
        (a, b) = (b, a % b);
    }
    a
}

fn lcm(a: u64, b: u64) -> u64 {
    (a / gcd(a, b)).saturating_mul(b)
}

/// Cuts the set bits of `bits[..len]` into runs the way a person writes
/// them: consecutive members as `a-b`; isolated members, three or more at
/// one spacing, as `a-b:s`; the rest alone.
pub(crate) fn decompose(bits: &[u64], len: u64, mut emit: impl FnMut(Run)) {
    let mut lone = Lone::default();
    let mut at = 0u64;
    while let Some(a) = next_bit(bits, len, at, true) {
        let end = next_bit(bits, len, a, false).unwrap_or(len);
        let (a32, b32) = (a as u32, (end - 1) as u32);
        if a32 == b32 {
            lone.push(a32, &mut emit);
        } else {
            lone.flush(&mut emit);
            emit((a32, b32, 1));
        }
        at = end;
    }
    lone.flush(&mut emit);
}

/// The first index from `at` whose bit is `set`, below `len`.
fn next_bit(bits: &[u64], len: u64, at: u64, set: bool) -> Option<u64> {
    let flip = if set { 0 } else { !0u64 };
    let mut w = (at / 64) as usize;
    let mut word = (bits.get(w)? ^ flip) & (!0u64 << (at % 64));
    while word == 0 {
        w += 1;
        word = bits.get(w)? ^ flip;
    }
    let i = w as u64 * 64 + u64::from(word.trailing_zeros());
    (i < len).then_some(i)
}

/// Isolated members waiting to be written: three at one spacing start a stepped run.
#[derive(Default)]
struct Lone {
    run: Option<Run>,
    pending: Vec<u32>,
}

impl Lone {
    fn push(&mut self, m: u32, emit: &mut impl FnMut(Run)) {
        if let Some(r) = &mut self.run {
            if m - r.1 == r.2 {
                r.1 = m;
                return;
            }
            emit(*r);
            self.run = None;
        }
        self.pending.push(m);
        if let [a, b, c] = self.pending[..] {
            if b - a == c - b {
                self.run = Some((a, c, b - a));
                self.pending.clear();
            } else {
                emit((a, a, 1));
                self.pending.remove(0);
            }
        }
    }

    fn flush(&mut self, emit: &mut impl FnMut(Run)) {
        if let Some(r) = self.run.take() {
            emit(r);
        }
        self.pending.drain(..).for_each(|m| emit((m, m, 1)));
    }
}

/// The members both of `p` and of `q` within `[lo, hi]`: one progression
/// whose step is the least common multiple of theirs (Chinese remainders).
fn meet(p: Run, q: Run, lo: u32, hi: u32) -> Option<Run> {
    let (p, q) = (clip(p, lo, hi)?, clip(q, lo, hi)?);
    let (a1, s1, a2, s2) = (i128::from(p.0), i128::from(p.2), i128::from(q.0), i128::from(q.2));
    let (g, inv, _) = egcd(s1, s2);
    if (a2 - a1) % g != 0 {
        return None;
    }
    let l = s1 / g * s2;
    // s1*k ≡ a2 - a1 (mod s2): k = (a2 - a1)/g * inv(s1/g) mod s2/g.
    let m = s2 / g;
    let k = ((a2 - a1) / g % m * (inv % m) % m + m) % m;
    let z = a1 + s1 * k;
    let lo = i128::from(p.0.max(q.0));
    let hi = i128::from(p.1.min(q.1));
    let first = lo + (z - lo).rem_euclid(l);
    if first > hi {
        return None;
    }
    let last = first + (hi - first) / l * l;
    let step = u32::try_from(l).unwrap_or(u32::MAX);
    Some(single_or(first as u32, last as u32, step))
}

/// `(gcd, x, y)` with `a*x + b*y = gcd`.
fn egcd(a: i128, b: i128) -> (i128, i128, i128) {
    if b == 0 {
        (a, 1, 0)
    } else {
        let (g, x, y) = egcd(b, a % b);
        (g, y, x - a / b * y)
    }
}

/// The members of both (normal runs in, normal runs out).
pub(crate) fn intersect(a: &[Run], b: &[Run]) -> Vec<Run> {
    let (mut i, mut j, mut out) = (0, 0, vec![]);
    while i < a.len() && j < b.len() {
        let (p, q) = (a[i], b[j]);
        if let Some(r) = meet(p, q, p.0.max(q.0), p.1.min(q.1)) {
            push_steps(&mut out, r);
        }
        if p.1 <= q.1 {
            i += 1;
        } else {
            j += 1;
        }
    }
    out
}

/// The members of `a` not in `b` (normal runs in, normal runs out).
pub(crate) fn minus(a: &[Run], b: &[Run]) -> Vec<Run> {
    let (mut j, mut out) = (0, vec![]);
    for &p in a {
        while j < b.len() && b[j].1 < p.0 {
            j += 1;
        }
        let mut from = u64::from(p.0);
        let mut k = j;
        while k < b.len() && b[k].0 <= p.1 {
            let q = b[k];
            if u64::from(q.0) > from
                && let Some(r) = clip(p, from as u32, q.0 - 1)
            {
                push_steps(&mut out, r);
            }
            let (lo, hi) = ((from as u32).max(q.0), q.1.min(p.1));
            take_out(p, q, lo, hi, &mut out);
            from = u64::from(hi) + 1;
            k += 1;
        }
        if from <= u64::from(p.1)
            && let Some(r) = clip(p, from as u32, p.1)
        {
            push_steps(&mut out, r);
        }
    }
    out
}

/// `p`'s members in `[lo, hi]` that are not `q`'s, in order.
fn take_out(p: Run, q: Run, lo: u32, hi: u32, out: &mut Vec<Run>) {
    let Some(part) = clip(p, lo, hi) else { return };
    let Some((i0, i1, l)) = meet(p, q, lo, hi) else {
        push_steps(out, part);
        return;
    };
    if i0 > part.0
        && let Some(r) = clip(p, part.0, i0 - 1)
    {
        push_steps(out, r);
    }
    if i1 > i0 {
        let s = p.2;
        match l / s {
            1 => {}
            // Every other member of p is q's: the others are one progression.
            2 => push_steps(out, single_or(i0 + s, i1 - s, l)),
            _ => {
                let mut z = i0;
                while z < i1 {
                    push_steps(out, single_or(z + s, z + l - s, s));
                    z += l;
                }
            }
        }
    }
    if i1 < part.1
        && let Some(r) = clip(p, i1 + 1, part.1)
    {
        push_steps(out, r);
    }
}

/// Runs as one way of writing their members: the first member, then as
/// many as keep the spacing of the first two, and so on. Two sets with the
/// same members give the same runs here, whatever runs they are kept as.
pub(crate) fn canonical(runs: &[Run]) -> Vec<Run> {
    let mut out: Vec<Run> = vec![];
    // The run being built: (first, last, step), step 0 while it has one member.
    let mut cur: Option<Run> = None;
    for &(x, y, s) in runs {
        let mut x = x;
        loop {
            match cur {
                None => {
                    cur = Some(if x == y { (x, x, 0) } else { (x, y, s) });
                    break;
                }
                Some((a, b, 0)) => {
                    let d = x - b;
                    if x == y || s == d {
                        cur = Some((a, y, d));
                        break;
                    }
                    out.push((a, x, d));
                    cur = None;
                    x += s;
                }
                Some((a, b, d)) => {
                    if x - b == d && (x == y || s == d) {
                        cur = Some((a, y, d));
                        break;
                    }
                    if x - b == d {
                        out.push((a, x, d));
                        cur = None;
                        x += s;
                    } else {
                        out.push((a, b, d));
                        cur = None;
                    }
                }
            }
        }
    }
    out.extend(cur.map(|(a, b, d)| (a, b, d.max(1))));
    out
}

#[cfg(test)]
#[path = "taskruns_tests.rs"]
mod tests;
