//! srun's options with the real binaries: `--multi-prog` runs each task's
//! line of its file, and an option Spur has no mechanism for warns once and
//! runs the step.

use spur_tests::cluster::Cluster;
use spur_tests::proc::{links_dir, run_with};

#[test]
fn multi_prog_runs_each_task_s_line_and_noted_options_warn_once() {
    let e = Cluster::two_nodes(|t| t, &[]);
    let dir = e.dir.path().display().to_string();
    // Read where srun runs (an absolute name here), not where -D sends the tasks.
    let conf = e.dir.path().join("mp.conf");
    std::fs::write(&conf, "0 echo first\n1-3 sh -c 'echo task=%t offset=%o'\n").unwrap();
    let conf = conf.display().to_string();
    let path = format!("{}:{}", links_dir().display(), std::env::var("PATH").unwrap_or_default());
    let args = ["-D", &dir, "-N2", "-n4", "--cpu-freq=high", "--cpu-freq=low", "--multi-prog", &conf];
    let out = run_with("srun", &e.c.url, &args, &[("PATH", &path)]);
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "{err}");
    let warned =
        "srun: warning: --cpu-freq has no effect on Spur: CPU and GPU frequencies are not set by Spur";
    assert_eq!(err.lines().filter(|l| l.contains("warning")).collect::<Vec<_>>(), [warned], "{err}");
    let mut lines: Vec<String> = String::from_utf8_lossy(&out.stdout).lines().map(String::from).collect();
    lines.sort();
    assert_eq!(lines, ["first", "task=1 offset=0", "task=2 offset=1", "task=3 offset=2"]);
}

#[test]
fn cpu_bind_map_cpu_binds_each_task_and_other_kinds_warn() {
    let e = Cluster::two_nodes(|t| t, &[]);
    let dir = e.dir.path().display().to_string();
    let show = "echo $SLURM_LOCALID $(grep Cpus_allowed_list /proc/self/status | cut -f2)";
    let args = ["-D", &dir, "-N1", "-n2", "--cpu-bind=map_cpu:1,0", "sh", "-c", show];
    let out = run_with("srun", &e.c.url, &args, &[]);
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    let mut lines: Vec<String> = String::from_utf8_lossy(&out.stdout).lines().map(String::from).collect();
    lines.sort();
    assert_eq!(lines, ["0 1", "1 0"]);
    let out = run_with("srun", &e.c.url, &["-D", &dir, "--cpu-bind=cores", "true"], &[]);
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "{err}");
    assert!(
        err.starts_with("srun: warning: --cpu-bind=cores has no effect on Spur: tasks are bound only"),
        "{err}"
    );
    // A CPU the node does not have fails the task, saying so.
    let out = run_with("srun", &e.c.url, &["-D", &dir, "--cpu-bind=map_cpu:1000", "true"], &[]);
    assert!(!out.status.success());
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(err.contains("--cpu-bind: cannot bind to CPUs [1000]"), "{err}");
}

#[test]
fn test_only_submits_nothing_and_wait_ends_the_rest_after_the_first_task() {
    let e = Cluster::two_nodes(|t| t, &[]);
    let dir = e.dir.path().display().to_string();
    let out = run_with("srun", &e.c.url, &["-D", &dir, "--test-only", "-N2", "true"], &[]);
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "{err}");
    assert!(
        err.starts_with("srun: Job ") && err.contains(" processors on nodes node[01-02] in partition "),
        "{err}"
    );
    assert_eq!(e.ok("sacct", "-n -P -a -o JobID"), "", "nothing was submitted");
    let task = "if [ $SLURM_PROCID = 0 ]; then exit 0; fi; exec sleep 600";
    let out = run_with("srun", &e.c.url, &["-D", &dir, "-W", "1", "-n2", "sh", "-c", task], &[]);
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(!out.status.success(), "{err}");
    assert!(err.contains("srun: First task exited 1s ago; terminating the step (--wait)"), "{err}");
}

