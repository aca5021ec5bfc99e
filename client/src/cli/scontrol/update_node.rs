//! `scontrol update NodeName=LIST State=drain|resume|idle|down [Reason="..."]`:
//! drain and resume nodes. The state is required, so a typo never undrains.

use super::command::Command;
use crate::cli::fmt::status;
use crate::cli::kv::Pair;
use crate::conn::Clients;
use crate::vocab::hostlist;
use spur_proto::v1 as pb;

/// The pairs of an `update` that names `NodeName=`.
pub fn parse(pairs: &[Pair]) -> Result<Command, String> {
    let (mut nodes, mut st, mut reason) = (String::new(), String::new(), String::new());
    for Pair { key, value } in pairs {
        match key.to_ascii_lowercase().as_str() {
            "nodename" => nodes = value.clone(),
            "state" => st = value.to_ascii_lowercase(),
            "reason" => reason = value.clone(),
            _ => {
                return Err(format!(
                    "update node: '{key}' cannot be changed in this Spur release (use NodeName=, State=, Reason=)"
                ));
            }
        }
    }
    hostlist::count(&nodes).map_err(|e| format!("NodeName: {e}"))?;
    // The controller reads a missing state as "resume"; never undrain by accident.
    if st.is_empty() {
        return Err("update node: State= is required (drain, resume, idle or down)".into());
    }
    Ok(Command::UpdateNodes { nodes, state: st, reason })
}

/// Sends the update; returns the controller's warning (nodes already in that state, ...).
pub async fn execute(
    nodes: &str,
    state: &str,
    reason: &str,
    c: &mut Clients,
) -> Result<Option<String>, String> {
    let req = pb::UpdateNodesRequest { nodes: nodes.into(), state: state.into(), reason: reason.into() };
    let resp = c.nodes.update_nodes(req).await.map_err(status)?.into_inner();
    Ok(Some(resp.warning).filter(|w| !w.is_empty()))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::cli::kv;

    fn p(s: &str) -> Result<Command, String> {
        parse(&kv::pairs(&s.split_whitespace().map(String::from).collect::<Vec<_>>()).unwrap())
    }

    #[test]
    fn node_update_needs_a_state_and_known_keys() {
        assert_eq!(
            p("NodeName=n[1-2] State=DRAIN Reason=disk"),
            Ok(Command::UpdateNodes { nodes: "n[1-2]".into(), state: "drain".into(), reason: "disk".into() })
        );
        assert!(p("NodeName=n1").unwrap_err().contains("State= is required"));
        assert!(p("NodeName=n1 State=drain Weight=3").unwrap_err().contains("'Weight'"));
        assert!(p("NodeName=n[1- State=drain").unwrap_err().starts_with("NodeName:"));
    }
}
