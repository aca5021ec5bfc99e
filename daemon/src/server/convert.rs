//! The one place where domain records become proto messages.

use crate::accounting::ChangeOut;
use crate::model::{Account, Assoc, Node, Partition, Qos, User};
use crate::store::TxnRow;
use spur_proto::states;
use spur_proto::v1 as pb;
use spur_vocab::JobState;
use spur_vocab::tres::{self, format_map};

fn lim(v: Option<u64>) -> Option<i64> {
    v.map(|v| i64::try_from(v).unwrap_or(i64::MAX))
}

pub fn qos(q: &Qos, synthetic: bool) -> pb::Qos {
    pb::Qos {
        name: q.name.clone(),
        description: q.description.clone(),
        priority: q.priority,
        preempt_mode: q.preempt_mode.as_str().into(),
        preempt: q.preempt.clone(),
        preempt_exempt_time_secs: lim(q.preempt_exempt_time),
        usage_factor: q.usage_factor,
        max_jobs_per_user: lim(q.max_jobs_per_user),
        max_wall_minutes: lim(q.max_wall),
        max_tres_per_job: format_map(&q.max_tres_per_job),
        max_submit_jobs_per_user: lim(q.max_submit_jobs_per_user),
        max_submit_jobs_per_account: lim(q.max_submit_jobs_per_account),
        grp_submit: lim(q.grp_submit),
        max_tres_per_user: format_map(&q.max_tres_per_user),
        grp_tres: format_map(&q.grp_tres),
        grp_wall_minutes: lim(q.grp_wall),
        flags: q.flags.names().into_iter().map(String::from).collect(),
        idle_fill_preemptable: q.idle_fill_preemptable,
        synthetic,
    }
}

pub fn account(a: &Account) -> pb::Account {
    pb::Account {
        name: a.name.clone(),
        description: a.description.clone(),
        organization: a.organization.clone(),
        parent: a.parent.clone(),
        fairshare: a.fairshare,
        max_jobs: lim(a.max_jobs),
        grp_tres: format_map(&a.grp_tres),
        grp_submit: lim(a.grp_submit),
    }
}

pub fn assoc(user: &str, a: &Assoc) -> pb::Association {
    pb::Association {
        user: user.into(),
        account: a.account.clone(),
        partition: a.partition.clone(),
        qos: a.qos.clone(),
        default_qos: a.default_qos.clone(),
        max_jobs: lim(a.max_jobs),
        max_submit_jobs: lim(a.max_submit_jobs),
        grp_submit: lim(a.grp_submit),
        max_tres_per_job: format_map(&a.max_tres_per_job),
        grp_tres: format_map(&a.grp_tres),
        max_wall_minutes: lim(a.max_wall),
    }
}

pub fn user(u: &User, assocs: &[&Assoc]) -> pb::User {
    pb::User {
        name: u.name.clone(),
        admin_level: u.admin_level.as_str().into(),
        default_account: u.default_account.clone(),
        associations: assocs.iter().map(|a| assoc(&u.name, a)).collect(),
    }
}

