//! Snapshots of the Queue pane, its detail view and a job action's
//! confirmation, with the fixed jobs of `common::jobs` at a fixed clock.

mod common;

use common::{draw, on_queue};
use ratatui::style::Modifier;
use spur_console::model::session::Role;
use spur_console::{Action, JobOp, dispatch};

#[test]
fn queue_pane() {
    for size in [(80, 24), (120, 40)] {
        let mut state = on_queue(false, size, Some(Role::Operator));
        dispatch(&mut state, Action::Down);
        dispatch(&mut state, Action::ToggleMark);
        let name = format!("queue_{}x{}", size.0, size.1);
        insta::assert_snapshot!(name, draw(&state).backend());
    }
}

#[test]
fn pending_job_detail_names_the_reason_and_its_facts() {
    for size in [(80, 24), (120, 40)] {
        let mut state = on_queue(false, size, Some(Role::Operator));
        for _ in 0..3 {
            dispatch(&mut state, Action::Down);
        }
        dispatch(&mut state, Action::Open);
        let text = draw(&state).backend().to_string();
        assert!(text.contains("QOS gpu is at 2/2 nodes"), "{text}");
        let name = format!("queue_detail_{}x{}", size.0, size.1);
        insta::assert_snapshot!(name, draw(&state).backend());
    }
}

#[test]
fn the_borrowed_column_shows_only_while_a_job_was_lent_its_nodes() {
    for size in [(80, 24), (120, 40)] {
        let mut state = on_queue(false, size, Some(Role::Operator));
        let screen = draw(&state).backend().to_string();
        assert!(screen.contains("▶ R ⇄"), "the state carries the mark at any width:\n{screen}");
        assert_eq!(screen.contains("Borrowed"), size.0 == 120, "{screen}");
        // No loan (idle-fill off, the default): no blank column, nothing said hidden.
        // (nor a reservation, whose column would be the one hidden at 80).
        let jobs = common::jobs().into_iter().map(|mut j| {
            j.spec.iter_mut().for_each(|s| s.reservation.clear());
            spur_proto::v1::Job { borrowed: false, ..j }
        });
        let set = spur_console::JobSet::from_pb(jobs.collect(), common::now());
        dispatch(&mut state, Action::Net(spur_console::Msg::Jobs(std::sync::Arc::new(set))));
        let screen = draw(&state).backend().to_string();
        assert!(!screen.contains("Borrowed") && !screen.contains("⇄"), "{screen}");
        assert!(!screen.contains("cols hidden"), "{screen}");
    }
}

#[test]
fn a_job_asking_for_a_reservation_says_so_at_any_width() {
    for size in [(80, 24), (120, 40)] {
        let state = on_queue(false, size, Some(Role::Operator));
        let screen = draw(&state).backend().to_string();
        let row = screen.lines().find(|l| l.contains(" 103 ")).unwrap();
        assert!(row.contains("batch ®"), "the Partition cell carries the mark:\n{screen}");
        assert_eq!(row.contains("ml-day"), size.0 == 120, "the column, where there is room:\n{screen}");
        assert_eq!(screen.contains("Reservation"), size.0 == 120, "{screen}");
    }
}

#[test]
fn cancel_confirmation() {
    let mut state = on_queue(false, (80, 24), Some(Role::Operator));
    dispatch(&mut state, Action::ToggleMark);
    dispatch(&mut state, Action::ToggleMark);
    dispatch(&mut state, Action::JobAction(JobOp::Cancel));
    insta::assert_snapshot!("queue_cancel_80x24", draw(&state).backend());
}

#[test]
fn failed_jobs_are_bold_and_finished_ones_dim_without_colour() {
    let state = on_queue(false, (120, 40), None);
    let term = draw(&state);
    let buf = term.backend().buffer();
    let row_of = |id: &str| {
        (0..buf.area.height)
            .find(|&y| (0..5).map(|x| buf[(x, y)].symbol()).collect::<String>().trim() == id)
            .unwrap_or_else(|| panic!("no row for job {id}"))
    };
    // Mono theme: the modifiers and the symbols carry it.
    assert!(buf[(3, row_of("107"))].modifier.contains(Modifier::BOLD));
    assert!(buf[(3, row_of("106"))].modifier.contains(Modifier::DIM));
    assert!(!buf[(3, row_of("102"))].modifier.contains(Modifier::DIM));
}

