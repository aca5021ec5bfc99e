//! `spur tail` with the real binaries: the end of a job's stdout (or stderr)
//! read by the agent of its node; `-f` sees a line the running job writes
//! after the tail started and ends with the job; a job that has not run has
//! no output; another user's job is refused before anything is asked of an agent.

use spur_tests::cluster::Cluster;
use spur_tests::proc::{Controller, client, conf, run_with, wait_for};
use spur_tests::wait::wait_until_blocking;
use std::io::{BufRead, BufReader};
use std::process::{Child, Stdio};
use std::sync::{Arc, Mutex};

fn text(b: &[u8]) -> String {
    String::from_utf8_lossy(b).into_owned()
}

/// A job that writes a line, one more once `go` exists, and ends once `stop` exists.
const SCRIPT: &str = "#!/bin/sh
for i in 1 2 3 4 5 6 7 8 9 10 11 12; do echo early $i; done
echo oops >&2
while [ ! -e go ]; do sleep 0.1; done
echo second
while [ ! -e stop ]; do sleep 0.1; done
echo last
";

#[test]
fn tail_shows_the_end_and_follows_a_running_job_until_it_ends() {
    let e = Cluster::two_nodes(|t| t, &[]);
    let script = e.dir.path().join("job.sh");
    std::fs::write(&script, SCRIPT).unwrap();
    let id = e.sbatch(&["-e", "job-%j.err", script.to_str().unwrap()]);
    e.wait_field(id, "%T", "RUNNING");
    let sid = id.to_string();
    let url = e.c.url.clone();
    let tail = |args: &[&str]| run_with("spur", &url, &[&["tail"], args].concat(), &[]);
    // The last lines (10 by default, -n to choose), once the job has written them all
    // (a tail started while it writes shows what was there, then reads on to the end).
    let file = e.dir.path().join(format!("slurm-{id}.out"));
    wait_for("the job's first twelve lines", || {
        std::fs::read_to_string(&file).is_ok_and(|t| t.contains("early 12\n")).then_some(())
    });
    let out = wait_for("the job's first lines", || {
        let out = tail(&[&sid]);
        (out.status.success() && text(&out.stdout).contains("early 12")).then_some(out)
    });
    let lines: Vec<String> = text(&out.stdout).lines().map(String::from).collect();
    assert_eq!(lines.first().map(String::as_str), Some("early 3"), "{lines:?}");
    assert_eq!(lines.len(), 10, "{lines:?}");
    let out = tail(&["-n", "2", &sid]);
    assert_eq!(text(&out.stdout), "early 11\nearly 12\n", "{}", text(&out.stderr));
    // --err: the job's stderr file.
    let out = tail(&["--err", &sid]);
    assert_eq!(text(&out.stdout), "oops\n", "{}", text(&out.stderr));

    // -f: a line written after the tail started arrives; the job's end ends the tail.
    let (mut child, seen, reader) = follow(&url, &["tail", "-f", "-n", "1", &sid]);
    let has = |l: &str| seen.lock().unwrap().iter().any(|s| s == l);
    wait_for("the tail's first line", || has("early 12").then_some(()));
    std::fs::write(e.dir.path().join("go"), "").unwrap();
    wait_for("the line the job wrote after the tail started", || has("second").then_some(()));
    std::fs::write(e.dir.path().join("stop"), "").unwrap();
    let status = wait_for("the tail to end with the job", || child.try_wait().unwrap());
    reader.join().unwrap();
    let mut err = String::new();
    std::io::Read::read_to_string(&mut child.stderr.take().unwrap(), &mut err).unwrap();
    assert!(status.success(), "{status:?}: {err}");
    assert_eq!(*seen.lock().unwrap(), ["early 12", "second", "last"]);
    // After its end, the end of the file is still there to read.
    e.wait_field(id, "%T", "COMPLETED");
    assert_eq!(text(&tail(&["-n", "1", &sid]).stdout), "last\n");

    // A job that has not run: no output yet, said so; a job that does not exist: named.
    let held = e.sbatch(&["--hold", "--wrap=true"]).to_string();
    let out = tail(&[&held]);
    assert!(out.status.success() && out.stdout.is_empty(), "{}", text(&out.stderr));
    assert!(text(&out.stderr).contains("has not run: it has no output yet"), "{}", text(&out.stderr));
    let out = tail(&["999999"]);
    assert_eq!(out.status.code(), Some(1));
    assert!(text(&out.stderr).starts_with("spur tail: error: "), "{}", text(&out.stderr));
}

