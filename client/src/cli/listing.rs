//! A large job listing on the client's cores: the pages of `StreamJobs`
//! decoded on a second thread while the next pages arrive, and output text
//! built in parallel chunks. Over 100,000 jobs each step is some 100 ms on
//! one core, and nothing else runs while squeue waits for them.

use prost::Message;
use prost::encoding::{WireType, decode_key, decode_varint};
use spur_proto::v1 as pb;
use std::ops::Range;

/// Threads decoding pages: squeue's other thread mostly waits on the network.
const DECODERS: usize = 2;

/// Below this many items one thread is quicker than starting more.
const PARALLEL_FROM: usize = 10_000;

/// Every page of a `StreamJobs` listing, decoded on a thread of its own as
/// the pages arrive.
pub async fn collect(pages: tonic::Streaming<pb::ListJobsResponse>) -> Result<Vec<pb::Job>, String> {
    collect_as(pages).await
}

/// [`collect`], each job decoded as `T`: a message holding some of Job's
/// fields under the same numbers (sprio's `JobPriority`), so a row keeps
/// only what its command shows.
pub async fn collect_as<T: Row>(mut pages: tonic::Streaming<pb::ListJobsResponse>) -> Result<Vec<T>, String> {
    // Pages go round-robin to the decoders; each keeps (page number, jobs).
    let (txs, decoders): (Vec<_>, Vec<_>) = (0..DECODERS)
        .map(|_| {
            let (tx, rx) = std::sync::mpsc::channel::<(usize, pb::ListJobsResponse)>();
            let decoder = std::thread::spawn(move || -> Result<Vec<(usize, Vec<T>)>, String> {
                rx.into_iter().map(|(n, page)| Ok((n, unpack_as(page)?))).collect()
            });
            (tx, decoder)
        })
        .unzip();
    let mut failed = None;
    for n in 0.. {
        match pages.message().await {
            Ok(Some(page)) => {
                // A send fails only once its decoder has stopped on an error, which join reports.
                if txs[n % DECODERS].send((n, page)).is_err() {
                    break;
                }
            }
            Ok(None) => break,
            Err(e) => {
                failed = Some(super::fmt::status(e));
                break;
            }
        }
    }
    drop(txs);
    let mut parts = Vec::new();
    for d in decoders {
        parts.extend(d.join().unwrap_or_else(|p| std::panic::resume_unwind(p))?);
    }
    if let Some(e) = failed {
        return Err(e);
    }
    parts.sort_unstable_by_key(|(n, _)| *n);
    let mut jobs = Vec::with_capacity(parts.iter().map(|(_, v)| v.len()).sum());
    parts.into_iter().for_each(|(_, v)| jobs.extend(v));
    Ok(jobs)
}

/// A listing's row: `pb::Job`, or a message with a subset of its fields.
pub trait Row: Message + Default + Send + 'static {
    fn from_job(j: pb::Job) -> Result<Self, String>;
}

impl Row for pb::Job {
    fn from_job(j: pb::Job) -> Result<Self, String> {
        Ok(j)
    }
}

impl Row for pb::JobPriority {
    /// Same field numbers, so the bytes of one are the other with fields left out.
    fn from_job(j: pb::Job) -> Result<Self, String> {
        Self::decode(j.encode_to_vec().as_slice()).map_err(|e| e.to_string())
    }
}

/// The jobs of one listing or page, decoded from `packed` when the controller filled it.
pub fn unpack(r: pb::ListJobsResponse) -> Result<Vec<pb::Job>, String> {
    unpack_as(r)
}

/// [`unpack`], each job decoded as `T`.
pub fn unpack_as<T: Row>(r: pb::ListJobsResponse) -> Result<Vec<T>, String> {
    if r.packed.is_empty() {
        return r.jobs.into_iter().map(T::from_job).collect();
    }
    let bad = |e: String| format!("the controller sent a packed listing that does not decode: {e}");
    let spans = spans(&r.packed).map_err(bad)?;
    let mut rows = Vec::with_capacity(spans.len());
    for s in spans {
        rows.push(T::decode(r.packed.slice(s)).map_err(|e| bad(e.to_string()))?);
    }
    Ok(rows)
}

/// Where each `jobs` entry's message lies in the bytes of a ListJobsResponse.
fn spans(bytes: &[u8]) -> Result<Vec<Range<usize>>, String> {
    let mut buf = bytes;
    let mut out = Vec::with_capacity(bytes.len() / 64);
    while !buf.is_empty() {
        let (tag, wire) = decode_key(&mut buf).map_err(|e| e.to_string())?;
        if (tag, wire) != (1, WireType::LengthDelimited) {
            return Err(format!("field {tag} ({wire:?}) where only jobs (field 1) belong"));
        }
        let len = decode_varint(&mut buf).map_err(|e| e.to_string())?;
        let start = bytes.len() - buf.len();
        let len = usize::try_from(len).ok().filter(|l| *l <= buf.len());
        let len = len.ok_or_else(|| format!("a job at byte {start} runs past the end"))?;
        out.push(start..start + len);
        buf = &buf[len..];
    }
    Ok(out)
}

