//! sattach's pure half: its operand, Slurm's layout text and labelled lines.

use spur_client::cli::sattach::{labelled, layout, parse, step_of};
use spur_proto::v1 as pb;

fn argv(line: &str) -> Vec<String> {
    line.split_whitespace().map(String::from).collect()
}

#[test]
fn the_operand_is_one_job_step() {
    assert_eq!(step_of(&parse(&argv("-l 12.3")).unwrap()), Ok((12, 3)));
    assert!(step_of(&parse(&argv("12")).unwrap()).unwrap_err().contains("'12' is not JOB.STEP"));
    assert!(step_of(&parse(&argv("")).unwrap()).unwrap_err().contains("one JOB.STEP"));
    let a = parse(&argv("--output-filter=1 --error-filter 0 1.0")).unwrap();
    assert_eq!((a.out_task, a.err_task), (Some(1), Some(0)));
    assert!(
        parse(&argv("--output-filter=x 1.0")).unwrap_err().contains("--output-filter: 'x' is not a task id")
    );
}

#[test]
fn the_layout_is_slurms() {
    let s = pb::StepStarted {
        job_id: 1,
        step_id: 0,
        nodes: vec!["node01".into(), "node02".into()],
        ntasks: 3,
        tasks_per_node: vec![2, 1],
        node_tasks: vec![],
    };
    assert_eq!(
        layout(&s),
        "Job step layout:\n\t3 tasks, 2 nodes (node[01-02])\n\n\tNode 0 (node01), 2 task(s): 0 1\n\tNode 1 (node02), 1 task(s): 2\n"
    );
    // Laid out by -m cyclic: the ids the controller sends.
    let ids = |v: &[u32]| pb::TaskIds { ids: v.to_vec() };
    let s = pb::StepStarted { node_tasks: vec![ids(&[0, 2]), ids(&[1])], ..s };
    assert!(layout(&s).ends_with("\tNode 0 (node01), 2 task(s): 0 2\n\tNode 1 (node02), 1 task(s): 1\n"));
}

#[test]
fn labels_go_on_whole_lines() {
    let mut p = vec![];
    assert_eq!(labelled(0, 1, &mut p, b"a\nb"), b"0: a\n");
    assert_eq!(labelled(0, 1, &mut p, b"c\n"), b"0: bc\n");
    assert_eq!(labelled(3, 2, &mut p, b"x\n"), b" 3: x\n");
}
