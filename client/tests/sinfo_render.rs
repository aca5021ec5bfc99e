//! sinfo's pure half: argument parsing, grouping, Slurm's printf-style
//! format codes and `-O` names, and the `--definition` filter, on fake nodes
//! and partitions (no controller). These live here rather than in sinfo/ to
//! keep its files under 500 lines.

use spur_client::cli::sinfo::{parse, report, sinfo_time};
use spur_client::vocab::txn::format_time;
use spur_proto::v1 as pb;

fn node(name: &str, base: &str, parts: &[&str]) -> pb::Node {
    pb::Node {
        name: name.into(),
        base_state: base.into(),
        cpus: 4,
        memory_mb: 1000,
        weight: 1,
        partitions: parts.iter().map(|p| p.to_string()).collect(),
        ..Default::default()
    }
}

fn drained(name: &str, reason: &str, time_ms: i64) -> pb::Node {
    pb::Node {
        drain: true,
        reason: reason.into(),
        reason_user: "root".into(),
        reason_uid: Some(0),
        reason_time_ms: time_ms,
        ..node(name, "IDLE", &["batch"])
    }
}

fn part(name: &str, default: bool) -> pb::Partition {
    pb::Partition { name: name.into(), is_default: default, state: "UP".into(), ..Default::default() }
}

fn run(args: &str, nodes: &[pb::Node], parts: &[pb::Partition]) -> String {
    let argv: Vec<String> = shell_words(args);
    report(&parse(&argv).unwrap(), nodes, parts).unwrap()
}

/// Splits on spaces, keeping '...' together (enough for these tests).
fn shell_words(s: &str) -> Vec<String> {
    let mut out = vec![];
    for (i, chunk) in s.split('\'').enumerate() {
        if i % 2 == 1 {
            out.push(chunk.to_string());
        } else {
            out.extend(chunk.split_whitespace().map(String::from));
        }
    }
    out
}

fn cluster() -> (Vec<pb::Node>, Vec<pb::Partition>) {
    let busy = pb::Node { alloc_cpus: 4, running_jobs: 1, ..node("n4", "ALLOCATED", &["batch"]) };
    let nodes = vec![
        node("n1", "IDLE", &["batch"]),
        node("n2", "IDLE", &["batch"]),
        drained("n3", "hw fault", 1_700_000_000_000),
        busy,
    ];
    (nodes, vec![part("batch", true), part("gpu", false)])
}

#[test]
fn default_view_groups_by_partition_and_state_like_sinfo() {
    let (nodes, parts) = cluster();
    let out = run("", &nodes, &parts);
    // Partition order, then state highest first (drain, alloc, idle), as sinfo's "#P,-t".
    let want = "\
PARTITION AVAIL  TIMELIMIT  NODES  STATE NODELIST
batch*       up   infinite      1  drain n3
batch*       up   infinite      1  alloc n4
batch*       up   infinite      2   idle n[1-2]
gpu          up   infinite      0    n/a 
";
    assert_eq!(out, want);
    assert_eq!(run("-h", &nodes, &parts), want.split_once('\n').unwrap().1);
}

#[test]
fn partition_column_grows_to_fit_and_inactive_reads_inact() {
    let mut p = part("a-very-long-partition", true);
    p.state = "INACTIVE".into();
    p.max_time_minutes = Some(30);
    let out = run("", &[node("x1", "IDLE", &["a-very-long-partition"])], &[p]);
    assert_eq!(out.lines().nth(1).unwrap(), "a-very-long-partition* inact      30:00      1   idle x1");
    assert_eq!(out.lines().next().unwrap(), "PARTITION              AVAIL  TIMELIMIT  NODES  STATE NODELIST");
}

#[test]
fn times_follow_sinfo_not_scontrol() {
    assert_eq!(sinfo_time(30), "30:00");
    assert_eq!(sinfo_time(240), "4:00:00");
    assert_eq!(sinfo_time(1440), "1-00:00:00");
    assert_eq!(sinfo_time(2 * 1440 + 90), "2-01:30:00");
}

