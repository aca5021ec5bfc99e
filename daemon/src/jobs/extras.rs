//! The sbatch options most jobs never set (`--mail-type`, `--dependency`,
//! `-C`, `--begin`, ...), kept apart from [`JobRecord`]'s core fields so
//! a job without them costs one empty pointer: a queue of 100,000 plain jobs
//! holds no more than before (issue 15). Also how the per-node asks of
//! `--ntasks-per-node`, `--mem-per-cpu`, `--gpus`, `--gpus-per-task`,
//! `--cpus-per-gpu`, `--mincpus` and `--mem-per-gpu` resolve into the
//! record's tasks, nodes, CPUs per task, memory and GPUs per node.

pub use super::parts::Extras;
use super::record::JobRecord;
use crate::error::{Error, Result};
use spur_proto::v1 as pb;
use spur_vocab::constraint::Constraint;
use spur_vocab::depend::Dependency;
use spur_vocab::distribution::Distribution;
use spur_vocab::mail::check_user;
use spur_vocab::signal::WarnSignal;

impl Extras {
    /// The spec's rarely-set options; None when it sets none of them.
    pub fn from_spec(s: &pb::JobSpec) -> Result<Option<Box<Extras>>> {
        let constraint = Constraint::parse(&s.constraint).map_err(|e| Error::invalid("constraint", e))?;
        let dependency = Dependency::parse(&s.dependency).map_err(|e| Error::invalid("dependency", e))?;
        let open_mode = match s.open_mode.as_str() {
            "" | "truncate" => String::new(),
            "append" => "append".into(),
            other => return Err(Error::invalid("open_mode", format!("'{other}' is not append or truncate"))),
        };
        if !s.signal.trim().is_empty() {
            // Checked here too: a client other than sbatch may send anything.
            WarnSignal::parse(&s.signal).map_err(|e| Error::invalid("signal", e))?;
        }
        // Not given is empty; anything given is one plain address (it reaches the mail program).
        let mail_user = match s.mail_user.as_str() {
            "" => String::new(),
            v => check_user(v).map_err(|e| Error::invalid("--mail-user", e))?.to_string(),
        };
        let x = Extras {
            ntasks_per_node: s.ntasks_per_node,
            mem_per_cpu_mb: s.mem_per_cpu_mb,
            constraint: constraint.to_string(),
            mail_type: s.mail_type.clone(),
            mail_user,
            signal: s.signal.clone(),
            begin_ms: s.begin_ms.max(0),
            deadline_ms: s.deadline_ms.max(0),
            time_min: s.time_min_minutes,
            nice: s.nice,
            open_mode,
            wckey: s.wckey.clone(),
            dependency: dependency.to_string(),
            kill_on_invalid_dep: s.kill_on_invalid_dep,
            signalled_run_ms: 0,
            annotations: annotations(&s.annotations)?,
            mem_per_gpu_mb: s.mem_per_gpu_mb,
            cpus_per_gpu: s.cpus_per_gpu,
            mincpus: s.mincpus,
            reservation: reservation(&s.reservation)?,
            tmp_mb: s.tmp_mb,
            sockets_per_node: s.sockets_per_node,
            cores_per_socket: s.cores_per_socket,
            threads_per_core: s.threads_per_core,
            overcommit: s.overcommit,
            ntasks_per_gpu: s.ntasks_per_gpu,
            gpus_per_socket: s.gpus_per_socket,
            oversubscribe: s.oversubscribe,
            no_kill: s.no_kill,
            ntasks_per_core: s.ntasks_per_core,
            ntasks_per_socket: s.ntasks_per_socket,
            input: s.input.trim().to_string(),
            script_args: script_args(&s.script_args)?,
            command: command(&s.command)?,
            submit_line: submit_line(&s.submit_line),
            distribution: match s.distribution.trim() {
                "" => String::new(),
                d => Distribution::parse(d).map_err(Error::InvalidArgument)?.to_string(),
            },
        };
        Ok((x != Extras::default()).then(|| Box::new(x)))
    }

    /// The `workflow` annotation, which groups jobs on `exclusive: workflow` nodes.
    pub fn workflow(&self) -> Option<&str> {
        self.annotations.iter().find(|(k, _)| k == "workflow").map(|(_, v)| v.as_str())
    }

    pub fn dependency(&self) -> Dependency {
        Dependency::parse(&self.dependency).unwrap_or_default()
    }

