//! sdiag (and the other commands added beside it) end to end: the real
//! controller, agent and CLI links.

use spur_tests::cluster::Cluster;
use spur_tests::proc::{Controller, conf, links_dir, run_with, wait_for};
use std::io::Write;

fn sdiag_line(e: &Cluster, label: &str) -> String {
    let out = e.ok("sdiag", "");
    out.lines().find(|l| l.starts_with(label)).unwrap_or_else(|| panic!("no {label} in\n{out}")).to_string()
}

#[test]
fn sdiag_counts_jobs_passes_and_rpcs_and_an_admin_resets_them() {
    let e = Cluster::two_nodes(|t| t, &[]);
    let done = e.sbatch(&["--wrap=true"]);
    let long = e.sbatch(&["--wrap=sleep 300"]);
    e.wait_field(done, "%T", "COMPLETED");
    e.wait_field(long, "%T", "RUNNING");
    e.ok("scancel", &long.to_string());
    wait_for("the cancel counted", || {
        (sdiag_line(&e, "Jobs canceled:") == "Jobs canceled:  1").then_some(())
    });
    let out = e.ok("sdiag", "");
    for want in ["Jobs submitted: 2", "Jobs started:   2", "Jobs completed: 1", "Jobs failed:    0"] {
        assert!(out.lines().any(|l| l == want), "{want} in\n{out}");
    }
    assert!(out.contains("\nMain schedule statistics (microseconds):\n\tLast cycle:"), "{out}");
    let passes: u64 = sdiag_line(&e, "\tTotal cycles:").rsplit(' ').next().unwrap().parse().unwrap();
    assert!(passes > 0, "{out}");
    let submit = out.lines().find(|l| l.trim_start().starts_with("Jobs/Submit")).expect("a Submit line");
    assert!(submit.contains("count:2 "), "{submit}");

    let v: serde_json::Value = serde_json::from_str(&e.ok("sdiag", "--json")).unwrap();
    assert_eq!(v["statistics"]["jobs_submitted"], 2, "{v}");
    assert_eq!(v["statistics"]["jobs_completed"], 1, "{v}");

    assert_eq!(e.ok("sdiag", "--reset"), "Reset scheduling statistics\n");
    let out = e.ok("sdiag", "-i");
    assert!(out.lines().any(|l| l == "Jobs submitted: 0"), "{out}");
    assert!(!out.contains("Jobs/Submit"), "the RPC counts were reset too:\n{out}");
    let rows = e.ok("sacctmgr", "-n -P show txn Entity=diag format=Action,Where,Outcome");
    assert_eq!(rows.trim(), "update|diag:|success", "{rows}");

    let err = e.fails("sdiag", &["-M", "elsewhere"]);
    assert!(err.contains("--clusters: 'elsewhere' is not a cluster"), "{err}");
}

#[test]
fn sdiag_reset_needs_an_administrator_and_the_refusal_is_audited() {
    const KEY: &str = "test-signing-key-of-at-least-32-bytes";
    let mut key = tempfile::NamedTempFile::new().unwrap();
    writeln!(key, "{KEY}").unwrap();
    let mint = |name: &str, level: &str| {
        let out = std::process::Command::new(spur_tests::proc::bin("spur"))
            .args(["token", "user", "--name", name, "--admin-level", level, "--ttl", "1h", "--key-file"])
            .arg(key.path())
            .output()
            .unwrap();
        assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
        String::from_utf8(out.stdout).unwrap().trim().to_string()
    };
    let dir = tempfile::tempdir().unwrap();
    let db = format!("sqlite://{}/spur.db", dir.path().display());
    let extra = format!(
        "[auth]\nplugin = \"jwt\"\njwt_key_file = \"{}\"\nmode = \"permissive\"\n",
        key.path().display()
    );
    let c = Controller::start(dir.path(), &conf(&db, &extra));
    let (admin, user) = (mint("admin", "Admin"), mint("bob", "None"));
    let run = |token: &str, args: &[&str]| run_with("sdiag", &c.url, args, &[("SPUR_TOKEN", token)]);

    // Anyone may read the figures.
    let out = run(&user, &[]);
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    let out = run(&user, &["-r"]);
    assert_eq!(out.status.code(), Some(1));
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(err.contains("ResetDiag needs the Administrator role; 'bob' has None"), "{err}");
    let out = run(&admin, &["-r"]);
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    let txn = run_with(
        "sacctmgr",
        &c.url,
        &["-n", "-P", "show", "txn", "Entity=diag", "format=Actor,Outcome"],
        &[("SPUR_TOKEN", &admin)],
    );
    let rows = String::from_utf8(txn.stdout).unwrap();
    assert!(rows.lines().any(|l| l == "bob|denied"), "{rows}");
    assert!(rows.lines().any(|l| l == "admin|success"), "{rows}");
}

