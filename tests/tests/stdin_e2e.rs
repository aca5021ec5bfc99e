//! srun's standard input with the real binaries (`-i/--input`): srun's
//! stdin reaches task 0 by default and its end closes the task's stdin;
//! `--input=none` gives /dev/null (the step ends with srun's stdin still
//! open); `--input=all` and a task id choose the tasks; a file srun reads
//! goes to every task; megabytes go through `cat` and back whole (the
//! relay is bounded and does not deadlock). `--pty` runs task 0 on a
//! terminal and gives srun's back as it found it. A task that never reads
//! its stdin holds srun (credits), not its agent's other commands.

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

/// A number from a /proc file of `pid`: the field after `key` (VmRSS:, wchar:).
fn proc_number(pid: u32, file: &str, key: &str) -> u64 {
    let text = std::fs::read_to_string(format!("/proc/{pid}/{file}")).unwrap_or_default();
    let line = text.lines().find(|l| l.starts_with(key));
    line.and_then(|l| l.split_whitespace().nth(1)?.parse().ok()).unwrap_or(0)
}

/// A child killed when dropped: a failed test leaves no srun or yes behind.
struct Reaped(Child);

impl Drop for Reaped {
    fn drop(&mut self) {
        let _ = self.0.kill();
        let _ = self.0.wait();
    }
}

fn gone(pid: u32) -> bool {
    let status = std::fs::read_to_string(format!("/proc/{pid}/status")).unwrap_or_default();
    status.is_empty() || status.lines().any(|l| l.starts_with("State:") && l.contains('Z'))
}

#[test]
fn a_task_that_never_reads_its_stdin_holds_srun_not_its_node_s_other_commands() {
    let e = start();
    let other = e.sbatch(&["-w", "node01", "--wrap", "echo $$ > other.pid; exec sleep 300"]);
    let pid_file = e.dir.path().join("other.pid");
    let other_pid: u32 =
        wait_for("the other job's pid", || std::fs::read_to_string(&pid_file).ok()?.trim().parse().ok());
    // `yes | srun -N1 sleep 100`: the task never reads; sleep outlasts the deadline, so only scancel ends
    // it. Without credits the first scancel hangs (the agent's commands wait) until the sleep ends.
    let mut yes = Reaped(std::process::Command::new("yes").stdout(Stdio::piped()).spawn().expect("yes"));
    let dir = e.dir.path().display().to_string();
    let args = ["-D", &dir, "-N1", "-w", "node01", "sleep", "100"];
    let srun = client("srun", &e.c.url, &args, &[])
        .stdin(Stdio::from(yes.0.stdout.take().unwrap()))
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .expect("srun");
    let mut srun = Reaped(srun);
    let yes_pid = yes.0.id();
    let step_job: u64 = wait_for("srun's job", || {
        let ids = e.ok("squeue", "-h -t R -o %i");
        ids.lines().filter_map(|l| l.trim().parse().ok()).find(|&id| id != other)
    });
    // Past the agent's window and the task's pipe: without credits the agent's command stream stalls here.
    wait_for("yes to fill the pipeline", || (proc_number(yes_pid, "io", "wchar:") > 3 << 20).then_some(()));
    let rss = |pid: u32| proc_number(pid, "status", "VmRSS:");
    let (ctl_before, agent_before) = (rss(e.c.pid()), rss(e.agent_pid()));
    e.ok("scancel", &other.to_string());
    wait_for("the other job's task to end", || gone(other_pid).then_some(()));
    e.ok("scancel", &format!("{step_job}.0"));
    let status = wait_for("srun to end with its cancelled step", || srun.0.try_wait().unwrap());
    assert!(!status.success());
    // srun was held: yes wrote a bounded amount, and neither daemon buffered it.
    let written = proc_number(yes_pid, "io", "wchar:");
    assert!(written < 64 << 20, "yes wrote {written} bytes: srun was not held");
    let (ctl, agent) = (rss(e.c.pid()), rss(e.agent_pid()));
    assert!(ctl < ctl_before + (32 << 10), "spurctld's RSS {ctl_before} -> {ctl} KiB");
    assert!(agent < agent_before + (32 << 10), "spurd's RSS {agent_before} -> {agent} KiB");
}