    /// What a node's facts must have for the job, which runs `tasks_per_node` tasks a node.
    pub fn needs(&self, tasks_per_node: u32) -> spur_sched::model::NodeNeeds {
        let at_most = |per: u32| if per == 0 { 0 } else { tasks_per_node.div_ceil(per) };
        spur_sched::model::NodeNeeds {
            tmp_mb: self.tmp_mb,
            sockets: self.sockets_per_node,
            cores_per_socket: self.cores_per_socket,
            threads_per_core: self.threads_per_core,
            cores: at_most(self.ntasks_per_core),
            task_sockets: at_most(self.ntasks_per_socket),
        }
    }

    pub fn constraint(&self) -> Constraint {
        Constraint::parse(&self.constraint).unwrap_or_default()
    }
}

/// `--reservation`: a reservation's name (whether it exists and lets the job in is the submit's check).
fn reservation(v: &str) -> Result<String> {
    let v = v.trim();
    if v.len() > 128 || !v.chars().all(|c| c.is_ascii_alphanumeric() || "_-.".contains(c)) {
        return Err(Error::invalid("reservation", format!("'{v}' is not a reservation name")));
    }
    Ok(v.to_string())
}

/// The most script arguments a job may carry, and their total size: a
/// request's cost stays bounded, and the script's exec (Linux's ARG_MAX is a
/// quarter of the stack, 2 MiB by default, shared with the environment) can take them.
pub const MAX_SCRIPT_ARGS: usize = 4096;
pub const MAX_SCRIPT_ARGS_BYTES: usize = 1 << 20;
/// One argument's most bytes: Linux's MAX_ARG_STRLEN (128 KiB, its NUL included).
const MAX_SCRIPT_ARG: usize = 128 * 1024 - 1;

/// sbatch's script arguments, checked: within the bounds above, and no NUL
/// byte (an exec's arguments are C strings).
pub fn script_args(args: &[String]) -> Result<Vec<String>> {
    let bad = |m: String| Error::invalid("script arguments", m);
    if args.len() > MAX_SCRIPT_ARGS {
        return Err(bad(format!("{} arguments; at most {MAX_SCRIPT_ARGS}", args.len())));
    }
    let total: usize = args.iter().map(|a| a.len() + 1).sum();
    if total > MAX_SCRIPT_ARGS_BYTES {
        return Err(bad(format!("{total} bytes in all; at most {MAX_SCRIPT_ARGS_BYTES}")));
    }
    for (i, a) in args.iter().enumerate() {
        if a.len() > MAX_SCRIPT_ARG {
            return Err(bad(format!("argument {} is {} bytes; at most {MAX_SCRIPT_ARG}", i + 1, a.len())));
        }
        if a.contains('\0') {
            return Err(bad(format!("argument {} holds a NUL byte", i + 1)));
        }
    }
    Ok(args.to_vec())
}

/// The most of a submit line kept: it is shown, never run, and every
/// listing carries it (script arguments alone may take 1 MiB).
pub const MAX_SUBMIT_LINE: usize = 4096;

/// The submit line as kept: its first [`MAX_SUBMIT_LINE`] bytes (on a
/// character boundary, then `...`), on one line.
fn submit_line(v: &str) -> String {
    let v = v.replace(['\n', '\r', '\0'], " ");
    if v.len() <= MAX_SUBMIT_LINE {
        return v;
    }
    let mut end = MAX_SUBMIT_LINE;
    while !v.is_char_boundary(end) {
        end -= 1;
    }
    format!("{}...", &v[..end])
}

/// The script's path, as shown (`Command=`): one line, at most a path's length.
fn command(v: &str) -> Result<String> {
    if v.len() > 4096 || v.contains(['\n', '\0']) {
        return Err(Error::invalid("command", "the script's path must be one line of at most 4096 bytes"));
    }
    Ok(v.to_string())
}

/// Annotations a job may carry, and their sizes: a request's cost stays bounded.
const MAX_ANNOTATIONS: usize = 32;
const MAX_KEY: usize = 128;
const MAX_VALUE: usize = 1024;

