//! Plain data: the records the controller keeps and persists. No I/O, no proto types.

mod accounting;
mod host;
mod hres;
mod node;
pub mod resv;

pub use accounting::{Account, Assoc, Qos, ROOT_ACCOUNT, User};
pub use host::{
    CORES_PER_SOCKET, HostFacts, MAX_FACTS, MAX_MODALIASES, MAX_OVERRIDES, MAX_TEXT, NUMERIC_FACTS,
    NodeNeeds, SOCKETS, THREADS_PER_CORE, TMP_DISK_MB,
};
pub use hres::{HresLayer, HresMode, HresPlugin, HresResource, INFINITE, LicenseTable, config_path};
pub use node::{BaseState, Node, NodeAdmin, Partition, Reason};
pub use resv::Resv;
