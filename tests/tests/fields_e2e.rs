//! Issue 37's output fields and keywords through the real binaries: Slurm's
//! squeue fields with Spur's data or Slurm's unset value, scontrol's and
//! sacctmgr's keyword prefixes, a Slurm key accepted with one warning, and
//! the `--yaml` documents.

use spur_tests::cluster::Cluster;
use spur_tests::config::ClusterToml;
use spur_tests::proc::run;

fn start() -> Cluster {
    let conf = ClusterToml::new()
        .heartbeat(1)
        .node_timeout(5)
        .interval(1)
        .nodes("node[01-02]", 4, 8192)
        .partition("batch", "node[01-02]");
    Cluster::start(&conf.build(), &[], "node[01-02]", 2)
}

#[test]
fn slurm_fields_and_keyword_prefixes_work_against_a_controller() {
    let e = start();
    // `ad` is add, `acc=` the account key, `defaultq=` defaultqos: unambiguous prefixes.
    e.ok("sacctmgr", "-i add qos name=normal");
    e.ok("sacctmgr", "-i ad user name=root acc=ml qos=normal defaultq=normal");
    assert_eq!(e.ok("sacctmgr", "sh qos -nP format=Name").trim(), "normal");

    let id = e.sbatch(&["--hold", "--wckey=proj", "--nice=5", "-t", "10", "--wrap=true"]);
    let out =
        e.ok("squeue", &format!("-h -j {id} -O WCKey:0|,Nice:0|,BatchFlag:0|,HetJobID:0|,BurstBuffer:0"));
    assert_eq!(out.trim(), "proj|5|1|N/A|(null)");
    assert_eq!(e.ok("squeue", &format!("-h -j {id} -o %A|%w|%y|%z")).trim(), format!("{id}|proj|5|*:*:*"));

    // `upd`, `job=`, `timel=`: Slurm's abbreviations, read by the one rule.
    e.ok("scontrol", &format!("upd job={id} timel=7"));
    assert_eq!(e.field(id, "%l"), "7:00");
    // A Slurm key Spur keeps fixed: exit 0, one warning, nothing changed.
    let out = run("scontrol", &e.c.url, &["update", &format!("JobId={id}"), "StdOut=/tmp/x"]);
    assert!(out.status.success());
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(err, "scontrol: warning: update job: StdOut has no effect: fixed at submission in Spur\n");
    let err = e.fails("scontrol", &["update", &format!("JobId={id}"), "re=1"]);
    assert!(err.contains("'re' is ambiguous"), "{err}");

    let yaml = e.ok("sinfo", "--yaml");
    assert!(yaml.contains("sinfo:") && yaml.contains("meta:"), "{yaml}");
    let yaml = e.ok("squeue", &format!("--yaml -j {id}"));
    assert!(yaml.contains(&format!("job_id: {id}")), "{yaml}");
    e.ok("scancel", &id.to_string());
}
