//! scontrol's reservation commands: `create reservation Key=value ...`,
//! `update ReservationName=NAME Key=value ...`, `delete ReservationName=NAME`
//! and `show reservation [NAME]`, in Slurm's layout. The words are checked
//! here with the vocabulary's one parser (so a typo is refused before a
//! round trip) and sent as given: the controller parses them again with its
//! own clock, applies Slurm's rules and answers with what it stored.

use super::command::{Command, Flags};
use crate::cli::fmt::{null, record, status};
use crate::conn::Clients;
use crate::vocab::resv::ResvRequest;
use crate::vocab::time::format_seconds;
use crate::vocab::txn::format_time;
use spur_proto::v1 as pb;

/// Checks the words as the controller will read them.
fn check(words: &[String]) -> Result<ResvRequest, String> {
    ResvRequest::parse(words, chrono::Local::now())
}

/// Whether a `Key` (of `Key=value`) names a reservation.
fn is_name_key(k: &str) -> bool {
    let k = k.trim_end_matches(['+', '-']);
    k.eq_ignore_ascii_case("reservationname") || k.eq_ignore_ascii_case("reservation")
}

/// Whether `update ARGS` names a reservation.
pub fn names_reservation(args: &[String]) -> bool {
    args.iter().any(|w| w.split_once('=').is_some_and(|(k, _)| is_name_key(k)))
}

/// `create reservation ...` (the entity word already taken).
pub fn parse_create(args: &[String]) -> Result<Command, String> {
    if args.is_empty() {
        return Err("create reservation: give StartTime=, Duration= or EndTime=, Nodes= or NodeCnt=, and Users= or Accounts=".into());
    }
    let r = check(args)?;
    Ok(Command::CreateReservation { name: r.name.unwrap_or_default(), words: args.to_vec() })
}

/// `update ReservationName=NAME ...`.
pub fn parse_update(args: &[String]) -> Result<Command, String> {
    let r = check(args)?;
    let name = r.name.ok_or("update: ReservationName= names the reservation to update")?;
    if args.len() < 2 {
        return Err(format!("update ReservationName={name}: say what to change"));
    }
    Ok(Command::UpdateReservation { name, words: args.to_vec() })
}

/// `delete ReservationName=NAME` (or `delete reservation NAME`).
pub fn parse_delete(args: &[String]) -> Result<Command, String> {
    let name = match args {
        [w] => w.split_once('=').filter(|(k, _)| is_name_key(k)).map(|(_, v)| v.to_string()),
        [e, n] if e.to_ascii_lowercase().starts_with("res") => Some(n.clone()),
        _ => None,
    };
    match name.filter(|n| !n.trim().is_empty()) {
        Some(n) => Ok(Command::DeleteReservation(n.trim().to_string())),
        None => Err("delete: give ReservationName=NAME (other entities are deleted with sacctmgr)".into()),
    }
}

/// One reservation as `scontrol show reservation` prints it.
pub fn resv_record(r: &pb::Reservation, oneliner: bool) -> String {
    let secs = r.duration_secs();
    let lines = vec![
        format!(
            "ReservationName={} StartTime={} EndTime={} Duration={}",
            r.name,
            format_time(r.start_ms),
            format_time(r.end_ms),
            format_seconds(secs)
        ),
        format!(
            "Nodes={} NodeCnt={} Features=(null) PartitionName={} Flags={}",
            null(&r.nodes),
            r.node_count,
            null(&r.partition),
            null(&r.flags)
        ),
        format!("TRES=node={}", r.node_count),
        format!(
            "Users={} Groups=(null) Accounts={} Licenses={} State={} BurstBuffer=(null)",
            null(&r.users),
            null(&r.accounts),
            null(&r.licenses),
            r.state
        ),
        "MaxStartDelay=(null)".to_string(),
    ];
    record(&lines, oneliner)
}

/// `--json`: Slurm's data_parser names for a reservation.
pub fn resv_json(r: &pb::Reservation) -> serde_json::Value {
    let list = |s: &str| s.split(',').filter(|x| !x.is_empty()).map(str::to_string).collect::<Vec<_>>();
    let time = |ms: i64| serde_json::json!({ "set": true, "infinite": false, "number": ms / 1000 });
    serde_json::json!({
        "name": r.name, "start_time": time(r.start_ms), "end_time": time(r.end_ms),
        "node_list": r.nodes, "node_count": r.node_count, "partition": r.partition,
        "users": r.users, "accounts": r.accounts, "licenses": r.licenses,
        "flags": list(&r.flags), "state": r.state,
    })
}

