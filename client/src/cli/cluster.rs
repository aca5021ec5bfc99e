//! `-M/--clusters` of sacct, squeue, sbatch and scancel. A Spur controller
//! runs one cluster, so the list may name only that cluster (the
//! controller's `cluster_name`, which WhoAmI reports) or `all`; any other
//! name is refused before a job is listed, submitted or cancelled, so a
//! script meant for another cluster never acts on this one. The name is
//! asked for only when `-M` is given: one WhoAmI, the cheapest call that
//! carries it.

use super::fmt::status;
use crate::conn::Clients;
use spur_proto::v1 as pb;

/// The option as the errors name it.
const FLAG: &str = "--clusters";

/// `-M a,b`: the names, checked for form (Slurm allows no blanks in the list).
pub fn parse_list(v: &str) -> Result<Vec<String>, String> {
    let names: Vec<String> = v.split(',').map(|n| n.trim().to_string()).filter(|n| !n.is_empty()).collect();
    if names.is_empty() {
        return Err(format!("{FLAG}: '{v}' names no cluster"));
    }
    if let Some(n) = names.iter().find(|n| n.contains(char::is_whitespace)) {
        return Err(format!("{FLAG}: '{n}' is not a cluster name (no blanks in a cluster list)"));
    }
    Ok(names)
}

/// The cluster the command talks to, when every name given is this
/// controller's cluster (`local`) or `all`; case does not matter, as Slurm
/// stores cluster names in lower case.
pub fn check(given: &[String], local: &str) -> Result<String, String> {
    match given.iter().find(|n| !n.eq_ignore_ascii_case("all") && !n.eq_ignore_ascii_case(local)) {
        Some(n) => Err(format!(
            "{FLAG}: '{n}' is not a cluster this controller runs (it runs '{local}'; give that name or 'all')"
        )),
        None => Ok(local.to_string()),
    }
}

/// With `-M` given: the controller's cluster name, once the names are
/// checked against it; without: `None`, and no extra call.
pub async fn resolve(c: &mut Clients, given: &[String]) -> Result<Option<String>, String> {
    if given.is_empty() {
        return Ok(None);
    }
    let who = c.session.who_am_i(pb::WhoAmIRequest {}).await.map_err(status)?.into_inner();
    check(given, &who.cluster_name).map(Some)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn names(v: &str) -> Vec<String> {
        parse_list(v).unwrap()
    }

    #[test]
    fn lists_are_comma_separated_without_blanks() {
        assert_eq!(names("spur"), ["spur"]);
        assert_eq!(names("spur,all,"), ["spur", "all"]);
        assert_eq!(parse_list("").unwrap_err(), "--clusters: '' names no cluster");
        assert_eq!(parse_list(",").unwrap_err(), "--clusters: ',' names no cluster");
        assert!(parse_list("a b,c").unwrap_err().starts_with("--clusters: 'a b' is not a cluster name"));
    }

    #[test]
    fn only_this_cluster_or_all_is_accepted() {
        assert_eq!(check(&names("spur"), "spur"), Ok("spur".into()));
        assert_eq!(check(&names("ALL"), "spur"), Ok("spur".into()));
        assert_eq!(check(&names("Spur,all"), "spur"), Ok("spur".into()));
        let e = check(&names("spur,other"), "spur").unwrap_err();
        assert_eq!(
            e,
            "--clusters: 'other' is not a cluster this controller runs (it runs 'spur'; give that name or 'all')"
        );
    }
}
