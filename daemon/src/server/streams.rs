//! Long-lived answers (Watch, TailTxn) kept bounded: each user holds at most
//! [`MAX_STREAMS_PER_USER`] of them, and a subscriber that stops reading for
//! [`SLOW_SUBSCRIBER`] is dropped (its stream ends with `Unavailable`; the
//! console reconnects and re-reads, as after any outage), so unread streams
//! cannot grow the controller.

use crate::error::Error;
use std::collections::HashMap;
use std::sync::{Arc, Mutex};
use std::time::Duration;
use tokio::sync::mpsc;

/// Watch and TailTxn streams one user may hold at once.
pub const MAX_STREAMS_PER_USER: usize = 16;
/// How long a full stream may go unread before it is dropped.
pub const SLOW_SUBSCRIBER: Duration = Duration::from_secs(30);
/// HTTP/2 streams one connection may have open at once (its SETTINGS).
pub const MAX_STREAMS_PER_CONNECTION: u32 = 256;

/// How many streams each user holds.
#[derive(Debug, Clone, Default)]
pub struct Streams(Arc<Mutex<HashMap<String, usize>>>);

/// One held stream; dropping it (the stream's task ending) gives the slot back.
#[derive(Debug)]
pub struct Slot {
    streams: Streams,
    user: String,
}

impl Streams {
    /// A slot for one more stream of `user`, or the refusal naming the cap.
    pub fn open(&self, user: &str) -> Result<Slot, Error> {
        let mut held = self.lock();
        let n = held.entry(user.to_string()).or_default();
        if *n >= MAX_STREAMS_PER_USER {
            return Err(Error::ResourceExhausted(format!(
                "'{user}' holds {n} Watch and TailTxn streams; at most {MAX_STREAMS_PER_USER}"
            )));
        }
        *n += 1;
        Ok(Slot { streams: self.clone(), user: user.to_string() })
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, HashMap<String, usize>> {
        self.0.lock().unwrap_or_else(|p| p.into_inner())
    }
}

impl Drop for Slot {
    fn drop(&mut self) {
        let mut held = self.streams.lock();
        if let Some(n) = held.get_mut(&self.user) {
            *n = n.saturating_sub(1);
            if *n == 0 {
                held.remove(&self.user);
            }
        }
    }
}

/// Sends `item` to a subscriber; false when it is gone or has not read for
/// [`SLOW_SUBSCRIBER`] (it is then told why, if there is room, and dropped).
pub async fn send<T>(tx: &mpsc::Sender<Result<T, tonic::Status>>, item: T) -> bool {
    send_within(tx, item, SLOW_SUBSCRIBER).await
}

async fn send_within<T>(tx: &mpsc::Sender<Result<T, tonic::Status>>, item: T, wait: Duration) -> bool {
    match tokio::time::timeout(wait, tx.send(Ok(item))).await {
        Ok(sent) => sent.is_ok(),
        Err(_) => {
            let why = format!("dropped: this stream was not read for {} s; reconnect", wait.as_secs());
            let _ = tx.try_send(Err(tonic::Status::unavailable(why)));
            tracing::warn!("dropped a stream subscriber that stopped reading");
            false
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_user_holds_at_most_the_cap_and_a_closed_stream_frees_its_slot() {
        let s = Streams::default();
        let held: Vec<Slot> = (0..MAX_STREAMS_PER_USER).map(|_| s.open("mallory").unwrap()).collect();
        let e = s.open("mallory").unwrap_err().to_string();
        assert!(e.contains("at most 16"), "{e}");
        assert!(s.open("alice").is_ok(), "each user has their own");
        drop(held);
        assert!(s.open("mallory").is_ok());
        assert!(s.lock().get("alice").is_none(), "no entry is kept for a user with none");
    }

    #[tokio::test]
    async fn a_subscriber_that_stops_reading_is_dropped() {
        let (tx, mut rx) = mpsc::channel::<Result<u32, tonic::Status>>(1);
        let wait = Duration::from_millis(20);
        assert!(send_within(&tx, 1, wait).await);
        assert!(!send_within(&tx, 2, wait).await, "full for the whole wait: dropped");
        assert_eq!(rx.recv().await.unwrap().unwrap(), 1);
        drop(rx);
        assert!(!send(&tx, 3).await, "gone");
    }
}
