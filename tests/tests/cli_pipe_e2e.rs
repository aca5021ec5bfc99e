//! Every command exits quietly when its reader goes away (`spur prio | head
//! -1`), with the documented status, instead of panicking on EPIPE.
//!
//! Commands with a lot to say (thousands of jobs and nodes) are read one line
//! at a time and the pipe is closed after the first, as `head -1` does: the
//! rest cannot fit in the pipe, so the command is writing when it closes.
//! Commands that print little write into a pipe whose reader is already
//! gone, so their first write is the one that fails.

use spur_client::cli::output::EXIT_CLOSED_PIPE;
use spur_client::conn::{self, Identity};
use spur_proto::v1 as pb;
use spur_tests::config::ClusterToml;
use spur_tests::proc::{Controller, client, conf, ok, wait_for};
use std::io::BufRead;
use std::process::{Command, Output, Stdio};

const JOBS: usize = 2000;

/// More than a pipe (64 KiB) and the reader's first buffer (8 KiB) hold, with room to spare.
const BIG: usize = 96 << 10;

fn cluster() -> ClusterToml {
    ClusterToml::new().nodes_cpus("n[0001-3000]", 4).partition("batch", "ALL")
}

/// Submits `JOBS` jobs as alice over a few connections at once.
async fn seed(url: &str) {
    let mut tasks = Vec::new();
    for _ in 0..8 {
        let url = url.to_string();
        tasks.push(tokio::spawn(async move {
            let me = Identity::asserted("alice", Some(1000));
            let mut c = conn::connect(&url, me).await.expect("connect");
            for _ in 0..JOBS / 8 {
                let spec = pb::JobSpec {
                    name: "piped".into(),
                    script: "#!/bin/sh\ntrue\n".into(),
                    ..Default::default()
                };
                c.jobs.submit(pb::SubmitRequest { spec: Some(spec) }).await.expect("submit");
            }
        }));
    }
    for t in tasks {
        t.await.expect("seeding task");
    }
}

fn command(personality: &str, url: &str, args: &[&str]) -> Command {
    let mut c = client(personality, url, args, &[("USER", "alice")]);
    c.stdin(Stdio::null()).stderr(Stdio::piped());
    c
}

/// `CMD | head -1`: the first line, then the status and stderr once it exits.
fn head_one(personality: &str, url: &str, args: &[&str]) -> (String, Output) {
    let mut child = command(personality, url, args).stdout(Stdio::piped()).spawn().expect("spawn");
    let mut first = String::new();
    {
        let mut out = std::io::BufReader::new(child.stdout.take().expect("stdout"));
        out.read_line(&mut first).expect("read the first line");
    }
    (first, child.wait_with_output().expect("wait"))
}

/// `CMD` writing into a pipe nobody reads any more.
fn into_closed_pipe(personality: &str, url: &str, args: &[&str]) -> Output {
    let (reader, writer) = std::io::pipe().expect("pipe");
    drop(reader);
    command(personality, url, args).stdout(writer).output().expect("run")
}

fn assert_quiet(what: &str, out: &Output) {
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(!err.contains("panicked"), "{what} panicked on a closed pipe: {err}");
    assert!(err.is_empty(), "{what} said something on a closed pipe: {err}");
    assert_eq!(out.status.code(), Some(EXIT_CLOSED_PIPE), "{what}: {:?} ({err})", out.status);
}

#[tokio::test(flavor = "multi_thread")]
async fn every_command_exits_quietly_when_its_reader_goes_away() {
    let dir = tempfile::tempdir().unwrap();
    let db = format!("sqlite://{}/spur.db", dir.path().display());
    let c = Controller::start(dir.path(), &conf(&db, &cluster().build()));
    let url = c.url.clone();
    seed(&url).await;
    // sprio lists jobs once a pass has given them their factors.
    wait_for("priorities", || {
        let out = ok("sprio", &url, &["-h"]);
        (out.lines().count() == JOBS).then_some(())
    });

    let long: &[(&str, &[&str])] = &[
        ("spur", &["prio"]),
        ("sprio", &["-l"]),
        ("squeue", &[]),
        // -h: the long listing opens with the time of day, which two runs may not share.
        ("spur", &["queue", "-l", "-h"]),
        ("sinfo", &["-N", "-o", "%N %P %t %C %m %E"]),
        ("scontrol", &["show", "node"]),
        ("scontrol", &["show", "job"]),
        ("sacct", &["-a", "-S", "2020-01-01"]),
        ("sacctmgr", &["show", "txn", "limit=5000"]),
    ];
    for (personality, args) in long {
        let what = format!("{personality} {}", args.join(" "));
        let full = ok(personality, &url, args);
        assert!(full.len() > BIG, "{what} prints only {} bytes, too few to fill the pipe", full.len());
        let (first, out) = head_one(personality, &url, args);
        assert_eq!(first, full.lines().next().map(|l| format!("{l}\n")).unwrap_or_default(), "{what}");
        assert_quiet(&what, &out);
    }

    let key = dir.path().join("jwt.key");
    std::fs::write(&key, "a-test-key-that-is-at-least-32-bytes-long\n").unwrap();
    let key = key.display().to_string();
    let links = dir.path().join("links");
    std::fs::create_dir(&links).unwrap();
    let links = links.display().to_string();
    let short: &[(&str, &[&str])] = &[
        ("sbatch", &["--wrap", "true"]),
        ("sshare", &["-a"]),
        ("spur", &["token", "user", "--name", "alice", "--key-file", &key]),
        ("spur", &["install-links", &links]),
        ("spur", &["--help"]),
        ("spur", &["token", "--help"]),
        ("spur", &["audit", "tail", "--help"]),
        ("sacctmgr", &["--help"]),
        ("scontrol", &["--help"]),
        ("squeue", &["--help"]),
        ("sinfo", &["--help"]),
        ("sbatch", &["--help"]),
        ("scancel", &["--help"]),
        ("sprio", &["--help"]),
        ("sacct", &["--help"]),
        ("sshare", &["--help"]),
    ];
    for (personality, args) in short {
        let what = format!("{personality} {}", args.join(" "));
        assert_quiet(&what, &into_closed_pipe(personality, &url, args));
    }
}
