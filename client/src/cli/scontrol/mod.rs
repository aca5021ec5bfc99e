//! `scontrol` (also `spur control`): `show node|partition|job|license|provisioner|hostnames|hostlist`,
//! `update NodeName=|PartitionName=|JobId=|HRESName=...`, `hold|release|requeue JOBS`,
//! `explain` and `reconfigure`, in Slurm's key=value layout.
//!
//! This file only reads the global flags, matches the verb and entity (with
//! Slurm's abbreviations) and dispatches; each subcommand parses its own words
//! into a [`Command`] and runs it, in its own file:
//!
//! - [`command`]: the [`Command`] and [`Flags`] types every file below shares.
//! - [`show_node`] / [`update_node`]: `show node`, and drain/resume by `update NodeName=`.
//! - [`create_node`]: `create|delete NodeName=`, dynamic nodes.
//! - [`show_partition`] / [`update_partition`]: `show partition`, and the runtime
//!   `PreemptExemptTime` override.
//! - [`job`]: `show job`, `update JobId=`, `hold|release|requeue`.
//! - [`license`]: `show license`, `update HRESName=`.
//! - [`provisioner`]: `show provisioner`, provisioners.yaml's definitions and their pools.
//! - [`explain`]: `explain job|preempt`.
//! - [`hostlist`]: `show hostnames|hostlist[sorted]` (no controller).
//! - [`reconfigure`]: `reconfigure`, re-reading spur.conf on the controller.
//! - [`reservation`]: `create|update|delete|show reservation`.
//! - [`keys`]: every key of `update job|node|partition` Slurm has: its canonical
//!   spelling (any unambiguous prefix), or the one warning why it has no effect.
//! - [`step`]: `show step [ID[.STEP]]`, the running steps (srun).
//! - [`config`]: `show config`, the Slurm keys of the controller's configuration.
//!
//! The subcommand files import only [`command`] and the shared pieces of
//! `cli` (`fmt`, `kv`, `jobfmt`, `nodefmt`), never each other or this file.

pub mod command;
pub mod config;
pub mod create_node;
pub mod explain;
pub mod hostlist;
pub mod job;
pub mod keys;
pub mod license;
pub mod ping;
pub mod provisioner;
pub mod reconfigure;
pub mod reservation;
pub mod show_node;
pub mod show_partition;
pub mod step;
pub mod takeover;
pub mod update_node;
pub mod update_partition;

pub use command::{Command, Flags};

use crate::cli::getopt::{Mode, Opt, Spec, switch, value};
use crate::cli::kv;
use crate::cli::output;
use crate::conn::{self, Clients, Identity};