#[test]
fn prolog_epilog_relative_and_clusters() {
    let e = Cluster::two_nodes(|t| t, &[]);
    let dir = e.dir.path().display().to_string();
    let log = e.dir.path().join("log");
    let script = |name: &str| {
        let p = e.dir.path().join(name);
        std::fs::write(&p, format!("#!/bin/sh\necho {name} \"$@\" >> {}\n", log.display())).unwrap();
        use std::os::unix::fs::PermissionsExt;
        std::fs::set_permissions(&p, std::fs::Permissions::from_mode(0o755)).unwrap();
        p.display().to_string()
    };
    let (pro, epi) = (script("pro"), script("epi"));
    let args = ["-D", &dir, "--prolog", &pro, "--epilog", &epi, "echo", "step"];
    let out = run_with("srun", &e.c.url, &args, &[]);
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    assert_eq!(String::from_utf8_lossy(&out.stdout), "step\n");
    assert_eq!(std::fs::read_to_string(&log).unwrap(), "pro echo step\nepi echo step\n");
    // --task-prolog on the nodes: its `export` lines reach each task.
    let tp = e.dir.path().join("tp");
    std::fs::write(&tp, "#!/bin/sh\necho \"export FROM_TP=t$SLURM_PROCID\"\n").unwrap();
    use std::os::unix::fs::PermissionsExt;
    std::fs::set_permissions(&tp, std::fs::Permissions::from_mode(0o755)).unwrap();
    let tp = tp.display().to_string();
    let args = ["-D", &dir, "-n2", "--task-prolog", &tp, "sh", "-c", "echo $FROM_TP"];
    let out = run_with("srun", &e.c.url, &args, &[]);
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    let mut lines: Vec<String> = String::from_utf8_lossy(&out.stdout).lines().map(String::from).collect();
    lines.sort();
    assert_eq!(lines, ["t0", "t1"]);
    // -r: the step starts at the job's second node (salloc gives srun the job's nodes).
    let path = format!("{}:{}", links_dir().display(), std::env::var("PATH").unwrap_or_default());
    let args = ["-D", &dir, "-N2", "srun", "-r", "1", "sh", "-c", "echo $SLURMD_NODENAME"];
    let out = run_with("salloc", &e.c.url, &args, &[("PATH", &path)]);
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    assert_eq!(String::from_utf8_lossy(&out.stdout), "node02\n");
    let err = e.fails("srun", &["-M", "elsewhere", "true"]);
    assert!(err.contains("--clusters: 'elsewhere' is not a cluster this controller runs"), "{err}");
}

