//! `scontrol` (also `spur control`): `show node|partition|job|hostnames|hostlist`,
//! `update NodeName=... State=... Reason=...`, `update JobId=... TimeLimit=...`,
//! `hold|release|requeue JOBS` and `reconfigure`, in Slurm's key=value layout.
//! Parsing yields a [`Command`]; the job commands' parsing and running live
//! in [`jobctl`], the job record in `jobfmt`, `explain` plus the partition
//! override in [`preemptctl`], and `show license` plus `update HRESName=` in [`licctl`].

use super::jobfmt::null;
use super::kv::{self, Arg, Pair};
use super::sinfo::state;
use super::{jobctl, licctl, preemptctl};
use crate::conn::{self, Clients, Identity};
use crate::vocab::hostlist;
use crate::vocab::time::{format_minutes, format_seconds};
use crate::vocab::txn::format_time;
use spur_proto::v1 as pb;
use std::cmp::Ordering;
use std::collections::HashSet;

pub const USAGE: &str = "\
usage: scontrol [-o] [-Q] [--json] [--controller URL] COMMAND
  show node [NODELIST]           nodes in key=value form (all when no list)
  show partition [NAME]          partitions in key=value form
  show hostnames LIST            expand a hostlist, one name per line
  show hostlist[sorted] NAMES    compress names into a hostlist
  update NodeName=LIST State=drain|resume|idle|down [Reason=\"...\"]
  show job [ID]                  jobs in key=value form (all the controller still has)
  show license [NAME]            licenses, and each layer of a hierarchical resource
  update HRESName=R LayerName=L [Nodes=LIST|+LIST|-LIST] [Count=N] [Base=name:value,...|Base=]
         [DisableLayer=true|false]     change a layer (Administrator)
  update HRESName=R DisableHRES=true|false
  update JobId=ID[,ID] TimeLimit=T Priority=N QOS=Q Partition=P   (or: update job ID ...)
  hold|release|requeue ID[,ID]   hold a pending job, release it, requeue a running one
  reconfigure                    re-read spur.conf on the controller
  explain job ID                 why a job pends, and its preemption candidates with each verdict
  explain preempt PENDING RUNNING  the full preemption verdict for one pair
  update PartitionName=P PreemptExemptTime=SECS | ClearPreemptExemptTime=yes
                                 runtime override, lost on reconfigure or restart
flags:
  -o, --oneliner   one line per record       -Q, --quiet   no warnings
  --json           show output as JSON       -d, -a        accepted (nothing more to show)
Keys are case-insensitive; quote values with spaces: Reason=\"hw fault\".";

const FLAGS: &str = "a/all d/details h/help o/oneliner Q/quiet -/json -/controller= -/usage";

#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Flags {
    pub oneliner: bool,
    pub quiet: bool,
    pub json: bool,
    pub help: bool,
    pub controller: Option<String>,
}

