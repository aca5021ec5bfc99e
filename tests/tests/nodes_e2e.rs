//! On-call node work end to end: a controller and two `spurd` processes
//! hosting node[01-08]; drain, sinfo -R, the txn log, resume, a lost agent,
//! and a refused non-admin drain.

use spur_tests::config::ClusterToml;
use spur_tests::proc::{Agent, Controller, conf, run_with, wait_for};

const KEY: &str = "nodes-test-key-of-at-least-32-bytes";

fn cluster() -> ClusterToml {
    ClusterToml::new()
        .heartbeat(1)
        .node_timeout(3)
        .nodes("node[01-08]", 8, 16384)
        .nodes_default("spare01")
        .partition("batch", "node[01-08]")
        .partition_set("max_time", "1-00:00:00")
        .partition("spare", "spare01")
}

struct Env {
    _dir: tempfile::TempDir,
    c: Controller,
}

fn start(cluster: ClusterToml) -> Env {
    let dir = tempfile::tempdir().unwrap();
    let db = format!("sqlite://{}/spur.db", dir.path().display());
    let c = Controller::start(dir.path(), &conf(&db, &cluster.build()));
    Env { _dir: dir, c }
}

impl Env {
    fn run(&self, personality: &str, line: &str, env: &[(&str, &str)]) -> (bool, String, String) {
        let args = shell_words(line);
        let args: Vec<&str> = args.iter().map(String::as_str).collect();
        let out = run_with(personality, &self.c.url, &args, env);
        (
            out.status.success(),
            String::from_utf8_lossy(&out.stdout).into(),
            String::from_utf8_lossy(&out.stderr).into(),
        )
    }

    fn ok(&self, personality: &str, line: &str) -> String {
        let (ok, out, err) = self.run(personality, line, &[]);
        assert!(ok, "{personality} {line}: {err}");
        out
    }

    fn wait_all_up(&self) {
        wait_for("node[01-08] to register", || {
            let s = self.ok("sinfo", "-h -N -o %N:%t -n node[01-08]");
            (s.lines().count() == 8 && s.lines().all(|l| l.ends_with(":idle"))).then_some(())
        });
    }
}

/// Splits like a shell, honouring double quotes, so tests read like commands.
fn shell_words(line: &str) -> Vec<String> {
    let (mut out, mut cur, mut quoted) = (vec![], String::new(), false);
    for c in line.chars() {
        match c {
            '"' => quoted = !quoted,
            ' ' if !quoted => {
                if !cur.is_empty() {
                    out.push(std::mem::take(&mut cur));
                }
            }
            c => cur.push(c),
        }
    }
    if !cur.is_empty() {
        out.push(cur);
    }
    out
}