fn annotations(kvs: &[pb::KeyValue]) -> Result<Vec<(String, String)>> {
    let bad = |m: String| Error::invalid("annotation", m);
    if kvs.len() > MAX_ANNOTATIONS {
        return Err(bad(format!("{} annotations; at most {MAX_ANNOTATIONS}", kvs.len())));
    }
    let mut out: Vec<(String, String)> = Vec::with_capacity(kvs.len());
    for kv in kvs {
        let k = kv.key.as_str();
        if k.is_empty() || k.len() > MAX_KEY || k.chars().any(|c| c.is_whitespace() || c == '=' || c == ',') {
            return Err(bad(format!(
                "key '{k}' must be 1 to {MAX_KEY} characters, without spaces, '=' or ','"
            )));
        }
        if kv.value.len() > MAX_VALUE || kv.value.contains(['\n', ',']) {
            return Err(bad(format!(
                "{k}: the value must be at most {MAX_VALUE} characters on one line, without ','"
            )));
        }
        if out.iter().any(|(o, _)| o == k) {
            return Err(bad(format!("key '{k}' is given twice")));
        }
        out.push((k.to_string(), kv.value.clone()));
    }
    Ok(out)
}

/// Resolves the per-node and per-task asks into `rec`'s counts, as Slurm
/// does: `--ntasks-per-node` makes `-n` (or `-N` from `-n`), `--mem-per-cpu`
/// the memory per node, `--gpus` and `--gpus-per-task` the GPUs per node.
pub fn resolve_shape(rec: &mut JobRecord, s: &pb::JobSpec) -> Result<()> {
    let tpn = s.ntasks_per_node;
    if tpn > 0 {
        match (s.ntasks, s.num_nodes) {
            (0, _) => rec.ntasks = tpn.saturating_mul(rec.num_nodes.max(1)),
            (n, 0) => rec.num_nodes = n.div_ceil(tpn),
            _ => {}
        }
    }
    per_gpu_tasks(rec, s)?;
    let tasks_per_node = rec.ntasks.max(rec.num_nodes).div_ceil(rec.num_nodes.max(1));
    let per_node = [
        (s.gpus_total > 0).then(|| u64::from(s.gpus_total).div_ceil(u64::from(rec.num_nodes.max(1)))),
        (s.gpus_per_task > 0).then(|| u64::from(s.gpus_per_task) * u64::from(tasks_per_node)),
    ];
    match per_node {
        [Some(_), Some(_)] => {
            return Err(Error::invalid("gpus", "--gpus and --gpus-per-task are mutually exclusive"));
        }
        [Some(g), None] | [None, Some(g)] if s.gpus_per_node > 0 && g != u64::from(s.gpus_per_node) => {
            return Err(Error::invalid(
                "gpus",
                format!("--gres/--gpus-per-node asks {} GPUs per node and --gpus {g}", s.gpus_per_node),
            ));
        }
        [Some(g), None] | [None, Some(g)] => rec.gpus = g,
        [None, None] => {}
    }
    let no_gpus = |flag: &str| {
        Error::invalid(flag, format!("--{flag} needs GPUs (--gpus, --gpus-per-node, --gres=gpu:N)"))
    };
    if s.cpus_per_gpu > 0 {
        if s.cpus_per_task > 0 {
            return Err(Error::invalid(
                "cpus_per_gpu",
                "--cpus-per-gpu and --cpus-per-task are mutually exclusive",
            ));
        }
        if rec.gpus == 0 {
            return Err(no_gpus("cpus-per-gpu"));
        }
        let cpus = u64::from(s.cpus_per_gpu) * rec.gpus;
        rec.cpus_per_task = u32::try_from(cpus.div_ceil(u64::from(tasks_per_node.max(1))))
            .map_err(|_| Error::invalid("cpus_per_gpu", format!("{cpus} CPUs per node is out of range")))?;
    }
    // Slurm's pn_min_cpus: each node's share grows to it through CPUs per task.
    if s.mincpus > 0 && u64::from(tasks_per_node) * u64::from(rec.cpus_per_task) < u64::from(s.mincpus) {
        rec.cpus_per_task = s.mincpus.div_ceil(tasks_per_node.max(1));
    }
    let exclusive_mem =
        |flag: &str| Error::invalid(flag, "--mem, --mem-per-cpu and --mem-per-gpu are mutually exclusive");
    if s.mem_per_cpu_mb > 0 {
        if s.mem_mb > 0 || s.mem_per_gpu_mb > 0 {
            return Err(exclusive_mem("mem_per_cpu"));
        }
        // With -O a node is allocated one task's CPUs.
        let cpu_tasks = if s.overcommit { 1 } else { tasks_per_node };
        let cpus = u64::from(cpu_tasks) * u64::from(rec.cpus_per_task.max(1));
        rec.mem_mb = s.mem_per_cpu_mb.checked_mul(cpus).ok_or_else(|| {
            Error::invalid("mem_per_cpu", format!("{} MB × {cpus} CPUs per node overflows", s.mem_per_cpu_mb))
        })?;
    }
    if s.mem_per_gpu_mb > 0 {
        if s.mem_mb > 0 {
            return Err(exclusive_mem("mem_per_gpu"));
        }
        if rec.gpus == 0 {
            return Err(no_gpus("mem-per-gpu"));
        }
        rec.mem_mb = s.mem_per_gpu_mb.checked_mul(rec.gpus).ok_or_else(|| {
            Error::invalid(
                "mem_per_gpu",
                format!("{} MB × {} GPUs per node overflows", s.mem_per_gpu_mb, rec.gpus),
            )
        })?;
    }
    Ok(())
}

