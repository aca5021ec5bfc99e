//! sinfo's fields: the letters of `-o`, the names of `-O`, how each groups
//! nodes into lines (a partition's or a node's property splits them, sizes
//! show `min+`, totals sum), and each field's value for a line of nodes.

use crate::cli::fmt::natural;
use crate::cli::nodefmt::state;
use crate::vocab::hostlist;
use crate::vocab::txn::format_time;
use spur_proto::v1 as pb;

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Kind {
    /// A partition property: groups split on it.
    Part,
    /// A node property: groups split on it.
    Node,
    /// Per-node size: shown as `min+` unless `-e`, which splits on it.
    Size,
    /// Summed or listed over the group's nodes.
    Total,
}

/// Each field letter: its header, its `-O` name (Slurm's spelling, any
/// case) and how it groups.
const CODES: &[(char, &str, &str, Kind)] = &[
    ('P', "PARTITION", "Partition", Kind::Part),
    ('R', "PARTITION", "PartitionName", Kind::Part),
    ('a', "AVAIL", "Available", Kind::Part),
    ('l', "TIMELIMIT", "Time", Kind::Part),
    ('L', "DEFAULTTIME", "DefaultTime", Kind::Part),
    ('p', "PRIO_TIER", "PriorityTier", Kind::Part),
    ('M', "PREEMPT_MODE", "PreemptMode", Kind::Part),
    ('t', "STATE", "StateCompact", Kind::Node),
    ('T', "STATE", "StateLong", Kind::Node),
    ('E', "REASON", "Reason", Kind::Node),
    ('u', "USER", "User", Kind::Node),
    ('U', "USER", "UserLong", Kind::Node),
    ('H', "TIMESTAMP", "TimeStamp", Kind::Node),
    ('f', "AVAIL_FEATURES", "Features", Kind::Node),
    ('b', "ACTIVE_FEATURES", "features_act", Kind::Node),
    ('G', "GRES", "Gres", Kind::Node),
    (GRES_USED, "GRES_USED", "GresUsed", Kind::Node),
    (AGENT_HOST, "AGENT_HOST", "AgentHost", Kind::Node),
    ('n', "HOSTNAMES", "NodeHost", Kind::Node),
    // The agent's host is where the controller reaches the node.
    ('o', "NODE_ADDR", "NodeAddr", Kind::Node),
    (DEFINITION, "DEFINITION", "Definition", Kind::Node),
    (STATE_COMPLETE, "STATECOMPLETE", "StateComplete", Kind::Node),
    ('c', "CPUS", "CPUs", Kind::Size),
    ('m', "MEMORY", "Memory", Kind::Size),
    (ALLOC_MEM, "ALLOCMEM", "AllocMem", Kind::Size),
    ('w', "WEIGHT", "Weight", Kind::Size),
    // Slurm's topology defaults for a node configured by its CPUs alone:
    // one socket of CPUs cores, one thread each.
    ('Y', "CORES", "Cores", Kind::Size),
    ('X', "SOCKETS", "Sockets", Kind::Node),
    ('Z', "THREADS", "Threads", Kind::Node),
    ('z', "S:C:T", "SocketCoreThread", Kind::Node),
    ('D', "NODES", "Nodes", Kind::Total),
    ('N', "NODELIST", "NodeList", Kind::Total),
    ('C', "CPUS(A/I/O/T)", "CPUsState", Kind::Total),
    ('F', "NODES(A/I/O/T)", "NodeAIOT", Kind::Total),
    ('A', "NODES(A/I)", "NodeAI", Kind::Total),
    // Accepted without data: Spur has no partition access lists, job size
    // limits, per-partition CPU caps, reservations, temporary disk, OS load
    // or free memory, node comments, agent versions or ports. Each prints
    // Slurm's value for "not set" (a partition's defaults are Slurm's own).
    ('B', "MAX_CPUS_PER_NODE", "MaxCPUsPerNode", Kind::Part),
    ('g', "GROUPS", "Groups", Kind::Part),
    ('h', "OVERSUBSCRIBE", "OverSubscribe", Kind::Part),
    ('I', "PRIO_JOB_FACTOR", "PriorityJobFactor", Kind::Part),
    ('r', "ROOT", "Root", Kind::Part),
    ('s', "JOB_SIZE", "Size", Kind::Part),
    ('S', "ALLOCNODES", "AllocNodes", Kind::Part),
    ('V', "CLUSTER", "Cluster", Kind::Part),
    ('d', "TMP_DISK", "Disk", Kind::Node),
    ('e', "FREE_MEM", "FreeMem", Kind::Node),
    ('O', "CPU_LOAD", "CPUsLoad", Kind::Node),
    ('i', "RESERVATION", "Reservation", Kind::Node),
    ('v', "VERSION", "Version", Kind::Node),
    (COMMENT, "COMMENT", "Comment", Kind::Node),
    (EXTRA, "EXTRA", "Extra", Kind::Node),
    (PORT, "PORT", "Port", Kind::Node),
];