/// A parsed command. `UpdateJobs` carries canonical keys (`TimeLimit`,
/// `Priority`, `QOS`, `Partition`) with checked values; `JobAction` is
/// `hold`, `release` or `requeue`, sent as `action=`.
#[derive(Debug, Clone, PartialEq)]
pub enum Command {
    ShowLicenses(Option<String>),
    UpdateHres(Box<pb::UpdateHresRequest>),
    ShowNodes(Option<String>),
    ShowPartitions(Option<String>),
    ShowHostnames(String),
    ShowHostlist { names: String, sorted: bool },
    UpdateNodes { nodes: String, state: String, reason: String },
    ShowJobs(Option<u64>),
    UpdateJobs { ids: Vec<u64>, set: Vec<(String, String)> },
    JobAction { action: &'static str, ids: Vec<u64> },
    ExplainJob(u64),
    ExplainPair(u64, u64),
    UpdatePartition { name: String, exempt_secs: Option<u64>, clear: bool },
    Reconfigure,
    Help,
}

/// `(keyword, shortest prefix)`, as scontrol matches them.
const COMMANDS: &[(&str, usize)] = &[
    ("show", 3),
    ("update", 3),
    ("reconfigure", 3),
    ("help", 1),
    ("hold", 2),
    ("release", 3),
    ("requeue", 3),
    ("explain", 3),
];
const ENTITIES: &[(&str, usize)] = &[
    ("nodes", 1),
    ("partitions", 2),
    ("jobs", 1),
    ("licenses", 1),
    ("hostnames", 5),
    ("hostlist", 5),
    ("hostlistsorted", 9),
];

/// Slurm commands Spur does not serve yet: job commands, then the rest.
/// Matched on at least their first three letters.
const LATER_JOBS: &str = "uhold requeuehold suspend resume top notify listpids wait_job";
const LATER: &str = "create delete ping version reboot cancel_reboot shutdown takeover setdebug \
    setdebugflags schedloglevel token write";
const SHOW_LATER_JOBS: &str = "steps";
const SHOW_LATER: &str = "reservations config topology federation burstbuffer assoc_mgr daemons";

fn later(word: &str, jobs: &'static str, other: &'static str, what: &str) -> Option<String> {
    let w = word.to_ascii_lowercase();
    let hit =
        |list: &'static str| list.split_whitespace().find(|k| w.len() >= 3.min(k.len()) && k.starts_with(&w));
    let why = if hit(jobs).is_some() {
        " (job commands: show job, update job, hold, release, requeue)"
    } else {
        ""
    };
    let name = hit(jobs).or_else(|| hit(other))?;
    Some(format!("{what}{name} is not available in this Spur release yet{why}"))
}

pub fn parse(argv: &[String]) -> Result<(Flags, Command), String> {
    let mut flags = Flags::default();
    let mut words = vec![];
    for arg in kv::getopt(argv, FLAGS)? {
        match arg {
            Arg::Word(w) => words.push(w),
            Arg::Flag("oneliner", _) => flags.oneliner = true,
            Arg::Flag("quiet", _) => flags.quiet = true,
            Arg::Flag("json", _) => flags.json = true,
            Arg::Flag("help" | "usage", _) => flags.help = true,
            Arg::Flag("controller", v) => flags.controller = v,
            Arg::Flag(..) => {}
        }
    }
    if flags.help {
        return Ok((flags, Command::Help));
    }
    let Some((first, rest)) = words.split_first() else {
        return Err("no command given (see scontrol --help)".into());
    };
    let cmd = match kv::keyword(first, COMMANDS) {
        Some("show") => show(rest)?,
        Some("update") => update(rest)?,
        Some(a @ ("hold" | "release" | "requeue")) => jobctl::parse_action(a, rest)?,
        Some("explain") => preemptctl::parse_explain(rest)?,
        Some("reconfigure") => match rest.first() {
            Some(x) => return Err(format!("reconfigure: unexpected argument '{x}'")),
            None => Command::Reconfigure,
        },
        Some(_) => Command::Help,
        None => {
            return Err(later(first, LATER_JOBS, LATER, "")
                .unwrap_or_else(|| format!("unrecognised command '{first}' (see scontrol --help)")));
        }
    };
    Ok((flags, cmd))
}

fn show(args: &[String]) -> Result<Command, String> {
    let Some((what, rest)) = args.split_first() else {
        return Err("show: say what to show: node, partition, job, hostnames or hostlist".into());
    };
    if let Some(x) = rest.get(1) {
        return Err(format!("show {what}: unexpected argument '{x}' (give one name or hostlist)"));
    }
    let arg = rest.first().cloned();
    let need = |a: Option<String>| a.ok_or_else(|| format!("show {what}: needs a hostlist"));
    Ok(match kv::keyword(what, ENTITIES) {
        Some("nodes") => {
            if let Some(list) = &arg {
                hostlist::count(list)?;
            }
            Command::ShowNodes(arg)
        }
        Some("partitions") => Command::ShowPartitions(arg),
        Some("jobs") => jobctl::parse_show(arg.as_deref())?,
        Some("licenses") => Command::ShowLicenses(arg),
        Some("hostnames") => Command::ShowHostnames(need(arg)?),
        Some(e) => Command::ShowHostlist { names: need(arg)?, sorted: e == "hostlistsorted" },
        None => {
            return Err(later(what, SHOW_LATER_JOBS, SHOW_LATER, "show ").unwrap_or_else(|| {
                format!("show: unknown entity '{what}' (use node, partition, job, hostnames or hostlist)")
            }));
        }
    })
}

fn update(args: &[String]) -> Result<Command, String> {
    if jobctl::names_job(args) {
        return jobctl::parse_update(args);
    }
    if licctl::names_hres(args) {
        return licctl::parse_update(args);
    }
    let pairs = kv::pairs(args)?;
    let has = |k: &str| pairs.iter().any(|p| p.is(k));
    if has("partitionname") && !has("nodename") {
        return preemptctl::parse_update_partition(&pairs);
    }
    if !has("nodename") {
        return Err(if has("jobname") {
            "update JobName= is not available in this Spur release; select the job with JobId=".into()
        } else {
            "update: say what to update with NodeName=LIST, JobId=ID or HRESName=R".into()
        });
    }
    let (mut nodes, mut st, mut reason) = (String::new(), String::new(), String::new());
    for Pair { key, value } in &pairs {
        match key.to_ascii_lowercase().as_str() {
            "nodename" => nodes = value.clone(),
            "state" => st = value.to_ascii_lowercase(),
            "reason" => reason = value.clone(),
            _ => {
                return Err(format!(
                    "update node: '{key}' cannot be changed in this Spur release (use NodeName=, State=, Reason=)"
                ));
            }
        }
    }
    hostlist::count(&nodes).map_err(|e| format!("NodeName: {e}"))?;
    // The controller reads a missing state as "resume"; never undrain by accident.
    if st.is_empty() {
        return Err("update node: State= is required (drain, resume, idle or down)".into());
    }
    Ok(Command::UpdateNodes { nodes, state: st, reason })
}

/// A gRPC error as one line: the controller's message, else the code's description.
pub fn status(s: tonic::Status) -> String {
    if s.message().is_empty() { s.code().description().to_string() } else { s.message().to_string() }
}

/// A node as JSON, shared by `sinfo --json` and `scontrol show node --json`.
pub fn node_json(n: &pb::Node) -> serde_json::Value {
    let st = state(n);
    let time = |ms: i64| (ms != 0).then(|| format_time(ms));
    serde_json::json!({
        "name": n.name, "state": st.scontrol(), "state_long": st.long(), "state_short": st.short(),
        "base_state": n.base_state, "drain": n.drain, "not_responding": n.not_responding,
        "cpus": n.cpus, "alloc_cpus": n.alloc_cpus, "memory_mb": n.memory_mb,
        "alloc_memory_mb": n.alloc_memory_mb, "gres": n.gres, "gres_used": n.gres_used,
        "features": n.features, "weight": n.weight, "partitions": n.partitions,
        "reason": n.reason, "reason_user": n.reason_user, "reason_uid": n.reason_uid,
        "reason_time": time(n.reason_time_ms), "agent_host": n.agent_host,
        "last_heartbeat": time(n.last_heartbeat_ms), "running_jobs": n.running_jobs,
    })
}

/// A partition as JSON, shared by `sinfo --json` and `scontrol show partition --json`.
pub fn partition_json(p: &pb::Partition) -> serde_json::Value {
    serde_json::json!({
        "name": p.name, "nodes": p.nodes, "default": p.is_default, "state": p.state,
        "max_time_minutes": p.max_time_minutes, "default_time_minutes": p.default_time_minutes,
        "priority_tier": p.priority_tier, "preempt_mode": p.preempt_mode,
        "preempt_exempt_time_secs": p.preempt_exempt_time_secs,
        "total_nodes": p.total_nodes, "total_cpus": p.total_cpus,
    })
}

/// Slurm's hostname order: at the first difference, digit runs compare as
/// numbers, so `n9` sorts before `n10`.
pub fn natural(a: &str, b: &str) -> Ordering {
    let (x, y) = (a.as_bytes(), b.as_bytes());
    let i = x.iter().zip(y).take_while(|(p, q)| p == q).count();
    if i < x.len() && i < y.len() && x[i].is_ascii_digit() && y[i].is_ascii_digit() {
        // Compared as digit strings without leading zeros, so no length overflows.
        let run = |s: &[u8]| -> Vec<u8> {
            let d = s[i..].iter().take_while(|c| c.is_ascii_digit());
            d.skip_while(|c| **c == b'0').copied().collect()
        };
        let (p, q) = (run(x), run(y));
        return p.len().cmp(&q.len()).then(p.cmp(&q)).then(a.cmp(b));
    }
    a.cmp(b)
}

/// Lines of a record: `\n   `-indented, or one line with `-o`; records end
/// with a blank line unless one-line, as Slurm prints them.
pub(crate) fn record(lines: &[String], oneliner: bool) -> String {
    let sep = if oneliner { " " } else { "\n   " };
    lines.join(sep) + if oneliner { "\n" } else { "\n\n" }
}

/// `scontrol show node` for one node.
pub fn node_record(n: &pb::Node, oneliner: bool) -> String {
    let features = n.features.join(",");
    let mut lines = vec![
        format!("NodeName={}", n.name),
        format!("CPUAlloc={} CPUTot={}", n.alloc_cpus, n.cpus),
        format!("AvailableFeatures={}", null(&features)),
        format!("ActiveFeatures={}", null(&features)),
        format!("Gres={}", null(&n.gres)),
    ];
    // Shown for nodes with GRES; nothing allocated reads as zero of each (`gpu:0`).
    if !n.gres.is_empty() || !n.gres_used.is_empty() {
        let name = |g: &'_ str| match g.rsplit_once(':') {
            Some((k, count)) if count.parse::<u64>().is_ok() => k.to_string(),
            _ => g.to_string(),
        };
        let zero = || n.gres.split(',').map(|g| format!("{}:0", name(g)));
        let used =
            if n.gres_used.is_empty() { zero().collect::<Vec<_>>().join(",") } else { n.gres_used.clone() };
        lines.push(format!("GresUsed={used}"));
    }
    if !n.agent_host.is_empty() {
        lines.push(format!("NodeHostName={}", n.agent_host));
    }
    lines.push(format!("RealMemory={} AllocMem={}", n.memory_mb, n.alloc_memory_mb));
    lines.push(format!("State={} Weight={}", state(n).scontrol(), n.weight));
    if !n.partitions.is_empty() {
        lines.push(format!("Partitions={}", n.partitions.join(",")));
    }
    // Slurm: the first reason line carries [user@time]; later lines are indented 7 more.
    for (i, text) in n.reason.split('\n').filter(|t| !t.is_empty()).enumerate() {
        if i > 0 {
            lines.push(format!("       {text}"));
        } else if n.reason_time_ms != 0 {
            let user = match (n.reason_user.as_str(), n.reason_uid) {
                ("", Some(uid)) => uid.to_string(),
                ("", None) => "Unknown".into(),
                (u, _) => u.to_string(),
            };
            lines.push(format!("Reason={text} [{user}@{}]", format_time(n.reason_time_ms)));
        } else {
            lines.push(format!("Reason={text}"));
        }
    }
    record(&lines, oneliner)
}

