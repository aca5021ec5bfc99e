//! squeue's `-S`: the sort letters, and sorting a large listing by them.
//! Each key becomes a column of integers whose order is the key's, so
//! sorting 100,000 jobs compares integer rows, not strings, two million times.

use super::fmt::natural;
use super::jobfmt;
use super::squeue::{FIELDS, cell, text};
use spur_proto::v1 as pb;
use std::borrow::Cow;
use std::collections::HashMap;

/// A `-S` list: format letters, each optionally preceded by `-` (descending)
/// or `+`; commas are optional, as in Slurm.
pub fn sort_keys(spec: &str) -> Result<Vec<(char, bool)>, String> {
    let mut keys = vec![];
    let mut desc = false;
    for c in spec.chars() {
        match c {
            ',' | ' ' => {}
            '-' => desc = true,
            '+' => desc = false,
            c if FIELDS.iter().any(|f| f.0 == c) => {
                keys.push((c, desc));
                desc = false;
            }
            c => return Err(format!("--sort: invalid sort field '{c}' in '{spec}' (use format letters)")),
        }
    }
    Ok(keys)
}

/// One job's value for one sort key: a number where the field is one, else
/// its text (compared naturally, so `node9` sorts before `node10`).
enum Key<'a> {
    Num(f64),
    Text(Cow<'a, str>),
}

fn key(code: char, j: &pb::Job, now_ms: i64) -> Key<'_> {
    let n = match code {
        'i' => j.id as f64,
        'p' | 'Q' => j.priority,
        'M' => jobfmt::run_secs(j, now_ms) as f64,
        'l' | 'L' => j.time_limit_minutes.map_or(f64::INFINITY, |m| m as f64),
        'D' => j.num_nodes.into(),
        'C' => j.num_cpus.into(),
        'S' => j.start_ms as f64,
        'V' => j.submit_ms as f64,
        'e' => jobfmt::end_ms(j).unwrap_or(0) as f64,
        't' | 'T' => j.job_state().rank() as f64,
        _ => f64::NAN,
    };
    match text(code, j) {
        _ if !n.is_nan() => Key::Num(n),
        None if code == 'r' => Key::Text(j.reason_text()),
        Some(t) => Key::Text(Cow::Borrowed(t)),
        None => Key::Text(Cow::Owned(cell(code, j, now_ms))),
    }
}

/// A key's values across jobs as numbers whose order is the key's order:
/// text becomes its rank among the distinct values (compared naturally, once
/// per distinct pair), floats their bits flipped to sort as integers, and a
/// descending key the complement. Sorting 100,000 jobs then compares integer
/// rows, not strings, two million times.
fn column(code: char, desc: bool, jobs: &[&pb::Job], now_ms: i64) -> Vec<u64> {
    let keyed: Vec<Key> = jobs.iter().map(|j| key(code, j, now_ms)).collect();
    let mut distinct = Distinct::default();
    let slots: Vec<usize> =
        keyed.iter().map(|k| if let Key::Text(t) = k { distinct.slot(t) } else { 0 }).collect();
    let mut by_name: Vec<usize> = (0..distinct.names.len()).collect();
    by_name.sort_unstable_by(|&a, &b| natural(distinct.names[a], distinct.names[b]));
    let mut rank = vec![0; by_name.len()];
    for (r, slot) in by_name.into_iter().enumerate() {
        rank[slot] = r as u64;
    }
    let flip = if desc { u64::MAX } else { 0 };
    keyed
        .iter()
        .zip(slots)
        .map(|(k, slot)| match k {
            Key::Num(n) => ordered_bits(*n),
            Key::Text(_) => rank[slot],
        })
        .map(|v| v ^ flip)
        .collect()
}

/// The distinct texts of a column, numbered as first seen. A column usually
/// holds a handful (partitions, states), found quicker by a scan than by
/// hashing 100,000 strings; past [`SCAN_UP_TO`] a map takes over.
#[derive(Default)]
struct Distinct<'a> {
    names: Vec<&'a str>,
    map: Option<HashMap<&'a str, usize>>,
}

const SCAN_UP_TO: usize = 16;