pub fn show_reservations(all: &[pb::Reservation], name: Option<&str>, f: &Flags) -> Result<String, String> {
    if f.json {
        let v: Vec<serde_json::Value> = all.iter().map(resv_json).collect();
        return Ok(serde_json::to_string_pretty(&serde_json::json!({ "reservations": v }))
            .unwrap_or_default()
            + "\n");
    }
    match (name, all.is_empty()) {
        (Some(n), true) => Err(format!("Reservation {n} not found")),
        (None, true) => Ok("No reservations in the system\n".into()),
        _ => Ok(all.iter().map(|r| resv_record(r, f.oneliner)).collect()),
    }
}

pub async fn show(name: Option<&str>, f: &Flags, c: &mut Clients) -> Result<String, String> {
    let req = pb::ListReservationsRequest { name: name.unwrap_or_default().to_string() };
    let all = c.reservations.list_reservations(req).await.map_err(status)?.into_inner().reservations;
    show_reservations(&all, name, f)
}

/// `create reservation`: Slurm's "Reservation NAME created".
pub async fn create(name: &str, words: &[String], c: &mut Clients) -> Result<String, String> {
    let req = pb::CreateReservationRequest { name: name.to_string(), words: words.to_vec() };
    let made = c.reservations.create_reservation(req).await.map_err(status)?.into_inner();
    Ok(format!("Reservation {} created\n", made.reservation.map(|r| r.name).unwrap_or_default()))
}

pub async fn update(name: &str, words: &[String], c: &mut Clients) -> Result<String, String> {
    let req = pb::UpdateReservationRequest { name: name.to_string(), words: words.to_vec() };
    c.reservations.update_reservation(req).await.map_err(status)?;
    Ok("Reservation updated.\n".into())
}

pub async fn delete(name: &str, c: &mut Clients) -> Result<String, String> {
    c.reservations
        .delete_reservation(pb::DeleteReservationRequest { name: name.to_string() })
        .await
        .map_err(status)?;
    Ok(String::new())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn words(s: &str) -> Vec<String> {
        s.split_whitespace().map(str::to_string).collect()
    }

    #[test]
    fn commands_parse_and_bad_words_name_their_key() {
        let c = parse_create(&words(
            "ReservationName=m StartTime=now+1hour Duration=2:00:00 Nodes=n[1-2] Users=root Flags=MAINT",
        ))
        .unwrap();
        assert!(matches!(c, Command::CreateReservation { ref name, .. } if name == "m"));
        assert!(parse_create(&words("StartTime=later")).unwrap_err().contains("StartTime"));
        assert!(matches!(
            parse_update(&words("ReservationName=m Nodes+=n3")).unwrap(),
            Command::UpdateReservation { .. }
        ));
        assert!(parse_update(&words("Nodes+=n3")).unwrap_err().contains("ReservationName"));
        assert_eq!(
            parse_delete(&words("ReservationName=m")).unwrap(),
            Command::DeleteReservation("m".into())
        );
        assert_eq!(parse_delete(&words("reservation m")).unwrap(), Command::DeleteReservation("m".into()));
        assert!(parse_delete(&words("Qos=x")).is_err());
        assert!(names_reservation(&words("reservationname=x")));
    }

    #[test]
    fn a_reservation_prints_as_slurm_prints_it() {
        let r = pb::Reservation {
            name: "maint".into(),
            start_ms: 0,
            end_ms: 7_200_000,
            nodes: "n[1-2]".into(),
            node_count: 2,
            users: "root".into(),
            flags: "MAINT,SPEC_NODES".into(),
            state: "INACTIVE".into(),
            ..Default::default()
        };
        let out = resv_record(&r, false);
        assert!(out.contains("Duration=02:00:00"), "{out}");
        assert!(out.contains(
            "\n   Nodes=n[1-2] NodeCnt=2 Features=(null) PartitionName=(null) Flags=MAINT,SPEC_NODES"
        ));
        assert!(out.contains("Users=root Groups=(null) Accounts=(null) Licenses=(null) State=INACTIVE"));
        let f = Flags::default();
        assert_eq!(show_reservations(&[], None, &f).unwrap(), "No reservations in the system\n");
        assert!(show_reservations(&[], Some("x"), &f).unwrap_err().contains("not found"));
    }
}