#[test]
fn distribution_lays_the_tasks_out_cyclic_arbitrary_and_from_sbatch() {
    let e = Cluster::two_nodes(|t| t, &[]);
    let dir = e.dir.path().display().to_string();
    let lines = |out: &std::process::Output| {
        assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
        let err = String::from_utf8_lossy(&out.stderr);
        assert!(!err.contains("warning"), "{err}");
        let mut l: Vec<String> = String::from_utf8_lossy(&out.stdout).lines().map(String::from).collect();
        l.sort();
        l
    };
    let show = "echo $SLURM_NODEID $SLURM_LOCALID $SLURM_DISTRIBUTION";
    let args = ["-D", &dir, "-N2", "-n4", "-m", "cyclic", "-l", "sh", "-c", show];
    let out = run_with("srun", &e.c.url, &args, &[]);
    assert_eq!(lines(&out), ["0: 0 0 cyclic", "1: 1 0 cyclic", "2: 0 1 cyclic", "3: 1 1 cyclic"]);
    let args = ["-D", &dir, "-N2", "-n3", "-m", "cyclic", "-v", "true"];
    let out = run_with("srun", &e.c.url, &args, &[]);
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(
        err.contains("on host node01, 2 tasks: [0,2]\n") && err.contains("node02, 1 tasks: [1]\n"),
        "{err}"
    );
    let args = ["-D", &dir, "-N2", "-n3", "-m", "cyclic", "-v", "true"];
    let out = run_with("srun", &e.c.url, &args, &[]);
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(
        err.contains("on host node01, 2 tasks: [0,2]\n") && err.contains("node02, 1 tasks: [1]\n"),
        "{err}"
    );
    // arbitrary: task t on the t-th line of SLURM_HOSTFILE.
    let hosts = e.dir.path().join("hosts");
    std::fs::write(&hosts, "node02\nnode01\nnode02\n").unwrap();
    let hosts = hosts.display().to_string();
    let args = ["-D", &dir, "-m", "arbitrary", "-l", "printenv", "SLURMD_NODENAME"];
    let out = run_with("srun", &e.c.url, &args, &[("SLURM_HOSTFILE", &hosts)]);
    assert_eq!(lines(&out), ["0: node02", "1: node01", "2: node02"]);
    // sbatch -m: the script's sruns lay their tasks out so.
    let path = format!("{}:{}", links_dir().display(), std::env::var("PATH").unwrap_or_default());
    // The job's nodes are chosen as without -m (4 CPUs each here); its srun of 4 tasks goes 3 + 1.
    let args = ["--parsable", "-D", &dir, "-N2", "-n8", "-m", "plane=3", "-o", "plane.out", "--wrap"];
    let script = "srun -n4 -l printenv SLURM_NODEID; echo $SLURM_DISTRIBUTION $SLURM_DIST_PLANESIZE";
    let out = run_with("sbatch", &e.c.url, &[&args[..], &[script]].concat(), &[("PATH", &path)]);
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    let id: u64 = String::from_utf8_lossy(&out.stdout).trim().parse().unwrap();
    e.wait_field(id, "%T", "COMPLETED");
    let got = std::fs::read_to_string(e.dir.path().join("plane.out")).unwrap();
    let mut got: Vec<&str> = got.lines().collect();
    got.sort();
    assert_eq!(got, ["0: 0", "1: 0", "2: 0", "3: 1", "plane 3"]);
    // A bad word is refused, naming the option.
    let out = run_with("srun", &e.c.url, &["-D", &dir, "-m", "round", "true"], &[]);
    assert!(!out.status.success());
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(err.contains("--distribution: 'round'"), "{err}");
}

#[test]
fn open_mode_append_keeps_srun_s_file_and_verbose_says_where_tasks_go() {
    let e = Cluster::two_nodes(|t| t, &[]);
    let dir = e.dir.path().display().to_string();
    let out_file = e.dir.path().join("log.out");
    std::fs::write(&out_file, "before\n").unwrap();
    let args = ["-D", &dir, "-o", "log.out", "--open-mode=append", "echo", "after"];
    let out = run_with("srun", &e.c.url, &args, &[]);
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    assert_eq!(std::fs::read_to_string(&out_file).unwrap(), "before\nafter\n");
    // A batch script's --open-mode=append reaches its sruns (SLURM_OPEN_MODE=a).
    let out = run_with(
        "srun",
        &e.c.url,
        &["-D", &dir, "-o", "log.out", "echo", "again"],
        &[("SLURM_OPEN_MODE", "a")],
    );
    assert!(out.status.success());
    assert_eq!(std::fs::read_to_string(&out_file).unwrap(), "before\nafter\nagain\n");
    // Truncate, the default, empties it first.
    let out = run_with("srun", &e.c.url, &["-D", &dir, "-o", "log.out", "echo", "only"], &[]);
    assert!(out.status.success());
    assert_eq!(std::fs::read_to_string(&out_file).unwrap(), "only\n");
    let out = run_with("srun", &e.c.url, &["-D", &dir, "-v", "-N2", "-n3", "true"], &[]);
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "{err}");
    for want in [
        "srun: defined options\n",
        "srun: nodes               : 2\n",
        "srun: ntasks              : 3\n",
        "srun: end of defined options\n",
        "nodes(2):`node[01-02]', tasks 3\n",
        "on host node01, 2 tasks: [0,1]\n",
        "on host node02, 1 tasks: [2]\n",
    ] {
        assert!(err.contains(want), "{want:?} in {err}");
    }
}