#[test]
fn pty_runs_task_0_on_a_terminal_and_restores_srun_s() {
    // srun needs a terminal of its own: script(1) gives it one.
    let script = std::process::Command::new("script").arg("--version").output();
    if !std::path::Path::new("/dev/ptmx").exists() || script.is_err() {
        eprintln!("no /dev/ptmx or no script(1) here: skipped");
        return;
    }
    let e = start();
    let srun = spur_tests::proc::links_dir().join("srun").display().to_string();
    let dir = e.dir.path().display().to_string();
    // The terminal's settings before and after: srun's raw mode is undone.
    let line = format!(
        "stty -g; {srun} -D {dir} --pty -n2 sh -c 'tty; echo task=$SLURM_PROCID'; echo code=$?; stty -g"
    );
    let mut child = std::process::Command::new("script")
        .args(["-qfec", &line, "/dev/null"])
        .env("SPUR_CONTROLLER_ADDR", &e.c.url)
        .env_remove("SPUR_TOKEN")
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .spawn()
        .expect("script");
    // Held open: at the end of its input script would type an end-of-file of its own.
    let _held = child.stdin.take();
    let out = child.wait_with_output().expect("script's output");
    let all = text(&out.stdout);
    let lines: Vec<&str> = all.lines().map(|l| l.trim_end_matches('\r')).collect();
    assert!(lines.iter().any(|l| l.starts_with("/dev/pts/")), "task 0's tty names a pty: {all}");
    assert!(lines.contains(&"task=0") && !lines.contains(&"task=1"), "only task 0's output: {all}");
    assert!(lines.contains(&"code=0"), "{all}");
    let settings: Vec<&&str> = lines.iter().filter(|l| l.contains(':') && !l.contains(' ')).collect();
    assert_eq!(settings.len(), 2, "{all}");
    assert_eq!(settings[0], settings[1], "srun's terminal restored: {all}");
}

/// Runs `task` with `srun --pty` under script(1); once it prints "ready"
/// (srun's terminal is raw by then) types `keys`; the screen. None: no
/// pseudo-terminals here.
fn typed(task: &str, keys: &[u8]) -> Option<String> {
    if !std::path::Path::new("/dev/ptmx").exists()
        || std::process::Command::new("script").arg("-V").output().is_err()
    {
        eprintln!("no /dev/ptmx or no script(1) here: skipped");
        return None;
    }
    let e = start();
    let srun = spur_tests::proc::links_dir().join("srun").display().to_string();
    let dir = e.dir.path().display().to_string();
    let line = format!("{srun} -D {dir} --pty sh -c '{task}'; echo code=$?");
    let mut child = std::process::Command::new("script")
        .args(["-qfec", &line, "/dev/null"])
        .env("SPUR_CONTROLLER_ADDR", &e.c.url)
        .env_remove("SPUR_TOKEN")
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .spawn()
        .expect("script");
    let mut stdin = child.stdin.take().unwrap();
    let mut screen = child.stdout.take().unwrap();
    // Keys typed before srun's terminal is raw would be its line editing's, not the task's.
    let mut all = Vec::new();
    let mut byte = [0u8; 1];
    while !String::from_utf8_lossy(&all).contains("ready\r\n") {
        let n = std::io::Read::read(&mut screen, &mut byte).unwrap();
        assert!(n == 1, "script ended early: {}", text(&all));
        all.push(byte[0]);
    }
    stdin.write_all(keys).unwrap();
    std::io::Read::read_to_end(&mut screen, &mut all).unwrap();
    let _ = child.wait();
    drop(stdin);
    Some(text(&all))
}

fn lines(screen: &str) -> Vec<&str> {
    screen.lines().map(|l| l.trim_end_matches('\r')).collect()
}

#[test]
fn pty_keys_reach_task_0_and_end_of_file_ends_it() {
    // A line, then ^D: the task's terminal reads it as the end of cat's input.
    let task = "echo ready; read x; echo got=$x; cat; echo cat-ended";
    let Some(all) = typed(task, b"hello\n\x04") else { return };
    let l = lines(&all);
    assert!(l.contains(&"got=hello"), "{all}");
    assert!(l.contains(&"cat-ended") && l.contains(&"code=0"), "{all}");
}

#[test]
fn pty_ctrl_c_interrupts_task_0_as_its_terminal_s() {
    // ^C is a byte in srun's raw terminal; the task's terminal makes it SIGINT.
    let task = "trap \"echo caught; exit 3\" INT; echo ready; while :; do sleep 1; done";
    let Some(all) = typed(task, b"\x03") else { return };
    let l = lines(&all);
    // The terminal echoes the key as ^C before the trap's line.
    assert!(l.iter().any(|x| x.ends_with("caught")) && l.contains(&"code=3"), "{all}");
}