#[test]
fn not_yet_read_unsupported_and_failed_say_so() {
    let mut state = common::loaded(false, (80, 24));
    dispatch(&mut state, Action::GoPane(spur_console::PaneId::Queue));
    assert!(draw(&state).backend().to_string().contains("loading…"));
    let error = "Unimplemented: no Jobs".to_string();
    dispatch(&mut state, Action::Net(spur_console::Msg::JobsFailed { error, unsupported: true }));
    assert!(draw(&state).backend().to_string().contains("Queue: not available from this controller yet."));
    let error = "Internal: disk on fire".to_string();
    dispatch(&mut state, Action::Net(spur_console::Msg::JobsFailed { error, unsupported: false }));
    assert!(draw(&state).backend().to_string().contains("✗ jobs unavailable: Internal: disk on fire"));
}

/// A reason code the console has never heard of (NoProvisionerDefinition,
/// added with provisioners.yaml) is shown as given, whole at 80 columns.
#[test]
fn a_new_reason_code_is_shown_as_given() {
    let mut state = on_queue(false, (80, 24), Some(Role::Operator));
    let mut jobs = common::jobs();
    let j = jobs.iter_mut().find(|j| j.id == 103).unwrap();
    j.reason = spur_proto::states::reason_named("NoProvisionerDefinition");
    j.reason_detail = "no provisioner definition admits the job in partition batch".into();
    let set = spur_console::JobSet::from_pb(jobs, common::now());
    dispatch(&mut state, Action::Net(spur_console::Msg::Jobs(std::sync::Arc::new(set))));
    let text = draw(&state).backend().to_string();
    let row = text.lines().find(|l| l.contains("  103 ")).unwrap_or_else(|| panic!("{text}"));
    assert!(row.contains("(NoProvisionerDefinition)"), "{text}");
}

/// The fixed jobs, with recorded use for two that ended: 106 kept its CPU
/// busy and used half its memory, 107 slept (a second of CPU per core in 42).
fn measured() -> Vec<spur_proto::v1::Job> {
    let used = |cpu_s: u64, rss_kb| spur_proto::v1::JobUsage {
        user_cpu_us: cpu_s * 1_000_000,
        sys_cpu_us: 0,
        max_rss_kb: rss_kb,
    };
    common::jobs()
        .into_iter()
        .map(|mut j| {
            let cpus = u64::from(j.num_cpus.max(1));
            if j.id == 106 {
                j.usage = Some(used(300 * cpus, 50 * 1024 * u64::from(j.num_nodes.max(1))));
                j.spec.iter_mut().for_each(|s| (s.mem_mb, s.mem_per_cpu_mb) = (100, 0));
            } else if j.id == 107 {
                // No memory asked: the column says so with `-`.
                j.usage = Some(used(cpus, 2048));
                j.spec.iter_mut().for_each(|s| (s.mem_mb, s.mem_per_cpu_mb, s.mem_per_gpu_mb) = (0, 0, 0));
            }
            j
        })
        .collect()
}

#[test]
fn the_finished_filter_shows_efficiency_and_marks_jobs_under_a_quarter() {
    for size in [(80, 24), (120, 40)] {
        let mut state = on_queue(false, size, Some(Role::Operator));
        let set = spur_console::JobSet::from_pb(measured(), common::now());
        dispatch(&mut state, Action::Net(spur_console::Msg::Jobs(std::sync::Arc::new(set))));
        let screen = draw(&state).backend().to_string();
        assert!(!screen.contains("Eff"), "only the Finished filter has the column:\n{screen}");
        for _ in 0..3 {
            dispatch(&mut state, Action::JobStates);
        }
        let screen = draw(&state).backend().to_string();
        let row = |id: &str| screen.lines().find(|l| l.contains(&format!(" {id} "))).unwrap_or_default();
        assert!(screen.contains("Eff"), "{screen}");
        assert!(row("106").contains("98%/50%") && !row("106").contains('↓'), "{screen}");
        assert!(row("107").contains("↓ 2%/-"), "a sleeping job stands out:\n{screen}");
        let name = format!("queue_finished_eff_{}x{}", size.0, size.1);
        insta::assert_snapshot!(name, draw(&state).backend());
    }
}
