//! scancel, agents' reports, requeue, and the controller's own ends.

use super::*;
use crate::auth::Role;
use crate::error::Error;
use crate::jobs::effect::{Effect, Effects, SIGKILL, SIGTERM};
use crate::jobs::parts::Extras;
use spur_proto::v1 as pb;
use spur_vocab::reason::ReasonCode;

fn report(id: u64, state: &str, exit_code: i32, signal: i32) -> pb::JobReport {
    pb::JobReport { job_id: id, state: state.into(), exit_code, signal, ..Default::default() }
}

#[test]
fn cancel_of_a_pending_job_persists_cancelled_and_signals_nothing() {
    let q = queue([pending(1)]);
    let fx = q.cancel(&[1], 0, NOW);
    let [j] = fx.persisted()[..] else { panic!("{fx:?}") };
    assert_eq!((j.id, j.state, j.end_ms, j.reason), (1, JobState::Cancelled, NOW, None));
    assert!(fx.signals().is_empty());
    assert_eq!(q.jobs()[&1].state, JobState::Pending, "a transition only computes; the executor installs");
}

#[test]
fn cancel_of_a_running_job_persists_then_terminates_with_kill_wait() {
    let q = queue([running(1, "n1"), running(2, "n2")]);
    let fx = q.cancel(&[1, 2, 1], 0, NOW);
    assert_eq!(
        fx.persisted().iter().map(|j| (j.id, j.state)).collect::<Vec<_>>(),
        [(1, JobState::Cancelled), (2, JobState::Cancelled)]
    );
    // A repeated id is one cancel, not two signals.
    assert_eq!(fx.signals(), [(1, "n1", SIGTERM, KW), (2, "n2", SIGTERM, KW)]);
    assert!(matches!(fx.0[0], Effect::Persist(_)) && matches!(fx.0[1], Effect::Signal { .. }));
}

#[test]
fn cancel_with_a_signal_signals_running_jobs_and_cancels_the_rest() {
    let q = queue([running(1, "n1"), pending(2), JobRecord { state: JobState::Completed, ..pending(3) }]);
    let fx = q.cancel(&[1, 2, 3], 10, NOW);
    assert_eq!(fx.signals(), [(1, "n1", 10, 0)], "a signalled running job keeps running");
    assert_eq!(fx.persisted().iter().map(|j| j.id).collect::<Vec<_>>(), [2]);
    assert_eq!(fx.jobs(), [1, 2], "an ended job is not acted on");
}

#[test]
fn cancel_checks_every_id_first() {
    let q = queue([pending(1), JobRecord { user: "bob".into(), ..pending(2) }]);
    assert!(matches!(q.may_act(Role::None, &who("alice"), &[1, 3]), Err(Error::NotFound(_))));
    assert!(matches!(q.may_act(Role::None, &who("alice"), &[1, 2]), Err(Error::PermissionDenied(_))));
    assert!(q.may_act(Role::Operator, &who("ops"), &[1, 2]).is_ok());
}

#[test]
fn reports_end_placed_jobs_in_the_state_they_mean() {
    let q = queue([running(1, "n1")]);
    let nodes = ["n1".to_string()];
    for (r, state, reason, signal, detail) in [
        (report(1, "done", 0, 0), JobState::Completed, None, 0, ""),
        (report(1, "done", 3, 0), JobState::Failed, Some(ReasonCode::NonZeroExitCode), 0, ""),
        (report(1, "done", 0, 9), JobState::Failed, Some(ReasonCode::RaisedSignal), 9, ""),
        (
            report(1, "failed", 0, 0),
            JobState::Failed,
            Some(ReasonCode::JobLaunchFailure),
            0,
            "launch failed: ",
        ),
    ] {
        let fx = q.report(&nodes, &r, NOW).unwrap();
        let [j] = fx.persisted()[..] else { panic!("{fx:?}") };
        assert_eq!((j.state, j.reason, j.exit_code, j.end_ms), (state, reason, r.exit_code, NOW));
        assert_eq!((j.exit_signal, j.reason_detail.as_str()), (signal, detail));
        assert!(fx.signals().is_empty(), "the run has ended already");
    }
}