pub const USAGE: &str = "\
usage: scontrol [-o] [-Q] [--json] [--controller URL] COMMAND
  show node [NODELIST]           nodes in key=value form (all when no list)
  show partition [NAME]          partitions in key=value form
  show hostnames LIST            expand a hostlist, one name per line
  show hostlist[sorted] NAMES    compress names into a hostlist
  update NodeName=LIST State=drain|resume|idle|down [Reason=\"...\"]
  show job [ID]                  jobs in key=value form (all the controller still has)
  show license [NAME]            licenses, and each layer of a hierarchical resource
  show provisioner [ID]          provisioner definitions (provisioners.yaml) and their nodes
  show step [ID[.STEP]]          running job steps (srun) in key=value form
  update HRESName=R LayerName=L [Nodes=LIST|+LIST|-LIST] [Count=N] [Base=name:value,...|Base=]
         [DisableLayer=true|false]     change a layer (Administrator)
  update HRESName=R DisableHRES=true|false
  update JobId=ID[,ID] TimeLimit=T Priority=N QOS=Q Partition=P   (or: update job ID ...)
  hold|release|requeue ID[,ID]   hold a pending job, release it, requeue a running one
  reconfigure                    re-read spur.conf on the controller
  ping                           each controller given (--controller A,B,...): primary (leader), backup, or DOWN
  takeover [INDEX]               the INDEX-th backup (default 1) of those given takes over now (Administrator)
  create reservation StartTime=T (Duration=D|EndTime=T) (Nodes=LIST|NodeCnt=N) (Users=..|Accounts=..)
         [ReservationName=N] [PartitionName=P] [Licenses=L:N] [Flags=MAINT,IGNORE_JOBS,OVERLAP,DAILY,WEEKLY]
  update ReservationName=N [Nodes+=LIST] [Users-=U] [EndTime=T] ...   (Operators and up)
  delete ReservationName=N       show reservation [NAME]
  create NodeName=N CPUs=N RealMemory=MB [Gres=..] [Features=..] [HRES=JSON] State=CLOUD|FUTURE
                                 a dynamic node, waiting for its agent (spurd --dynamic)
  delete NodeName=N              a dynamic node no job holds
  explain job ID                 why a job pends, and its preemption candidates with each verdict
  explain preempt PENDING RUNNING  the full preemption verdict for one pair
  update PartitionName=P PreemptExemptTime=SECS | ClearPreemptExemptTime=yes
                                 runtime override, lost on reconfigure or restart
flags:
  -o, --oneliner   one line per record       -Q, --quiet   no warnings
  --json           show output as JSON       -d, --details list a node's modaliases
  -a, --all        accepted (every partition is shown)
Keys are case-insensitive; quote values with spaces: Reason=\"hw fault\".";

static FLAGS: Spec<Flags> = Spec { opts: OPTS, mode: Mode::Anywhere, noun: "flag" };
const OPTS: &[Opt<Flags>] = &[
    switch("a/all", |_| {}),
    switch("d/details", |f| f.details = true),
    switch("h/help", |f| f.help = true),
    switch("o/oneliner", |f| f.oneliner = true),
    switch("Q/quiet", |f| f.quiet = true),
    switch("-/json", |f| f.json = true),
    value("-/controller", |f, v| f.controller = Some(v)),
    switch("-/usage", |f| f.help = true),
];

/// The subcommands and entities, matched by the vocabulary's rule: any
/// case, any unambiguous prefix (`upd`, `sho part`).
const COMMANDS: &[&str] = &[
    "show",
    "update",
    "reconfigure",
    "help",
    "hold",
    "release",
    "requeue",
    "explain",
    "create",
    "delete",
    "ping",
    "takeover",
];
const ENTITIES: &[&str] = &[
    "nodes",
    "partitions",
    "jobs",
    "licenses",
    "provisioners",
    "steps",
    "config",
    "reservations",
    "hostnames",
    "hostlist",
    "hostlistsorted",
];

/// Slurm commands Spur does not serve yet: job commands, then the rest.
/// Matched on at least their first three letters.
const LATER_JOBS: &str =
    "uhold requeuehold suspend resume top notify listpids wait_job listjobs liststeps pidinfo";
const LATER: &str = "version reboot cancel_reboot shutdown setdebug \
    setdebugflags schedloglevel token write completing errnumstr fsdampeningfactor getaddrs power";
const SHOW_LATER_JOBS: &str = "";
const SHOW_LATER: &str = "topology federation burstbuffer assoc_mgr daemons";

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
    let words = FLAGS.parse(argv, &mut flags)?;
    if flags.help {
        return Ok((flags, Command::Help));
    }
    let Some((first, rest)) = words.split_first() else {
        return Err("no command given (see scontrol --help)".into());
    };
    let cmd = match kv::keyword(first, COMMANDS)? {
        Some("show") => show(rest)?,
        Some("update") => update(rest, &mut flags.warnings)?,
        Some(a @ ("hold" | "release" | "requeue")) => job::parse_action(a, rest)?,
        Some("explain") => explain::parse(rest)?,
        Some("reconfigure") => reconfigure::parse(rest)?,
        Some("create") => match rest.split_first() {
            Some((e, args)) if kv::keyword(e, ENTITIES) == Ok(Some("reservations")) => {
                reservation::parse_create(args)?
            }
            _ if create_node::names_node(rest) => create_node::parse_create(&kv::pairs(rest)?)?,
            _ => {
                return Err("create: give NodeName=N ... or reservation ... (see scontrol --help)".into());
            }
        },
        Some("delete") if create_node::names_node(rest) => create_node::parse_delete(&kv::pairs(rest)?)?,
        Some("delete") => reservation::parse_delete(rest)?,
        Some("ping") => match rest.first() {
            Some(x) => return Err(format!("ping: unexpected argument '{x}'")),
            None => Command::Ping,
        },
        Some("takeover") => Command::Takeover(takeover::parse(rest)?),
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
    Ok(match kv::keyword(what, ENTITIES).map_err(|e| format!("show: {e}"))? {
        Some("nodes") => show_node::parse(arg)?,
        Some("partitions") => Command::ShowPartitions(arg),
        Some("jobs") => job::parse_show(arg.as_deref())?,
        Some("licenses") => Command::ShowLicenses(arg),
        Some("provisioners") => Command::ShowProvisioners(arg),
        Some("steps") => step::parse(arg.as_deref())?,
        Some("config") => Command::ShowConfig,
        Some("reservations") => Command::ShowReservations(arg),
        Some(e) => hostlist::parse(what, e, arg)?,
        None => {
            return Err(later(what, SHOW_LATER_JOBS, SHOW_LATER, "show ").unwrap_or_else(|| {
                format!("show: unknown entity '{what}' (use node, partition, job, hostnames or hostlist)")
            }));
        }
    })
}

fn update(args: &[String], warnings: &mut Vec<String>) -> Result<Command, String> {
    if license::names_hres(args) {
        return license::parse_update(args);
    }
    let Some(entity) = keys::entity(args) else {
        // Not a job, node or partition: `ReservationName=` names a reservation.
        if reservation::names_reservation(args) {
            return reservation::parse_update(args);
        }
        let job_name =
            args.iter().any(|w| w.split_once('=').is_some_and(|(k, _)| k.eq_ignore_ascii_case("jobname")));
        return Err(if job_name {
            "update JobName= is not available in this Spur release; select the job with JobId=".into()
        } else {
            "update: say what to update with NodeName=LIST, JobId=ID or HRESName=R".into()
        });
    };
    let (words, warned) = keys::canonical(entity, args)?;
    let changes = words
        .iter()
        .filter_map(|w| w.split_once('='))
        .filter(|(k, _)| !matches!(*k, "JobId" | "NodeName" | "PartitionName"));
    if changes.count() == 0 && !warned.is_empty() {
        warnings.extend(warned);
        return Ok(Command::Nothing);
    }
    warnings.extend(warned);
    match entity {
        keys::Entity::Job => job::parse_update(&words),
        keys::Entity::Node => update_node::parse(&kv::pairs(&words)?),
        keys::Entity::Partition => update_partition::parse(&kv::pairs(&words)?),
    }
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
        Command::Nothing => String::new(),
        Command::ShowHostnames(list) => hostlist::hostnames(list)?,
        Command::ShowHostlist { names, sorted } => hostlist::compress(names, *sorted)?,
        _ => return Ok(None),
    }))
}