#[test]
fn tail_f_follows_a_requeued_job_into_its_next_run() {
    let e = Cluster::two_nodes(|t| t, &[]);
    let script = e.dir.path().join("runs.sh");
    // Each run says which it is (a count kept beside it), then waits for `stop`.
    std::fs::write(
        &script,
        "#!/bin/sh\nn=$(cat count 2>/dev/null || echo 0)\necho $((n + 1)) > count\necho run $n\n\
         while [ ! -e stop ]; do sleep 0.1; done\n",
    )
    .unwrap();
    let id = e.sbatch(&["--requeue", script.to_str().unwrap()]);
    e.wait_field(id, "%T", "RUNNING");
    let sid = id.to_string();
    let (mut child, seen, reader) = follow(&e.c.url, &["tail", "-f", &sid]);
    let has = |l: &str| {
        let seen = seen.lock().unwrap();
        seen.iter().any(|s| s == l).then_some(()).ok_or_else(|| format!("the tail printed {seen:?}"))
    };
    wait_until_blocking("the first run's line", || has("run 0"));
    e.ok("scontrol", &format!("requeue {id}"));
    wait_until_blocking("the next run's line, on the same tail", || has("run 1"));
    std::fs::write(e.dir.path().join("stop"), "").unwrap();
    let status = wait_for("the tail to end with the job", || child.try_wait().unwrap());
    reader.join().unwrap();
    let mut err = String::new();
    std::io::Read::read_to_string(&mut child.stderr.take().unwrap(), &mut err).unwrap();
    assert!(status.success(), "{status:?}: {err}");
    assert_eq!(*seen.lock().unwrap(), ["run 0", "run 1"], "{err}");
    assert!(err.contains(&format!("job {id} ran again: its new output")), "{err}");
}

#[test]
fn a_file_another_user_owns_or_a_symlink_in_its_place_is_not_read() {
    let e = Cluster::two_nodes(|t| t, &[]);
    // The job's stdout is a symlink to a file it does not own (made before the job starts):
    // the job writes through it, the agent refuses to read through it.
    let target = e.dir.path().join("secret");
    std::fs::write(&target, "not yours\n").unwrap();
    let id = e.sbatch(&["--hold", "-o", "out.link", "--open-mode=append", "--wrap=sleep 300"]);
    std::os::unix::fs::symlink(&target, e.dir.path().join("out.link")).unwrap();
    e.ok("scontrol", &format!("release {id}"));
    e.wait_field(id, "%T", "RUNNING");
    let out = run_with("spur", &e.c.url, &["tail", &id.to_string()], &[]);
    assert_eq!(out.status.code(), Some(1), "{}", text(&out.stdout));
    assert!(text(&out.stderr).contains("is a symlink"), "{}", text(&out.stderr));
    assert!(out.stdout.is_empty(), "{}", text(&out.stdout));
    e.ok("scancel", &id.to_string());
}

#[test]
fn a_plain_user_cannot_tail_another_users_job() {
    let dir = tempfile::tempdir().unwrap();
    let key = dir.path().join("jwt.key");
    std::fs::write(&key, "test-signing-key-of-at-least-32-bytes").unwrap();
    let toml = spur_tests::config::ClusterToml::new()
        .interval(1)
        .nodes("node01", 4, 8192)
        .partition("batch", "node01")
        .set("auth", "plugin", "jwt")
        .set("auth", "jwt_key_file", key.display().to_string().as_str())
        .set("auth", "mode", "required");
    let db = format!("sqlite://{}/spur.db", dir.path().display());
    // No agent at all: a refusal must come before anything is asked of one.
    let c = Controller::start(dir.path(), &conf(&db, &toml.build()));
    let mint = |name: &str, level: &str| spur_tests::proc::mint_token(&key, name, level);
    let (admin, alice, bob) = (mint("admin", "Admin"), mint("alice", "None"), mint("bob", "None"));
    let run = |token: &str, cmd: &str, args: &[&str]| run_with(cmd, &c.url, args, &[("SPUR_TOKEN", token)]);
    for line in ["-i add account name=ml", "-i add user name=alice account=ml"] {
        let out = run(&admin, "sacctmgr", &line.split(' ').collect::<Vec<_>>());
        assert!(out.status.success(), "{}", text(&out.stderr));
    }
    let d = dir.path().display().to_string();
    let out = run(&alice, "sbatch", &["--parsable", "--hold", "-D", &d, "--wrap=true"]);
    assert!(out.status.success(), "{}", text(&out.stderr));
    let id = text(&out.stdout).trim().to_string();
    for args in [vec!["tail", &id], vec!["tail", "-f", "--err", &id]] {
        let out = run(&bob, "spur", &args);
        let err = text(&out.stderr);
        assert_eq!(out.status.code(), Some(1), "{args:?}: {err}");
        assert!(err.contains(&format!("job {id} belongs to 'alice'")) && err.contains("output"), "{err}");
        assert!(out.stdout.is_empty());
    }
    // The owner and an Operator are let through: the job has not run, so there is nothing yet.
    for token in [&alice, &admin] {
        let out = run(token, "spur", &["tail", &id]);
        assert!(out.status.success(), "{}", text(&out.stderr));
        assert!(text(&out.stderr).contains("has not run"), "{}", text(&out.stderr));
    }
}

/// `spur ARGS` (a `tail -f`) running, and the lines it prints as they come.
fn follow(url: &str, args: &[&str]) -> (Child, Arc<Mutex<Vec<String>>>, std::thread::JoinHandle<()>) {
    let mut child =
        client("spur", url, args, &[]).stdout(Stdio::piped()).stderr(Stdio::piped()).spawn().unwrap();
    let seen = Arc::new(Mutex::new(Vec::<String>::new()));
    let reader = {
        let (seen, out) = (seen.clone(), child.stdout.take().unwrap());
        std::thread::spawn(move || {
            for line in BufReader::new(out).lines().map_while(Result::ok) {
                seen.lock().unwrap().push(line);
            }
        })
    };
    (child, seen, reader)
}
