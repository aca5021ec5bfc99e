//! The options sbatch, srun and salloc share (one family in Slurm's man
//! pages): declared once here for any command whose state holds a
//! `JobSpec` ([`Request`]), and joined into each command's own table with
//! [`getopt::join`](super::getopt::join). Those Spur has no mechanism for are
//! accepted with one warning saying why ([`Opt::noted`]); the manual's
//! command pages list the same reasons.

use super::getopt::{Opt, check, ignored, ignored_switch, maybe, switch, value};
use super::submit_opts::{
    check_mail_type, check_mail_user, check_signal, count, hosts, parse_gpu_count, parse_gres, parse_mem,
};
use crate::vocab::TimeLimit;
use crate::vocab::constraint::Constraint;
use crate::vocab::depend::Dependency;
use spur_proto::v1 as pb;
use std::marker::PhantomData;

/// A command whose options build a job request.
pub trait Request: 'static {
    fn spec(&mut self) -> &mut pb::JobSpec;
    /// `--begin`/`--deadline` as given; read against the clock when submitting.
    fn begin(&mut self, v: String);
    fn deadline(&mut self, v: String);
    /// `-M`: the clusters named, checked against the controller's before submitting.
    fn clusters(&mut self, names: Vec<String>);
}

/// [`Request`] for a command's arguments that keep the request in fields of
/// their own: `spec`, `begin`, `deadline` and `clusters` (srun's and salloc's).
macro_rules! request_in_fields {
    ($t:ty) => {
        impl $crate::cli::family::Request for $t {
            fn spec(&mut self) -> &mut spur_proto::v1::JobSpec {
                &mut self.spec
            }
            fn begin(&mut self, v: String) {
                self.begin = Some(v);
            }
            fn deadline(&mut self, v: String) {
                self.deadline = Some(v);
            }
            fn clusters(&mut self, names: Vec<String>) {
                self.clusters = names;
            }
        }
    };
}
pub(crate) use request_in_fields;

/// Why the shared options without a mechanism in Spur have no effect.
pub mod why {
    pub const ENERGY: &str = "Spur does not sample energy, network or file-system counters";
    pub const BURST: &str = "burst buffers are not part of Spur";
    pub const FEDERATION: &str = "Spur's controller is one cluster (no federation)";
    pub const CONTAINER: &str = "containers are not part of Spur; run the container tool in the job";
    pub const LAYOUT: &str =
        "nodes are scheduled by their CPU count, not their socket, core or thread layout";
    pub const BIND: &str = "tasks are not bound to CPUs, memory or GPUs";
    pub const FREQ: &str = "CPU and GPU frequencies are not set by Spur";
    pub const BOOT: &str = "Spur does not boot or reboot nodes";
    pub const FEATURES: &str = "nodes are chosen by --constraint only";
    pub const MCS: &str = "MCS labels are not part of Spur";
    pub const NETWORK: &str = "network and switch topology are not part of Spur's placement";
    pub const PROFILE: &str = "Spur does not profile jobs";
    pub const PORTS: &str = "Spur does not reserve communication ports";
    pub const GRES: &str = "Spur schedules GPUs per node, per task or per job only";
    pub const SHARE: &str = "Spur allocates whole CPUs; nodes are shared only as CPUs and memory allow";
    pub const NO_KILL: &str = "a job whose node fails is ended (or requeued)";
    pub const OOM: &str = "the kernel's OOM killer ends the task it picks; steps go on";
    pub const STEPMGR: &str = "steps are managed by the controller";
    pub const EXTRA: &str = "node extras are not part of Spur's placement";
    pub const SPREAD: &str = "nodes are chosen by Spur's node order";
    pub const X11: &str = "X11 forwarding is not part of Spur";
}

/// The family's table, for a command whose state is `T`.
pub struct Family<T>(PhantomData<T>);

