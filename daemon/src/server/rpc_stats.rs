//! sdiag's "Remote Procedure Call statistics by message type": calls and time
//! per RPC, counted by the gate around every handler. One pair of atomics per
//! line of [`super::rpc::RPCS`], so counting a call takes no lock. Streams
//! count once, for the time to open them. Per-user figures are not kept: they
//! would need a map, and so a lock, on every request.

use super::rpc::{RPCS, method_name};
use spur_proto::v1 as pb;
use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering::Relaxed};

#[derive(Debug)]
pub struct RpcStats {
    /// `(count, total microseconds)` per RPC, in the order of `RPCS`.
    calls: Box<[(AtomicU64, AtomicU64)]>,
    /// Every call since the controller started, never reset: the history's
    /// RPCs per second (`jobs::diag`, which samples it) are its differences.
    total: Arc<AtomicU64>,
}

impl Default for RpcStats {
    fn default() -> Self {
        RpcStats::counting(Arc::default())
    }
}

impl RpcStats {
    /// Figures that also count every call into `total`.
    pub fn counting(total: Arc<AtomicU64>) -> Self {
        RpcStats { calls: RPCS.iter().map(|_| (AtomicU64::new(0), AtomicU64::new(0))).collect(), total }
    }

    /// One call of the RPC at `path` that took `took_us`; a path not in the table is not counted.
    pub fn note(&self, path: &str, took_us: u64) {
        self.total.fetch_add(1, Relaxed);
        if let Some((count, total)) =
            RPCS.iter().position(|(p, _)| *p == path).and_then(|i| self.calls.get(i))
        {
            count.fetch_add(1, Relaxed);
            total.fetch_add(took_us, Relaxed);
        }
    }

    pub fn reset(&self) {
        for (count, total) in self.calls.iter() {
            count.store(0, Relaxed);
            total.store(0, Relaxed);
        }
    }

    /// The RPCs called at least once, in table order, named `Service/Method`.
    pub fn read(&self) -> Vec<pb::RpcStat> {
        RPCS.iter()
            .zip(self.calls.iter())
            .enumerate()
            .filter_map(|(i, ((path, _), (count, total)))| {
                let count = count.load(Relaxed);
                (count > 0).then(|| pb::RpcStat {
                    name: short_name(path),
                    id: u32::try_from(i).unwrap_or(u32::MAX),
                    count,
                    total_us: total.load(Relaxed),
                })
            })
            .collect()
    }
}

/// `Jobs/ListJobs` from `/spur.v1.Jobs/ListJobs`.
fn short_name(path: &str) -> String {
    let service = path.trim_start_matches('/').split('/').next().unwrap_or_default();
    let service = service.rsplit('.').next().unwrap_or(service);
    format!("{service}/{}", method_name(path))
}

#[cfg(test)]
mod tests {
    use super::super::path::{cluster, jobs};
    use super::*;

    #[test]
    fn calls_are_counted_per_rpc_and_reset_to_nothing() {
        let s = RpcStats::default();
        s.note(jobs::LIST_JOBS, 10);
        s.note(jobs::LIST_JOBS, 30);
        s.note(cluster::SHOW_CONFIG, 5);
        s.note("/no.Such/Rpc", 5);
        let rows = s.read();
        let list = rows.iter().find(|r| r.name == "Jobs/ListJobs").unwrap();
        assert_eq!((list.count, list.total_us), (2, 40));
        assert_eq!(rows.len(), 2, "{rows:?}");
        s.reset();
        assert!(s.read().is_empty());
        assert_eq!(s.total.load(Relaxed), 4, "the total counts every call and is never reset");
    }
}
