//! sbatch's pure half: options, `#SBATCH` directives and their override by the
//! command line, `--wrap`, defaults (name, workdir, output path), and errors
//! that name the offending argument. Scripts come from a fake reader.

use spur_client::cli::sbatch::{Prepared, Submission, accepted, directives, prepare};

fn expected_start(r: &spur_proto::v1::TestSubmitResponse) -> String {
    spur_client::cli::family::expected_start("sbatch", r)
}
use spur_client::cli::submit_opts::parse_gres;
use spur_proto::v1 as pb;

fn parse_mem(v: &str) -> Result<u64, String> {
    spur_client::cli::submit_opts::parse_mem("mem", v)
}
use std::path::Path;

const SCRIPT: &str = "#!/bin/bash
# a comment between directives is fine
#SBATCH -J fromscript
#SBATCH --account=ml --partition gpu   # trailing comment
#SBATCH -N 2
#SBATCH --time=1-00:00:00
#SBATCH --mem=4G
#SBATCH --gres=gpu:2
#SBATCH --comment=\"two words\"

srun hostname
#SBATCH --qos=ignored-after-the-first-command
";

fn args(words: &[&str]) -> Vec<String> {
    words.iter().map(|w| w.to_string()).collect()
}

/// Runs `prepare` with `/work` as cwd; `script.sh` reads SCRIPT, stdin reads `stdin`.
fn submit_with(words: &[&str], stdin: &str) -> Result<Submission, String> {
    let read = |p: Option<&str>| match p {
        Some("script.sh") | Some("/abs/script.sh") => Ok(SCRIPT.to_string()),
        Some("bad.sh") => Ok("echo no shebang\n".to_string()),
        Some("dos.sh") => Ok("#!/bin/sh\r\necho hi\r\n".to_string()),
        Some(other) => Err(format!("cannot read script '{other}': No such file or directory")),
        None => Ok(stdin.to_string()),
    };
    match prepare(&args(words), Path::new("/work"), read)? {
        Prepared::Submit(s) => Ok(*s),
        Prepared::Help => Err("help".into()),
    }
}

fn submit(words: &[&str]) -> Result<Submission, String> {
    submit_with(words, "")
}

#[test]
fn directives_give_defaults() {
    let s = submit(&["script.sh"]).unwrap().spec;
    assert_eq!(s.name, "fromscript");
    assert_eq!((s.account.as_str(), s.partition.as_str()), ("ml", "gpu"));
    assert_eq!(s.num_nodes, 2);
    assert_eq!(s.time_limit_minutes, Some(1440));
    assert_eq!(s.mem_mb, 4096);
    assert_eq!(s.gpus_per_node, 2);
    assert_eq!(s.comment, "two words");
    // Directives after the first command are not read, as in Slurm.
    assert_eq!(s.qos, "");
    assert_eq!(s.script, SCRIPT);
    assert_eq!(s.workdir, "/work");
    assert_eq!(s.stdout_path, "/work/slurm-%j.out");
    assert_eq!(s.stderr_path, "");
}

#[test]
fn the_command_line_overrides_directives() {
    let s =
        submit(&["-J", "cli", "-N1", "--time=30", "-p", "debug", "--mem", "512", "script.sh"]).unwrap().spec;
    assert_eq!(s.name, "cli");
    assert_eq!(s.num_nodes, 1);
    assert_eq!(s.time_limit_minutes, Some(30));
    assert_eq!(s.partition, "debug");
    assert_eq!(s.mem_mb, 512);
    assert_eq!(s.account, "ml", "not overridden, so the directive stays");
}

#[test]
fn options_stop_at_the_script_name() {
    // `-N 3` after the script is the script's arguments ($1, $2), not sbatch's.
    let s = submit(&["-N1", "script.sh", "-N", "3", "two words"]).unwrap().spec;
    assert_eq!(s.num_nodes, 1);
    assert_eq!(s.script_args, ["-N", "3", "two words"]);
    assert_eq!(s.command, "/work/script.sh", "Slurm's Command=: the script's path, absolute");
    assert_eq!(s.submit_line, "sbatch -N1 script.sh -N 3 two words", "Slurm's SubmitLine: the words joined");
    assert_eq!(submit(&["/abs/script.sh"]).unwrap().spec.command, "/abs/script.sh");
    let s = submit_with(&[], "#!/bin/sh\ntrue\n").unwrap().spec;
    assert!(s.script_args.is_empty() && s.command.is_empty(), "a script from stdin has no path");
}