impl<T: Request> Family<T> {
    pub const OPTS: &'static [Opt<T>] = &[
        value("J/job-name", |s, v| s.spec().name = v),
        value("A/account", |s, v| s.spec().account = v),
        value("p/partition", |s, v| s.spec().partition = v),
        value("q/qos", |s, v| s.spec().qos = v),
        check("N/nodes", |s, v| count("nodes", &v).map(|n| s.spec().num_nodes = n)),
        check("n/ntasks", |s, v| count("ntasks", &v).map(|n| s.spec().ntasks = n)),
        check("c/cpus-per-task", |s, v| count("cpus-per-task", &v).map(|n| s.spec().cpus_per_task = n)),
        check("-/ntasks-per-node", |s, v| count("ntasks-per-node", &v).map(|n| s.spec().ntasks_per_node = n)),
        check("-/mem", |s, v| parse_mem("mem", &v).map(|m| s.spec().mem_mb = m)),
        check("-/mem-per-cpu", |s, v| parse_mem("mem-per-cpu", &v).map(|m| s.spec().mem_per_cpu_mb = m)),
        check("-/gres", |s, v| parse_gres(&v).map(|g| s.spec().gpus_per_node = g)),
        check("-/gpus-per-node", |s, v| {
            parse_gpu_count("gpus-per-node", &v).map(|g| s.spec().gpus_per_node = g)
        }),
        check("G/gpus", |s, v| parse_gpu_count("gpus", &v).map(|g| s.spec().gpus_total = g)),
        check("-/gpus-per-task", |s, v| {
            parse_gpu_count("gpus-per-task", &v).map(|g| s.spec().gpus_per_task = g)
        }),
        check("t/time", |s, v| {
            let t = TimeLimit::parse_request(&v).map_err(|e| format!("--time: {e}"))?;
            s.spec().time_limit_minutes = t.minutes();
            Ok(())
        }),
        check("-/time-min", |s, v| {
            TimeLimit::parse_request(&v)
                .map(|t| s.spec().time_min_minutes = t.minutes())
                .map_err(|e| format!("--time-min: {e}"))
        }),
        check("w/nodelist", |s, v| hosts("nodelist", &v).map(|h| s.spec().nodelist = h)),
        check("x/exclude", |s, v| hosts("exclude", &v).map(|h| s.spec().exclude = h)),
        check("F/nodefile", |s, v| nodefile(&v).map(|h| s.spec().nodelist = h)),
        // `=user|mcs|topo` narrow what is shared; Spur's exclusive is the whole node.
        maybe("-/exclusive", |s, _| {
            s.spec().exclusive = true;
            Ok(())
        }),
        check("C/constraint", |s, v| {
            Constraint::parse(&v)
                .map(|c| s.spec().constraint = c.to_string())
                .map_err(|e| format!("--constraint: {e}"))
        }),
        check("d/dependency", |s, v| {
            Dependency::parse(&v)
                .map(|d| s.spec().dependency = d.to_string())
                .map_err(|e| format!("--dependency: {e}"))
        }),
        check("-/mail-type", |s, v| check_mail_type(&v).map(|m| s.spec().mail_type = m)),
        check("-/mail-user", |s, v| check_mail_user(&v).map(|m| s.spec().mail_user = m)),
        check("-/signal", |s, v| check_signal(&v).map(|g| s.spec().signal = g)),
        value("b/begin", |s, v| s.begin(v)),
        value("-/deadline", |s, v| s.deadline(v)),
        maybe("-/nice", nice),
        value("-/wckey", |s, v| s.spec().wckey = v),
        check("-/priority", priority),
        check("L/licenses", |s, v| {
            crate::vocab::licenses::parse_request(&v).map_err(|e| format!("--licenses: {e}"))?;
            s.spec().licenses = v;
            Ok(())
        }),
        switch("H/hold", |s| s.spec().hold = true),
        value("-/comment", |s, v| s.spec().comment = v),
        check("M/clusters", |s, v| super::cluster::parse_list(&v).map(|n| s.clusters(n))),
        // Accepted with a warning: no mechanism in Spur.
        ignored("-/acctg-freq", why::ENERGY),
        ignored("-/bb", why::BURST),
        ignored("-/bbf", why::BURST),
        ignored("-/cluster-constraint", why::FEDERATION),
        ignored("-/container", why::CONTAINER),
        ignored("-/container-id", why::CONTAINER),
        ignored_switch("-/contiguous", why::NETWORK),
        ignored("S/core-spec", why::LAYOUT),
        check("-/cores-per-socket", |s, v| {
            count("cores-per-socket", &v).map(|n| s.spec().cores_per_socket = n)
        }),
        ignored("-/cpu-freq", why::FREQ),
        check("-/cpus-per-gpu", |s, v| count("cpus-per-gpu", &v).map(|n| s.spec().cpus_per_gpu = n)),
        ignored("-/delay-boot", why::BOOT),
        check("m/distribution", |s, v| {
            let d = crate::vocab::distribution::Distribution::parse(&v)?;
            s.spec().distribution = d.to_string();
            Ok(())
        }),
        ignored("-/extra", why::EXTRA),
        check("B/extra-node-info", extra_node_info),
        ignored("-/gpu-bind", why::BIND),
        ignored("-/gpu-freq", why::FREQ),
        check("-/gpus-per-socket", |s, v| {
            parse_gpu_count("gpus-per-socket", &v).map(|g| s.spec().gpus_per_socket = g)
        }),
        ignored("-/gres-flags", why::GRES),
        ignored("-/hint", why::BIND),
        ignored("-/mcs-label", why::MCS),
        ignored("-/mem-bind", why::BIND),
        check("-/mem-per-gpu", |s, v| parse_mem("mem-per-gpu", &v).map(|m| s.spec().mem_per_gpu_mb = m)),
        check("-/mincpus", |s, v| count("mincpus", &v).map(|n| s.spec().mincpus = n)),
        ignored("-/network", why::NETWORK),
        // Stored and shown as asked, with the warning.
        maybe("k/no-kill", |s: &mut T, v| {
            s.spec().no_kill = !v.is_some_and(|v| v.trim().eq_ignore_ascii_case("off"));
            Ok(())
        })
        .noted(why::NO_KILL),
        check("-/ntasks-per-core", |s, v| count("ntasks-per-core", &v).map(|n| s.spec().ntasks_per_core = n)),
        check("-/ntasks-per-gpu", |s, v| count("ntasks-per-gpu", &v).map(|n| s.spec().ntasks_per_gpu = n)),
        check("-/ntasks-per-socket", |s, v| {
            count("ntasks-per-socket", &v).map(|n| s.spec().ntasks_per_socket = n)
        }),
        maybe("-/oom-kill-step", |_, _| Ok(())).noted(why::OOM),
        switch("s/oversubscribe", |s: &mut T| s.spec().oversubscribe = true).noted(why::SHARE),
        ignored("-/prefer", why::FEATURES),
        ignored("-/profile", why::PROFILE),
        ignored_switch("-/reboot", why::BOOT),
        // Stored and shown as given, with its warning.
        value("-/reservation", |s: &mut T, v| s.spec().reservation = v),
        maybe("-/resv-ports", |_, _| Ok(())).noted(why::PORTS),
        ignored("-/segment", why::NETWORK),
        check("-/sockets-per-node", |s, v| {
            count("sockets-per-node", &v).map(|n| s.spec().sockets_per_node = n)
        }),
        ignored_switch("-/spread-job", why::SPREAD),
        ignored_switch("-/stepmgr", why::STEPMGR),
        ignored("-/switches", why::NETWORK),
        ignored("-/thread-spec", why::LAYOUT),
        check("-/threads-per-core", |s, v| {
            count("threads-per-core", &v).map(|n| s.spec().threads_per_core = n)
        }),
        check("-/tmp", |s, v| parse_mem("tmp", &v).map(|m| s.spec().tmp_mb = m)),
        ignored("-/tres-bind", why::BIND),
        check("-/tres-per-task", tres_per_task),
        // Spur takes one node count (no ranges), so the job gets the fewest there are.
        switch("-/use-min-nodes", |_| {}),
    ];
}

