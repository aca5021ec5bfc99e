//! Fencing: the writes of a controller that leads by lease (`ha/lease.rs`)
//! are conditional on its epoch still being the store's. Each write
//! transaction first reads the lease row `FOR SHARE`; a takeover updates
//! that row, so it waits for writes in flight to commit, and every write
//! after it sees the new epoch and is refused. A leader that was paused
//! (SIGSTOP, a stall, a partition) and comes back after another took over
//! cannot land a single write: the first one it tries marks the fence lost,
//! and the controller steps down.

use std::sync::atomic::{AtomicBool, AtomicI64, Ordering};
use tokio::sync::Notify;

/// The statement every fenced write transaction runs first.
pub const READ_EPOCH: &str = "SELECT epoch FROM leader WHERE id = 1 FOR SHARE";

#[derive(Debug, Default)]
pub struct Fence {
    /// The epoch this controller leads in; 0 before it leads.
    epoch: AtomicI64,
    lost: AtomicBool,
    on_lost: Notify,
    /// How long a write transaction of this leader may sit idle before
    /// PostgreSQL ends it (0: its default, none): a leader stopped inside a
    /// write holds the lease row's share lock, which a takeover waits for.
    pub stall_secs: u32,
}

impl Fence {
    pub fn new(epoch: i64) -> Fence {
        Fence { epoch: AtomicI64::new(epoch), ..Fence::default() }
    }

    /// A fence for a leader whose lease lasts `lease_secs`: a stalled write
    /// is ended within half a lease, so a takeover waits at most that long
    /// for it (and the lease itself runs out first).
    pub fn for_lease(lease_secs: u32) -> Fence {
        Fence { stall_secs: (lease_secs / 2).max(1), ..Fence::default() }
    }

    /// Begins leading in `epoch` (a fence opened before the lease was taken).
    pub fn start(&self, epoch: i64) {
        self.epoch.store(epoch, Ordering::Release);
    }

    pub fn epoch(&self) -> i64 {
        self.epoch.load(Ordering::Acquire)
    }

    /// Whether a write may go on, given the epoch the store holds now.
    pub fn check(&self, stored: Option<i64>) -> crate::error::Result<()> {
        let mine = self.epoch();
        if !self.is_lost() && mine > 0 && stored == Some(mine) {
            return Ok(());
        }
        self.lose();
        let now = stored.map_or_else(|| "none".to_string(), |e| e.to_string());
        Err(crate::error::Error::Unavailable(format!(
            "this controller is no longer the leader (it led in epoch {mine}; the store's epoch is {now}); \
             retry: the leader answers"
        )))
    }

    /// Marks the lease lost: no write passes from now on.
    pub fn lose(&self) {
        if !self.lost.swap(true, Ordering::AcqRel) {
            tracing::warn!(
                epoch = self.epoch(),
                "the leader lease is lost: refusing writes and stepping down"
            );
        }
        self.on_lost.notify_waiters();
        self.on_lost.notify_one();
    }

    pub fn is_lost(&self) -> bool {
        self.lost.load(Ordering::Acquire)
    }

    /// Returns once the fence is lost.
    pub async fn lost(&self) {
        while !self.is_lost() {
            self.on_lost.notified().await;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_write_passes_only_in_the_epoch_it_leads_and_never_after_a_loss() {
        let f = Fence::new(3);
        assert!(f.check(Some(3)).is_ok());
        let e = f.check(Some(4)).unwrap_err().to_string();
        assert!(e.contains("led in epoch 3; the store's epoch is 4"), "{e}");
        assert!(f.is_lost());
        // Lost stays lost, even if the store's epoch were read as ours again.
        assert!(f.check(Some(3)).is_err());
        assert!(Fence::new(0).check(Some(0)).is_err(), "epoch 0 leads nothing");
    }
}