/// `scontrol show partition` for one partition.
pub fn partition_record(p: &pb::Partition, oneliner: bool) -> String {
    let time = |m: Option<i64>, none: &str| m.map(|m| format_minutes(m.max(0) as u64)).unwrap_or(none.into());
    let exempt = p.preempt_exempt_time_secs.map(|s| format_seconds(s.max(0) as u64)).unwrap_or("NONE".into());
    let mode = if p.preempt_mode.is_empty() { "OFF".into() } else { p.preempt_mode.to_ascii_uppercase() };
    let lines = [
        format!("PartitionName={}", p.name),
        format!(
            "Default={} DefaultTime={} MaxTime={}",
            if p.is_default { "YES" } else { "NO" },
            time(p.default_time_minutes, "NONE"),
            time(p.max_time_minutes, "UNLIMITED")
        ),
        format!("Nodes={}", null(&p.nodes)),
        format!("PriorityTier={} PreemptMode={mode} PreemptExemptTime={exempt}", p.priority_tier),
        format!(
            "State={} TotalCPUs={} TotalNodes={}",
            p.state.to_ascii_uppercase(),
            p.total_cpus,
            p.total_nodes
        ),
    ];
    record(&lines, oneliner)
}

/// The nodes a `show node LIST` names, in the controller's order; every name must exist.
pub fn select_nodes<'a>(all: &'a [pb::Node], list: Option<&str>) -> Result<Vec<&'a pb::Node>, String> {
    let Some(list) = list else { return Ok(all.iter().collect()) };
    let want = hostlist::expand(list)?;
    // Sets, so a 10k-node list against a 10k-node cluster stays linear.
    let have: HashSet<&str> = all.iter().map(|n| n.name.as_str()).collect();
    let wanted: HashSet<&str> = want.iter().map(String::as_str).collect();
    let missing: Vec<&String> = want.iter().filter(|w| !have.contains(w.as_str())).collect();
    match missing.as_slice() {
        [] => Ok(all.iter().filter(|n| wanted.contains(n.name.as_str())).collect()),
        [one] => Err(format!("node '{one}' not found")),
        many => Err(format!("nodes '{}' not found", hostlist::compress(many))),
    }
}

