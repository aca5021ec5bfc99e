//! The txn audit log's live side: publishing committed rows to tail
//! subscribers, writing after-the-fact rows with retries, counting what was
//! written and dropped, serving those counters, and retention.
//!
//! - [`hub`]: the broadcast of committed rows, the retrying writer, the counters.
//! - [`metrics`]: the Prometheus `/metrics` endpoint.

pub mod hub;
pub mod metrics;

pub use hub::Hub;
