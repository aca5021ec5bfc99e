//! The txn audit log's live side: publishing committed rows to tail
//! subscribers, writing after-the-fact rows with retries, counting what was
//! written and dropped, serving those counters, and retention.
//!
//! - [`hub`]: the broadcast of committed rows, the retrying writer, the counters.
//! - [`claim`]: a request's row, committed in the same transaction as its change.
//! - [`metrics`]: the Prometheus `/metrics` endpoint.

pub mod claim;
pub mod hub;
pub mod metrics;

pub use hub::Hub;
