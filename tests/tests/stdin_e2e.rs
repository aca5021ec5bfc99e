//! srun's standard input with the real binaries (`-i/--input`): srun's
//! stdin reaches task 0 by default and its end closes the task's stdin;
//! `--input=none` gives /dev/null (the step ends with srun's stdin still
//! open); `--input=all` and a task id choose the tasks; a file srun reads
//! goes to every task; megabytes go through `cat` and back whole (the
//! relay is bounded and does not deadlock).

use spur_tests::cluster::Cluster;
use spur_tests::proc::{client, wait_for};
use std::io::Write;
use std::process::{Child, Output, Stdio};

fn start() -> Cluster {
    Cluster::two_nodes(|t| t, &[])
}

fn srun(e: &Cluster, args: &[&str]) -> Child {
    let dir = e.dir.path().display().to_string();
    let mut all = vec!["-D", &dir];
    all.extend(args);
    (client("srun", &e.c.url, &all, &[]).stdin(Stdio::piped()).stdout(Stdio::piped()).stderr(Stdio::piped()))
        .spawn()
        .expect("srun")
}

/// srun with `input` on its stdin, then closed; its output.
fn piped(e: &Cluster, args: &[&str], input: Vec<u8>) -> Output {
    let mut child = srun(e, args);
    let mut stdin = child.stdin.take().unwrap();
    // A thread: srun's output is read while the input goes in.
    let writer = std::thread::spawn(move || {
        let _ = stdin.write_all(&input);
    });
    let out = child.wait_with_output().expect("srun's output");
    writer.join().unwrap();
    out
}

fn text(b: &[u8]) -> String {
    String::from_utf8_lossy(b).into_owned()
}

fn sorted(out: &Output) -> Vec<String> {
    let mut lines: Vec<String> = text(&out.stdout).lines().map(String::from).collect();
    lines.sort();
    lines
}

#[test]
fn srun_s_stdin_reaches_task_0_and_its_end_closes_the_task_s() {
    let e = start();
    let out = piped(&e, &["-N1", "cat"], b"hello\n".to_vec());
    assert!(out.status.success(), "{}", text(&out.stderr));
    assert_eq!(text(&out.stdout), "hello\n");
    // By default only task 0 reads it; the others get /dev/null.
    let out = piped(&e, &["-n2", "-l", "cat"], b"x\n".to_vec());
    assert!(out.status.success(), "{}", text(&out.stderr));
    assert_eq!(sorted(&out), ["0: x"]);
    // A few megabytes through cat and back, whole and in order.
    let big: Vec<u8> = (0..3_000_000u32).map(|i| (i % 251) as u8).collect();
    let out = piped(&e, &["-N1", "cat"], big.clone());
    assert!(out.status.success(), "{}", text(&out.stderr));
    assert!(out.stdout == big, "{} bytes back of {}", out.stdout.len(), big.len());
}

#[test]
fn input_all_a_task_id_and_a_file_choose_what_each_task_reads() {
    let e = start();
    let out = piped(&e, &["-n2", "--input=all", "-l", "cat"], b"a\nb\n".to_vec());
    assert!(out.status.success(), "{}", text(&out.stderr));
    assert_eq!(sorted(&out), ["0: a", "0: b", "1: a", "1: b"]);
    let out = piped(&e, &["-n2", "-i", "1", "-l", "cat"], b"one\n".to_vec());
    assert!(out.status.success(), "{}", text(&out.stderr));
    assert_eq!(sorted(&out), ["1: one"]);
    // A file srun reads, its patterns expanded (%s: the step), to every task.
    std::fs::write(e.dir.path().join("in.0"), "from the file\n").unwrap();
    let out = piped(&e, &["-n2", "--input=in.%s", "-l", "cat"], b"not this\n".to_vec());
    assert!(out.status.success(), "{}", text(&out.stderr));
    assert_eq!(sorted(&out), ["0: from the file", "1: from the file"]);
    // A task the step does not have is refused before anything runs.
    let out = piped(&e, &["-n2", "--input=5", "cat"], vec![]);
    assert!(!out.status.success());
    assert!(text(&out.stderr).contains("input"), "{}", text(&out.stderr));
}

#[test]
fn input_none_ends_at_once_with_srun_s_stdin_still_open() {
    let e = start();
    let mut child = srun(&e, &["--input=none", "cat"]);
    // srun's stdin stays open (held here) while the step runs.
    let _held = child.stdin.take().unwrap();
    let status = wait_for("srun --input=none cat to end", || child.try_wait().unwrap());
    let mut err = String::new();
    std::io::Read::read_to_string(&mut child.stderr.take().unwrap(), &mut err).unwrap();
    assert!(status.success(), "{err}");
}
