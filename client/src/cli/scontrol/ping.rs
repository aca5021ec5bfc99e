//! `scontrol ping`: each controller the client was given (`--controller`
//! or SPUR_CONTROLLER_ADDR, comma-separated) and whether it is up, and
//! which one is primary: the leader, which alone serves the health name
//! [`LEADER_SERVICE`](spur_proto::wire::LEADER_SERVICE); the others are backups, forwarding to it.

use spur_proto::wire::{controllers, resolve_controller};

pub use crate::conn::{Role, ask};

/// `host:port` of a controller's URL, as Slurm's lines name it.
pub fn host(url: &str) -> &str {
    url.split("://").nth(1).unwrap_or(url)
}

/// Slurm's lines, one per controller; Err when none is up.
pub fn render(answers: &[(String, Role)]) -> Result<String, String> {
    let mut out = String::new();
    for (url, role) in answers {
        let host = host(url);
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
    render(&roles(controllers(&resolve_controller(flag))).await)
}

/// What each controller of `urls` is, in their order.
pub async fn roles(urls: Vec<String>) -> Vec<(String, Role)> {
    // Asked at once, so a dead one costs its timeout once, not per controller.
    let asks: Vec<_> = urls.iter().cloned().map(|u| tokio::spawn(async move { ask(&u).await })).collect();
    let mut answers = Vec::with_capacity(urls.len());
    for (url, a) in urls.into_iter().zip(asks) {
        answers.push((url, a.await.unwrap_or_else(|e| Role::Down(e.to_string()))));
    }
    answers
}