#[test]
fn wrap_makes_a_shell_script() {
    let sub = submit(&["--wrap=echo hi", "-t", "UNLIMITED", "--parsable", "-H", "--no-requeue"]).unwrap();
    let s = &sub.spec;
    assert_eq!(s.script, "#!/bin/sh\necho hi\n");
    assert_eq!(s.name, "wrap");
    assert_eq!(s.time_limit_minutes, None);
    assert!(s.hold && sub.parsable);
    assert_eq!(s.requeue, Some(false));
    let err = submit(&["--wrap", "x", "extra"]).unwrap_err();
    assert!(err.contains("script arguments ('extra')") && err.contains("--wrap"), "{err}");
    assert!(submit(&["--wrap=x"]).unwrap().spec.command.is_empty());
    assert_eq!(submit(&["-v", "-v", "--wrap=x"]).unwrap().verbose, 2, "-v counts, for the options table");
}

#[test]
fn stdin_scripts_and_paths() {
    let sub = submit_with(&["-D", "sub", "-o", "out-%j.txt", "-e", "/tmp/err"], "#!/bin/sh\ntrue\n").unwrap();
    let s = &sub.spec;
    assert_eq!(s.name, "sbatch");
    assert_eq!(s.workdir, "/work/sub");
    assert_eq!(s.stdout_path, "/work/sub/out-%j.txt");
    assert_eq!(s.stderr_path, "/tmp/err");
    assert_eq!(submit(&["/abs/script.sh"]).unwrap().spec.name, "fromscript");
    assert_eq!(submit(&["-D", "/scratch", "/abs/script.sh"]).unwrap().spec.workdir, "/scratch");
}

#[test]
fn the_rest_of_the_options() {
    let s = submit(&[
        "-A",
        "a",
        "-q",
        "high",
        "-n",
        "8",
        "-c4",
        "-w",
        "n[1-2]",
        "-x",
        "n3",
        "--priority=7",
        "--exclusive",
        "-L",
        "matlab:2,ansys",
        "--requeue",
        "--gpus-per-node=1",
        "--comment",
        "c",
        "script.sh",
    ])
    .unwrap()
    .spec;
    assert_eq!((s.ntasks, s.cpus_per_task), (8, 4));
    assert_eq!((s.nodelist.as_str(), s.exclude.as_str()), ("n[1-2]", "n3"));
    assert_eq!(s.priority, Some(7));
    assert!(s.exclusive);
    assert_eq!(s.licenses, "matlab:2,ansys");
    assert_eq!(s.requeue, Some(true));
    assert_eq!(s.gpus_per_node, 1);
    assert_eq!((s.qos.as_str(), s.comment.as_str()), ("high", "c"));
    assert!(matches!(prepare(&args(&["--help"]), Path::new("/"), |_| Err("no".into())), Ok(Prepared::Help)));
}

