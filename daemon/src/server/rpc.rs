//! Every RPC the controller serves, classified once: what it is (read,
//! mutation, internal), the least role that may call it, and for a mutation
//! the audited entity and the request field that names its target.
//! The auth layer and the gate both read this table; it keys on the path
//! constants of [`super::path`], which the handlers pass to the gate. A test
//! checks that it covers every RPC in the `.proto` files.

use super::path::{
    accounting, admission, agent, audit, cluster, health, jobs, licenses, nodes, reflection,
    reflection_v1alpha, reservations, session, steps,
};
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
    /// A client call the spec keeps out of the txn log (srun's step create
    /// and complete): role-checked like a read, never recorded.
    Unaudited(Role),
}

impl Class {
    pub fn least_role(self) -> Role {
        match self {
            Class::Read(r) | Class::Mutate { role: r, .. } | Class::Unaudited(r) => r,
            Class::Internal => Role::None,
        }
    }
}

/// Mutations whose target is permanently blank (filter those with Entity=).
pub const UNNAMED_TARGETS: &[&str] = &[nodes::RECONFIGURE, cluster::RESET_DIAG];

use Class::*;
use spur_vocab::names::AdminLevel::{Administrator as Admin, None as Anyone, Operator};

const fn acct(entity: &'static str) -> Class {
    Mutate { entity, role: Operator, target: "name", in_txn: true }
}

pub const RPCS: &[(&str, Class)] = &[
    (accounting::LIST_QOS, Read(Anyone)),
    (accounting::SET_QOS, acct("qos")),
    (accounting::DELETE_QOS, acct("qos")),
    (accounting::LIST_ACCOUNTS, Read(Anyone)),
    (accounting::SET_ACCOUNT, acct("account")),
    (accounting::DELETE_ACCOUNT, acct("account")),
    (accounting::LIST_USERS, Read(Anyone)),
    (accounting::SET_USER, acct("user")),
    (accounting::DELETE_USER, acct("user")),
    (accounting::LIST_TRES, Read(Anyone)),
    (audit::LIST_TXN, Read(Operator)),
    (audit::TAIL_TXN, Read(Operator)),
    (session::WHO_AM_I, Read(Anyone)),
    (admission::CREATE_TOKEN, Mutate { entity: "token", role: Admin, target: "id", in_txn: false }),
    (admission::LIST_TOKENS, Read(Admin)),
    (admission::REVOKE_TOKEN, Mutate { entity: "token", role: Admin, target: "id", in_txn: false }),
    (nodes::LIST_NODES, Read(Anyone)),
    (nodes::UPDATE_NODES, Mutate { entity: "node", role: Admin, target: "nodes", in_txn: false }),
    (nodes::LIST_PARTITIONS, Read(Anyone)),
    (nodes::UPDATE_PARTITION, Mutate { entity: "partition", role: Admin, target: "name", in_txn: false }),
    (nodes::LIST_PROVISIONERS, Read(Anyone)),
    (nodes::CREATE_NODE, Mutate { entity: "node", role: Admin, target: "name", in_txn: false }),
    (nodes::DELETE_NODE, Mutate { entity: "node", role: Admin, target: "name", in_txn: false }),
    (nodes::RECONFIGURE, Mutate { entity: "config", role: Admin, target: "", in_txn: false }),
    (cluster::WATCH, Read(Anyone)),
    (cluster::SHOW_CONFIG, Read(Anyone)),
    (
        reservations::CREATE_RESERVATION,
        Mutate { entity: "reservation", role: Operator, target: "name", in_txn: false },
    ),
    (
        reservations::UPDATE_RESERVATION,
        Mutate { entity: "reservation", role: Operator, target: "name", in_txn: false },
    ),
    (
        reservations::DELETE_RESERVATION,
        Mutate { entity: "reservation", role: Operator, target: "name", in_txn: false },
    ),
    (reservations::LIST_RESERVATIONS, Read(Anyone)),
    (cluster::DIAG, Read(Anyone)),
    // Zeroes sdiag's counters; changes no stored state, so its row is its one write.
    (cluster::RESET_DIAG, Mutate { entity: "diag", role: Admin, target: "", in_txn: false }),
    (cluster::TAKEOVER, Mutate { entity: "controller", role: Admin, target: "to", in_txn: false }),
    (licenses::SHOW_LICENSES, Read(Anyone)),
    (licenses::UPDATE_HRES, Mutate { entity: "hres", role: Admin, target: "hres_name", in_txn: false }),
    // Anyone may submit and manage their own jobs; the jobs core checks
    // ownership, and Operator and above manage anyone's.
    (jobs::SUBMIT, Mutate { entity: "job", role: Anyone, target: "id", in_txn: false }),
    // Stores nothing: a read, however it is asked.
    (jobs::TEST_SUBMIT, Read(Anyone)),
    (jobs::LIST_JOBS, Read(Anyone)),
    (jobs::STREAM_JOBS, Read(Anyone)),
    (jobs::LIST_SHARES, Read(Anyone)),
    (jobs::EXPLAIN, Read(Anyone)),
    // sreport: sums per account and user, as Slurm shows anyone without PrivateData.
    (jobs::USAGE, Read(Anyone)),
    (jobs::CANCEL, Mutate { entity: "job", role: Anyone, target: "ids", in_txn: false }),
    (jobs::UPDATE_JOB, Mutate { entity: "job", role: Anyone, target: "id", in_txn: false }),
    (agent::REGISTER, Internal),
    (agent::HEARTBEAT, Internal),
    (agent::COMMANDS, Internal),
    (agent::REPORT_JOB, Internal),
    (agent::STEP_IO, Internal),
    (agent::REPORT_USE, Internal),
    (agent::REPORT_BCAST, Internal),
    (agent::REPORT_OUTPUT, Internal),
    // The steps core checks the caller owns the job (or is an Operator).
    (steps::RUN_STEP, Unaudited(Anyone)),
    // sstat: the steps core checks the caller owns the job (or is an Operator).
    (steps::STEP_STATS, Read(Anyone)),
    // sbcast writes on the job's nodes as the job's user and changes no record, as a step's
    // tasks do: unaudited, like RunStep; the steps core checks the caller owns the job.
    (steps::BCAST, Unaudited(Anyone)),
    // sattach: the steps core checks the caller owns the job (or is an Operator).
    (steps::ATTACH, Read(Anyone)),
    // spur tail: the output core checks the caller owns the job (or is an Operator) before
    // anything is asked of an agent.
    (steps::TAIL_OUTPUT, Read(Anyone)),
    (steps::SIGNAL_STEPS, Mutate { entity: "job", role: Anyone, target: "steps", in_txn: false }),
    (health::CHECK, Internal),
    (health::WATCH, Internal),
    (reflection::INFO, Internal),
    (reflection_v1alpha::INFO, Internal),
];