#[test]
fn a_report_from_another_agent_is_refused_and_a_stale_one_is_dropped() {
    let mut q = queue([running(1, "n1"), pending(2)]);
    let e = q.report(&["n2".to_string()], &report(1, "done", 0, 0), NOW).unwrap_err();
    assert!(matches!(e, Error::PermissionDenied(_)), "{e}");
    assert!(q.report(&["n1".to_string()], &report(2, "done", 0, 0), NOW).unwrap().is_empty());
    q.stale_reports.insert(1);
    let fx = q.report(&["n1".to_string()], &report(1, "done", 0, 0), NOW).unwrap();
    assert_eq!(fx.0, [Effect::ReportIgnored(1)], "the end of a run taken back changes nothing");
}

#[test]
fn a_report_carries_what_the_run_used_and_a_late_one_completes_a_controller_end() {
    use crate::jobs::record::Usage;
    let used = Usage { user_cpu_us: 1_500_000, sys_cpu_us: 20_000, max_rss_kb: 4096 };
    let with = |r: pb::JobReport| pb::JobReport {
        user_cpu_us: used.user_cpu_us,
        sys_cpu_us: used.sys_cpu_us,
        max_rss_kb: used.max_rss_kb,
        ..r
    };
    let nodes = ["n1".to_string()];
    let cancelled = |id| JobRecord { state: JobState::Cancelled, end_ms: NOW - MIN, ..running(id, "n1") };
    let never_ran = JobRecord { state: JobState::Cancelled, end_ms: NOW, ..pending(4) };
    let q =
        queue([running(1, "n1"), cancelled(2), JobRecord { usage: Some(used), ..cancelled(3) }, never_ran]);
    let fx = q.report(&nodes, &with(report(1, "exited", 0, 0)), NOW).unwrap();
    assert_eq!(fx.persisted()[0].usage, Some(used));
    let fx = q.report(&nodes, &report(1, "failed", -1, 0), NOW).unwrap();
    assert_eq!(fx.persisted()[0].usage, None, "a launch that failed ran nothing");

    // scancel ended job 2 first: the report brings the figures and changes nothing else.
    let fx = q.report(&nodes, &with(report(2, "exited", 0, 15)), NOW).unwrap();
    let [j] = fx.persisted()[..] else { panic!("{fx:?}") };
    assert_eq!(j, &JobRecord { usage: Some(used), ..cancelled(2) });
    assert!(q.report(&["n2".into()], &with(report(2, "exited", 0, 15)), NOW).unwrap().is_empty());
    assert!(q.report(&nodes, &with(report(3, "exited", 0, 15)), NOW).unwrap().is_empty(), "once");
    assert!(q.report(&nodes, &with(report(4, "exited", 0, 0)), NOW).unwrap().is_empty());
    assert!(q.report(&nodes, &report(2, "failed", -1, 0), NOW).unwrap().is_empty());
    // A requeued run's figures go with it.
    let q = queue([JobRecord { usage: Some(used), ..running(5, "n1") }]);
    assert_eq!(q.requeue(5, true, NOW).persisted()[0].usage, None);
    // Stored rows without figures read and write as before.
    assert!(serde_json::to_value(running(6, "n1")).unwrap().get("usage").is_none());
    let stored = serde_json::to_string(&JobRecord { usage: Some(used), ..cancelled(6) }).unwrap();
    assert_eq!(JobRecord::from_stored("6", &stored).unwrap().usage, Some(used));
}