/// Slurm's hidden spelling of `OverSubscribe`.
const ALIASES: &[(&str, char)] = &[("Share", 'h')];

/// `-O` names with no letter of their own (Slurm's, and Spur's `AgentHost`,
/// which had `%O` before Slurm's CPU load took it back).
pub const AGENT_HOST: char = '\u{3b7}';
const GRES_USED: char = '\u{3b3}';
const STATE_COMPLETE: char = '\u{3c3}';
const ALLOC_MEM: char = '\u{3bc}';
const COMMENT: char = '\u{3ba}';
const EXTRA: char = '\u{3be}';
const PORT: char = '\u{3c0}';

/// `%all` (and `-O All`): every letter, `%a|%b|...|%z|%A |...|%Z `, as
/// Slurm builds it; a letter that is no field drops out with its separator.
pub fn all_letters() -> Vec<(char, &'static str)> {
    let lower = ('a'..='z').map(|c| (c, "|"));
    let upper = ('A'..='Z').map(|c| (c, if c == 'Z' { " " } else { " |" }));
    lower.chain(upper).filter(|(c, _)| spec(*c).is_some()).collect()
}

/// A field letter's header and how it groups.
pub fn spec(code: char) -> Option<(&'static str, Kind)> {
    CODES.iter().find(|(k, ..)| *k == code).map(|(_, h, _, kind)| (*h, *kind))
}

/// `-O Definition`: the node's provisioner definitions. Slurm has no letter for it.
pub const DEFINITION: char = '\u{3b4}';

/// The letter of a `-O` field name.
pub fn named(name: &str) -> Option<char> {
    let alias = ALIASES.iter().find(|(n, _)| n.eq_ignore_ascii_case(name)).map(|(_, c)| *c);
    alias.or_else(|| CODES.iter().find(|(_, _, n, _)| n.eq_ignore_ascii_case(name)).map(|(c, ..)| *c))
}

/// Nodes shown as one line: of one partition (none for a partition without nodes).
pub struct Group<'a> {
    pub part: Option<(usize, &'a pb::Partition)>,
    pub nodes: Vec<&'a pb::Node>,
}

pub fn kind(code: char) -> Kind {
    spec(code).map_or(Kind::Total, |(_, k)| k)
}

/// Slurm's numeric node state (base plus DRAIN 0x200 and NO_RESPOND 0x800), for sorting.
pub fn state_num(n: &pb::Node) -> u32 {
    let base = match n.base_state.as_str() {
        "DOWN" => 1,
        "IDLE" => 2,
        "ALLOCATED" => 3,
        "MIXED" => 5,
        _ => 0,
    };
    base | if n.drain { 0x200 } else { 0 } | if n.not_responding { 0x800 } else { 0 }
}

/// sinfo's own time style: `1-00:00:00`, `4:00:00`, `30:00` (unlike scontrol's).
pub fn sinfo_time(minutes: i64) -> String {
    let secs = minutes.max(0).saturating_mul(60);
    let (d, h, m, s) = (secs / 86400, (secs / 3600) % 24, (secs / 60) % 60, secs % 60);
    match (d, h) {
        (0, 0) => format!("{m}:{s:02}"),
        (0, _) => format!("{h}:{m:02}:{s:02}"),
        _ => format!("{d}-{h:02}:{m:02}:{s:02}"),
    }
}

fn part_cell(code: char, p: &pb::Partition) -> String {
    match code {
        'P' if p.is_default => format!("{}*", p.name),
        'P' | 'R' => p.name.clone(),
        'a' => match p.state.to_ascii_uppercase().as_str() {
            s @ ("UP" | "DOWN" | "DRAIN") => s.to_ascii_lowercase(),
            // Slurm prints "inactive"; the default %.5a shows it as "inact".
            "INACTIVE" => "inactive".into(),
            _ => "unknown".into(),
        },
        'l' => p.max_time_minutes.map(sinfo_time).unwrap_or_else(|| "infinite".into()),
        'L' => p.default_time_minutes.map(sinfo_time).unwrap_or_else(|| "n/a".into()),
        'p' => p.priority_tier.to_string(),
        'B' => "UNLIMITED".into(),
        'g' | 'S' => "all".into(),
        'h' => "NO".into(),
        'I' => "1".into(),
        'r' => "no".into(),
        's' => "1-infinite".into(),
        'V' => "N/A".into(),
        _ => or(&p.preempt_mode.to_ascii_uppercase(), "OFF"),
    }
}

