//! The txn audit log, auth and roles, and admission tokens, end to end with
//! the real binaries.

use spur_tests::proc::{Controller, DEADLINE, client, conf, run_with};
use std::io::{BufRead, BufReader, Read, Write};
use std::process::{Output, Stdio};
use std::sync::mpsc;

const KEY: &str = "test-signing-key-of-at-least-32-bytes";

struct Cluster {
    _dir: tempfile::TempDir,
    c: Controller,
    admin: String,
}

fn mint(name: &str, level: &str, ttl: &str) -> String {
    let out = std::process::Command::new(spur_tests::proc::bin("spur"))
        .args(["token", "user", "--name", name, "--admin-level", level, "--ttl", ttl, "--key-file"])
        .arg(key_file())
        .output()
        .unwrap();
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    String::from_utf8(out.stdout).unwrap().trim().to_string()
}

fn key_file() -> std::path::PathBuf {
    static F: std::sync::OnceLock<tempfile::NamedTempFile> = std::sync::OnceLock::new();
    F.get_or_init(|| {
        let mut f = tempfile::NamedTempFile::new().unwrap();
        writeln!(f, "{KEY}").unwrap();
        f
    })
    .path()
    .to_path_buf()
}

fn cluster(mode: &str) -> Cluster {
    let dir = tempfile::tempdir().unwrap();
    let db = format!("sqlite://{}/spur.db", dir.path().display());
    let extra = format!(
        "[auth]\nplugin = \"jwt\"\njwt_key_file = \"{}\"\nmode = \"{mode}\"\n[metrics]\nlisten_addr = \"127.0.0.1:0\"\n",
        key_file().display()
    );
    let c = Controller::start(dir.path(), &conf(&db, &extra));
    let admin = mint("admin", "Admin", "1h");
    Cluster { _dir: dir, c, admin }
}

impl Cluster {
    fn as_user(&self, token: &str, personality: &str, line: &str) -> Output {
        let args: Vec<&str> = line.split_whitespace().collect();
        run_with(personality, &self.c.url, &args, &[("SPUR_TOKEN", token)])
    }

    fn ok(&self, token: &str, personality: &str, line: &str) -> String {
        let out = self.as_user(token, personality, line);
        assert!(out.status.success(), "{line}: {}", String::from_utf8_lossy(&out.stderr));
        String::from_utf8(out.stdout).unwrap()
    }

    fn txn(&self, filters: &str) -> String {
        self.ok(&self.admin, "sacctmgr", &format!("-n -P show txn {filters}"))
    }
}

#[test]
fn operator_refused_an_admin_action_is_audited_as_denied() {
    let k = cluster("permissive");
    k.ok(&k.admin, "sacctmgr", "-i add account name=ops");
    k.ok(&k.admin, "sacctmgr", "-i add user name=erin account=ops adminlevel=Operator");
    let erin = mint("erin", "None", "1h");
    // Operator manages accounting records...
    k.ok(&erin, "sacctmgr", "-i add qos name=batch");
    // ...but not admission tokens.
    let out = k.as_user(&erin, "spur", "token create");
    assert_eq!(out.status.code(), Some(1));
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(err.contains("CreateToken needs the Administrator role; 'erin' has Operator"), "{err}");
    let rows = k.txn("Outcome=denied format=Actor,Action,Where,Outcome,Verified");
    assert_eq!(rows, "erin|create|token:|denied|yes\n");
    // An admin can, and the token is audited by its id, never its secret.
    let token = k.ok(&k.admin, "spur", "token create --ttl 90m");
    let (id, secret) = token.trim().split_once('.').unwrap();
    let created = k.txn("Entity=token Outcome=success format=Action,Where,Info");
    assert!(created.starts_with(&format!("create|token:{id}|")), "{created}");
    assert!(!created.contains(secret));
    let list = k.ok(&k.admin, "spur", "token list");
    assert!(list.contains(id) && list.contains("active"), "{list}");
    k.ok(&k.admin, "spur", &format!("token revoke {id}"));
    assert!(k.ok(&k.admin, "spur", "token list").contains("revoked"));
    // Each row commits with the token it records (audit/claim.rs), once.
    let rows = k.txn("Entity=token Outcome=success format=Action,Where");
    assert_eq!(rows, format!("create|token:{id}\nupdate|token:{id}\n"));
}

