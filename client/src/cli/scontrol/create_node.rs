//! `scontrol create NodeName=N CPUs=N RealMemory=M [Gres=..] [Features=..]
//! [HRES=JSON] State=CLOUD|FUTURE` and `scontrol delete NodeName=N`: dynamic
//! nodes, as Slurm's. A created node waits for its agent (`spurd --dynamic
//! --nodes N ...`) to register under its name.

use super::command::Command;
use crate::cli::fmt::status;
use crate::cli::kv::Pair;
use crate::conn::Clients;
use spur_proto::v1 as pb;
use spur_vocab::dynamic::{check_name, parse_hres};

/// Whether a `create` or `delete` line names a node (`NodeName=` first).
pub fn names_node(args: &[String]) -> bool {
    args.first().and_then(|w| w.split_once('=')).is_some_and(|(k, _)| k.eq_ignore_ascii_case("nodename"))
}

/// The pairs of `create NodeName=...`; each bad value names its key.
pub fn parse_create(pairs: &[Pair]) -> Result<Command, String> {
    let (mut name, mut node) = (String::new(), pb::DynamicNode::default());
    let (mut cpus, mut mem) = (None, None);
    for Pair { key, value } in pairs {
        let number = |v: &str| v.trim().parse::<u64>().map_err(|_| format!("{key}: '{v}' is not a number"));
        match key.to_ascii_lowercase().as_str() {
            "nodename" => name = value.trim().to_string(),
            "cpus" | "cputot" => {
                let n =
                    u32::try_from(number(value)?).map_err(|_| format!("{key}: '{value}' is too large"))?;
                cpus = Some(n);
            }
            "realmemory" => mem = Some(number(value)?),
            "gres" => node.gres = value.clone(),
            "features" | "feature" => node.features = vec![value.clone()],
            "hres" => {
                parse_hres(value).map_err(|e| format!("HRES: {e}"))?;
                node.hres = value.clone();
            }
            "state" => node.state = value.trim().to_ascii_uppercase(),
            _ => {
                return Err(format!(
                    "create node: '{key}' is not a key Spur takes here \
                     (NodeName=, CPUs=, RealMemory=, Gres=, Features=, HRES=, State=)"
                ));
            }
        }
    }
    check_name(&name).map_err(|e| format!("NodeName: {e}"))?;
    node.cpus = match cpus {
        None => return Err("CPUs: required (the node's CPU count)".into()),
        Some(0) => return Err("CPUs: must be at least 1".into()),
        Some(c) => c,
    };
    node.memory_mb = mem.ok_or("RealMemory: required (the node's memory in MB)")?;
    if !matches!(node.state.as_str(), "CLOUD" | "FUTURE") {
        return Err(format!(
            "State: '{}': a created node is State=CLOUD or State=FUTURE (it waits for its agent)",
            node.state
        ));
    }
    Ok(Command::CreateNode { name, node })
}

/// `delete NodeName=N`: one name.
pub fn parse_delete(pairs: &[Pair]) -> Result<Command, String> {
    let [Pair { key, value }] = pairs else {
        return Err("delete node: give NodeName=NAME alone".into());
    };
    if !key.eq_ignore_ascii_case("nodename") {
        return Err(format!("delete node: '{key}' is not NodeName="));
    }
    check_name(value.trim()).map_err(|e| format!("NodeName: {e}"))?;
    Ok(Command::DeleteNode(value.trim().to_string()))
}

/// Creates the node; a layer it could not join comes back as the warning.
pub async fn create(name: &str, node: &pb::DynamicNode, c: &mut Clients) -> Result<Option<String>, String> {
    let req = pb::CreateNodeRequest { name: name.into(), node: Some(node.clone()) };
    let resp = c.nodes.create_node(req).await.map_err(status)?.into_inner();
    Ok(Some(resp.warning).filter(|w| !w.is_empty()))
}

pub async fn delete(name: &str, c: &mut Clients) -> Result<String, String> {
    c.nodes.delete_node(pb::DeleteNodeRequest { name: name.into() }).await.map_err(status)?;
    Ok(String::new())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::cli::kv;

    fn words(s: &str) -> Vec<String> {
        s.split_whitespace().map(String::from).collect()
    }

    fn create(s: &str) -> Result<Command, String> {
        parse_create(&kv::pairs(&words(s)).unwrap())
    }

    #[test]
    fn create_takes_slurm_s_keys_and_names_each_bad_one() {
        let Ok(Command::CreateNode { name, node }) = create(
            r#"NodeName=dyn1 CPUs=4 RealMemory=2048 Gres=gpu:1 Features=a,b State=cloud HRES=[{"hres_name":"p","layer_name":"l"}]"#,
        ) else {
            panic!("parsed")
        };
        assert_eq!(
            (name.as_str(), node.cpus, node.memory_mb, node.state.as_str()),
            ("dyn1", 4, 2048, "CLOUD")
        );
        assert!(names_node(&words("NodeName=dyn1 CPUs=1")));
        assert!(!names_node(&words("reservation x")));
        assert!(create("NodeName=d RealMemory=1 State=CLOUD").unwrap_err().starts_with("CPUs:"));
        assert!(create("NodeName=d CPUs=x RealMemory=1 State=CLOUD").unwrap_err().starts_with("CPUs:"));
        assert!(create("NodeName=d CPUs=1 State=CLOUD").unwrap_err().starts_with("RealMemory:"));
        assert!(create("NodeName=d CPUs=1 RealMemory=1").unwrap_err().starts_with("State:"));
        assert!(create("NodeName=d CPUs=1 RealMemory=1 State=IDLE").unwrap_err().starts_with("State:"));
        assert!(
            create("NodeName=d[1-2] CPUs=1 RealMemory=1 State=CLOUD").unwrap_err().starts_with("NodeName:")
        );
        assert!(
            create("NodeName=d CPUs=1 RealMemory=1 State=CLOUD HRES=[").unwrap_err().starts_with("HRES:")
        );
        assert!(
            create("NodeName=d CPUs=1 RealMemory=1 State=CLOUD Weight=2").unwrap_err().contains("'Weight'")
        );
    }

    #[test]
    fn delete_takes_one_name() {
        let d = |s: &str| parse_delete(&kv::pairs(&words(s)).unwrap());
        assert_eq!(d("NodeName=dyn1"), Ok(Command::DeleteNode("dyn1".into())));
        assert!(d("NodeName=a,b").unwrap_err().starts_with("NodeName:"));
        assert!(d("NodeName=a CPUs=1").is_err());
    }
}