fn or(s: &str, dflt: &str) -> String {
    if s.is_empty() { dflt.to_string() } else { s.to_string() }
}

/// A node property as one node shows it; `None` for a partition with no nodes.
fn node_cell(code: char, n: Option<&pb::Node>) -> String {
    let Some(n) = n else {
        return match code {
            'E' => "none",
            'f' | 'b' | 'G' | GRES_USED | DEFINITION | COMMENT | EXTRA => "(null)",
            'e' | 'O' => "N/A",
            'u' | 'U' | 'H' => "Unknown",
            _ => "n/a",
        }
        .into();
    };
    match code {
        't' => state(n).short(),
        'T' => state(n).long(),
        'E' => or(&n.reason, "none"),
        'u' | 'U' => match (n.reason_user.as_str(), n.reason_uid) {
            ("", None) => "Unknown".into(),
            ("", Some(uid)) => format!("Unk({uid})"),
            (u, Some(uid)) if code == 'U' => format!("{u}({uid})"),
            (u, _) => u.into(),
        },
        'H' if n.reason_time_ms != 0 => format_time(n.reason_time_ms),
        'H' => "Unknown".into(),
        'f' | 'b' if n.features.is_empty() => "(null)".into(),
        'f' | 'b' => n.features.join(","),
        'G' => or(&n.gres, "(null)"),
        DEFINITION if n.definitions.is_empty() => "(null)".into(),
        DEFINITION => n.definitions.join(","),
        GRES_USED => or(&n.gres_used, "(null)"),
        STATE_COMPLETE => state(n).complete(),
        'X' | 'Z' => "1".into(),
        'z' => format!("1:{}:1", n.cpus),
        'd' => "0".into(),
        'e' | 'O' | 'v' => "N/A".into(),
        'i' => String::new(),
        COMMENT | EXTRA => "(null)".into(),
        PORT => "0".into(),
        _ => or(&n.agent_host, "n/a"),
    }
}

fn size(n: &pb::Node, code: char) -> u64 {
    match code {
        'c' => n.cpus.into(),
        'm' => n.memory_mb,
        ALLOC_MEM => n.alloc_memory_mb,
        // One socket of as many cores as CPUs (Slurm's default topology).
        'Y' => n.cpus.into(),
        _ => n.weight.into(),
    }
}

pub fn cell(code: char, g: &Group) -> String {
    match kind(code) {
        Kind::Part => g.part.map(|(_, p)| part_cell(code, p)).unwrap_or_else(|| "n/a".into()),
        Kind::Node => node_cell(code, g.nodes.first().copied()),
        Kind::Size => {
            let (lo, hi) =
                g.nodes.iter().map(|n| size(n, code)).fold((u64::MAX, 0), |(l, h), v| (l.min(v), h.max(v)));
            match (g.nodes.is_empty(), lo == hi) {
                (true, _) => "0".into(),
                (_, true) => lo.to_string(),
                _ => format!("{lo}+"),
            }
        }
        Kind::Total => match code {
            'D' => g.nodes.len().to_string(),
            'N' => {
                let mut names: Vec<&str> = g.nodes.iter().map(|n| n.name.as_str()).collect();
                names.sort_by(|a, b| natural(a, b));
                hostlist::compress(&names)
            }
            code => {
                // Allocated/idle/other/total, of CPUs (%C) or of nodes (%F). The free share
                // of drained, down, unresponsive and unknown nodes is "other", not idle.
                let mut c = [0u64; 4];
                for n in &g.nodes {
                    let busy = matches!(n.base_state.as_str(), "ALLOCATED" | "MIXED");
                    let out = n.drain || n.not_responding || !(busy || n.base_state == "IDLE");
                    let (used, total) = match code {
                        'C' => (u64::from(n.alloc_cpus.min(n.cpus)), u64::from(n.cpus)),
                        // A node counts once: as other when unavailable, even with jobs on it.
                        _ => (u64::from(busy && !out), 1),
                    };
                    c[0] += used;
                    c[if out { 2 } else { 1 }] += total - used;
                    c[3] += total;
                }
                if code == 'A' {
                    return format!("{}/{}", c[0], c[1]);
                }
                format!("{}/{}/{}/{}", c[0], c[1], c[2], c[3])
            }
        },
    }
}