#[test]
fn an_operator_cannot_grant_admin_levels_and_is_audited_as_denied() {
    let k = cluster("permissive");
    k.ok(&k.admin, "sacctmgr", "-i add account name=ops");
    k.ok(&k.admin, "sacctmgr", "-i add user name=opuser account=ops adminlevel=Operator");
    let op = mint("opuser", "None", "1h");
    for line in [
        "-i modify user where name=opuser set adminlevel=Administrator",
        "-i modify user where name=opuser set adminlevel=None",
        "-i add user name=newbie account=ops adminlevel=Operator",
    ] {
        let out = k.as_user(&op, "sacctmgr", line);
        let err = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(1), "{line}: {err}");
        assert!(err.contains("only an Administrator may set an admin level; 'opuser' has Operator"), "{err}");
    }
    // Still an Operator: node drain stays refused.
    let out = k.as_user(&op, "scontrol", "update nodename=node01 state=drain reason=x");
    assert!(String::from_utf8_lossy(&out.stderr).contains("needs the Administrator role"));
    let users = k.ok(&k.admin, "sacctmgr", "-n -P show user format=User,AdminLevel");
    assert_eq!(users, "opuser|Operator\n", "nothing was written");
    let rows = k.txn("Outcome=denied format=Actor,Action,Where");
    assert_eq!(
        rows,
        "opuser|update|user:opuser\nopuser|update|user:opuser\nopuser|create|user:newbie\nopuser|update|node:node01\n"
    );
    // An Operator keeps managing the rest of a user; an Administrator grants levels.
    k.ok(&op, "sacctmgr", "-i modify user where name=opuser set maxjobs=4");
    k.ok(&k.admin, "sacctmgr", "-i add user name=newbie account=ops adminlevel=Operator");
}

/// spurctld with `auth` as its [auth] table: its exit status and stderr, or
/// a failed test if it starts serving.
fn start_refused(auth: &str) -> (std::process::ExitStatus, String) {
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join("short.key"), "sixteen-byte-key\n").unwrap();
    let config = dir.path().join("spur.conf");
    std::fs::write(&config, format!("[auth]\n{auth}\n")).unwrap();
    let mut child = std::process::Command::new(spur_tests::proc::bin("spurctld"))
        .arg("--config")
        .arg(&config)
        .args(["--listen", "127.0.0.1:0"])
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let started = std::time::Instant::now();
    let status = loop {
        if let Some(s) = child.try_wait().unwrap() {
            break s;
        }
        if started.elapsed() > DEADLINE {
            let _ = child.kill();
            panic!("spurctld started with [auth] {auth}");
        }
        std::thread::sleep(std::time::Duration::from_millis(20));
    };
    let mut err = String::new();
    child.stderr.take().unwrap().read_to_string(&mut err).unwrap();
    (status, err)
}

#[test]
fn a_short_jwt_key_stops_spurctld_at_start() {
    let (status, err) = start_refused("plugin = \"jwt\"\nmode = \"required\"\njwt_key = \"\"");
    assert!(!status.success());
    assert!(err.contains("key 'auth.jwt_key': the HS256 key must be at least 32 bytes (got 0)"), "{err}");
    let (status, err) = start_refused("plugin = \"jwt\"\njwt_key_file = \"short.key\"");
    assert!(!status.success());
    assert!(err.contains("key 'auth.jwt_key_file' (") && err.contains("(got 16)"), "{err}");
}

#[test]
fn accounting_change_shows_changed_from_and_to() {
    let k = cluster("permissive");
    k.ok(&k.admin, "sacctmgr", "-i add qos name=hp maxwall=60 priority=5");
    k.ok(&k.admin, "sacctmgr", "-i modify qos name=hp set maxwall=2:00:00");
    k.ok(&k.admin, "sacctmgr", "-i add qos name=hp priority=6");
    let rows = k.txn("Entity=qos Name=hp format=Action,Actor,Where,Outcome,Info");
    let lines: Vec<&str> = rows.lines().collect();
    assert_eq!(lines.len(), 3, "{rows}");
    assert!(lines[0].starts_with("create|admin|qos:hp|success|"), "{rows}");
    assert!(lines[1].starts_with("update|admin|qos:hp|success|"), "{rows}");
    let info: serde_json::Value = serde_json::from_str(lines[1].splitn(5, '|').nth(4).unwrap()).unwrap();
    assert_eq!(info["changed"]["max_wall"], serde_json::json!({"from": 60, "to": 120}));
    assert_eq!(info["params"]["maxwall"], "2:00:00");
    assert!(lines[2].starts_with("update|"), "add on an existing QOS is recorded as update: {rows}");
    // Failed attempts are recorded too, with the error.
    let out = k.as_user(&k.admin, "sacctmgr", "-i modify qos name=hp set maxwall=abc");
    assert!(!out.status.success());
    let err_rows = k.txn("Outcome=error format=Where,Info");
    assert!(err_rows.starts_with("qos:hp|") && err_rows.contains("maxwall: 'abc'"), "{err_rows}");
    // Filters: Peer on the host:port boundary, limit, Start/End.
    assert_eq!(k.txn("Peer=127.0.0.1 format=ID").lines().count(), 4);
    assert_eq!(k.txn("Peer=127.0.0.12 format=ID"), "");
    assert_eq!(k.txn("limit=1 format=Action,Outcome"), "update|error\n", "limit keeps the newest");
    assert_eq!(k.txn("Start=now-1hours End=now format=ID").lines().count(), 4);
    assert_eq!(k.txn("End=2000-01-01 format=ID"), "");
    let bad = k.as_user(&k.admin, "sacctmgr", "show txn Start=yesterday");
    assert!(String::from_utf8_lossy(&bad.stderr).contains("Start: 'yesterday'"));
}