#[test]
fn drain_three_nodes_then_resume_with_attribution_and_audit() {
    let e = start(cluster());
    let _a = Agent::start(&e.c.url, "node[01-04]", &[]);
    let _b = Agent::start(&e.c.url, "node[05-08]", &[]);
    e.wait_all_up();

    e.ok("scontrol", r#"update nodename=node[02-04] state=drain reason="disk replacement""#);
    let reasons = e.ok("sinfo", "-R");
    let lines: Vec<&str> = reasons.lines().collect();
    assert!(lines[0].split_whitespace().eq(["REASON", "USER", "TIMESTAMP", "NODELIST"]), "{reasons}");
    assert_eq!(lines.len(), 2, "{reasons}");
    assert!(lines[1].starts_with("disk replacement"), "{reasons}");
    assert!(lines[1].ends_with("node[02-04]"), "{reasons}");
    let me = spur_client::conn::Identity::local().user;
    assert!(lines[1].contains(&me), "the user who drained: {reasons}");

    let show = e.ok("scontrol", "show node node03");
    assert!(show.contains("State=IDLE+DRAIN"), "{show}");
    assert!(show.contains(&format!("Reason=disk replacement [{me}@")), "{show}");
    let states = e.ok("sinfo", "-h -o %t:%N");
    assert!(states.lines().any(|l| l == "drain:node[02-04]"), "{states}");

    let txn = e.ok("sacctmgr", "-n -P show txn Entity=node format=Action,Where,Outcome");
    // One row per request, named by the hostlist as given.
    assert_eq!(txn, "update|node:node[02-04]|success\n");
    let info = e.ok("sacctmgr", "-n -P show txn Entity=node format=Info");
    assert!(info.contains(r#""updated":"node[02-04]""#), "{info}");

    e.ok("scontrol", "update nodename=node[02-04] state=resume");
    assert_eq!(e.ok("sinfo", "-R -h"), "");
    e.wait_all_up();
    assert_eq!(
        e.ok("sacctmgr", "-n -P show txn Entity=node Outcome=success format=Where").lines().count(),
        2
    );
    // Who drained node03: the rows whose hostlist holds it, still one row per request.
    e.ok("scontrol", r#"update nodename=node05,node07 state=drain reason="fan""#);
    let node03 = e.ok("sacctmgr", "-n -P show txn Entity=node Name=node03 format=Action,Where");
    assert_eq!(node03, "update|node:node[02-04]\nupdate|node:node[02-04]\n");
    assert_eq!(e.ok("sacctmgr", "-n -P show txn Name=node07 format=Where"), "node:node05,node07\n");
    assert_eq!(e.ok("sacctmgr", "-n -P show txn Entity=node Name=node06 format=Where"), "");
    assert_eq!(
        e.ok("sacctmgr", "-n -P show txn Entity=node Name=node03 limit=1 format=Where").lines().count(),
        1
    );
}

#[test]
fn bad_updates_are_named_and_audited_as_errors() {
    let e = start(cluster());
    let (ok, _, err) = e.run("scontrol", "update nodename=node[01-02] state=drain", &[]);
    assert!(!ok && err.contains("reason"), "drain needs a reason: {err}");
    let (ok, _, err) = e.run("scontrol", r#"update nodename=node99 state=drain reason="x""#, &[]);
    assert!(!ok && err.contains("node99"), "{err}");
    let (ok, _, err) = e.run("scontrol", r#"update nodename=node[01 state=drain reason="x""#, &[]);
    assert!(!ok && err.contains("unclosed"), "{err}");
    let (ok, _, err) = e.run("scontrol", "update nodename=node05 state=sideways", &[]);
    assert!(ok, "an unknown state falls back to idle: {err}");
    assert!(err.contains("warning") && err.contains("sideways"), "{err}");
    let errors = e.ok("sacctmgr", "-n -P show txn Entity=node Outcome=error format=Where");
    // A hostlist that does not parse is refused by scontrol itself, before any RPC.
    assert_eq!(errors, "node:node[01-02]\nnode:node99\n");
}

#[test]
fn a_lost_agent_sets_its_nodes_down_and_they_return_with_it() {
    let e = start(cluster());
    let a = Agent::start(&e.c.url, "node[01-04]", &[]);
    let _b = Agent::start(&e.c.url, "node[05-08]", &[]);
    e.wait_all_up();
    e.ok("scontrol", r#"update nodename=node04 state=drain reason="keep out""#);
    a.kill();
    // spare01 never registers, so it is Not responding too; look at node[01-08].
    let lost = wait_for("node[01-03] to be Not responding", || {
        let r = e.ok("sinfo", "-R -h -n node[01-08] -o %E|%N");
        r.lines().any(|l| l == "Not responding|node[01-03]").then_some(r)
    });
    assert!(lost.contains("keep out|node04"), "an admin reason is kept: {lost}");
    let show = e.ok("scontrol", "show node node01");
    assert!(show.contains("State=DOWN*"), "{show}");
    let _a2 = Agent::start(&e.c.url, "node[01-04]", &[]);
    wait_for("node[01-03] to return", || {
        let r = e.ok("sinfo", "-R -h -n node[01-08] -o %E|%N");
        (!r.contains("Not responding")).then_some(())
    });
    assert!(e.ok("scontrol", "show node node04").contains("State=IDLE+DRAIN"), "still drained by the admin");
    // System rows are written after the fact, so wait for them rather than race the write.
    wait_for("node01's system rows", || {
        let sys = e.ok("sacctmgr", "-n -P show txn Actor=spurctld format=Where,Source,Info");
        sys.contains("node:node01|system|").then_some(())
    });
}

#[test]
fn a_non_admin_drain_is_refused_and_audited_as_denied() {
    let key_dir = tempfile::tempdir().unwrap();
    let key = key_dir.path().join("jwt.key");
    std::fs::write(&key, KEY).unwrap();
    let e = start(cluster().set("auth", "plugin", "jwt").set(
        "auth",
        "jwt_key_file",
        key.display().to_string().as_str(),
    ));
    let mint = |name: &str, level: &str| spur_tests::proc::mint_token(&key, name, level);
    let (admin, op) = (mint("boss", "Admin"), mint("olivia", "Operator"));
    let (ok, _, err) =
        e.run("scontrol", r#"update nodename=node[01-02] state=drain reason="mine""#, &[("SPUR_TOKEN", &op)]);
    assert!(!ok && err.contains("Administrator"), "{err}");
    let (ok, out, _) = e.run(
        "sacctmgr",
        "-n -P show txn Outcome=denied format=Actor,Where,Outcome",
        &[("SPUR_TOKEN", &admin)],
    );
    assert!(ok);
    assert_eq!(out, "olivia|node:node[01-02]|denied\n");
}

#[test]
fn admission_tokens_gate_agents() {
    let e = start(cluster().set("admission", "mode", "token"));
    let refused = Agent::start(&e.c.url, "node01", &[]).wait_exit();
    assert!(!refused.success(), "no token, no registration");
    let token = e.ok("spur", "token create --ttl 1h").trim().to_string();
    let _a = Agent::start(&e.c.url, "node[01-08]", &[("SPUR_ADMISSION_TOKEN", &token)]);
    e.wait_all_up();
    let id = token.split('.').next().unwrap();
    e.ok("spur", &format!("token revoke {id}"));
    let again = Agent::start(&e.c.url, "spare01", &[("SPUR_ADMISSION_TOKEN", &token)]).wait_exit();
    assert!(!again.success(), "a revoked token is refused");
}

#[test]
fn reconfigure_applies_node_and_partition_changes_and_is_audited() {
    let e = start(cluster());
    let text = std::fs::read_to_string(&e.c.config).unwrap();
    let grown = text.replace("name = \"spare01\"", "name = \"spare[01-02]\"").replace(
        "[[partitions]]\nname = \"spare\"\nnodes = \"spare01\"",
        "[[partitions]]\nname = \"spare\"\nnodes = \"spare[01-02]\"\nmax_time = 30",
    );
    assert_ne!(text, grown);
    std::fs::write(&e.c.config, grown).unwrap();
    let out = e.ok("scontrol", "reconfigure");
    assert!(out.contains("nodes added: spare02"), "{out}");
    assert!(out.contains("partition spare changed"), "{out}");
    let part = e.ok("scontrol", "show partition spare");
    assert!(part.contains("Nodes=spare[01-02]") && part.contains("MaxTime=00:30:00"), "{part}");
    let txn = e.ok("sacctmgr", "-n -P show txn Entity=config format=Action,Where,Outcome");
    assert_eq!(txn, "update|config:|success\n");
    // A broken file is refused with the key named, and nothing changes.
    std::fs::write(&e.c.config, "[[nodes]]\nname = \"x[1-\"\n").unwrap();
    let (ok, _, err) = e.run("scontrol", "reconfigure", &[]);
    assert!(!ok && err.contains("nodes[0].name"), "{err}");
    assert!(e.ok("sinfo", "-h -o %N -p spare").contains("spare[01-02]"));
}

#[test]
fn show_event_lists_who_set_each_state_and_when_it_ended() {
    let key_dir = tempfile::tempdir().unwrap();
    let key = key_dir.path().join("jwt.key");
    std::fs::write(&key, KEY).unwrap();
    let path = key.display().to_string();
    let e = start(cluster().set("auth", "plugin", "jwt").set("auth", "jwt_key_file", path.as_str()));
    let _a = Agent::start(&e.c.url, "node[01-08]", &[]);
    e.wait_all_up();
    let mint = |name: &str, level: &str| spur_tests::proc::mint_token(&key, name, level);
    let (boss, carla, olivia) = (mint("boss", "Admin"), mint("carla", "Admin"), mint("olivia", "Operator"));
    let as_ = |token: &str, line: &str| {
        let (ok, out, err) = e.run("scontrol", line, &[("SPUR_TOKEN", token)]);
        assert!(ok, "{line}: {err}");
        out
    };
    as_(&boss, r#"update nodename=node[02-03] state=drain reason="disk replacement""#);
    as_(&carla, "update nodename=node02 state=resume");
    as_(&boss, r#"update nodename=node02 state=down reason="PSU failed""#);

    // An Operator reads the history (it is the txn log's node rows).
    let (ok, out, err) = e.run(
        "sacctmgr",
        "show event Nodes=node02 -P format=NodeName,State,Reason,User,TimeStart,TimeEnd",
        &[("SPUR_TOKEN", &olivia)],
    );
    assert!(ok, "{err}");
    let lines: Vec<Vec<&str>> = out.lines().map(|l| l.split('|').collect()).collect();
    assert_eq!(lines[0], ["NodeName", "State", "Reason", "User", "TimeStart", "TimeEnd"], "{out}");
    let rows: Vec<_> = lines[1..].iter().map(|f| (f[0], f[1], f[2], f[3])).collect();
    assert_eq!(
        rows,
        [
            ("node02", "DRAIN", "disk replacement", "boss"),
            ("node02", "IDLE", "", "carla"),
            ("node02", "DOWN", "PSU failed", "boss"),
        ],
        "{out}"
    );
    // Each event ends when the next begins; the last is open.
    assert_eq!(lines[1][5], lines[2][4], "{out}");
    assert_eq!(lines[2][5], lines[3][4], "{out}");
    assert_eq!(lines[3][5], "Unknown", "{out}");
    assert!(lines[1][4].len() == 19 && lines[1][4].contains('T'), "{out}");

    // Filters: States= and User=, node03's drain still open; the default columns start with Cluster.
    let (_, out, _) = e.run("sacctmgr", "-n -P show event States=DOWN User=boss", &[("SPUR_TOKEN", &olivia)]);
    assert_eq!(out.lines().count(), 1, "{out}");
    assert!(out.contains("|node02|") && out.ends_with("|DOWN|PSU failed|boss\n"), "{out}");
    let (_, out, _) =
        e.run("sacctmgr", "-n -P show event Nodes=node03 format=State,TimeEnd", &[("SPUR_TOKEN", &olivia)]);
    assert_eq!(out, "DRAIN|Unknown\n");

    let (_, out, _) = e.run("sacctmgr", "show event Nodes=node02 --json", &[("SPUR_TOKEN", &olivia)]);
    let v: serde_json::Value = serde_json::from_str(&out).unwrap();
    let states: Vec<&str> =
        v["events"].as_array().unwrap().iter().map(|e| e["state"].as_str().unwrap()).collect();
    assert_eq!(states, ["DRAIN", "IDLE", "DOWN"], "{v}");
    assert_eq!(v["events"][2]["time"]["end"], 0, "{v}");

    // Bad input: a clear error naming what is wrong.
    let (ok, _, err) = e.run("sacctmgr", "show event Nodes=[", &[("SPUR_TOKEN", &olivia)]);
    assert!(!ok && err.contains("Nodes: '['"), "{err}");
    let (ok, _, err) = e.run("sacctmgr", "show event Colour=red", &[("SPUR_TOKEN", &olivia)]);
    assert!(!ok && err.contains("unknown key 'Colour' for show event"), "{err}");
}
