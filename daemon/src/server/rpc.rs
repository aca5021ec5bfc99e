//! Every RPC the controller serves, classified once: what it is (read,
//! mutation, internal), the least role that may call it, and for a mutation
//! the audited entity and the request field that names its target.
//! The auth layer and the gate both read this table; a test checks that it
//! covers every RPC in the `.proto` files.

use crate::auth::Role;

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Class {
    /// A read; the least role allowed.
    Read(Role),
    /// A write, audited as `entity:target`.
    Mutate {
        entity: &'static str,
        role: Role,
        /// The request field naming the target; empty only for actions with
        /// no single target (see [`UNNAMED_TARGETS`]).
        target: &'static str,
        /// The row is written inside the store transaction of the change
        /// (accounting records); otherwise after the fact.
        in_txn: bool,
    },
    /// Daemon-to-daemon or infrastructure traffic: never in the txn log.
    Internal,
}

impl Class {
    pub fn least_role(self) -> Role {
        match self {
            Class::Read(r) | Class::Mutate { role: r, .. } => r,
            Class::Internal => Role::None,
        }
    }
}

/// Mutations whose target is permanently blank (filter those with Entity=).
pub const UNNAMED_TARGETS: &[&str] = &["/spur.v1.Nodes/Reconfigure"];

use Class::*;
use spur_vocab::names::AdminLevel::{Administrator as Admin, None as Anyone, Operator};

const fn acct(entity: &'static str) -> Class {
    Mutate { entity, role: Operator, target: "name", in_txn: true }
}

pub const RPCS: &[(&str, Class)] = &[
    ("/spur.v1.Accounting/ListQos", Read(Anyone)),
    ("/spur.v1.Accounting/SetQos", acct("qos")),
    ("/spur.v1.Accounting/DeleteQos", acct("qos")),
    ("/spur.v1.Accounting/ListAccounts", Read(Anyone)),
    ("/spur.v1.Accounting/SetAccount", acct("account")),
    ("/spur.v1.Accounting/DeleteAccount", acct("account")),
    ("/spur.v1.Accounting/ListUsers", Read(Anyone)),
    ("/spur.v1.Accounting/SetUser", acct("user")),
    ("/spur.v1.Accounting/DeleteUser", acct("user")),
    ("/spur.v1.Accounting/ListTres", Read(Anyone)),
    ("/spur.v1.Audit/ListTxn", Read(Operator)),
    ("/spur.v1.Audit/TailTxn", Read(Operator)),
    ("/spur.v1.Session/WhoAmI", Read(Anyone)),
    ("/spur.v1.Admission/CreateToken", Mutate { entity: "token", role: Admin, target: "id", in_txn: false }),
    ("/spur.v1.Admission/ListTokens", Read(Admin)),
    ("/spur.v1.Admission/RevokeToken", Mutate { entity: "token", role: Admin, target: "id", in_txn: false }),
    ("/spur.v1.Nodes/ListNodes", Read(Anyone)),
    ("/spur.v1.Nodes/UpdateNodes", Mutate { entity: "node", role: Admin, target: "nodes", in_txn: false }),
    ("/spur.v1.Nodes/ListPartitions", Read(Anyone)),
    (
        "/spur.v1.Nodes/UpdatePartition",
        Mutate { entity: "partition", role: Admin, target: "name", in_txn: false },
    ),
    ("/spur.v1.Nodes/Reconfigure", Mutate { entity: "config", role: Admin, target: "", in_txn: false }),
    ("/spur.v1.Cluster/Watch", Read(Anyone)),
    ("/spur.v1.Licenses/ShowLicenses", Read(Anyone)),
    (
        "/spur.v1.Licenses/UpdateHres",
        Mutate { entity: "hres", role: Admin, target: "hres_name", in_txn: false },
    ),
    // Anyone may submit and manage their own jobs; the jobs core checks
    // ownership, and Operator and above manage anyone's.
    ("/spur.v1.Jobs/Submit", Mutate { entity: "job", role: Anyone, target: "id", in_txn: false }),
    ("/spur.v1.Jobs/ListJobs", Read(Anyone)),
    ("/spur.v1.Jobs/StreamJobs", Read(Anyone)),
    ("/spur.v1.Jobs/ListShares", Read(Anyone)),
    ("/spur.v1.Jobs/Explain", Read(Anyone)),
    ("/spur.v1.Jobs/Cancel", Mutate { entity: "job", role: Anyone, target: "ids", in_txn: false }),
    ("/spur.v1.Jobs/UpdateJob", Mutate { entity: "job", role: Anyone, target: "id", in_txn: false }),
    ("/spur.v1.Agent/Register", Internal),
    ("/spur.v1.Agent/Heartbeat", Internal),
    ("/spur.v1.Agent/Commands", Internal),
    ("/spur.v1.Agent/ReportJob", Internal),
    ("/grpc.health.v1.Health/Check", Internal),
    ("/grpc.health.v1.Health/Watch", Internal),
    ("/grpc.reflection.v1.ServerReflection/ServerReflectionInfo", Internal),
    ("/grpc.reflection.v1alpha.ServerReflection/ServerReflectionInfo", Internal),
];

/// Paths that answer without user credentials even under `mode = required`:
/// probes and the console's liveness watch, and node agents, which are
/// admitted by admission token instead.
pub const UNAUTHENTICATED: &[&str] = &[
    "/grpc.health.v1.Health/Check",
    "/grpc.health.v1.Health/Watch",
    "/spur.v1.Agent/Register",
    "/spur.v1.Agent/Heartbeat",
    "/spur.v1.Agent/Commands",
    "/spur.v1.Agent/ReportJob",
];

pub fn classify(path: &str) -> Option<Class> {
    RPCS.iter().find(|(p, _)| *p == path).map(|(_, c)| *c)
}

/// `ListQos` from `/spur.v1.Accounting/ListQos`.
pub fn method_name(path: &str) -> &str {
    path.rsplit('/').next().unwrap_or(path)
}

#[cfg(test)]
mod tests {
    use super::*;
    use prost::Message;

    /// Every RPC in the `.proto` files, as `/package.Service/Method`.
    fn proto_rpcs() -> Vec<String> {
        let fds = prost_types::FileDescriptorSet::decode(spur_proto::FILE_DESCRIPTOR_SET).unwrap();
        let mut out = vec![];
        for f in &fds.file {
            for s in &f.service {
                for m in &s.method {
                    out.push(format!("/{}.{}/{}", f.package(), s.name(), m.name()));
                }
            }
        }
        out
    }

    #[test]
    fn every_rpc_in_the_protos_is_classified() {
        let rpcs = proto_rpcs();
        assert!(rpcs.len() >= 16, "{rpcs:?}");
        let missing: Vec<&String> = rpcs.iter().filter(|p| classify(p).is_none()).collect();
        assert!(
            missing.is_empty(),
            "classify these RPCs in RPCS (mutating, read-only or internal): {missing:?}"
        );
    }

    #[test]
    fn every_mutating_rpc_names_its_target() {
        for (path, class) in RPCS {
            if let Class::Mutate { entity, target, .. } = class {
                assert!(!entity.is_empty(), "{path} has no entity");
                assert!(
                    !target.is_empty() || UNNAMED_TARGETS.contains(path),
                    "{path} is mutating but does not name its target"
                );
            }
        }
    }

    #[test]
    fn the_table_names_only_real_rpcs() {
        let rpcs = proto_rpcs();
        for (path, _) in RPCS.iter().filter(|(p, _)| p.starts_with("/spur.")) {
            assert!(rpcs.iter().any(|r| r == path), "{path} is classified but not in the protos");
        }
    }
}