/// `sreport -n -P -t seconds REPORT start=now-1hours`, split into rows of fields.
fn sreport(e: &Cluster, report: &str) -> Vec<Vec<String>> {
    let out = e.ok("sreport", &format!("-n -P -t seconds {report} start=now-1hours end=now"));
    out.lines().map(|l| l.split('|').map(String::from).collect()).collect()
}

#[test]
fn sreport_sums_stored_and_running_jobs_cpu_time_per_account_and_user() {
    // Ended jobs leave memory at once: the report reads them from the store.
    let e = Cluster::two_nodes(|t| t.scheduler("min_job_age_secs", 0), &[]);
    e.ok("sacctmgr", "-i add account name=phys");
    e.ok("sacctmgr", "-i add user name=root account=phys");
    let done = e.sbatch(&["-A", "ml", "-n", "2", "--wrap=sleep 1"]);
    let running = e.sbatch(&["-A", "phys", "--wrap=sleep 300"]);
    e.wait_field(running, "%T", "RUNNING");
    wait_for("the ended job purged from memory", || {
        e.ok("squeue", "-h -o %i").lines().all(|l| l.trim() != done.to_string()).then_some(())
    });
    let used = |account: &str| {
        sreport(&e, "cluster AccountUtilizationByUser")
            .into_iter()
            .find(|r| r[1] == account && r[2] == "root")
            .map(|r| r[4].parse::<u64>().unwrap())
    };
    // 2 CPUs for at least a second.
    assert!(used("ml").unwrap() >= 2, "{:?}", sreport(&e, "cluster AccountUtilizationByUser"));
    // The running job counts to now.
    wait_for("the running job's use", || used("phys").filter(|s| *s > 0));
    let rows = sreport(&e, "cluster AccountUtilizationByUser");
    assert_eq!(rows[0][1], "root", "{rows:?}");
    assert_eq!(rows[0][0], "test", "{rows:?}");

    // 8 CPUs over the hour; what is not allocated is idle.
    let u = &sreport(&e, "cluster utilization")[0];
    let n = |i: usize| u[i].parse::<u64>().unwrap();
    assert_eq!((u[0].as_str(), n(6)), ("test", 8 * 3600), "{u:?}");
    assert_eq!(n(1) + n(4), n(6), "{u:?}");
    assert!(n(1) >= 3, "{u:?}");

    let top = sreport(&e, "user topusage");
    assert_eq!(top.len(), 1, "{top:?}");
    assert_eq!((top[0][1].as_str(), top[0][3].as_str()), ("root", "ml,phys"), "{top:?}");

    // By job size: the 2-CPU job's and the 1-CPU job's time, both under 50 CPUs.
    let sizes = sreport(&e, "job SizesByAccount");
    let ml = sizes.iter().find(|r| r[1] == "ml").expect("an ml line");
    assert!(ml[2].parse::<u64>().unwrap() >= 2 && ml[3] == "0", "{sizes:?}");
    assert!(sizes.iter().any(|r| r[1] == "phys"), "{sizes:?}");

    // The banner, without -n.
    let out = e.ok("sreport", "cluster utilization start=now-1hours end=now");
    assert!(
        out.contains("\nCluster Utilization ") && out.contains("\nUsage reported in CPU Minutes\n"),
        "{out}"
    );
    let err = e.fails("sreport", &["cluster", "utilization", "start=whenever"]);
    assert!(err.contains("start: 'whenever' is not a time"), "{err}");
}