/// srun's and salloc's `-I/--immediate[=secs]`: how long the allocation may
/// pend before it is given up (1 second when no value is given, as Slurm).
pub fn immediate(v: Option<String>) -> Result<u64, String> {
    match v.as_deref().map(str::trim) {
        None | Some("") => Ok(1),
        Some(t) => t
            .parse::<u64>()
            .ok()
            .filter(|n| *n > 0)
            .ok_or_else(|| format!("--immediate: '{t}' is not a positive number of seconds")),
    }
}

/// sbatch's and salloc's `--wait-all-nodes=0|1`: Spur's nodes are ready
/// when they are allocated (it boots none), so both values start the job then.
pub fn wait_all_nodes(v: &str) -> Result<(), String> {
    match v.trim() {
        "0" | "1" => Ok(()),
        _ => Err(format!("--wait-all-nodes: '{v}' is not 0 or 1")),
    }
}

/// The error when `--immediate`'s time passed with the allocation still pending.
pub fn not_immediate(secs: u64) -> String {
    let s = if secs == 1 { "" } else { "s" };
    format!("Unable to allocate resources: the job did not start within {secs} second{s} (--immediate)")
}

/// `-B/--extra-node-info=S[:C[:T]]`: at least S sockets, C cores per socket
/// and T threads per core (`*` leaves one free), as the three options set them.
fn extra_node_info<T: Request>(s: &mut T, v: String) -> Result<(), String> {
    let parts: Vec<&str> = v.trim().split(':').collect();
    if parts.len() > 3 || parts.iter().any(|p| p.is_empty()) {
        return Err(format!("--extra-node-info: '{v}' is not SOCKETS[:CORES[:THREADS]]"));
    }
    let n = |p: &str| match p {
        "*" => Ok(0),
        p => count("extra-node-info", p),
    };
    let spec = s.spec();
    let fields = [&mut spec.sockets_per_node, &mut spec.cores_per_socket, &mut spec.threads_per_core];
    for (field, part) in fields.into_iter().zip(parts) {
        *field = n(part)?;
    }
    Ok(())
}

