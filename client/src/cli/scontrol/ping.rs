//! `scontrol ping`: each controller the client was given (`--controller`
//! or SPUR_CONTROLLER_ADDR, comma-separated) and whether it is up, and
//! which one is primary: the leader, which alone serves the health name
//! [`LEADER_SERVICE`]; the others are backups, forwarding to it.

use spur_proto::wire::{LEADER_SERVICE, controllers, resolve_controller};
use std::time::Duration;
use tonic_health::ServingStatus;
use tonic_health::pb::HealthCheckRequest;
use tonic_health::pb::health_client::HealthClient;

/// How long one controller gets to answer.
const ASK: Duration = Duration::from_secs(3);

#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Role {
    Primary,
    Backup,
    Down(String),
}

/// Asks one controller what it is.
pub async fn ask(url: &str) -> Role {
    let probe = async {
        let ch = tonic::transport::Endpoint::from_shared(url.to_string())
            .map_err(|e| e.to_string())?
            .connect_timeout(ASK)
            .connect()
            .await
            .map_err(|e| e.to_string())?;
        let req = HealthCheckRequest { service: LEADER_SERVICE.into() };
        let status = HealthClient::new(ch).check(req).await.map_err(|s| s.message().to_string())?;
        Ok::<_, String>(status.into_inner().status)
    };
    match tokio::time::timeout(ASK, probe).await {
        Ok(Ok(s)) if s == ServingStatus::Serving as i32 => Role::Primary,
        Ok(Ok(_)) => Role::Backup,
        Ok(Err(e)) => Role::Down(e),
        Err(_) => Role::Down(format!("no answer within {}s", ASK.as_secs())),
    }
}

/// Slurm's lines, one per controller; Err when none is up.
pub fn render(answers: &[(String, Role)]) -> Result<String, String> {
    let mut out = String::new();
    for (url, role) in answers {
        let host = url.split("://").nth(1).unwrap_or(url);
        let line = match role {
            Role::Primary => format!("Slurmctld(primary) at {host} is UP"),
            Role::Backup => format!("Slurmctld(backup) at {host} is UP"),
            Role::Down(why) => format!("Slurmctld at {host} is DOWN ({why})"),
        };
        out.push_str(&line);
        out.push('\n');
    }
    if answers.iter().all(|(_, r)| matches!(r, Role::Down(_))) {
        return Err(out.trim_end().to_string());
    }
    Ok(out)
}

/// `scontrol ping` for the controllers `flag` (else the environment) names.
pub async fn run(flag: Option<&str>) -> Result<String, String> {
    let urls = controllers(&resolve_controller(flag));
    // Asked at once, so a dead one costs its timeout once, not per controller.
    let asks: Vec<_> = urls.iter().cloned().map(|u| tokio::spawn(async move { ask(&u).await })).collect();
    let mut answers = Vec::with_capacity(urls.len());
    for (url, a) in urls.into_iter().zip(asks) {
        answers.push((url, a.await.unwrap_or_else(|e| Role::Down(e.to_string()))));
    }
    render(&answers)
}