/// `f` over consecutive chunks of `items`, one chunk per core, in order.
pub fn par_map<T: Sync, R: Send>(items: &[T], f: impl Fn(&[T]) -> R + Sync) -> Vec<R> {
    let cores = std::thread::available_parallelism().map_or(1, |n| n.get()).min(8);
    if cores < 2 || items.len() < PARALLEL_FROM {
        return vec![f(items)];
    }
    let size = items.len().div_ceil(cores);
    std::thread::scope(|s| {
        let f = &f;
        let handles: Vec<_> = items.chunks(size).map(|c| s.spawn(move || f(c))).collect();
        // A chunk's thread panics only if `f` does; the panic then goes on here.
        handles.into_iter().map(|h| h.join().unwrap_or_else(|p| std::panic::resume_unwind(p))).collect()
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::vocab::JobState;

    fn job(id: u64) -> pb::Job {
        pb::Job {
            id,
            name: format!("job{id}"),
            user: "alice".into(),
            nodes: vec!["n1".into()],
            ..pb::Job::default()
        }
    }

    fn packed(jobs: Vec<pb::Job>) -> pb::ListJobsResponse {
        let inner = pb::ListJobsResponse { jobs, ..Default::default() }.encode_to_vec();
        pb::ListJobsResponse { seq: 7, packed: inner.into(), ..Default::default() }
    }

    #[test]
    fn unpacks_in_order() {
        let jobs: Vec<pb::Job> = (1..=25_000).map(job).collect();
        assert_eq!(unpack(packed(jobs.clone())).unwrap(), jobs);
        assert_eq!(unpack(packed(vec![])).unwrap(), vec![]);
        let plain = pb::ListJobsResponse { jobs: vec![job(3)], ..Default::default() };
        assert_eq!(unpack(plain).unwrap(), vec![job(3)]);
    }

    #[test]
    fn a_job_decodes_as_its_priority_row() {
        let mut j = job(9);
        (j.account, j.qos, j.partition, j.state) =
            ("ml".into(), "high".into(), "gpu".into(), spur_proto::states::state_wire(JobState::Pending));
        (j.priority, j.prio_base, j.prio_fair_share, j.prio_age, j.prio_tier) = (3000.5, 1000.0, 1.5, 2.0, 2);
        let want = pb::JobPriority {
            id: 9,
            user: "alice".into(),
            account: "ml".into(),
            qos: "high".into(),
            partition: "gpu".into(),
            state: spur_proto::states::state_wire(JobState::Pending),
            priority: 3000.5,
            prio_base: 1000.0,
            prio_fair_share: 1.5,
            prio_age: 2.0,
            prio_tier: 2,
            prio_ordered: None,
        };
        assert_eq!(unpack_as::<pb::JobPriority>(packed(vec![j.clone()])).unwrap(), vec![want.clone()]);
        let plain = pb::ListJobsResponse { jobs: vec![j], ..Default::default() };
        assert_eq!(unpack_as::<pb::JobPriority>(plain).unwrap(), vec![want]);
    }

    #[test]
    fn bad_bytes_are_an_error_not_a_panic() {
        let mut r = packed(vec![job(1), job(2)]);
        let whole = r.packed.clone();
        r.packed = whole.slice(..whole.len() - 3);
        let e = unpack(r).unwrap_err();
        assert!(e.contains("runs past the end"), "{e}");
        let wrong = pb::ListJobsResponse { seq: 9, ..Default::default() }.encode_to_vec();
        let e = unpack(pb::ListJobsResponse { packed: wrong.into(), ..Default::default() }).unwrap_err();
        assert!(e.contains("field 2"), "{e}");
        let junk = pb::ListJobsResponse { packed: vec![0x0a, 0x02, 0xff, 0xff].into(), ..Default::default() };
        assert!(unpack(junk).unwrap_err().contains("does not decode"));
    }

    #[test]
    fn par_map_keeps_order() {
        let v: Vec<u32> = (0..50_000).collect();
        let sums: Vec<u64> = par_map(&v, |c| c.iter().map(|x| u64::from(*x)).sum());
        assert_eq!(sums.iter().sum::<u64>(), (0..50_000u64).sum::<u64>());
        let firsts: Vec<u32> = par_map(&v, |c| c[0]);
        assert!(firsts.windows(2).all(|w| w[0] < w[1]));
    }
}
