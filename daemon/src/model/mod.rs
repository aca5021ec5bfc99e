//! Plain data: the records the controller keeps and persists. No I/O, no proto types.

mod accounting;

pub use accounting::{Account, Assoc, Qos, ROOT_ACCOUNT, User};