/// `--gpus-per-socket` (GPUs per node from `--sockets-per-node`) and
/// `--ntasks-per-gpu` (tasks from the GPUs, or with `-n` and no GPUs asked,
/// GPUs from the tasks), as Slurm resolves them; before the GPUs per node.
fn per_gpu_tasks(rec: &mut JobRecord, s: &pb::JobSpec) -> Result<()> {
    let nodes = u64::from(rec.num_nodes.max(1));
    if s.gpus_per_socket > 0 {
        if s.sockets_per_node == 0 {
            return Err(Error::invalid("gpus_per_socket", "--gpus-per-socket needs --sockets-per-node"));
        }
        if s.gpus_per_node > 0 || s.gpus_total > 0 || s.gpus_per_task > 0 {
            return Err(Error::invalid(
                "gpus_per_socket",
                "--gpus-per-socket and --gpus, --gpus-per-node, --gpus-per-task or --gres are mutually exclusive",
            ));
        }
        rec.gpus = u64::from(s.gpus_per_socket) * u64::from(s.sockets_per_node);
    }
    let n = u64::from(s.ntasks_per_gpu);
    if n == 0 {
        return Ok(());
    }
    if s.gpus_per_task > 0 {
        return Err(Error::invalid(
            "ntasks_per_gpu",
            "--ntasks-per-gpu and --gpus-per-task are mutually exclusive",
        ));
    }
    let total = match (s.gpus_total, rec.gpus) {
        (0, 0) => None,
        (0, per_node) => Some(per_node * nodes),
        (t, _) => Some(u64::from(t)),
    };
    let too_many =
        || Error::invalid("ntasks_per_gpu", "--ntasks-per-gpu makes more tasks than a job may have");
    match (total, s.ntasks) {
        (Some(g), 0) => rec.ntasks = u32::try_from(g.saturating_mul(n)).map_err(|_| too_many())?,
        (None, t) if t > 0 => rec.gpus = u64::from(t).div_ceil(n).div_ceil(nodes),
        (None, _) => {
            return Err(Error::invalid(
                "ntasks_per_gpu",
                "--ntasks-per-gpu needs -n or GPUs (--gpus, --gres)",
            ));
        }
        // Both given: as asked.
        (Some(_), _) => {}
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn resolved(s: pb::JobSpec) -> Result<JobRecord> {
        let mut rec = JobRecord {
            num_nodes: s.num_nodes.max(1),
            ntasks: s.ntasks.max(1),
            cpus_per_task: s.cpus_per_task.max(1),
            mem_mb: s.mem_mb,
            gpus: u64::from(s.gpus_per_node),
            ..JobRecord::default()
        };
        resolve_shape(&mut rec, &s)?;
        Ok(rec)
    }

    #[test]
    fn per_node_asks_resolve_as_slurm_reads_them() {
        let r = resolved(pb::JobSpec { num_nodes: 2, ntasks_per_node: 4, ..Default::default() }).unwrap();
        assert_eq!((r.num_nodes, r.ntasks), (2, 8));
        let r = resolved(pb::JobSpec { ntasks: 6, ntasks_per_node: 4, ..Default::default() }).unwrap();
        assert_eq!((r.num_nodes, r.ntasks), (2, 6));
        let s = pb::JobSpec { ntasks: 4, cpus_per_task: 2, mem_per_cpu_mb: 100, ..Default::default() };
        assert_eq!(resolved(s).unwrap().mem_mb, 800);
        let s = pb::JobSpec { num_nodes: 2, gpus_total: 3, ..Default::default() };
        assert_eq!(resolved(s).unwrap().gpus, 2);
        let s = pb::JobSpec { ntasks: 2, gpus_per_task: 2, ..Default::default() };
        assert_eq!(resolved(s).unwrap().gpus, 4);
    }

    #[test]
    fn per_gpu_asks_and_mincpus_resolve_into_cpus_and_memory_per_node() {
        let s = pb::JobSpec {
            ntasks: 2,
            gpus_per_node: 2,
            cpus_per_gpu: 3,
            mem_per_gpu_mb: 1000,
            ..Default::default()
        };
        let r = resolved(s).unwrap();
        assert_eq!(
            (r.cpus_per_task, r.mem_mb, r.gpus),
            (3, 2000, 2),
            "6 CPUs over 2 tasks; 2 GPUs x 1000 MB"
        );
        let s = pb::JobSpec { num_nodes: 2, gpus_total: 4, mem_per_gpu_mb: 10, ..Default::default() };
        assert_eq!(resolved(s).unwrap().mem_mb, 20);
        let s = pb::JobSpec { ntasks: 3, mincpus: 8, ..Default::default() };
        assert_eq!(resolved(s).unwrap().cpus_per_task, 3, "3 tasks x 3 CPUs reach 8");
        let s = pb::JobSpec { ntasks: 2, cpus_per_task: 4, mincpus: 4, ..Default::default() };
        assert_eq!(resolved(s).unwrap().cpus_per_task, 4, "already at least --mincpus");
        let e = |s| resolved(s).unwrap_err().to_string();
        assert!(
            e(pb::JobSpec { mem_per_gpu_mb: 1, ..Default::default() }).contains("--mem-per-gpu needs GPUs")
        );
        assert!(
            e(pb::JobSpec { cpus_per_gpu: 1, ..Default::default() }).contains("--cpus-per-gpu needs GPUs")
        );
        let s = pb::JobSpec { gpus_per_node: 1, cpus_per_gpu: 1, cpus_per_task: 1, ..Default::default() };
        assert!(e(s).contains("--cpus-per-gpu and --cpus-per-task"));
        let s = pb::JobSpec { gpus_per_node: 1, mem_per_gpu_mb: 1, mem_per_cpu_mb: 1, ..Default::default() };
        assert!(e(s).contains("mutually exclusive"));
        let s = pb::JobSpec { reservation: " maint ".into(), oversubscribe: true, ..Default::default() };
        let x = Extras::from_spec(&s).unwrap().unwrap();
        assert_eq!(
            (x.reservation.as_str(), x.oversubscribe, x.no_kill),
            ("maint", true, false),
            "stored as asked"
        );
        let s = pb::JobSpec { ntasks_per_core: 2, ntasks_per_socket: 4, ..Default::default() };
        let needs = Extras::from_spec(&s).unwrap().unwrap().needs(9);
        assert_eq!((needs.cores, needs.task_sockets), (5, 3), "9 tasks: 2 a core, 4 a socket");
    }

    #[test]
    fn ntasks_per_gpu_and_gpus_per_socket_resolve_tasks_and_gpus() {
        let s = pb::JobSpec { num_nodes: 2, gpus_per_node: 2, ntasks_per_gpu: 3, ..Default::default() };
        assert_eq!(resolved(s).unwrap().ntasks, 12, "4 GPUs x 3");
        let s = pb::JobSpec { gpus_total: 3, ntasks_per_gpu: 2, ..Default::default() };
        assert_eq!(resolved(s).unwrap().ntasks, 6);
        let s = pb::JobSpec { ntasks: 8, ntasks_per_gpu: 4, ..Default::default() };
        assert_eq!(resolved(s).unwrap().gpus, 2, "8 tasks / 4 a GPU");
        let s = pb::JobSpec { sockets_per_node: 2, gpus_per_socket: 4, ..Default::default() };
        assert_eq!(resolved(s).unwrap().gpus, 8);
        let e = |s| resolved(s).unwrap_err().to_string();
        assert!(
            e(pb::JobSpec { gpus_per_socket: 1, ..Default::default() }).contains("needs --sockets-per-node")
        );
        assert!(
            e(pb::JobSpec { ntasks_per_gpu: 1, ntasks: 0, ..Default::default() })
                .contains("needs -n or GPUs")
        );
    }

    #[test]
    fn script_arguments_are_kept_in_order_within_their_bounds() {
        let args = |v: Vec<String>| pb::JobSpec { script_args: v, ..Default::default() };
        let s = args(vec!["one".into(), "two words".into(), String::new()]);
        let x = Extras::from_spec(&s).unwrap().unwrap();
        assert_eq!(x.script_args, ["one", "two words", ""], "as given, empty ones too");
        let e = |s| Extras::from_spec(&s).unwrap_err().to_string();
        let many = e(args(vec!["a".into(); MAX_SCRIPT_ARGS + 1]));
        assert!(many.starts_with("script arguments: 4097 arguments; at most 4096"), "{many}");
        let big = e(args(vec!["x".repeat(100_000); 11]));
        assert!(big.starts_with("script arguments: ") && big.contains("bytes in all"), "{big}");
        let one = e(args(vec!["x".repeat(MAX_SCRIPT_ARG + 1)]));
        assert!(one.contains("argument 1 is 131072 bytes"), "{one}");
        assert!(e(args(vec!["ok".into(), "a\0b".into()])).contains("argument 2 holds a NUL"));
        // A record stored before script arguments existed loads without them.
        let old: Extras = serde_json::from_str(r#"{"nice":3}"#).unwrap();
        assert!(old.script_args.is_empty() && old.command.is_empty());
        let kept = serde_json::to_string(&x).unwrap();
        assert_eq!(serde_json::from_str::<Extras>(&kept).unwrap(), *x);
        assert!(!serde_json::to_string(&Extras::default()).unwrap().contains("script_args"));
    }

    #[test]
    fn distribution_is_kept_canonical_and_a_bad_one_is_refused_by_name() {
        let d = |v: &str| Extras::from_spec(&pb::JobSpec { distribution: v.into(), ..Default::default() });
        assert_eq!(d("Cyclic:*").unwrap().unwrap().distribution, "cyclic:*");
        assert!(d("round").unwrap_err().to_string().starts_with("--distribution: 'round'"));
    }

    #[test]
    fn the_submit_line_is_kept_on_one_line_and_bounded() {
        let line = |v: String| {
            let s = pb::JobSpec { submit_line: v, ..Default::default() };
            Extras::from_spec(&s).unwrap().unwrap().submit_line
        };
        assert_eq!(line("sbatch -N2 job.sh 'a\nb'".into()), "sbatch -N2 job.sh 'a b'");
        let long = line("é".repeat(MAX_SUBMIT_LINE));
        assert!(long.len() <= MAX_SUBMIT_LINE + 3 && long.ends_with("é..."), "{}", long.len());
    }

    #[test]
    fn conflicting_asks_are_refused_by_name() {
        let e = |s| resolved(s).unwrap_err().to_string();
        assert!(
            e(pb::JobSpec { mem_mb: 1, mem_per_cpu_mb: 1, ..Default::default() })
                .contains("mutually exclusive")
        );
        assert!(
            e(pb::JobSpec { gpus_total: 1, gpus_per_task: 1, ..Default::default() }).contains("--gpus and")
        );
        assert!(e(pb::JobSpec { gpus_total: 2, gpus_per_node: 1, ..Default::default() }).contains("--gres"));
        let s = pb::JobSpec { mem_per_cpu_mb: u64::MAX, ntasks: 2, ..Default::default() };
        assert!(e(s).contains("overflows"));
        let bad = pb::JobSpec { mail_user: "ops@x;reboot".into(), ..Default::default() };
        let e = Extras::from_spec(&bad).unwrap_err();
        assert!(matches!(e, Error::InvalidArgument(_)) && e.to_string().starts_with("--mail-user: "), "{e}");
        let bad = pb::JobSpec { mail_user: " ".into(), ..Default::default() };
        assert!(Extras::from_spec(&bad).unwrap_err().to_string().contains("needs an address"));
        let good = pb::JobSpec { mail_user: " ops@example.org".into(), ..Default::default() };
        assert_eq!(Extras::from_spec(&good).unwrap().unwrap().mail_user, "ops@example.org");
        let bad = pb::JobSpec { dependency: "afterok:x".into(), ..Default::default() };
        assert!(Extras::from_spec(&bad).unwrap_err().to_string().contains("dependency"));
        assert_eq!(Extras::from_spec(&pb::JobSpec::default()).unwrap(), None);
    }
}
