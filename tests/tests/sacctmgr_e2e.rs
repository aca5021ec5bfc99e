//! sacctmgr end to end: the real spurctld and the real `spur` binary under its
//! `sacctmgr` name, on loopback, with the spec's own example commands.

use spur_tests::db::{Backend, fresh_url};
use spur_tests::proc::{Controller, conf, fails, ok, run};

const SPEC_EXAMPLES: &[&str] = &[
    "add account name=research description=Research organization=science fairshare=100",
    "add account name=ml parent=research fairshare=50 grptres=gres/gpu=16",
    "modify account name=ml set fairshare=80",
    "add qos name=normal",
    "add qos name=highprio priority=100 maxjobsperuser=8 maxwall=1-00:00:00 maxtresperjob=node=2,cpu=64 grptres=gres/gpu=8 preemptmode=cancel",
    "modify qos name=highprio set priority=120 usagefactor=1.5",
    "add user name=alice account=ml qos=highprio,normal defaultqos=highprio",
    "add user name=bob account=research adminlevel=Admin",
    "add user name=carol account=ml maxjobs=4 maxsubmitjobs=8 maxwall=1-00:00:00 grptres=cpu=64",
    "modify user name=alice account=ml set maxjobs=6",
    "modify qos name=highprio set flags=DenyOnLimit",
    "add qos name=burst priority=100 preemptmode=cancel",
    "add qos name=priority priority=10000 preempt=burst",
    "add qos name=reserved priority=50000",
    "modify qos name=burst set preemptexempttime=120",
    "modify qos name=burst set clearpreemptexempttime=1",
];

fn sacctmgr(url: &str, line: &str) -> String {
    ok("sacctmgr", url, &line.split_whitespace().collect::<Vec<_>>())
}

fn start(backend: Backend) -> Option<(tempfile::TempDir, Controller)> {
    let dir = tempfile::tempdir().unwrap();
    let rt = tokio::runtime::Runtime::new().unwrap();
    let url = rt.block_on(fresh_url(backend, dir.path()))?;
    let c = Controller::start(dir.path(), &conf(&url, ""));
    Some((dir, c))
}

#[test]
fn spec_examples_run_and_show_the_spec_columns() {
    let Some((_d, c)) = start(Backend::Sqlite) else { return };
    for line in SPEC_EXAMPLES {
        sacctmgr(&c.url, &format!("-i {line}"));
    }
    let accounts = sacctmgr(&c.url, "show account");
    let header: Vec<&str> = accounts.lines().next().unwrap().split_whitespace().collect();
    assert_eq!(header, ["Account", "Descr", "Org", "Parent", "Share", "GrpTRES"]);
    let ml: Vec<&str> =
        accounts.lines().find(|l| l.trim_start().starts_with("ml ")).unwrap().split_whitespace().collect();
    assert_eq!(ml, ["ml", "research", "80", "gres/gpu=16"]);

    let users = sacctmgr(&c.url, "-P show user account=ml");
    let lines: Vec<&str> = users.lines().collect();
    assert_eq!(
        lines[0],
        "User|Account|Admin|Default Acct|QOS|Def QOS|MaxJobs|MaxSubmit|GrpSubmit|MaxWall|MaxTRES|GrpTRES"
    );
    assert_eq!(lines[1], "alice|ml|None|ml|highprio,normal|highprio|6|||||");
    assert_eq!(lines[2], "carol|ml|None|ml|||4|8||1-00:00:00||cpu=64");
    let bob = sacctmgr(&c.url, "-n -P show user name=bob format=User,Admin");
    assert_eq!(bob, "bob|Administrator\n");

    let q = sacctmgr(
        &c.url,
        "-n -P show qos name=highprio format=Name,Priority,GrpTRES,MaxTRES,MaxTRESPU,MaxJobsPU,MaxWall,Flags,UsageFactor",
    );
    assert_eq!(q, "highprio|120|gres/gpu=8|cpu=64,node=2||8|1-00:00:00|DenyOnLimit|1.500000\n");
    assert_eq!(sacctmgr(&c.url, "show qos name=burst -n -p format=Name,PreemptExemptTime"), "burst||\n");
}

#[test]
fn scripted_output_flags_anywhere() {
    let Some((_d, c)) = start(Backend::Sqlite) else { return };
    sacctmgr(&c.url, "add qos -i name=a priority=5");
    sacctmgr(&c.url, "add qos name=b -i maxwall=90");
    // -p keeps a trailing delimiter, -P does not; both together give -P.
    assert_eq!(sacctmgr(&c.url, "-n -p show qos format=Name,Priority,MaxWall"), "a|5||\nb|0|01:30:00|\n");
    assert_eq!(sacctmgr(&c.url, "show qos format=Name,Priority,MaxWall -nP"), "a|5|\nb|0|01:30:00\n");
    assert_eq!(sacctmgr(&c.url, "-p show qos -n -P format=name"), "a\nb\n");
    // -p/-P go beyond the spec: tres, user and association too.
    assert!(sacctmgr(&c.url, "show tres -P").starts_with("Type|Name|ID\ncpu||1\n"));
    assert!(sacctmgr(&c.url, "-P show association").starts_with("Cluster|Account|User|"));
    let json: serde_json::Value =
        serde_json::from_str(&sacctmgr(&c.url, "show qos --json format=Name")).unwrap();
    assert_eq!(json, serde_json::json!([{"Name": "a"}, {"Name": "b"}]));
}

