//! `scontrol takeover [INDEX]`: the INDEX-th backup controller (1, the
//! first, by default) of those the client was given takes over from the
//! primary. The primary is asked (Administrator, audited); it stops leading
//! cleanly and hands its lease to that backup alone, and this command waits
//! until the backup answers primary.

use super::ping::{Role, host, roles};
use crate::cli::fmt::status;
use crate::conn::{self, Identity};
use spur_proto::v1 as pb;
use spur_proto::wire::{controllers, resolve_controller};
use std::time::{Duration, Instant};

/// How long the new primary may take: a lease (10 s by default) and its load.
const WAIT: Duration = Duration::from_secs(60);

/// Slurm's INDEX: the backup's position among the backups, from 1.
pub fn parse(args: &[String]) -> Result<usize, String> {
    match args {
        [] => Ok(1),
        [i] => match i.parse::<usize>() {
            Ok(n) if n >= 1 => Ok(n),
            _ => Err(format!("takeover: INDEX must be a number from 1 (the first backup), got '{i}'")),
        },
        [_, x, ..] => Err(format!("takeover: unexpected argument '{x}'")),
    }
}

/// Which controller is the primary, and which backup is the INDEX-th.
pub fn choose(answers: &[(String, Role)], index: usize) -> Result<(String, String), String> {
    let names = || answers.iter().map(|(u, _)| host(u)).collect::<Vec<_>>().join(", ");
    let primary =
        answers.iter().find(|(_, r)| *r == Role::Primary).map(|(u, _)| u.clone()).ok_or_else(|| {
            format!("takeover: no controller answers as primary among {}; nothing to take over from", names())
        })?;
    let backups: Vec<&String> = answers.iter().filter(|(_, r)| *r == Role::Backup).map(|(u, _)| u).collect();
    let target = backups.get(index - 1).ok_or_else(|| {
        format!(
            "takeover: there is no backup controller {index} among {} ({} answer as backup; give them all with --controller A,B,...)",
            names(),
            backups.len()
        )
    })?;
    Ok((primary, (*target).clone()))
}

pub async fn run(flag: Option<&str>, index: usize) -> Result<String, String> {
    let answers = roles(controllers(&resolve_controller(flag))).await;
    let (primary, target) = choose(&answers, index)?;
    let mut c = conn::connect(&primary, Identity::local()).await.map_err(|e| e.to_string())?;
    let req = pb::TakeoverRequest { to: host(&target).to_string() };
    let from = c.cluster.takeover(req).await.map_err(status)?.into_inner().from;
    let began = Instant::now();
    loop {
        if super::ping::ask(&target).await == Role::Primary {
            return Ok(format!(
                "{} took over from {from} in {:.1}s\n",
                host(&target),
                began.elapsed().as_secs_f64()
            ));
        }
        if began.elapsed() > WAIT {
            return Err(format!(
                "takeover: {from} gave the lease up, but {} is not primary after {}s (see scontrol ping)",
                host(&target),
                WAIT.as_secs()
            ));
        }
        tokio::time::sleep(Duration::from_millis(200)).await;
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn a(list: &[(&str, Role)]) -> Vec<(String, Role)> {
        list.iter().map(|(u, r)| (format!("http://{u}"), r.clone())).collect()
    }

    #[test]
    fn the_index_counts_backups_in_the_order_given() {
        let answers = a(&[
            ("b1:1", Role::Backup),
            ("p:1", Role::Primary),
            ("d:1", Role::Down("x".into())),
            ("b2:1", Role::Backup),
        ]);
        assert_eq!(choose(&answers, 1).unwrap(), ("http://p:1".into(), "http://b1:1".into()));
        assert_eq!(choose(&answers, 2).unwrap().1, "http://b2:1");
        let e = choose(&answers, 3).unwrap_err();
        assert!(e.contains("no backup controller 3") && e.contains("2 answer as backup"), "{e}");
        let e = choose(&a(&[("b1:1", Role::Backup)]), 1).unwrap_err();
        assert!(e.contains("no controller answers as primary among b1:1"), "{e}");
    }

    #[test]
    fn a_bad_index_is_named() {
        assert_eq!(parse(&[]).unwrap(), 1);
        assert_eq!(parse(&["2".into()]).unwrap(), 2);
        for bad in ["0", "x", "-1"] {
            let e = parse(&[bad.into()]).unwrap_err();
            assert!(e.contains("INDEX") && e.contains(bad), "{e}");
        }
        assert!(parse(&["1".into(), "2".into()]).unwrap_err().contains("unexpected argument '2'"));
    }
}