/// `--tres-per-task=cpu=N,gres/gpu=N` (also `gres/gpu:N`, `gpu:N`): CPUs and
/// GPUs per task, as `-c` and `--gpus-per-task`; other TRES are refused by name.
fn tres_per_task<T: Request>(s: &mut T, v: String) -> Result<(), String> {
    for item in v.split(',').map(str::trim).filter(|i| !i.is_empty()) {
        let (name, n) = item
            .rsplit_once(['=', ':'])
            .ok_or_else(|| format!("--tres-per-task: '{item}' is not TRES=COUNT"))?;
        let n = count("tres-per-task", n)?;
        match name.trim_start_matches("gres/") {
            "cpu" => s.spec().cpus_per_task = n,
            "gpu" => s.spec().gpus_per_task = n,
            other => {
                return Err(format!(
                    "--tres-per-task: '{other}' is not a TRES Spur schedules per task (cpu, gres/gpu)"
                ));
            }
        }
    }
    Ok(())
}

/// `--nice[=adjustment]`: Slurm's default adjustment is 100.
fn nice<T: Request>(s: &mut T, v: Option<String>) -> Result<(), String> {
    let t = v.as_deref().map(str::trim).filter(|t| !t.is_empty()).unwrap_or("100");
    match t.parse::<i32>() {
        Ok(n) if (-2_147_483_645..=2_147_483_645).contains(&n) => s.spec().nice = n,
        _ => return Err(format!("--nice: '{}' is not a whole number", v.unwrap_or_default())),
    }
    Ok(())
}

fn priority<T: Request>(s: &mut T, v: String) -> Result<(), String> {
    match v.trim().parse::<i64>() {
        Ok(p) if p >= 0 => s.spec().priority = Some(p),
        _ => return Err(format!("--priority: '{v}' is not a whole number of zero or more")),
    }
    Ok(())
}

/// `-F/--nodefile`: a file of host names (blanks, commas or lines apart),
/// read as `--nodelist` would be given.
fn nodefile(path: &str) -> Result<String, String> {
    let text = std::fs::read_to_string(path).map_err(|e| format!("--nodefile: cannot read '{path}': {e}"))?;
    let names: Vec<&str> =
        text.split(|c: char| c == ',' || c.is_whitespace()).filter(|s| !s.is_empty()).collect();
    if names.is_empty() {
        return Err(format!("--nodefile: '{path}' names no nodes"));
    }
    hosts("nodefile", &names.join(","))
}

/// `--test-only`'s line (sbatch's, srun's), in Slurm's words; it goes to stderr, as Slurm's does.
pub fn expected_start(cmd: &str, r: &pb::TestSubmitResponse) -> String {
    let when = if r.start_ms > 0 { crate::vocab::txn::format_time(r.start_ms) } else { "Unknown".into() };
    let on = if r.nodes.is_empty() {
        String::new()
    } else {
        format!(" on nodes {}", crate::vocab::hostlist::compress(&r.nodes))
    };
    format!(
        "{cmd}: Job {} to start at {when} using {} processors{on} in partition {}",
        r.job_id, r.cpus, r.partition
    )
}