#[test]
fn bad_values_are_named() {
    let err = |w: &[&str]| submit(w).unwrap_err();
    assert!(err(&["--bogus", "script.sh"]).contains("'--bogus'"));
    assert!(err(&["-Z", "script.sh"]).contains("'-Z'"));
    assert!(err(&["-N", "0", "script.sh"]).contains("--nodes: '0'"));
    assert!(err(&["-N", "2-4", "script.sh"]).contains("ranges"));
    assert!(err(&["-n", "x", "script.sh"]).contains("--ntasks: 'x'"));
    assert!(err(&["-t", "10:75", "script.sh"]).contains("'10:75'"));
    assert!(err(&["--mem", "3X", "script.sh"]).contains("--mem: '3X'"));
    assert!(err(&["--gres=gpu:a100:2", "script.sh"]).contains("types"));
    assert!(err(&["--gres=fpga:1", "script.sh"]).contains("'fpga:1'"));
    assert!(err(&["-w", "n[3-1]", "script.sh"]).contains("--nodelist"));
    assert!(err(&["--priority=-1", "script.sh"]).contains("--priority: '-1'"));
    assert!(err(&["-L", "lic:0", "script.sh"]).contains("'lic:0'"));
    // Slurm's `--exclusive=user|mcs|topo`: Spur's exclusive is the whole node.
    assert!(submit(&["--exclusive=user", "script.sh"]).unwrap().spec.exclusive);
    assert!(err(&["--parsable=1", "script.sh"]).contains("takes no value"));
    assert!(err(&["--time"]).contains("needs a value"));
    assert!(err(&["missing.sh"]).contains("'missing.sh'"));
    assert!(err(&["bad.sh"]).contains("#!"));
    assert!(err(&["dos.sh"]).contains("DOS"));
    assert!(submit_with(&[], "").unwrap_err().contains("empty"));
}

#[test]
fn counts_and_time_limits_out_of_range_name_their_option() {
    let err = |w: &[&str]| submit(w).unwrap_err();
    // u32 holds it, and the controller judges the CPUs it makes.
    let s = submit(&["-n", "2147483649", "-c", "2", "script.sh"]).unwrap().spec;
    assert_eq!((s.ntasks, s.cpus_per_task), (2_147_483_649, 2));
    for (opt, name) in [("-n", "--ntasks"), ("-c", "--cpus-per-task"), ("-N", "--nodes")] {
        let e = err(&[opt, "4294967296", "script.sh"]);
        assert!(e.contains(&format!("{name}: '4294967296' is out of range (at most 4294967295)")), "{e}");
    }
    let e = err(&["-t", "4294967294", "script.sh"]);
    assert!(e.starts_with("--time: ") && e.contains("largest time limit, 4294967293 minutes"), "{e}");
    let e = err(&["-t", "18446744073709551615", "script.sh"]);
    assert!(e.contains("--time: '18446744073709551615'"), "{e}");
    assert_eq!(
        submit(&["-t", "4294967293", "script.sh"]).unwrap().spec.time_limit_minutes,
        Some(4_294_967_293)
    );
}

#[test]
fn bad_directives_name_their_line() {
    let script = "#!/bin/sh\n#SBATCH -N 1\n#SBATCH --nodes=lots\necho\n";
    let e = prepare(&args(&[]), Path::new("/"), |_| Ok(script.to_string())).unwrap_err();
    assert!(e.contains("line 3") && e.contains("'lots'"), "{e}");
    let script = "#!/bin/sh\n#SBATCH --wrap=x\n";
    let e = prepare(&args(&[]), Path::new("/"), |_| Ok(script.to_string())).unwrap_err();
    assert!(e.contains("line 2") && e.contains("command line"), "{e}");
    let script = "#!/bin/sh\n#SBATCH -N 1 stray\n";
    let e = prepare(&args(&[]), Path::new("/"), |_| Ok(script.to_string())).unwrap_err();
    assert!(e.contains("'stray'"), "{e}");
}

#[test]
fn directive_words_follow_slurm_quoting() {
    let d = directives(
        "#!/bin/sh\n#SBATCH --comment=\"a b\" -J x\\ y\n#SBATCHX -N 9\n# SBATCH -N 8\n\n#SBATCH -n 2\n",
    );
    assert_eq!(d, vec![(2, args(&["--comment=a b", "-J", "x y"])), (6, args(&["-n", "2"]))]);
}

#[test]
fn sizes_and_gres() {
    assert_eq!(parse_mem("100"), Ok(100));
    assert_eq!(parse_mem("2048K"), Ok(2));
    assert_eq!(parse_mem("1k"), Ok(1), "rounded up to a whole MB");
    assert_eq!(parse_mem("2g"), Ok(2048));
    assert_eq!(parse_mem("1T"), Ok(1 << 20));
    assert!(parse_mem("99999999999999999T").is_err());
    assert!(parse_mem("").is_err() && parse_mem("G").is_err());
    assert_eq!(parse_gres("gpu"), Ok(1));
    assert_eq!(parse_gres("gres/gpu:4"), Ok(4));
    assert_eq!(parse_gres("none"), Ok(0));
}