#[test]
fn list_reasons_groups_identical_reason_user_and_time() {
    let nodes = vec![
        drained("n1", "hw fault", 1_700_000_000_000),
        drained("n2", "hw fault", 1_700_000_000_000),
        drained("n3", "hw fault", 1_700_000_999_000),
        drained("n4", "a reason much longer than twenty characters", 1_700_000_000_000),
        node("n5", "IDLE", &["batch"]),
    ];
    let out = run("-R", &nodes, &[part("batch", true)]);
    let t1 = format_time(1_700_000_000_000);
    let t2 = format_time(1_700_000_999_000);
    let want = format!(
        "REASON               USER      TIMESTAMP           NODELIST\n\
         hw fault             root      {t1} n[1-2]\n\
         hw fault             root      {t2} n3\n\
         a reason much longer root      {t1} n4\n"
    );
    assert_eq!(out, want);
}

#[test]
fn node_view_is_one_line_per_node_per_partition() {
    let nodes = vec![node("compute10", "IDLE", &["batch", "debug"]), node("compute9", "MIXED", &["batch"])];
    let out = run("-N", &nodes, &[part("batch", true), part("debug", false)]);
    let want = "\
NODELIST   NODES PARTITION STATE 
compute9       1    batch* mix   
compute10      1    batch* idle  
compute10      1     debug idle  
";
    assert_eq!(out, want);
}

#[test]
fn format_codes_widths_and_justification() {
    let (nodes, parts) = cluster();
    let out = run("-o '%10P|%.5D|%c|%m|%C|%F|%E|%U|%T' -p batch -t drain,alloc", &nodes, &parts);
    let want = "\
PARTITION |NODES|CPUS|MEMORY|CPUS(A/I/O/T)|NODES(A/I/O/T)|REASON|USER|STATE
batch*    |    1|4|1000|0/0/4/4|0/0/1/1|hw fault|root(0)|drained
batch*    |    1|4|1000|4/0/0/4|1/0/0/1|none|Unknown|allocated
";
    assert_eq!(out, want);
}

#[test]
fn sizes_show_min_plus_unless_exact() {
    let big = pb::Node { cpus: 8, ..node("n2", "IDLE", &["batch"]) };
    let nodes = vec![node("n1", "IDLE", &["batch"]), big];
    let parts = [part("batch", true)];
    assert_eq!(run("-h -o '%c %D %N'", &nodes, &parts), "4+ 2 n[1-2]\n");
    assert_eq!(run("-h -e -o '%c %D %N'", &nodes, &parts), "4 1 n1\n8 1 n2\n");
}

#[test]
fn nodes_in_two_partitions_count_once_without_a_partition_field() {
    let nodes = vec![node("n1", "IDLE", &["a", "b"]), node("n2", "IDLE", &["b"])];
    let parts = [part("a", true), part("b", false)];
    assert_eq!(run("-h -o '%t %D %N'", &nodes, &parts), "idle 2 n[1-2]\n");
    assert_eq!(run("-h -o '%R %D'", &nodes, &parts), "a 1\nb 2\n");
}

#[test]
fn a_cut_default_partition_keeps_its_star() {
    let out = run("-h -o '%5P|%.4R'", &[node("n1", "IDLE", &["abcdefgh"])], &[part("abcdefgh", true)]);
    assert_eq!(out, "abcd*|abcd\n");
}

#[test]
fn state_filters_follow_slurm() {
    let (nodes, parts) = cluster();
    // `idle` excludes drained idle nodes; `dr` is a prefix of drain; empty partitions hide.
    assert_eq!(run("-h -t idle -o %N", &nodes, &parts), "n[1-2]\n");
    assert_eq!(run("-h -t dr -o %N", &nodes, &parts), "n3\n");
    assert_eq!(run("-h -t all -o %N", &nodes, &parts), "n[1-4]\n");
    assert_eq!(run("-h -n n[1,4] -o %N", &nodes, &parts), "n[1,4]\n");
    assert_eq!(run("-h -n n[1,4] -o '%t %N'", &nodes, &parts), "alloc n4\nidle n1\n");
}