/// Paths that answer without user credentials even under `mode = required`:
/// probes and the console's liveness watch, and node agents, which are
/// admitted by admission token instead.
pub const UNAUTHENTICATED: &[&str] = &[
    health::CHECK,
    health::WATCH,
    agent::REGISTER,
    agent::HEARTBEAT,
    agent::COMMANDS,
    agent::REPORT_JOB,
    agent::STEP_IO,
    agent::REPORT_USE,
    agent::REPORT_BCAST,
    agent::REPORT_OUTPUT,
];

/// Paths answered with no credential at all, under every plugin: health
/// probes (a load balancer finding the leader by `spur.v1.Leader` has no
/// MUNGE credential). They say only whether a service is up.
pub const OPEN: &[&str] = &[health::CHECK, health::WATCH];

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

    /// The constants are the protos' RPCs, no more and no fewer, and each is
    /// classified exactly once.
    #[test]
    fn the_path_constants_are_the_protos_rpcs() {
        let consts = super::super::path::all();
        let ours: Vec<&str> = consts.iter().copied().filter(|p| p.starts_with("/spur.")).collect();
        let mut protos = proto_rpcs();
        protos.sort();
        let mut sorted = ours.clone();
        sorted.sort();
        assert_eq!(sorted, protos, "server/path.rs and the .proto files disagree");
        for p in &consts {
            let n = RPCS.iter().filter(|(q, _)| q == p).count();
            assert_eq!(n, 1, "{p} is classified {n} times in RPCS");
        }
        assert_eq!(RPCS.len(), consts.len(), "RPCS names a path with no constant");
    }
}
