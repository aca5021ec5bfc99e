//! `sinfo -T`: the reservations, one line each, in Slurm's columns.

use crate::vocab::time::format_seconds;
use crate::vocab::txn::format_time;
use spur_proto::v1 as pb;

/// Slurm's `sinfo -T` table: name, state, start, end, duration, nodes.
pub fn table(all: &[pb::Reservation], noheader: bool) -> String {
    if all.is_empty() {
        return "No reservations in the system\n".into();
    }
    let w = all.iter().map(|r| r.name.len()).max().unwrap_or(0).max(9);
    let mut out = String::new();
    if !noheader {
        out.push_str(&format!(
            "{:<w$}  {:>8}  {:>19}  {:>19}  {:>11}  NODELIST\n",
            "RESV_NAME", "STATE", "START_TIME", "END_TIME", "DURATION"
        ));
    }
    for r in all {
        let secs = r.duration_secs();
        out.push_str(&format!(
            "{:<w$}  {:>8}  {:>19}  {:>19}  {:>11}  {}\n",
            r.name,
            r.state,
            format_time(r.start_ms),
            format_time(r.end_ms),
            format_seconds(secs),
            r.nodes
        ));
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn one_line_a_reservation() {
        let r = pb::Reservation {
            name: "maint".into(),
            start_ms: 0,
            end_ms: 3_600_000,
            nodes: "n[1-4]".into(),
            state: "ACTIVE".into(),
            ..Default::default()
        };
        let t = table(&[r], false);
        let lines: Vec<&str> = t.lines().collect();
        assert!(lines[0].starts_with("RESV_NAME") && lines[0].ends_with("NODELIST"));
        assert!(
            lines[1].starts_with("maint") && lines[1].contains("ACTIVE") && lines[1].contains("01:00:00")
        );
        assert!(lines[1].ends_with("n[1-4]"));
        assert_eq!(table(&[], false), "No reservations in the system\n");
    }
}
