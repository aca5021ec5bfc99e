//! Plain data: the records the controller keeps and persists. No I/O, no proto types.

mod accounting;
mod host;
mod hres;
mod node;
pub mod resv;

pub use accounting::{Account, Assoc, Qos, ROOT_ACCOUNT, User};
pub use host::{HostFacts, MAX_FACTS, MAX_MODALIASES, MAX_OVERRIDES, MAX_TEXT, NUMERIC_FACTS};
pub use hres::{HresLayer, HresMode, HresPlugin, HresResource, INFINITE, LicenseTable, config_path};
pub use node::{BaseState, Node, NodeAdmin, Partition, Reason};
pub use resv::Resv;
