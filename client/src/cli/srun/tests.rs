//! srun's options and the requests they make (the parent module's pure half).

use super::*;

fn v(s: &[&str]) -> Vec<String> {
    s.iter().map(|s| s.to_string()).collect()
}

fn kv(pairs: &[(&str, &str)]) -> Vec<(String, String)> {
    pairs.iter().map(|(k, v)| (k.to_string(), v.to_string())).collect()
}

#[test]
fn options_stop_at_the_command_and_the_environment_gives_defaults() {
    let env = kv(&[("SLURM_JOB_ID", "12"), ("SLURM_NTASKS", "4"), ("SLURM_CPUS_PER_TASK", "2")]);
    let a = parse(&v(&["-l", "hostname", "-n", "2"]), &env).unwrap();
    assert_eq!((a.jobid, a.spec.ntasks, a.spec.cpus_per_task, a.label), (Some(12), 4, 2, true));
    assert_eq!(a.argv, ["hostname", "-n", "2"]);
    let a = parse(&v(&["-n2", "-c", "1", "-K", "--", "sh", "-c", "x"]), &env).unwrap();
    assert_eq!((a.spec.ntasks, a.spec.cpus_per_task, a.kill_on_bad_exit), (2, 1, Some(true)));
    assert_eq!(a.argv, ["sh", "-c", "x"]);
    assert_eq!(parse(&v(&["-K0", "true"]), &[]).unwrap().kill_on_bad_exit, Some(false));
    assert_eq!(parse(&v(&["--kill-on-bad-exit=1", "true"]), &[]).unwrap().kill_on_bad_exit, Some(true));
    assert_eq!(parse(&v(&["true", "-K0"]), &[]).unwrap().argv, ["true", "-K0"], "the command's own");
    let line = parse(&v(&["-n2", "echo", "two words"]), &[]).unwrap().spec.submit_line;
    assert_eq!(line, "srun -n2 echo two words", "Slurm's SubmitLine, for the allocation srun makes");
    let e = |args: &[&str]| parse(&v(args), &[]).err().unwrap();
    assert_eq!(e(&["-n", "x", "true"]), "--ntasks: 'x' is not a positive whole number");
    assert_eq!(e(&["--bogus", "true"]), "unrecognised option '--bogus'");
    assert!(e(&["-n", "2"]).starts_with("no command given"));
    assert!(e(&["--mem=lots", "true"]).starts_with("--mem: "));
    assert!(parse(&v(&["--help"]), &[]).unwrap().help);
}

#[test]
fn the_step_request_carries_the_shape_the_environment_and_node_side_files() {
    let dir = tempfile::tempdir().unwrap();
    let bin = dir.path().join("bin");
    std::fs::create_dir(&bin).unwrap();
    let prog = bin.join("tool");
    std::fs::write(&prog, "#!/bin/sh\n").unwrap();
    use std::os::unix::fs::PermissionsExt;
    std::fs::set_permissions(&prog, std::fs::Permissions::from_mode(0o755)).unwrap();
    let env = kv(&[("PATH", &bin.display().to_string()), ("HOME", "/h"), ("SLURM_JOB_ID", "7")]);
    let a = parse(&v(&["-n", "3", "-o", "out-%t.txt", "--export=NONE", "tool", "x"]), &env).unwrap();
    let r = step(&a, &env, dir.path(), 7, false).unwrap();
    assert_eq!((r.job_id, r.ntasks, r.nodes), (7, 3, 0));
    assert_eq!(r.argv, [prog.display().to_string(), "x".to_string()]);
    assert_eq!(r.stdout_path, format!("{}/out-%t.txt", dir.path().display()));
    assert!(r.env.iter().all(|kv| kv.key.starts_with("SLURM_")), "--export=NONE");
    let a = parse(&v(&["-o", "all-%j.txt", "nosuch"]), &env).unwrap();
    let r = step(&a, &env, dir.path(), 7, true).unwrap();
    assert_eq!((r.stdout_path.as_str(), r.argv[0].as_str(), r.release), ("", "nosuch", true));
    assert!(on_nodes("%N.log") && on_nodes("x-%3t") && !on_nodes("%j-%s.out") && !on_nodes("100%%"));
    let now = chrono::Local::now();
    let a = parse(&v(&["-N2", "-J", "hi", "--mem-per-cpu=1G", "hostname"]), &[]).unwrap();
    let spec = allocation(&a, &env, dir.path(), now).unwrap();
    assert_eq!(spec.mem_per_cpu_mb, 1024, "the family's options reach srun's allocation");
    assert_eq!(
        (spec.num_nodes, spec.name.as_str(), spec.allocation, spec.requeue),
        (2, "hi", true, Some(false))
    );
    assert_eq!(name(&parse(&v(&["/bin/hostname"]), &[]).unwrap()), "hostname");
    // -r: from the job's node N, -N of them.
    let job = kv(&[("SLURM_JOB_ID", "7"), ("SLURM_JOB_NODELIST", "n[1-4]")]);
    let rel =
        |args: &[&str]| step(&parse(&v(args), &job).unwrap(), &job, dir.path(), 7, false).map(|r| r.nodelist);
    assert_eq!(rel(&["-r", "1", "-N2", "true"]).unwrap(), "n[2-3]");
    assert_eq!(rel(&["-r3", "-N2", "true"]).unwrap(), "n4", "as many as there are");
    assert!(rel(&["-r", "4", "true"]).unwrap_err().contains("the job has 4 node(s)"));
    assert!(rel(&["-r", "0", "-w", "n1", "true"]).unwrap_err().contains("cannot be given with --nodelist"));
}