#[test]
fn sstat_reports_a_running_steps_tasks_from_their_nodes() {
    let e = Cluster::two_nodes(|t| t, &[]);
    let path = format!("{}:{}", links_dir().display(), std::env::var("PATH").unwrap_or_default());
    // Each task holds a 20 MB string in its shell, then waits.
    let script = "#!/bin/sh\n#SBATCH -N 2 -n 2\n\
        srun -n 2 sh -c 'x=$(head -c 20000000 /dev/zero | tr \"\\\\0\" a); sleep 300'\n";
    std::fs::write(e.dir.path().join("hold.sh"), script).unwrap();
    let dir = e.dir.path().display().to_string();
    let file = e.dir.path().join("hold.sh").display().to_string();
    let out = run_with("sbatch", &e.c.url, &["--parsable", "-D", &dir, &file], &[("PATH", &path)]);
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    let id: u64 = String::from_utf8_lossy(&out.stdout).trim().parse().unwrap();

    let fields = "JobID,NTasks,MaxRSS,MaxRSSNode,MaxRSSTask,AveRSS,Nodelist";
    let step = format!("{id}.0");
    let row = wait_for("both tasks holding their string", || {
        let out = run_with("sstat", &e.c.url, &["-n", "-P", "--noconvert", "-j", &step, "-o", fields], &[]);
        let text = String::from_utf8_lossy(&out.stdout).into_owned();
        let f: Vec<String> = text.trim().split('|').map(String::from).collect();
        let held = f.len() == 7 && f[1] == "2" && f[5].parse::<u64>().is_ok_and(|rss| rss >= 20_000_000);
        held.then_some(f)
    });
    assert_eq!(row[0], step);
    assert!(row[2].parse::<u64>().unwrap() >= 20_000_000, "{row:?}");
    assert!(row[3].starts_with("node0"), "{row:?}");
    assert!(row[4] == "0" || row[4] == "1", "{row:?}");
    assert_eq!(row[6], "node[01-02]", "{row:?}");
    // A job alone is its running steps; -i is JobID, Nodelist and Pids.
    let pids = e.ok("sstat", &format!("-n -P -i -j {id}"));
    let f: Vec<&str> = pids.trim().split('|').collect();
    assert_eq!((f[0], f[1], f[2].split(',').count()), (step.as_str(), "node[01-02]", 2), "{pids}");

    let err = e.fails("sstat", &["-j", &format!("{id}.5")]);
    assert!(err.contains(&format!("step {id}.5 is not running")), "{err}");
    let err = e.fails("sstat", &["-j", &format!("{id}.batch")]);
    assert!(err.contains("srun steps only"), "{err}");
    e.ok("scancel", &id.to_string());
    wait_for("the step ended", || {
        let out = run_with("sstat", &e.c.url, &["-j", &step], &[]);
        let err = String::from_utf8_lossy(&out.stderr).into_owned();
        (!out.status.success() && err.contains(&format!("step {step} is not running"))).then_some(())
    });
}

#[test]
fn sbcast_copies_a_file_to_a_jobs_nodes_as_its_user() {
    let e = Cluster::two_nodes(|t| t, &[]);
    let src = e.dir.path().join("src.bin");
    let data: Vec<u8> = (0..3_000_000u32).map(|i| (i % 251) as u8).collect();
    std::fs::write(&src, &data).unwrap();
    let src = src.display().to_string();

    // A job on both nodes (one host here: --force, as both write the same path).
    let both = e.sbatch(&["-N", "2", "--wrap=sleep 300"]);
    e.wait_field(both, "%T", "RUNNING");
    let dest = e.dir.path().join("copy.bin").display().to_string();
    let out = run_with(
        "sbcast",
        &e.c.url,
        &["-f", "-p", "-s", "256k", &src, &dest],
        &[("SLURM_JOB_ID", &both.to_string())],
    );
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    assert_eq!(std::fs::read(&dest).unwrap(), data);
    use std::os::unix::fs::MetadataExt;
    let (s, d) = (std::fs::metadata(&src).unwrap(), std::fs::metadata(&dest).unwrap());
    assert_eq!((d.mode() & 0o7777, d.mtime()), (s.mode() & 0o7777, s.mtime()), "-p keeps mode and time");
    // Without --force an existing file is each node's refusal, named.
    let err = e.fails("sbcast", &["-j", &both.to_string(), &src, &dest]);
    assert!(err.contains("exists (sbcast --force replaces it)") && err.contains("node01"), "{err}");
    let err = e.fails("sbcast", &["-j", &both.to_string(), &src]);
    assert!(err.contains("SOURCE and DEST"), "{err}");
    e.ok("scancel", &both.to_string());

    // A job of another user: the file is that user's, and a directory only root may write is refused.
    if std::process::Command::new("id")
        .arg(spur_tests::users::ALICE)
        .output()
        .is_ok_and(|o| o.status.success())
    {
        let alice = spur_tests::users::user(spur_tests::users::ALICE);
        let open = spur_tests::users::open_dir();
        let shared = open.path().join("shared");
        std::fs::create_dir(&shared).unwrap();
        std::fs::set_permissions(&shared, std::os::unix::fs::PermissionsExt::from_mode(0o1777)).unwrap();
        let uid = format!("--uid={}", alice.uid);
        let gid = format!("--gid={}", alice.gid);
        let od = open.path().display().to_string();
        let id = e.sbatch(&["-N", "1", &uid, &gid, "-D", &od, "-o", "/dev/null", "--wrap=sleep 300"]);
        e.wait_field(id, "%T", "RUNNING");
        let mine = shared.join("alice.bin").display().to_string();
        e.ok("sbcast", &format!("-j {id} {src} {mine}"));
        assert_eq!(std::fs::metadata(&mine).unwrap().uid(), alice.uid, "written as the job's user");
        let roots = open.path().join("root-only.bin").display().to_string();
        let err = e.fails("sbcast", &["-j", &id.to_string(), &src, &roots]);
        assert!(err.contains("Permission denied"), "{err}");
        assert!(!std::path::Path::new(&roots).exists(), "nothing written as root");
        e.ok("scancel", &id.to_string());
    }
}