#[test]
fn output_lines_match_slurm() {
    assert_eq!(accepted(42, false, None), "Submitted batch job 42\n");
    assert_eq!(accepted(42, true, None), "42\n");
    // With -M Slurm names the cluster the job went to.
    assert_eq!(accepted(42, false, Some("spur")), "Submitted batch job 42 on cluster spur\n");
    assert_eq!(accepted(42, true, Some("spur")), "42;spur\n");
}

#[test]
fn test_only_says_when_and_where_or_unknown() {
    let nodes = vec!["node01".into(), "node02".into()];
    let r = pb::TestSubmitResponse { job_id: 7, start_ms: 0, nodes, cpus: 8, partition: "batch".into() };
    assert_eq!(
        expected_start(&r),
        "sbatch: Job 7 to start at Unknown using 8 processors on nodes node[01-02] in partition batch"
    );
    let r = pb::TestSubmitResponse { job_id: 7, cpus: 1, partition: "batch".into(), ..Default::default() };
    assert_eq!(expected_start(&r), "sbatch: Job 7 to start at Unknown using 1 processors in partition batch");
    assert!(submit(&["--test-only", "--wrap=true"]).unwrap().test_only);
}

#[test]
fn clusters_are_an_option_and_a_directive() {
    assert_eq!(submit(&["-M", "spur,all", "--wrap=true"]).unwrap().clusters, ["spur", "all"]);
    assert_eq!(submit(&["--clusters=spur", "--wrap=true"]).unwrap().clusters, ["spur"]);
    let sub = submit_with(&["--parsable"], "#!/bin/sh\n#SBATCH -M spur\ntrue\n").unwrap();
    assert_eq!((sub.clusters, sub.parsable), (vec!["spur".to_string()], true));
    assert!(submit(&["--wrap=true"]).unwrap().clusters.is_empty(), "no -M: no cluster in the reply");
    let e = submit(&["-M", "", "--wrap=true"]).unwrap_err();
    assert_eq!(e, "--clusters: '' names no cluster");
    let e = submit_with(&[], "#!/bin/sh\n#SBATCH --clusters=,\ntrue\n").unwrap_err();
    assert_eq!(e, "#SBATCH on line 2: --clusters: ',' names no cluster");
}

#[test]
fn license_requests_take_plugin_arguments_and_name_the_option_when_bad() {
    let s = submit(&["--license=flat:2,natural:1", "--wrap=true"]).unwrap().spec;
    assert_eq!(s.licenses, "flat:2,natural:1");
    let s = submit(&["-L", "qpu:1[mode=fast,shots=1000]", "--wrap=true"]).unwrap().spec;
    assert_eq!(s.licenses, "qpu:1[mode=fast,shots=1000]");
    let e = submit(&["-L", "qpu:1[mode=a,mode=b]", "--wrap=true"]).unwrap_err();
    assert_eq!(e, "--licenses: 'qpu:1[mode=a,mode=b]': plugin argument 'mode' is given twice");
    let e = submit(&["-L", "flat:0", "--wrap=true"]).unwrap_err();
    assert_eq!(e, "--licenses: 'flat:0': count '0' is not a whole number above 0");
}

#[test]
fn uid_and_gid_go_to_the_controller_which_decides() {
    // Sent as given (a name or a number); the controller refuses them below Operator.
    let s = submit(&["--uid=alice", "--gid", "1001", "--wrap=true"]).unwrap().spec;
    assert_eq!((s.as_user.as_str(), s.as_group.as_str()), ("alice", "1001"));
    let s = submit_with(&[], "#!/bin/sh\n#SBATCH --uid=0\ntrue\n").unwrap().spec;
    assert_eq!((s.as_user.as_str(), s.as_group.as_str()), ("0", ""));
    assert_eq!(submit(&["--uid= ", "--wrap=true"]).unwrap_err(), "--uid: needs a user name or number");
    assert_eq!(submit(&["--gid=", "--wrap=true"]).unwrap_err(), "--gid: needs a group name or number");
}