pub fn tres_table() -> Vec<pb::Tres> {
    tres::TRES
        .iter()
        .map(|t| {
            let (ty, name) = tres::type_and_name(t);
            pb::Tres { id: i64::from(t.id), r#type: ty.into(), name: name.into() }
        })
        .collect()
}

pub fn change(c: &ChangeOut) -> pb::Change {
    pb::Change {
        entity: c.entity.into(),
        name: c.name.clone(),
        action: c.action.as_str().into(),
        changed_json: if c.changed.is_null() { String::new() } else { c.changed.to_string() },
    }
}

pub fn kvs(pairs: &[pb::KeyValue]) -> Vec<(String, String)> {
    pairs.iter().map(|kv| (kv.key.clone(), kv.value.clone())).collect()
}

fn gres_string(g: &[(String, u64)]) -> String {
    g.iter().map(|(n, c)| format!("{n}:{c}")).collect::<Vec<_>>().join(",")
}

pub fn node(n: &Node) -> pb::Node {
    let reason = n.admin.reason.as_ref();
    pb::Node {
        name: n.name.clone(),
        base_state: n.base_state().as_str().into(),
        drain: n.admin.drain,
        not_responding: n.registered && !n.responding,
        cpus: n.cpus,
        alloc_cpus: n.alloc_cpus,
        memory_mb: n.memory_mb,
        alloc_memory_mb: n.alloc_memory_mb,
        gres: gres_string(&n.gres),
        gres_used: gres_string(&n.alloc_gres),
        features: n.features.clone(),
        weight: n.weight,
        partitions: n.partitions.clone(),
        reason: reason.map(|r| r.text.clone()).unwrap_or_default(),
        reason_user: reason.map(|r| r.user.clone()).unwrap_or_default(),
        reason_uid: reason.and_then(|r| r.uid),
        reason_time_ms: reason.map(|r| r.time_ms).unwrap_or_default(),
        agent_host: n.agent_host.clone(),
        last_heartbeat_ms: n.last_heartbeat_ms,
        running_jobs: n.running_jobs,
        definitions: n.definitions.clone(),
        annotations: n.annotations.iter().map(|(k, v)| pb::KeyValue::new(k, v)).collect(),
        // As a condition sees them: uname.nodename is the node's own name.
        facts: (n.facts.iter().flat_map(|f| f.values.iter()))
            .map(|(k, v)| pb::KeyValue::new(k, if k == "uname.nodename" { &n.name } else { v }))
            .collect(),
        modaliases: n.facts.as_ref().map(|f| f.modaliases.clone()).unwrap_or_default(),
        // Once an agent hosts it, a created CLOUD or FUTURE node is an ordinary dynamic one.
        dynamic: n.dynamic_now().map(|d| d.as_str().to_string()).unwrap_or_default(),
        ..pb::Node::default()
    }
}

/// Marks the nodes admin reservations hold at `now` (`+RESERVED`, `+MAINT`)
/// and each one's next window not yet begun.
pub fn mark_reserved(list: &mut [pb::Node], resvs: &[crate::sched::model::Resv], now: i64) {
    if resvs.is_empty() {
        return;
    }
    let mut at: std::collections::HashMap<&str, Vec<&crate::sched::model::Resv>> = Default::default();
    for r in resvs.iter().filter(|r| r.end_ms > now) {
        r.nodes.iter().for_each(|n| at.entry(n.as_str()).or_default().push(r));
    }
    for n in list.iter_mut() {
        let Some(rs) = at.get(n.name.as_str()) else { continue };
        if let Some(a) = rs.iter().filter(|r| r.active(now)).min_by(|a, b| a.name.cmp(&b.name)) {
            n.reservation = a.name.clone();
        }
        n.maint = rs.iter().any(|r| r.active(now) && r.maint());
        if let Some(next) = rs.iter().filter(|r| r.start_ms > now).min_by_key(|r| r.start_ms) {
            (n.next_reservation, n.next_reservation_ms) = (next.name.clone(), next.start_ms);
        }
    }
}

pub fn partition(p: &Partition, nodes: &std::collections::BTreeMap<String, Node>) -> pb::Partition {
    pb::Partition {
        name: p.name.clone(),
        nodes: spur_vocab::hostlist::compress(&p.nodes),
        is_default: p.is_default,
        max_time_minutes: lim(p.max_time),
        default_time_minutes: lim(p.default_time),
        priority_tier: p.priority_tier,
        preempt_mode: p.preempt_mode.as_str().into(),
        preempt_exempt_time_secs: lim(p.preempt_exempt_time),
        state: p.state.clone(),
        total_nodes: p.nodes.len() as u32,
        total_cpus: p.nodes.iter().filter_map(|n| nodes.get(n)).map(|n| n.cpus).sum(),
    }
}

pub fn txn(r: &TxnRow) -> pb::TxnRow {
    pb::TxnRow {
        id: r.id,
        time_ms: r.head.time_ms,
        actor: r.head.actor.clone(),
        actor_uid: r.head.actor_uid,
        verified: r.head.verified,
        peer: r.head.peer.clone(),
        action: r.action.clone(),
        entity: r.entity.clone(),
        name: r.name.clone(),
        outcome: r.outcome.clone(),
        info: r.info.clone(),
        source: r.head.source.clone(),
    }
}

/// The CPUs a job asks for in all, as squeue's `%C`. Submit refuses a job
/// whose product overflows; one stored before that shows the most it can.
pub fn num_cpus(j: &crate::jobs::record::JobRecord) -> u32 {
    j.ntasks.max(j.num_nodes).saturating_mul(j.cpus_per_task.max(1))
}

/// What squeue's default and long formats show: no spec, no reason facts,
/// no priority factors, so a 100,000-job listing stays a few megabytes.
pub fn job_brief(j: &crate::jobs::record::JobRecord) -> pb::Job {
    pb::Job {
        id: j.id,
        name: j.name.clone(),
        user: j.user.clone(),
        account: j.account.clone().unwrap_or_default(),
        qos: j.qos.clone().unwrap_or_default(),
        partition: j.partition.clone(),
        state: states::state_wire(j.state),
        reason: states::reason_wire(j.reason),
        held: j.is_held(),
        exit_signal: j.exit_signal,
        priority: j.eff_priority,
        time_limit_minutes: j.time_limit,
        submit_ms: j.submit_ms,
        start_ms: j.start_ms,
        end_ms: j.end_ms,
        nodes: j.nodes.clone(),
        num_nodes: j.num_nodes,
        num_cpus: num_cpus(j),
        exit_code: j.exit_code,
        array_job_id: j.array.as_ref().map_or(0, |a| a.job_id),
        array_task_id: j.array.as_ref().and_then(|a| a.task),
        array_pending: j.array.as_deref().map(array_pending).unwrap_or_default(),
        array_throttle: j.array.as_ref().map_or(0, |a| a.throttle),
        borrowed: j.borrowed,
        cost_per_hour: j.charge.iter().map(|(_, rate)| rate).sum(),
        cost_before: j.spent.iter().map(|(_, c)| c).sum(),
        reclaims: j.reclaims,
        uid: j.uid,
        gid: j.gid,
        group: j.group.clone(),
        ..pb::Job::default()
    }
}

/// The pending tasks of an array's record, as squeue shows them inside `12_[...]`.
pub fn array_pending(a: &crate::jobs::array::ArrayInfo) -> String {
    if a.task.is_some() { String::new() } else { a.pending.to_string() }
}

/// What sprio shows, the fields of `pb::JobPriority` (a Job with only those set).
pub fn job_prio(j: &crate::jobs::record::JobRecord) -> pb::Job {
    pb::Job {
        id: j.id,
        user: j.user.clone(),
        account: j.account.clone().unwrap_or_default(),
        qos: j.qos.clone().unwrap_or_default(),
        partition: j.partition.clone(),
        state: states::state_wire(j.state),
        priority: j.eff_priority,
        prio_base: j.factors.0,
        prio_fair_share: j.factors.1,
        prio_age: j.factors.2,
        prio_tier: j.factors.3,
        prio_ordered: j.prio_ordered,
        ..pb::Job::default()
    }
}

pub fn job(j: &crate::jobs::record::JobRecord) -> pb::Job {
    pb::Job {
        reason_detail: j.reason_detail.clone(),
        prio_base: j.factors.0,
        prio_fair_share: j.factors.1,
        prio_age: j.factors.2,
        prio_tier: j.factors.3,
        prio_ordered: j.prio_ordered,
        preempted_by: j.preempted_by.unwrap_or(0),
        usage: j.usage.map(|u| pb::JobUsage {
            user_cpu_us: u.user_cpu_us,
            sys_cpu_us: u.sys_cpu_us,
            max_rss_kb: u.max_rss_kb,
        }),
        licenses_alloc: spur_vocab::licenses::format_allocs(&j.licenses_alloc),
        steps: j.steps.as_ref().map(|l| l.list.iter().map(step).collect()).unwrap_or_default(),
        restarts: j.restarts,
        past_runs: (j.past_runs.iter())
            .map(|r| pb::PastRun {
                start_ms: r.start_ms,
                end_ms: r.end_ms,
                nodes: r.nodes.clone(),
                // A run no preemptor ended is one whose node failed to boot: NODE_FAIL, as Slurm's.
                state: states::state_wire(if r.preempted_by == 0 && !r.reclaim {
                    JobState::NodeFail
                } else {
                    JobState::Preempted
                }),
                preempted_by: r.preempted_by,
                borrowed: r.borrowed,
                reclaim: r.reclaim,
            })
            .collect(),
        spec: Some(Box::new(pb::JobSpec {
            name: j.name.clone(),
            account: j.account.clone().unwrap_or_default(),
            partition: j.partition.clone(),
            qos: j.qos.clone().unwrap_or_default(),
            num_nodes: j.num_nodes,
            ntasks: j.ntasks,
            cpus_per_task: j.cpus_per_task,
            mem_mb: j.mem_mb,
            gpus_per_node: j.gpus as u32,
            time_limit_minutes: j.time_limit,
            nodelist: spur_vocab::hostlist::compress(&j.nodelist),
            exclude: spur_vocab::hostlist::compress(&j.exclude),
            priority: j.priority.map(|p| p as i64),
            exclusive: j.exclusive,
            licenses: j.licenses.clone(),
            hold: j.hold != spur_vocab::Hold::None,
            requeue: Some(j.requeue),
            stdout_path: j.stdout_path.clone(),
            stderr_path: j.stderr_path.clone(),
            comment: j.comment.clone(),
            // The script and environment stay on the controller.
            script: String::new(),
            env: vec![],
            workdir: j.workdir.clone(),
            allocation: j.is_allocation(),
            ..extras_spec(j.extra.as_deref())
        })),
        ..job_brief(j)
    }
}

/// A job step, as sacct, squeue -s and scontrol show step read it.
pub fn step(s: &crate::jobs::steps::StepRecord) -> pb::Step {
    pb::Step {
        id: s.id,
        name: s.name.clone(),
        state: states::state_wire(s.state),
        nodes: s.nodes.clone(),
        ntasks: s.ntasks(),
        cpus: s.ntasks().saturating_mul(s.cpus_per_task.max(1)),
        start_ms: s.start_ms,
        end_ms: s.end_ms,
        exit_code: s.exit_code,
        signal: s.signal,
        tasks_per_node: crate::jobs::steps::layout::tasks_per_node(&s.tasks),
        mem_mb: s.mem_mb,
        cpus_per_task: s.cpus_per_task,
    }
}

/// The rarely-set options, as the spec carries them.
fn extras_spec(x: Option<&crate::jobs::extras::Extras>) -> pb::JobSpec {
    let Some(x) = x else { return pb::JobSpec::default() };
    pb::JobSpec {
        ntasks_per_node: x.ntasks_per_node,
        mem_per_cpu_mb: x.mem_per_cpu_mb,
        constraint: x.constraint.clone(),
        mail_type: x.mail_type.clone(),
        mail_user: x.mail_user.clone(),
        signal: x.signal.clone(),
        begin_ms: x.begin_ms,
        deadline_ms: x.deadline_ms,
        time_min_minutes: x.time_min,
        nice: x.nice,
        open_mode: if x.open_mode.is_empty() { "truncate".into() } else { x.open_mode.clone() },
        wckey: x.wckey.clone(),
        dependency: x.dependency.clone(),
        kill_on_invalid_dep: x.kill_on_invalid_dep,
        annotations: x.annotations.iter().map(|(k, v)| pb::KeyValue::new(k, v)).collect(),
        mem_per_gpu_mb: x.mem_per_gpu_mb,
        cpus_per_gpu: x.cpus_per_gpu,
        mincpus: x.mincpus,
        reservation: x.reservation.clone(),
        tmp_mb: x.tmp_mb,
        sockets_per_node: x.sockets_per_node,
        cores_per_socket: x.cores_per_socket,
        threads_per_core: x.threads_per_core,
        overcommit: x.overcommit,
        ntasks_per_gpu: x.ntasks_per_gpu,
        gpus_per_socket: x.gpus_per_socket,
        oversubscribe: x.oversubscribe,
        no_kill: x.no_kill,
        ntasks_per_core: x.ntasks_per_core,
        ntasks_per_socket: x.ntasks_per_socket,
        input: x.input.clone(),
        command: x.command.clone(),
        distribution: x.distribution.clone(),
        submit_line: x.submit_line.clone(),
        ..pb::JobSpec::default()
    }
}

/// A priority's terms.
fn terms(f: &crate::sched::PriorityFactors) -> pb::PriorityTerms {
    pb::PriorityTerms {
        base: f.base,
        fair_share: f.fair_share,
        age: f.age,
        tier: f.tier,
        effective: f.effective,
        ordered: f.ordered,
    }
}

fn side(s: &crate::sched::Side) -> pb::ExplainSide {
    pb::ExplainSide {
        job_id: s.job,
        user: s.user.clone(),
        qos: s.qos.clone().unwrap_or_default(),
        partition: s.partition.clone(),
        priority: Some(terms(&s.factors)),
    }
}

fn mark(name: &str, passes: bool, sentence: String) -> pb::Mark {
    pb::Mark { name: name.into(), passes, sentence }
}

/// One pair's verdict: marks for the console, sentences for the CLI, both from the typed verdict.
pub fn pair_explanation(v: &crate::sched::PairVerdict) -> pb::PairExplanation {
    pb::PairExplanation {
        pending: Some(side(&v.pending)),
        candidate: Some(side(&v.candidate)),
        gap: Some(mark("gap", v.gap.holds(), v.gap.to_string())),
        guards: v.guards.iter().map(|g| mark(g.name(), g.passes(), g.to_string())).collect(),
        eligible: v.eligible(),
        decided_by: v.decided_by().unwrap_or_default(),
        action: v.action.as_str().into(),
        lines: v.lines(),
    }
}

pub fn explanation(e: &crate::jobs::preempt::JobExplanation, pass_time_ms: i64) -> pb::Explanation {
    let v = &e.verdict;
    let victims = match &v.outcome {
        crate::sched::Outcome::Evict { victims, .. } => victims.clone(),
        _ => vec![],
    };
    pb::Explanation {
        job_id: v.job,
        reason: e.reason.as_ref().map(|r| r.code.as_str().to_string()).unwrap_or_default(),
        reason_detail: e.reason.as_ref().map(|r| r.sentence()).unwrap_or_default(),
        checks: (v.checks.iter())
            .filter(|c| !matches!(c, crate::sched::JobCheck::Dynamic(_)))
            .map(|c| mark(c.name(), c.passes(), c.to_string()))
            .collect(),
        dynamic: (v.checks.iter())
            .filter_map(|c| match c {
                crate::sched::JobCheck::Dynamic(h) => Some(pb::DynamicHeadroom {
                    definition: h.definition.clone(),
                    held: h.held,
                    max_nodes: h.max_nodes,
                    unavailable: h.unavailable,
                    blocks: h.can_provision(),
                }),
                _ => None,
            })
            .collect(),
        candidates: v.candidates.iter().map(pair_explanation).collect(),
        considered: v.considered as u32,
        outcome: v.outcome.to_string(),
        victims,
        pair: None,
        pass_time_ms,
        idle_fill: v.idle_fill.as_ref().map(idle_fill),
        definitions: e.definitions.iter().map(|(id, r)| definition_verdict(id, r.as_ref())).collect(),
        priority_ordered: e.ordered,
        priority_inputs: e.inputs.iter().map(|(k, v)| pb::KeyValue::new(k, v)).collect(),
    }
}

fn definition_verdict(id: &str, r: Option<&crate::sched::provision::Refusal>) -> pb::DefinitionVerdict {
    use crate::sched::provision::Why;
    let mut v = pb::DefinitionVerdict { id: id.into(), ..Default::default() };
    let Some(r) = r else {
        v.admitted = true;
        v.kind = "admitted".into();
        return v;
    };
    v.why = r.to_string();
    v.kind = match &r.why {
        Why::Policy { expr } => {
            v.policy = expr.clone();
            "policy"
        }
        Why::PolicyError { expr, .. } => {
            v.policy = expr.clone();
            "policy_error"
        }
        Why::Annotation { key, wanted, had, matcher } => {
            (v.key, v.wanted, v.had, v.matcher) =
                (key.clone(), wanted.clone(), had.clone().unwrap_or_default(), matcher.to_string());
            "annotation"
        }
        Why::NoDriver { .. } => "no_driver",
        Why::NoUsableNodes => "no_usable_nodes",
    }
    .into();
    v
}

fn idle_fill(v: &crate::sched::idle_fill_explain::IdleFillVerdict) -> pb::IdleFillExplanation {
    use crate::sched::idle_fill_explain::IdleFillVerdict as V;
    let sentence = v.sentence();
    match v {
        V::Borrow { eligible, .. } => pb::IdleFillExplanation {
            kind: "borrow".into(),
            eligible: *eligible,
            sentence,
            ..Default::default()
        },
        V::Reclaim { candidates, considered, chosen } => pb::IdleFillExplanation {
            kind: "reclaim".into(),
            eligible: !chosen.is_empty(),
            sentence,
            candidates: (candidates.iter())
                .map(|c| pb::ReclaimCandidate {
                    job_id: c.job,
                    qos: c.qos.clone().unwrap_or_default(),
                    qos_priority: c.qos_priority,
                    eligible: c.eligible(),
                    checks: c.marks().into_iter().map(|(n, p, s)| mark(n, p, s)).collect(),
                })
                .collect(),
            considered: *considered as u32,
            chosen: chosen.clone(),
        },
    }
}