/// `-v/--verbose`'s first lines (sbatch's, srun's), as Slurm prints them to
/// stderr: the request's options that are set, between its rulers.
pub fn defined_options(cmd: &str, s: &pb::JobSpec, verbose: u8) -> Vec<String> {
    let ruler = format!("{cmd}: -------------------- --------------------");
    let mut out = vec![format!("{cmd}: defined options"), ruler.clone()];
    let num = |n: u32| (n > 0).then(|| n.to_string());
    let text = |t: &str| (!t.is_empty()).then(|| t.to_string());
    let rows = [
        ("account", text(&s.account)),
        ("cpus-per-task", num(s.cpus_per_task)),
        ("distribution", text(&s.distribution)),
        ("job-name", text(&s.name)),
        ("nodelist", text(&s.nodelist)),
        ("nodes", num(s.num_nodes)),
        ("ntasks", num(s.ntasks)),
        ("ntasks-per-node", num(s.ntasks_per_node)),
        ("partition", text(&s.partition)),
        ("qos", text(&s.qos)),
        ("time", s.time_limit_minutes.map(crate::vocab::time::format_minutes)),
        ("verbose", Some(verbose.to_string())),
    ];
    for (k, v) in rows {
        if let Some(v) = v {
            out.push(format!("{cmd}: {k:<20}: {v}"));
        }
    }
    out.push(ruler);
    out.push(format!("{cmd}: end of defined options"));
    out
}

/// Slurm's SubmitLine: the command's words joined by spaces.
pub fn submit_line(cmd: &str, argv: &[String]) -> String {
    std::iter::once(cmd).chain(argv.iter().map(String::as_str)).collect::<Vec<_>>().join(" ")
}

/// [`defined_options`] on stderr, when `-v` was given.
pub fn say_defined_options(cmd: &str, s: &pb::JobSpec, verbose: u8) {
    if verbose > 0 {
        defined_options(cmd, s, verbose).iter().for_each(|l| super::output::complain(l));
    }
}

/// `--version`: Spur's, and the Slurm release whose options it takes.
pub fn version() -> String {
    format!("spur {} (slurm 25.05 options)\n", env!("CARGO_PKG_VERSION"))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::cli::getopt::{Mode, Spec};

    #[derive(Default)]
    struct R(pb::JobSpec);

    impl Request for R {
        fn spec(&mut self) -> &mut pb::JobSpec {
            &mut self.0
        }
        fn begin(&mut self, _: String) {}
        fn deadline(&mut self, _: String) {}
        fn clusters(&mut self, _: Vec<String>) {}
    }

    fn parse(args: &[&str]) -> Result<pb::JobSpec, String> {
        let spec = Spec { opts: Family::<R>::OPTS, mode: Mode::Anywhere, noun: "option" };
        let mut r = R::default();
        spec.parse(&args.iter().map(|s| s.to_string()).collect::<Vec<_>>(), &mut r)?;
        Ok(r.0)
    }

    #[test]
    fn verbose_lists_the_options_set_as_slurm_does() {
        let s = pb::JobSpec {
            num_nodes: 2,
            partition: "batch".into(),
            time_limit_minutes: Some(90),
            ..Default::default()
        };
        assert_eq!(
            defined_options("sbatch", &s, 1),
            [
                "sbatch: defined options",
                "sbatch: -------------------- --------------------",
                "sbatch: nodes               : 2",
                "sbatch: partition           : batch",
                "sbatch: time                : 01:30:00",
                "sbatch: verbose             : 1",
                "sbatch: -------------------- --------------------",
                "sbatch: end of defined options",
            ]
        );
    }

    #[test]
    fn extra_node_info_and_tres_per_task_set_the_options_they_stand_for() {
        let s = parse(&["-B", "2:*:1"]).unwrap();
        assert_eq!((s.sockets_per_node, s.cores_per_socket, s.threads_per_core), (2, 0, 1));
        assert!(parse(&["-B", "1:2:3:4"]).unwrap_err().contains("SOCKETS[:CORES[:THREADS]]"));
        assert!(parse(&["-B", "x"]).unwrap_err().starts_with("--extra-node-info: 'x'"));
        let s = parse(&["--tres-per-task=cpu=4,gres/gpu:2"]).unwrap();
        assert_eq!((s.cpus_per_task, s.gpus_per_task), (4, 2));
        assert!(parse(&["--tres-per-task=license/x=1"]).unwrap_err().contains("'license/x' is not a TRES"));
        let s = parse(&["--nice", "--exclusive=user"]).unwrap();
        assert_eq!((s.nice, s.exclusive), (100, true), "optional values left out");
        let s = parse(&["-s", "-k", "--reservation=maint"]).unwrap();
        // -s and -k warn; --reservation runs the job in that reservation.
        assert_eq!((s.oversubscribe, s.no_kill, s.reservation.as_str()), (true, true, "maint"), "stored");
        assert!(!parse(&["--no-kill=off"]).unwrap().no_kill);
    }
}