impl<'a> Distinct<'a> {
    fn slot(&mut self, t: &'a str) -> usize {
        let found = match &self.map {
            None => self.names.iter().position(|n| *n == t),
            Some(m) => m.get(t).copied(),
        };
        found.unwrap_or_else(|| {
            self.names.push(t);
            let slot = self.names.len() - 1;
            match &mut self.map {
                Some(m) => {
                    m.insert(t, slot);
                }
                None if self.names.len() > SCAN_UP_TO => {
                    self.map = Some(self.names.iter().enumerate().map(|(i, n)| (*n, i)).collect());
                }
                None => {}
            }
            slot
        })
    }
}

/// Sort keys plus the job id that fit a fixed-size row.
const FIXED_ROW: usize = 4;

/// `f64::total_cmp`'s order as an integer.
fn ordered_bits(n: f64) -> u64 {
    let b = n.to_bits();
    if b >> 63 == 1 { !b } else { b | 1 << 63 }
}

/// Sorts by the keys in order; ties fall back to job id, so output is stable.
pub fn sort(jobs: &mut [&pb::Job], keys: &[(char, bool)], now_ms: i64) {
    let cols: Vec<Vec<u64>> = keys.iter().map(|&(c, desc)| column(c, desc, jobs, now_ms)).collect();
    let row = |i: usize| cols.iter().map(move |c| c[i]).chain([jobs[i].id]);
    let order: Vec<usize> = if keys.len() < FIXED_ROW {
        // The usual case (the default is three keys): rows of a fixed size
        // sort in place, with no indirection per comparison.
        let mut rows: Vec<([u64; FIXED_ROW], usize)> = (0..jobs.len())
            .map(|i| {
                let mut r = [0; FIXED_ROW];
                r.iter_mut().zip(row(i)).for_each(|(slot, v)| *slot = v);
                (r, i)
            })
            .collect();
        rows.sort_unstable();
        rows.into_iter().map(|(_, i)| i).collect()
    } else {
        let width = keys.len() + 1;
        let rows: Vec<u64> = (0..jobs.len()).flat_map(row).collect();
        let mut order: Vec<usize> = (0..jobs.len()).collect();
        order.sort_unstable_by(|&x, &y| {
            rows[x * width..(x + 1) * width].cmp(&rows[y * width..(y + 1) * width])
        });
        order
    };
    let sorted: Vec<&pb::Job> = order.iter().map(|&i| jobs[i]).collect();
    jobs.copy_from_slice(&sorted);
}
#[cfg(test)]
mod tests {
    use super::*;

    fn job(id: u64, name: &str, partition: &str, priority: f64) -> pb::Job {
        pb::Job { id, name: name.into(), partition: partition.into(), priority, ..Default::default() }
    }

    fn ids(jobs: &[&pb::Job]) -> Vec<u64> {
        jobs.iter().map(|j| j.id).collect()
    }

    #[test]
    fn text_keys_rank_naturally_past_the_scan() {
        // 40 distinct names, so the map takes over from the scan mid-column.
        let jobs: Vec<pb::Job> =
            (0..40u64).map(|i| job(100 - i, &format!("n{}", (i * 7) % 40), "p", 0.0)).collect();
        let mut shown: Vec<&pb::Job> = jobs.iter().collect();
        sort(&mut shown, &sort_keys("j").unwrap(), 0);
        let names: Vec<&str> = shown.iter().map(|j| j.name.as_str()).collect();
        let want: Vec<String> = (0..40).map(|i| format!("n{i}")).collect();
        assert_eq!(names, want);
        sort(&mut shown, &sort_keys("-j").unwrap(), 0);
        assert_eq!(shown[0].name, "n39");
    }

    #[test]
    fn keys_then_id_break_ties() {
        let jobs = [
            job(4, "a", "gpu", 10.0),
            job(3, "a", "batch", -1.0),
            job(2, "a", "batch", 10.0),
            job(1, "a", "batch", 10.0),
            job(5, "a", "batch", f64::INFINITY),
        ];
        let mut shown: Vec<&pb::Job> = jobs.iter().collect();
        sort(&mut shown, &sort_keys("P,-p").unwrap(), 0);
        assert_eq!(ids(&shown), vec![5, 1, 2, 3, 4]);
        // More keys than a fixed row holds take the other path, same order.
        sort(&mut shown, &sort_keys("P,-p,j,u").unwrap(), 0);
        assert_eq!(ids(&shown), vec![5, 1, 2, 3, 4]);
    }
}