pub fn show_nodes(nodes: &[&pb::Node], f: &Flags) -> String {
    if f.json {
        let v: Vec<serde_json::Value> = nodes.iter().map(|n| node_json(n)).collect();
        return serde_json::to_string_pretty(&serde_json::json!({ "nodes": v })).unwrap_or_default() + "\n";
    }
    if nodes.is_empty() {
        return "No nodes in the system\n".into();
    }
    nodes.iter().map(|n| node_record(n, f.oneliner)).collect()
}

pub fn show_partitions(all: &[pb::Partition], name: Option<&str>, f: &Flags) -> Result<String, String> {
    let parts: Vec<&pb::Partition> = all.iter().filter(|p| name.is_none_or(|n| p.name == n)).collect();
    if let (Some(n), true) = (name, parts.is_empty()) {
        return Err(format!("partition '{n}' not found"));
    }
    if f.json {
        let v: Vec<serde_json::Value> = parts.iter().map(|p| partition_json(p)).collect();
        return Ok(
            serde_json::to_string_pretty(&serde_json::json!({ "partitions": v })).unwrap_or_default() + "\n"
        );
    }
    if parts.is_empty() {
        return Ok("No partitions in the system\n".into());
    }
    Ok(parts.iter().map(|p| partition_record(p, f.oneliner)).collect())
}