/// Runs `cmd` in the file that owns it.
pub async fn execute(cmd: &Command, f: &Flags, c: &mut Clients) -> Result<Outcome, String> {
    let stdout = match cmd {
        Command::ShowNodes(list) => show_node::execute(list.as_deref(), f, c).await?,
        Command::UpdateNodes { nodes, state, reason } => {
            let warning = update_node::execute(nodes, state, reason, c).await?.filter(|_| !f.quiet);
            return Ok(Outcome { stdout: String::new(), warning });
        }
        Command::ShowPartitions(name) => show_partition::execute(name.as_deref(), f, c).await?,
        Command::UpdatePartition { name, exempt_secs, clear } => {
            update_partition::execute(name, *exempt_secs, *clear, c).await?
        }
        Command::ShowJobs(id) => job::show(*id, f, c).await?,
        Command::ShowTask(id, task) => job::show_task(*id, *task, f, c).await?,
        Command::UpdateJobs { ids, set } => job::update(ids, set, c).await?,
        Command::JobAction { action, ids } => {
            job::update(ids, &[("action".into(), action.to_string())], c).await?
        }
        Command::ShowLicenses(name) => license::show(name.as_deref(), f, c).await?,
        Command::ShowProvisioners(id) => provisioner::execute(id.as_deref(), f, c).await?,
        Command::ShowSteps(want) => step::execute(*want, f, c).await?,
        Command::ShowConfig => config::execute(f, c).await?,
        Command::UpdateHres(r) => license::update(r, c).await?,
        Command::ExplainJob(id) => explain::execute(*id, None, f, c).await?,
        Command::ExplainPair(p, r) => explain::execute(*p, Some(*r), f, c).await?,
        Command::Reconfigure => reconfigure::execute(c).await?,
        Command::ShowReservations(name) => reservation::show(name.as_deref(), f, c).await?,
        Command::CreateReservation { name, words } => reservation::create(name, words, c).await?,
        Command::UpdateReservation { name, words } => reservation::update(name, words, c).await?,
        Command::DeleteReservation(name) => reservation::delete(name, c).await?,
        Command::CreateNode { name, node } => {
            let warning = create_node::create(name, node, c).await?.filter(|_| !f.quiet);
            return Ok(Outcome { stdout: String::new(), warning });
        }
        Command::DeleteNode(name) => create_node::delete(name, c).await?,
        Command::Ping => ping::run(f.controller.as_deref()).await?,
        Command::Takeover(i) => takeover::run(f.controller.as_deref(), *i).await?,
        Command::Help | Command::Nothing | Command::ShowHostnames(_) | Command::ShowHostlist { .. } => {
            local(cmd)?.unwrap_or_default()
        }
    };
    Ok(Outcome { stdout, warning: None })
}

async fn run(argv: &[String]) -> Result<Outcome, String> {
    let (flags, cmd) = parse(argv)?;
    if !flags.quiet {
        for w in &flags.warnings {
            output::complain(&format!("scontrol: warning: {w}"));
        }
    }
    if let Some(stdout) = local(&cmd)? {
        return Ok(Outcome { stdout, warning: None });
    }
    // Each controller on its own, not through one connection.
    match cmd {
        Command::Ping => {
            return ping::run(flags.controller.as_deref())
                .await
                .map(|stdout| Outcome { stdout, warning: None });
        }
        Command::Takeover(i) => {
            let stdout = takeover::run(flags.controller.as_deref(), i).await?;
            return Ok(Outcome { stdout, warning: None });
        }
        _ => {}
    }
    let mut c = conn::connect_flag(flags.controller.as_deref(), Identity::local()).await?;
    execute(&cmd, &flags, &mut c).await
}

/// Runs scontrol with its arguments (without `argv[0]`); returns the exit code.
pub async fn main(argv: &[String]) -> i32 {
    match run(argv).await {
        Ok(out) => {
            let code = output::emit("scontrol", &out.stdout);
            if let Some(w) = out.warning {
                output::complain(&format!("scontrol: warning: {w}"));
            }
            code
        }
        Err(e) => {
            output::complain(&format!("scontrol: error: {e}"));
            1
        }
    }
}