#[test]
fn requeue_takes_the_run_back_and_ignores_its_end() {
    let q = queue([JobRecord { licenses_alloc: vec![Default::default()], ..running(1, "n1") }, pending(2)]);
    let fx = q.requeue(1, true, NOW);
    let [j] = fx.persisted()[..] else { panic!("{fx:?}") };
    assert_eq!((j.state, j.start_ms, j.nodes.len(), j.licenses_alloc.len()), (JobState::Pending, 0, 0, 0));
    assert_eq!((&j.script, j.requeue), (&q.jobs()[&1].script, true), "its spec stays");
    assert_eq!(j.restarts, 1, "counted (Restarts=, SLURM_RESTART_COUNT)");
    let again = JobRecord { restarts: 4, ..running(3, "n1") };
    assert_eq!(super::super::ending::requeued(&again, NOW).restarts, 5);
    assert!(fx.0.contains(&Effect::IgnoreReport(1)));
    assert_eq!(fx.signals(), [(1, "n1", SIGTERM, KW)]);
    // Without kill, the agent no longer has it: nothing to stop, no end to drop.
    let fx = q.requeue(1, false, NOW);
    assert_eq!((fx.persisted().len(), fx.signals().len(), fx.0.len()), (1, 0, 1));
    assert!(q.requeue(2, true, NOW).is_empty(), "a pending job has no run to take back");
}

#[test]
fn scontrol_requeue_is_for_the_owner_of_a_running_job() {
    let q = queue([running(1, "n1"), pending(2)]);
    let fx = q.requeue_request(Role::None, &who("alice"), 1, NOW).unwrap();
    assert_eq!(fx.persisted()[0].state, JobState::Pending);
    let e = q.requeue_request(Role::None, &who("bob"), 1, NOW).unwrap_err();
    assert!(matches!(e, Error::PermissionDenied(_)), "{e}");
    let e = q.requeue_request(Role::None, &who("alice"), 2, NOW).unwrap_err();
    assert_eq!(e.to_string(), Error::FailedPrecondition("job 2 is not running".into()).to_string());
    assert!(matches!(q.requeue_request(Role::None, &who("alice"), 9, NOW), Err(Error::NotFound(_))));
}

#[test]
fn the_time_limit_ends_a_job_only_past_its_deadline() {
    let q = queue([JobRecord { time_limit: Some(10), ..running(1, "n1") }, running(2, "n2")]);
    assert!(q.time_out(1, NOW - 1).is_empty(), "a millisecond early");
    let fx = q.time_out(1, NOW);
    let [j] = fx.persisted()[..] else { panic!("{fx:?}") };
    assert_eq!((j.state, j.reason), (JobState::Timeout, Some(ReasonCode::TimeLimit)));
    assert_eq!(fx.signals(), [(1, "n1", SIGTERM, KW)]);
    assert!(q.time_out(2, NOW + 1_000 * MIN).is_empty(), "no limit, no end");
}

/// Running on `nodes` since ten minutes ago with a 12-minute limit and `--signal=spec`.
fn warned(id: u64, nodes: &[&str], spec: &str) -> JobRecord {
    let extra = Extras { signal: spec.into(), ..Extras::default() };
    let nodes = nodes.iter().map(|n| n.to_string()).collect();
    JobRecord { time_limit: Some(12), extra: Some(Box::new(extra)), nodes, ..running(id, "") }
}

/// (node, job, step, signal) of a step signal.
type StepSignal = (String, u64, Option<u32>, i32);

/// Each step signal; (node, job, signal) of each shell signal.
fn commands(fx: &Effects) -> (Vec<StepSignal>, Vec<(String, u64, i32)>) {
    let (mut steps, mut shells) = (vec![], vec![]);
    for e in &fx.0 {
        match e {
            Effect::Command { node, cmd, .. } => match &cmd.cmd {
                Some(pb::agent_command::Cmd::SignalStep(s)) => {
                    steps.push((node.clone(), s.job_id, s.step_id, s.signal))
                }
                Some(pb::agent_command::Cmd::Signal(s)) if s.batch_shell_only => {
                    shells.push((node.clone(), s.job_id, s.signal))
                }
                other => panic!("{other:?}"),
            },
            Effect::Persist(_) => {}
            other => panic!("{other:?}"),
        }
    }
    (steps, shells)
}