#[test]
fn synthetic_normal_only_without_qos_and_filter() {
    let Some((_d, c)) = start(Backend::Sqlite) else { return };
    assert_eq!(
        sacctmgr(&c.url, "-n -P show qos format=Name,PreemptMode,UsageFactor"),
        "normal|off|1.000000\n"
    );
    assert_eq!(sacctmgr(&c.url, "-n -P show qos name=normal"), "");
    sacctmgr(&c.url, "-i add qos name=x");
    assert_eq!(sacctmgr(&c.url, "-n -P show qos format=Name"), "x\n");
}

#[test]
fn bad_input_is_one_line_naming_the_culprit_and_exit_1() {
    let Some((_d, c)) = start(Backend::Sqlite) else { return };
    sacctmgr(&c.url, "-i add qos name=normal");
    sacctmgr(&c.url, "-i add account name=ml");
    let cases: &[(&str, &str)] = &[
        ("add qos name=x maxwall=abc", "maxwall"),
        ("add qos name=x frobnicate=1", "frobnicate"),
        ("add qos priority=5", "name"),
        ("add qos name=x bogus priority=1", "'bogus'"),
        ("add user name=z account=ml qos=normal defaultqos=other", "defaultqos"),
        ("add qos name=y preempt=ghost", "preempt"),
        ("show qos format=Name,Nope", "'Nope'"),
        ("modify qos name=ghost set priority=1", "ghost"),
        ("show widgets", "'widgets'"),
    ];
    for (line, culprit) in cases {
        let err = fails("sacctmgr", &c.url, &line.split_whitespace().collect::<Vec<_>>());
        assert_eq!(err.lines().count(), 1, "{line}: {err}");
        assert!(err.starts_with("sacctmgr: error: ") && err.contains(culprit), "{line}: {err}");
    }
    // Nothing was half-written.
    assert_eq!(sacctmgr(&c.url, "-n -P show qos format=Name"), "normal\n");
}

#[test]
fn unreachable_controller_is_a_clear_error() {
    let out = run("sacctmgr", "http://127.0.0.1:1", &["show", "qos"]);
    assert_eq!(out.status.code(), Some(1));
    assert!(
        String::from_utf8_lossy(&out.stderr).contains("cannot reach the controller at http://127.0.0.1:1")
    );
}

#[test]
fn accounting_off_shows_normal_and_refuses_writes() {
    let dir = tempfile::tempdir().unwrap();
    let c = Controller::start(dir.path(), &conf("", ""));
    assert_eq!(sacctmgr(&c.url, "-n -P show qos format=Name"), "normal\n");
    let err = fails("sacctmgr", &c.url, &["-i", "add", "qos", "name=x"]);
    assert!(err.contains("accounting is disabled"), "{err}");
}

fn restart_loses_nothing(backend: Backend) {
    let Some((_d, mut c)) = start(backend) else { return };
    for line in SPEC_EXAMPLES {
        sacctmgr(&c.url, &format!("-i {line}"));
    }
    let shows = [
        "-P show qos format=Name,Priority,Preempt,PreemptMode,MaxWall,MaxTRES,GrpTRES,Flags",
        "-P show account",
        "-P show user",
        "-P show assoc",
    ];
    let before: Vec<String> = shows.iter().map(|s| sacctmgr(&c.url, s)).collect();
    assert!(c.stop().success(), "SIGTERM must stop spurctld cleanly");
    let c2 = Controller::start_with(&c.config);
    let after: Vec<String> = shows.iter().map(|s| sacctmgr(&c2.url, s)).collect();
    assert_eq!(before, after);
}

#[test]
fn restart_loses_nothing_sqlite() {
    restart_loses_nothing(Backend::Sqlite);
}

#[test]
fn restart_loses_nothing_postgres() {
    restart_loses_nothing(Backend::Postgres);
}

#[test]
fn config_errors_name_key_and_file() {
    let dir = tempfile::tempdir().unwrap();
    for (text, needle) in [
        ("[accounting]\ndatabse_url = \"x\"\n", "databse_url"),
        ("[accounting]\nrequire_qos = \"yes\"\n", "accounting.require_qos"),
    ] {
        let path = dir.path().join("spur.conf");
        std::fs::write(&path, text).unwrap();
        let out = std::process::Command::new(spur_tests::proc::bin("spurctld"))
            .arg("--config")
            .arg(&path)
            .output()
            .unwrap();
        let err = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(1));
        assert!(err.contains(needle) && err.contains("spur.conf"), "{err}");
    }
}
