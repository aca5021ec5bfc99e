//! A client that is not ours can use the API: a Python client generated from
//! the `.proto` files with grpcio-tools lists QOS, and the standard health
//! and reflection services answer.

use spur_tests::proc::{Controller, conf, ok};
use std::process::Command;

fn python_has_grpc_tools() -> bool {
    let ok =
        Command::new("python3").args(["-c", "import grpc_tools, grpc"]).status().is_ok_and(|s| s.success());
    if !ok {
        assert!(std::env::var("CI").is_err(), "CI must install grpcio-tools (see .ci/run)");
        eprintln!("note: python3 with grpcio-tools is not available; skipping");
    }
    ok
}

const CLIENT: &str = r#"
import sys
import grpc
from spur.v1 import accounting_pb2, accounting_pb2_grpc

with grpc.insecure_channel(sys.argv[1]) as ch:
    stub = accounting_pb2_grpc.AccountingStub(ch)
    resp = stub.ListQos(accounting_pb2.ListRequest())
    for q in resp.qos:
        print(q.name, q.priority, q.max_wall_minutes if q.HasField("max_wall_minutes") else "-")
    bad = accounting_pb2.SetRequest(mode=accounting_pb2.SET_MODE_ADD,
        set=[accounting_pb2.KeyValue(key="name", value="py"), accounting_pb2.KeyValue(key="maxwall", value="abc")])
    for md in [(), (("x-spur-user", "root"), ("x-spur-uid", "0"))]:
        try:
            stub.SetQos(bad, metadata=md)
        except grpc.RpcError as e:
            print(e.code().name, e.details())
"#;

/// The Python client of accounting.proto, generated into `dir/gen`.
fn generate(dir: &std::path::Path) -> std::path::PathBuf {
    let gen_dir = dir.join("gen");
    std::fs::create_dir_all(&gen_dir).unwrap();
    let status = Command::new("python3")
        .args(["-m", "grpc_tools.protoc", "-I", spur_proto::PROTO_DIR])
        .arg(format!("--python_out={}", gen_dir.display()))
        .arg(format!("--grpc_python_out={}", gen_dir.display()))
        .arg("spur/v1/accounting.proto")
        .status()
        .unwrap();
    assert!(status.success(), "grpc_tools.protoc failed");
    gen_dir
}

#[test]
fn generated_python_client_lists_qos() {
    if !python_has_grpc_tools() {
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let c = Controller::start(dir.path(), &conf(&format!("sqlite://{}/s.db", dir.path().display()), ""));
    ok("sacctmgr", &c.url, &["-i", "add", "qos", "name=highprio", "priority=100", "maxwall=1-00:00:00"]);
    ok("sacctmgr", &c.url, &["-i", "add", "qos", "name=low"]);

    let gen_dir = generate(dir.path());
    let script = dir.path().join("client.py");
    std::fs::write(&script, CLIENT).unwrap();
    let target = c.url.trim_start_matches("http://");
    let out = Command::new("python3").arg(&script).arg(target).env("PYTHONPATH", &gen_dir).output().unwrap();
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(out.status.success(), "python client failed: {}{stdout}", String::from_utf8_lossy(&out.stderr));
    assert_eq!(
        stdout,
        "highprio 100 1440\nlow 0 -\n\
         PERMISSION_DENIED SetQos needs the Operator role; 'unknown' has None\n\
         INVALID_ARGUMENT maxwall: 'abc' is not a time (expected minutes, hh:mm, hh:mm:ss, d-hh, d-hh:mm or d-hh:mm:ss)\n"
    );
}

#[tokio::test]
async fn health_and_reflection_answer() {
    let dir = tempfile::tempdir().unwrap();
    let c = Controller::start(dir.path(), &conf("", ""));
    let channel = tonic::transport::Endpoint::from_shared(c.url.clone()).unwrap().connect().await.unwrap();

    let mut health = tonic_health::pb::health_client::HealthClient::new(channel.clone());
    let resp = health
        .check(tonic_health::pb::HealthCheckRequest { service: "spur.v1.Accounting".into() })
        .await
        .unwrap();
    assert_eq!(
        resp.into_inner().status,
        tonic_health::pb::health_check_response::ServingStatus::Serving as i32
    );

    use tonic_reflection::pb::v1::{
        ServerReflectionRequest, server_reflection_client::ServerReflectionClient,
        server_reflection_request::MessageRequest, server_reflection_response::MessageResponse,
    };
    let mut refl = ServerReflectionClient::new(channel);
    let req = ServerReflectionRequest {
        host: String::new(),
        message_request: Some(MessageRequest::ListServices(String::new())),
    };
    let mut stream = refl.server_reflection_info(tokio_stream::iter(vec![req])).await.unwrap().into_inner();
    let msg = stream.message().await.unwrap().unwrap();
    let Some(MessageResponse::ListServicesResponse(list)) = msg.message_response else { panic!("{msg:?}") };
    let names: Vec<String> = list.service.into_iter().map(|s| s.name).collect();
    assert!(names.contains(&"spur.v1.Accounting".to_string()), "{names:?}");
}

/// The documented pattern for a client of another language under `[auth]
/// plugin = "munge"`: a new credential from `munge -n` for each call, in
/// the `x-spur-munge` metadata.
const MUNGE_CLIENT: &str = r#"
import subprocess, sys
import grpc
from spur.v1 import accounting_pb2, accounting_pb2_grpc

def credential():
    out = subprocess.run(["munge", "-n", "-S", sys.argv[2]], capture_output=True, text=True, check=True)
    return (("x-spur-munge", out.stdout.strip()),)

with grpc.insecure_channel(sys.argv[1]) as ch:
    stub = accounting_pb2_grpc.AccountingStub(ch)
    add = accounting_pb2.SetRequest(mode=accounting_pb2.SET_MODE_ADD,
        set=[accounting_pb2.KeyValue(key="name", value="py")])
    stub.SetQos(add, metadata=credential())
    print([q.name for q in stub.ListQos(accounting_pb2.ListRequest(), metadata=credential()).qos])
    try:
        stub.ListQos(accounting_pb2.ListRequest(), metadata=(("x-spur-user", "root"), ("x-spur-uid", "0")))
    except grpc.RpcError as e:
        print(e.code().name, e.details())
"#;

#[test]
fn generated_python_client_attaches_a_munge_credential() {
    if !python_has_grpc_tools() || !spur_tests::users::available() {
        return;
    }
    let m = spur_tests::users::Munged::start();
    let dir = tempfile::tempdir().unwrap();
    let socket = m.socket().display().to_string();
    let auth = format!("[auth]\nplugin = \"munge\"\nmunge_socket = \"{socket}\"\n");
    let c = Controller::start(dir.path(), &conf(&format!("sqlite://{}/s.db", dir.path().display()), &auth));
    let gen_dir = generate(dir.path());
    let script = dir.path().join("client.py");
    std::fs::write(&script, MUNGE_CLIENT).unwrap();
    let target = c.url.trim_start_matches("http://");
    let out = Command::new("python3")
        .arg(&script)
        .args([target, &socket])
        .env("PYTHONPATH", &gen_dir)
        .output()
        .unwrap();
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(out.status.success(), "python client failed: {}{stdout}", String::from_utf8_lossy(&out.stderr));
    assert_eq!(stdout, "['py']\nUNAUTHENTICATED a MUNGE credential is required\n");
}