#[test]
fn the_signal_option_warns_the_steps_once_a_run_before_the_limit() {
    // Deadline NOW + 2 min; USR2@90 is due at NOW + 30 s.
    let q = queue([warned(1, &["n1", "n2"], "USR2@90")]);
    assert!(q.warn(1, NOW + 29_999).is_empty(), "a millisecond early");
    let fx = q.warn(1, NOW + 30_000);
    let [j] = fx.persisted()[..] else { panic!("{fx:?}") };
    assert_eq!(j.extra.as_ref().unwrap().signalled_run_ms, j.start_ms, "marked before it is sent");
    assert!(matches!(fx.0[0], Effect::Persist(_)));
    let (steps, shells) = commands(&fx);
    assert_eq!(steps, [("n1".into(), 1, None, 12), ("n2".into(), 1, None, 12)], "every node's steps");
    assert!(shells.is_empty(), "not the batch shell, as in Slurm");
    assert_eq!(j.state, JobState::Running, "a warning ends nothing");
    // Once a run: the marked record owes nothing more.
    let q = queue([fx.persisted()[0].clone()]);
    assert!(q.warn(1, NOW + MIN).is_empty());
    // A requeued job's next run is owed its own.
    let next = JobRecord { start_ms: NOW, ..fx.persisted()[0].clone() };
    assert_eq!(queue([next]).warn(1, NOW + 11 * MIN).persisted().len(), 1);
}

#[test]
fn b_signals_the_batch_shell_alone_and_no_limit_or_no_option_warns_nothing() {
    let q = queue([warned(1, &["n1", "n2"], "B:USR1")]);
    assert!(q.warn(1, NOW + 59_999).is_empty(), "60 s by default");
    let (steps, shells) = commands(&q.warn(1, NOW + MIN));
    assert_eq!((steps.len(), shells), (0, vec![("n1".into(), 1, 10)]), "the first node runs the script");
    let no_limit = JobRecord { time_limit: None, ..warned(2, &["n1"], "USR1@600") };
    let plain = JobRecord { time_limit: Some(1), ..running(3, "n1") };
    let pending = JobRecord { state: JobState::Pending, ..warned(4, &["n1"], "USR1@600") };
    let q = queue([no_limit, plain, pending]);
    assert!([2, 3, 4, 9].iter().all(|&id| q.warn(id, NOW + 100 * MIN).is_empty()));
}

#[test]
fn a_lost_node_requeues_a_requeueable_job_and_fails_the_others() {
    let q = queue([running(1, "n1"), JobRecord { requeue: false, ..running(2, "n1") }, pending(3)]);
    let fx = q.lost(1, ReasonCode::NodeDown, true, NOW);
    assert_eq!(fx.persisted()[0].state, JobState::Pending);
    assert_eq!(fx.signals(), [(1, "n1", SIGTERM, KW)], "a node marked down may still run it");
    assert_eq!(q.lost(1, ReasonCode::JobLostOnNode, false, NOW).signals(), []);
    // A job that may not be requeued is refused the requeue: it ends, and nothing is signalled.
    let fx = q.lost(2, ReasonCode::NodeDown, true, NOW);
    let [j] = fx.persisted()[..] else { panic!("{fx:?}") };
    assert_eq!((j.state, j.reason), (JobState::NodeFail, Some(ReasonCode::NodeDown)));
    assert!(fx.signals().is_empty());
    assert!(q.lost(3, ReasonCode::NodeDown, true, NOW).is_empty());
}

#[test]
fn registration_kills_strays_and_names_lost_jobs() {
    let mut q = queue([running(1, "n1"), running(2, "n1"), running(3, "n1"), pending(4)]);
    q.launching.insert(3);
    let run = |id: u64, node: &str| pb::RunningJob { job_id: id, node: node.into(), run_id: String::new() };
    // 1 runs as recorded; 2 is missing (lost); 3 is still being launched; 4 and 5 are not ours to run.
    let agent = [run(1, "n1"), run(4, "n1"), run(5, "n1")];
    assert_eq!(q.lost_on(&["n1".into()], &agent), [2]);
    let fx = q.strays(&["n1".into()], &agent);
    assert_eq!(fx.signals(), [(4, "n1", SIGKILL, 0), (5, "n1", SIGKILL, 0)]);
    assert!(fx.0.contains(&Effect::IgnoreReport(4)), "job 4's own run is yet to come");
    assert!(!fx.0.contains(&Effect::IgnoreReport(5)));
    assert!(fx.persisted().is_empty());
}