/// What a command printed, and the controller's warning for stderr.
#[derive(Debug, Default)]
pub struct Outcome {
    pub stdout: String,
    pub warning: Option<String>,
}

/// Commands that need no controller.
fn local(cmd: &Command) -> Result<Option<String>, String> {
    Ok(Some(match cmd {
        Command::Help => format!("{USAGE}\n"),
        Command::ShowHostnames(list) => hostlist::expand(list)?.iter().map(|n| format!("{n}\n")).collect(),
        Command::ShowHostlist { names, sorted } => {
            let mut v = hostlist::expand(names)?;
            if *sorted {
                v.sort_by(|a, b| natural(a, b));
            }
            format!("{}\n", hostlist::compress(&v))
        }
        _ => return Ok(None),
    }))
}

pub async fn execute(cmd: &Command, f: &Flags, c: &mut Clients) -> Result<Outcome, String> {
    if let Some(stdout) = jobctl::execute(cmd, f, c).await? {
        return Ok(Outcome { stdout, warning: None });
    }
    if let Some(stdout) = preemptctl::execute(cmd, f, c).await? {
        return Ok(Outcome { stdout, warning: None });
    }
    if let Some(stdout) = licctl::execute(cmd, f, c).await? {
        return Ok(Outcome { stdout, warning: None });
    }
    let n = &mut c.nodes;
    let stdout = match cmd {
        Command::ShowNodes(list) => {
            let filter = list.iter().map(|l| pb::KeyValue { key: "name".into(), value: l.clone() }).collect();
            let all = n.list_nodes(pb::ListRequest { filter }).await.map_err(status)?.into_inner().nodes;
            show_nodes(&select_nodes(&all, list.as_deref())?, f)
        }
        Command::ShowPartitions(name) => {
            let all =
                n.list_partitions(pb::ListRequest::default()).await.map_err(status)?.into_inner().partitions;
            show_partitions(&all, name.as_deref(), f)?
        }
        Command::UpdateNodes { nodes, state, reason } => {
            let req =
                pb::UpdateNodesRequest { nodes: nodes.clone(), state: state.clone(), reason: reason.clone() };
            let resp = n.update_nodes(req).await.map_err(status)?.into_inner();
            let warning = Some(resp.warning).filter(|w| !w.is_empty() && !f.quiet);
            return Ok(Outcome { stdout: String::new(), warning });
        }
        Command::Reconfigure => {
            let changes =
                n.reconfigure(pb::ReconfigureRequest {}).await.map_err(status)?.into_inner().changes;
            changes.iter().map(|l| format!("{l}\n")).collect()
        }
        other => local(other)?.unwrap_or_default(),
    };
    Ok(Outcome { stdout, warning: None })
}

async fn run(argv: &[String]) -> Result<Outcome, String> {
    let (flags, cmd) = parse(argv)?;
    if let Some(stdout) = local(&cmd)? {
        return Ok(Outcome { stdout, warning: None });
    }
    let mut c = conn::connect_flag(flags.controller.as_deref(), Identity::local()).await?;
    execute(&cmd, &flags, &mut c).await
}

/// Runs scontrol with its arguments (without argv[0]); returns the exit code.
pub async fn main(argv: &[String]) -> i32 {
    match run(argv).await {
        Ok(out) => {
            let code = super::output::emit("scontrol", &out.stdout);
            if let Some(w) = out.warning {
                super::output::complain(&format!("scontrol: warning: {w}"));
            }
            code
        }
        Err(e) => {
            super::output::complain(&format!("scontrol: error: {e}"));
            1
        }
    }
}