#[test]
fn audit_tail_sees_a_change_from_another_shell_at_once() {
    let mut k = cluster("permissive");
    let mut tail = client(
        "spur",
        &k.c.url,
        &["audit", "tail", "Entity=qos", "-P", "--format", "Action,Actor,Where,Outcome"],
        &[("SPUR_TOKEN", &k.admin)],
    )
    .stdout(Stdio::piped())
    .stderr(Stdio::null())
    .spawn()
    .unwrap();
    let stdout = tail.stdout.take().unwrap();
    let (tx, rx) = mpsc::channel();
    std::thread::spawn(move || {
        for line in BufReader::new(stdout).lines() {
            if tx.send(line.unwrap()).is_err() {
                return;
            }
        }
    });
    // The tail is subscribed once a change made after it shows up; retry the
    // change until it does, each with the deadline.
    let started = std::time::Instant::now();
    let mut seen = None;
    let mut n = 0;
    while seen.is_none() && started.elapsed() < DEADLINE {
        n += 1;
        k.ok(&k.admin, "sacctmgr", &format!("-i add qos name=t{n}"));
        k.ok(&k.admin, "sacctmgr", "-i add account name=ignored");
        if let Ok(line) = rx.recv_timeout(std::time::Duration::from_secs(2)) {
            seen = Some(line);
        }
    }
    let line = seen.expect("audit tail printed nothing");
    assert!(line.starts_with("create|admin|qos:t"), "{line}");
    assert!(line.ends_with("|success"), "{line}");
    assert!(k.c.stop().success(), "SIGTERM stops the controller even with a tail attached");
    let _ = tail.kill();
    let _ = tail.wait();
}

#[test]
fn required_mode_refuses_without_a_token_and_leaves_no_row() {
    let k = cluster("required");
    k.ok(&k.admin, "sacctmgr", "-i add qos name=x");
    let before = k.txn("format=ID").lines().count();
    let none = run_with("sacctmgr", &k.c.url, &["-i", "add", "qos", "name=y"], &[]);
    assert_eq!(none.status.code(), Some(1));
    assert!(String::from_utf8_lossy(&none.stderr).contains("authentication required"));
    let now = chrono_now();
    let claims = spur_client::token::Claims {
        sub: "admin".into(),
        uid: None,
        admin_level: "Administrator".into(),
        iat: now - 120,
        exp: now - 60,
    };
    let expired = spur_client::token::mint(KEY.as_bytes(), &claims).unwrap();
    let out = k.as_user(&expired, "sacctmgr", "-i add qos name=z");
    assert!(String::from_utf8_lossy(&out.stderr).contains("token expired"));
    let forged = k.as_user("abc.def.ghi", "sacctmgr", "-i add qos name=z");
    assert!(String::from_utf8_lossy(&forged.stderr).contains("invalid token"));
    assert_eq!(k.txn("format=ID").lines().count(), before, "refused credentials leave no txn row");
}

#[test]
fn metrics_count_written_rows() {
    let k = cluster("permissive");
    k.ok(&k.admin, "sacctmgr", "-i add qos name=m");
    let _ = k.as_user("forged", "sacctmgr", "-i add qos name=n");
    let body = k.c.metrics_text();
    assert!(body.contains("spur_audit_rows_written_total 1\n"), "{body}");
    assert!(body.contains("spur_audit_rows_dropped_total 0\n"), "{body}");
}

fn chrono_now() -> i64 {
    std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH).unwrap().as_secs() as i64
}

#[tokio::test]
async fn tail_resumes_after_an_id_with_no_gap_and_no_duplicate() {
    use spur_proto::v1 as pb;
    let k = cluster("permissive");
    for i in 0..5 {
        k.ok(&k.admin, "sacctmgr", &format!("-i add qos name=r{i}"));
    }
    let ids: Vec<i64> = k.txn("format=ID").lines().map(|l| l.parse().unwrap()).collect();
    let ident = spur_client::conn::Identity {
        token: Some(k.admin.clone()),
        ..spur_client::conn::Identity::asserted("admin", None)
    };
    let mut c = spur_client::conn::connect(&k.c.url, ident).await.unwrap();
    let req = pb::TailTxnRequest { filter: vec![], after_id: Some(ids[1]) };
    let mut stream = c.audit.tail_txn(req).await.unwrap().into_inner();
    let mut got = vec![];
    for _ in 0..3 {
        if let Some(pb::tail_txn_event::Event::Row(r)) = next(&mut stream).await {
            got.push(r.id);
        }
    }
    assert_eq!(got, ids[2..].to_vec(), "replayed rows after the id");
    k.ok(&k.admin, "sacctmgr", "-i add qos name=live");
    let Some(pb::tail_txn_event::Event::Row(r)) = next(&mut stream).await else { panic!("no live row") };
    assert_eq!(r.id, ids[4] + 1, "then the live row, once");
    assert_eq!(r.name, "live");
}

async fn next(
    s: &mut tonic::Streaming<spur_proto::v1::TailTxnEvent>,
) -> Option<spur_proto::v1::tail_txn_event::Event> {
    tokio::time::timeout(DEADLINE, s.message()).await.expect("tail row in time").unwrap().unwrap().event
}