#[test]
fn sattach_follows_a_running_steps_output_until_it_ends() {
    use std::io::BufRead;
    let e = Cluster::two_nodes(|t| t, &[]);
    let path = format!("{}:{}", links_dir().display(), std::env::var("PATH").unwrap_or_default());
    // Two tasks that print a numbered line five times a second until the file `stop` exists.
    let script = "#!/bin/sh\n#SBATCH -N 2 -n 2 -o ticks.out\n\
        srun -n 2 sh -c 'i=0; while [ ! -e stop ]; do echo tick $SLURM_PROCID $i; i=$((i+1)); sleep 0.2; done'\n";
    std::fs::write(e.dir.path().join("ticks.sh"), script).unwrap();
    let dir = e.dir.path().display().to_string();
    let file = e.dir.path().join("ticks.sh").display().to_string();
    let out = run_with("sbatch", &e.c.url, &["--parsable", "-D", &dir, &file], &[("PATH", &path)]);
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    let id: u64 = String::from_utf8_lossy(&out.stdout).trim().parse().unwrap();
    let step = format!("{id}.0");
    let layout = wait_for("the step running", || {
        let out = run_with("sattach", &e.c.url, &["--layout", &step], &[]);
        out.status.success().then(|| String::from_utf8_lossy(&out.stdout).into_owned())
    });
    assert!(layout.starts_with("Job step layout:\n\t2 tasks, 2 nodes (node[01-02])\n"), "{layout}");

    let mut child = spur_tests::proc::client("sattach", &e.c.url, &["-l", &step], &[])
        .stdin(std::process::Stdio::null())
        .stdout(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    let (tx, rx) = std::sync::mpsc::channel();
    let stdout = child.stdout.take().unwrap();
    std::thread::spawn(move || {
        for line in std::io::BufReader::new(stdout).lines().map_while(Result::ok) {
            let _ = tx.send(line);
        }
    });
    let mut seen = vec![];
    wait_for("both tasks' labelled lines", || {
        seen.extend(rx.try_iter());
        (seen.iter().any(|l| l.starts_with("0: tick 0 ")) && seen.iter().any(|l| l.starts_with("1: tick 1 ")))
            .then_some(())
    });
    assert!(seen.iter().all(|l| l.starts_with("0: tick 0 ") || l.starts_with("1: tick 1 ")), "{seen:?}");
    // The tasks end, so does the step, and sattach with it.
    std::fs::write(e.dir.path().join("stop"), "").unwrap();
    let status = wait_for("sattach to end with the step", || child.try_wait().unwrap());
    assert!(status.success(), "{status:?}");
    let err = e.fails("sattach", &[&format!("{id}.7")]);
    assert!(err.contains(&format!("step {id}.7 is not running")), "{err}");
    // srun had its copy all along: sattach read beside it.
    e.wait_field(id, "%T", "COMPLETED");
    let out = std::fs::read_to_string(e.dir.path().join("ticks.out")).unwrap_or_default();
    assert!(out.contains("tick 0 ") && out.contains("tick 1 "), "srun's own copy: {out}");
}

#[test]
fn sstat_sattach_and_sbcast_refuse_another_users_job() {
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
    let c = Controller::start(dir.path(), &conf(&db, &toml.build()));
    let mint = |name: &str, level: &str| spur_tests::proc::mint_token(&key, name, level);
    let (admin, alice, bob) = (mint("admin", "Admin"), mint("alice", "None"), mint("bob", "None"));
    let run = |token: &str, cmd: &str, args: &[&str]| run_with(cmd, &c.url, args, &[("SPUR_TOKEN", token)]);
    for line in ["-i add account name=ml", "-i add user name=alice account=ml"] {
        let out = run(&admin, "sacctmgr", &line.split(' ').collect::<Vec<_>>());
        assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    }
    let d = dir.path().display().to_string();
    let out = run(&alice, "sbatch", &["--parsable", "--hold", "-D", &d, "--wrap=true"]);
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    let id = String::from_utf8_lossy(&out.stdout).trim().to_string();
    let src = dir.path().join("f");
    std::fs::write(&src, "x").unwrap();
    let src = src.display().to_string();
    let step = format!("{id}.0");
    let tries: [(&str, Vec<&str>); 3] = [
        ("sstat", vec!["-j", &step]),
        ("sattach", vec![&step]),
        ("sbcast", vec!["-j", &id, &src, "/tmp/spur-never"]),
    ];
    for (cmd, args) in tries {
        let out = run(&bob, cmd, &args);
        let err = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(1), "{cmd}: {err}");
        assert!(err.contains(&format!("job {id} belongs to 'alice'")), "{cmd}: {err}");
    }
    // The owner is told what is wrong instead: the job is not running.
    let out = run(&alice, "sstat", &["-j", &id]);
    assert!(String::from_utf8_lossy(&out.stderr).contains(&format!("job {id} has no running step")));
}