#[test]
fn a_registration_speaks_only_for_runs_on_its_own_nodes() {
    let run = |id: u64, node: &str| pb::RunningJob { job_id: id, node: node.into(), run_id: String::new() };
    let agent = [run(1, "n1"), run(2, "n3"), run(3, "n2")];
    let (mine, others) = crate::jobs::reconcile::on_nodes(&["n3".into()], &agent);
    assert_eq!(mine, [run(2, "n3")]);
    assert_eq!(others, [&run(1, "n1"), &run(3, "n2")]);
    // Job 1 runs on n1, another agent's node; the agent of n3 also runs a
    // copy of it (an old run): that copy is killed, but its end is not the
    // one to ignore: the report that ends job 1 comes from n1's agent.
    let q = queue([running(1, "n1")]);
    let fx = q.strays(&["n3".into()], &[run(1, "n3")]);
    assert_eq!(fx.signals(), [(1, "n3", SIGKILL, 0)]);
    assert!(!fx.0.contains(&Effect::IgnoreReport(1)), "{fx:?}");
}

#[test]
fn a_report_or_a_registration_of_another_run_says_nothing_of_the_current_one() {
    let current = JobRecord { run_id: "1.500".into(), ..running(1, "n1") };
    let mut q = queue([current]);
    let of = |run: &str| pb::JobReport { run_id: run.into(), ..report(1, "exited", 0, 0) };
    // Another controller's job 1, or this job before a requeue: ignored.
    assert!(q.report(&["n1".into()], &of("1.100"), NOW).unwrap().is_empty());
    // Its own end ends it, even where a stale mark was set for an earlier run.
    q.stale_reports.insert(1);
    let fx = q.report(&["n1".into()], &of("1.500"), NOW).unwrap();
    assert!(fx.0.contains(&Effect::ReportIgnored(1)), "the earlier run's mark is cleared: {fx:?}");
    assert_eq!(fx.persisted()[0].state, JobState::Completed);
    // A registration listing job 1 as another run: the current run is lost,
    // the listed one killed, and no report of job 1 is set to be ignored.
    let run = |r: &str| pb::RunningJob { job_id: 1, node: "n1".into(), run_id: r.into() };
    assert_eq!(q.lost_on(&["n1".into()], &[run("1.100")]), [1]);
    assert!(q.lost_on(&["n1".into()], &[run("1.500")]).is_empty());
    assert!(q.lost_on(&["n1".into()], &[run("")]).is_empty(), "an agent before run ids: by job id");
    let fx = q.strays(&["n1".into()], &[run("1.100")]);
    assert_eq!(fx.signals(), [(1, "n1", SIGKILL, 0)]);
    assert!(!fx.0.contains(&Effect::IgnoreReport(1)), "{fx:?}");
    assert!(q.strays(&["n1".into()], &[run("1.500")]).is_empty());
}

#[test]
fn a_job_ended_while_configuring_costs_nothing_of_its_borrowed_node() {
    let cf = JobRecord {
        state: JobState::Configuring,
        start_ms: NOW,
        charge: vec![("burst".into(), 0.3)],
        ..running(1, "burst-1")
    };
    let n = super::super::ending::ended(&cf, JobState::Cancelled, 0, None, NOW + 3_600_000);
    assert_eq!(n.cost(NOW + 3_600_000).count(), 0, "never launched: {:?}", n.charge);
    // A launched run is charged from its start.
    let ran = JobRecord { state: JobState::Running, ..cf };
    let n = super::super::ending::ended(&ran, JobState::Cancelled, 0, None, NOW + 3_600_000);
    assert_eq!(n.cost(NOW + 3_600_000).collect::<Vec<_>>(), [("burst", 0.3)]);
}
