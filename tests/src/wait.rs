//! Waiting for an event with the shared deadline ([`DEADLINE`]), instead
//! of a hand-rolled poll loop in every test. The check says why it is not
//! ready yet (an `Err`), and that reason is in the failure at the deadline.

use crate::proc::DEADLINE;
use std::fmt::Display;
use std::future::Future;
use std::time::{Duration, Instant};

/// How often a condition is polled: short against the deadline, long
/// enough not to load a 2-core machine.
const POLL: Duration = Duration::from_millis(50);

/// What a check returns: ready with a value, or not yet (with a reason).
pub trait Poll {
    type Value;
    fn ready(self) -> Result<Self::Value, String>;
}

impl<T> Poll for Option<T> {
    type Value = T;
    fn ready(self) -> Result<T, String> {
        self.ok_or_else(String::new)
    }
}

/// Not ready, with the reason as the check wrote it (a screen, a record).
impl<T> Poll for Result<T, String> {
    type Value = T;
    fn ready(self) -> Result<T, String> {
        self
    }
}

fn timed_out(what: &dyn Display, last: &str) -> ! {
    if last.is_empty() {
        panic!("timed out waiting for {what}");
    }
    panic!("timed out waiting for {what}; the last check: {last}")
}

/// Polls the async `check` until it is ready, failing the test at the
/// deadline with `what` and the last reason it gave.
pub async fn wait_until<P, Fut>(what: impl Display, mut check: impl FnMut() -> Fut) -> P::Value
where
    P: Poll,
    Fut: Future<Output = P>,
{
    let start = Instant::now();
    loop {
        match check().await.ready() {
            Ok(v) => return v,
            Err(last) if start.elapsed() >= DEADLINE => timed_out(&what, &last),
            Err(_) => tokio::time::sleep(POLL).await,
        }
    }
}

/// [`wait_until`] for a blocking check, from a synchronous test.
pub fn wait_until_blocking<P: Poll>(what: impl Display, mut check: impl FnMut() -> P) -> P::Value {
    let start = Instant::now();
    loop {
        match check().ready() {
            Ok(v) => return v,
            Err(last) if start.elapsed() >= DEADLINE => timed_out(&what, &last),
            Err(_) => std::thread::sleep(POLL),
        }
    }
}

/// Polls `check`, which says how far along a long run is (a count) and
/// whether it is done, failing only when the count has not moved for the
/// deadline: a run of a thousand jobs takes what the machine's load makes
/// it take, and only a stall is a failure.
pub fn wait_progress(what: impl Display, mut check: impl FnMut() -> (u64, bool)) {
    let (mut since, mut seen) = (Instant::now(), None);
    loop {
        let (n, done) = check();
        if done {
            return;
        }
        if seen != Some(n) {
            (since, seen) = (Instant::now(), Some(n));
        } else if since.elapsed() >= DEADLINE {
            timed_out(&what, &format!("no progress for {DEADLINE:?}, stuck at {n}"));
        }
        std::thread::sleep(POLL);
    }
}