#[test]
fn seff_reports_a_sleeping_job_near_zero_cpu_with_sacct_s_figures() {
    let e = Cluster::two_nodes(|t| t, &[]);
    let id = e.sbatch(&["--mem=100M", "--wrap=sleep 1"]);
    e.wait_field(id, "%T", "COMPLETED");
    let out = e.ok("seff", &id.to_string());
    let line = |label: &str| {
        let l = out.lines().find(|l| l.starts_with(label)).unwrap_or_else(|| panic!("no {label} in\n{out}"));
        l[label.len()..].to_string()
    };
    assert_eq!(line("Job ID: "), id.to_string(), "{out}");
    assert_eq!(line("User/Group: ").split('/').next(), Some("root"), "{out}");
    assert_eq!(line("State: "), "COMPLETED (exit code 0)", "{out}");
    assert_eq!(line("Cores: "), "1", "{out}");
    // sleep uses almost no CPU: well under a quarter of one core for a second or more.
    let cpu: f64 = line("CPU Efficiency: ").split('%').next().unwrap().parse().unwrap();
    assert!(cpu < 25.0, "{out}");
    assert_eq!(line("CPU Utilized: "), "00:00:00", "{out}");
    // The wall-clock time and the memory asked are sacct's.
    let acct = e.ok("sacct", &format!("-n -P -X -j {id} -o ElapsedRaw,ReqMem,AllocCPUS"));
    let f: Vec<&str> = acct.trim().split('|').collect();
    let secs: u64 = f[0].parse().unwrap();
    assert!(secs >= 1, "{acct}");
    assert_eq!(line("Job Wall-clock time: "), format!("00:00:{secs:02}"), "{out}");
    assert_eq!(f[1], "100M", "{acct}");
    assert!(line("Memory Efficiency: ").ends_with("% of 100.00 MB (100.00 MB/node)"), "{out}");
    assert_eq!(f[2], "1", "{acct}");

    let err = e.fails("seff", &["999999"]);
    assert_eq!(err.trim(), "Job not found.");
    let err = e.fails("seff", &["12x"]);
    assert!(err.contains("'12x' is not a job id"), "{err}");
}