#[test]
fn json_has_node_and_partition_fields() {
    let (nodes, parts) = cluster();
    let v: serde_json::Value = serde_json::from_str(&run("--json -t drain", &nodes, &parts)).unwrap();
    assert_eq!(v["nodes"].as_array().unwrap().len(), 1);
    assert_eq!(v["nodes"][0]["name"], "n3");
    assert_eq!(v["nodes"][0]["state"], "IDLE+DRAIN");
    assert_eq!(v["nodes"][0]["reason_user"], "root");
    assert_eq!(v["partitions"][0]["default"], true);
    let v: serde_json::Value = serde_json::from_str(&run("--json -p gpu", &nodes, &parts)).unwrap();
    assert_eq!(v["nodes"].as_array().unwrap().len(), 0);
    assert_eq!(v["partitions"].as_array().unwrap().len(), 1);
}

#[test]
fn bad_arguments_are_named() {
    let err = |s: &str| parse(&shell_words(s)).unwrap_err();
    assert!(err("--bogus").contains("'--bogus'"));
    assert!(err("-Nx").contains("'-x'"));
    assert!(err("-t idle,sleepy").contains("'sleepy'"));
    assert!(err("-n node[3-1]").contains("backwards"));
    assert!(err("stray").contains("'stray'"));
    assert!(err("-p").contains("needs a value"));
    let a = parse(&shell_words("-o %j")).unwrap();
    assert!(report(&a, &[], &[]).unwrap_err().contains("'%j'"));
}

/// [`cluster`] with provisioner definitions: n1 and n2 in `cpu`, n4 in `cpu` and `burst`, n3 in none.
fn defined() -> (Vec<pb::Node>, Vec<pb::Partition>) {
    let (mut nodes, parts) = cluster();
    for (n, defs) in nodes.iter_mut().zip([&["cpu"][..], &["cpu"], &[], &["cpu", "burst"]]) {
        n.definitions = defs.iter().map(|d| d.to_string()).collect();
    }
    (nodes, parts)
}

#[test]
fn long_format_names_take_slurms_spelling_and_the_definition_field() {
    let (nodes, parts) = defined();
    // Lines split on identical fields: the definitions, as on any other node property;
    // they sort as sinfo's "#P,-t" (drained n3 first). Fields touch unless a width leaves room.
    let out = run("-O Definition:12,NodeList:9,Nodes:.5", &nodes, &parts);
    let want = "\
DEFINITION  NODELIST NODES
(null)      n3           1
cpu,burst   n4           1
cpu         n[1-2]       2
";
    assert_eq!(out, want);
    let out = run("-h -N -O NodeList:4,definition,StateCompact:6", &nodes, &parts);
    assert_eq!(
        out,
        format!(
            "n1  {:<20}idle  \nn2  {:<20}idle  \nn3  {:<20}drain \nn4  {:<20}alloc \n",
            "cpu", "cpu", "(null)", "cpu,burst"
        )
    );
    // The last of -o and -O wins; an unknown name is refused by name.
    assert_eq!(run("-h -O Definition -o %D", &nodes, &parts), "4\n");
    let a = parse(&shell_words("-O NodeList,Nope")).unwrap();
    assert_eq!(report(&a, &nodes, &parts).unwrap_err(), "--Format: unknown field 'Nope' (see sinfo --help)");
}

#[test]
fn definition_filter_keeps_the_nodes_of_any_named_definition() {
    let (nodes, parts) = defined();
    assert_eq!(run("-h --definition=burst -o %N", &nodes, &parts), "n4\n");
    assert_eq!(run("-h --definition burst,cpu -o %N", &nodes, &parts), "n[1-2,4]\n");
    // A partition left with no node is hidden, as with any node filter.
    assert_eq!(run("-h --definition=cpu -o '%P %D'", &nodes, &parts), "batch* 3\n");
    assert_eq!(run("-h --definition=nosuch", &nodes, &parts), "");
    let v: serde_json::Value =
        serde_json::from_str(&run("--json --definition=burst", &nodes, &parts)).unwrap();
    assert_eq!(v["nodes"].as_array().unwrap().len(), 1);
}
