//! A registration's facts resolved to each node's: the host's values with
//! every `--facts` override naming the node applied in order. An agent
//! simulating a thousand nodes sends one host's facts and a few overrides,
//! so nodes whose facts come out the same share one `Arc` and the
//! controller's memory grows with the distinct facts, not the nodes.

use crate::error::{Error, Result};
use crate::model::HostFacts;
use spur_proto::v1 as pb;
use spur_vocab::hostlist;
use std::collections::{BTreeMap, HashMap, HashSet};
use std::sync::Arc;

pub use crate::model::{MAX_FACTS, MAX_MODALIASES, MAX_OVERRIDES, MAX_TEXT};

/// What makes two nodes' facts the same, as a key (`HostFacts` is not `Hash`).
type Content = (BTreeMap<String, String>, Vec<String>);

/// The facts of each of `req.nodes`, in order. Refuses a request past the
/// bounds or with an override naming a node the agent does not host, so a
/// refused agent leaves every node as it was.
pub fn resolve(req: &pb::RegisterRequest) -> Result<Vec<Arc<HostFacts>>> {
    let empty = pb::HostFacts::default();
    let host = req.facts.as_ref().unwrap_or(&empty);
    check_map("facts.values", &host.values)?;
    check_list("facts.modaliases", &host.modaliases)?;
    let named = overrides(req)?;
    // Nodes named by the same overrides get the same facts: resolved once.
    let mut by_overrides: HashMap<Vec<usize>, Arc<HostFacts>> = HashMap::new();
    let mut distinct: HashMap<Content, Arc<HostFacts>> = HashMap::new();
    let mut out = Vec::with_capacity(req.nodes.len());
    for node in &req.nodes {
        let applied: Vec<usize> = (0..named.len()).filter(|i| named[*i].contains(node.as_str())).collect();
        let facts = by_overrides.entry(applied).or_insert_with_key(|applied| {
            let f = apply(host, applied.iter().map(|i| &req.fact_overrides[*i]));
            // Different overrides may still agree (one sets what the host has).
            distinct.entry((f.values.clone(), f.modaliases.clone())).or_insert_with(|| Arc::new(f)).clone()
        });
        out.push(facts.clone());
    }
    Ok(out)
}

/// The nodes each override names, checked against the agent's nodes.
fn overrides(req: &pb::RegisterRequest) -> Result<Vec<HashSet<&str>>> {
    if req.fact_overrides.len() > MAX_OVERRIDES {
        let n = req.fact_overrides.len();
        return Err(Error::invalid("fact_overrides", format!("{n} overrides; at most {MAX_OVERRIDES}")));
    }
    let hosted: HashSet<&str> = req.nodes.iter().map(String::as_str).collect();
    let mut named = Vec::with_capacity(req.fact_overrides.len());
    for (i, o) in req.fact_overrides.iter().enumerate() {
        let bad = |what: String| Error::invalid("fact_overrides", format!("entry {}: {what}", i + 1));
        if o.nodes.len() > MAX_TEXT {
            return Err(bad(format!("nodes is longer than {MAX_TEXT} bytes")));
        }
        // No list naming more nodes than the agent hosts can be valid, so none builds more names.
        let longest = req.nodes.iter().map(String::len).max().unwrap_or(0);
        let names = hostlist::expand_bounded(&o.nodes, req.nodes.len(), longest)
            .map_err(|e| bad(format!("nodes: {e}")))?;
        let mut set = HashSet::with_capacity(names.len());
        for n in &names {
            let Some(h) = hosted.get(n.as_str()) else {
                return Err(bad(format!("nodes: '{n}' is not one of the agent's nodes")));
            };
            set.insert(*h);
        }
        check_map("values", &o.values).map_err(|e| bad(e.to_string()))?;
        check_list("modaliases", &o.modaliases).map_err(|e| bad(e.to_string()))?;
        named.push(set);
    }
    Ok(named)
}

fn apply<'a>(host: &pb::HostFacts, overrides: impl Iterator<Item = &'a pb::FactsOverride>) -> HostFacts {
    let mut f =
        HostFacts { values: host.values.clone().into_iter().collect(), modaliases: host.modaliases.clone() };
    for o in overrides {
        f.values.extend(o.values.iter().map(|(k, v)| (k.clone(), v.clone())));
        if o.has_modaliases {
            f.modaliases.clone_from(&o.modaliases);
        }
    }
    f
}

fn check_map(field: &str, values: &HashMap<String, String>) -> Result<()> {
    if values.len() > MAX_FACTS {
        return Err(Error::invalid(field, format!("{} facts; at most {MAX_FACTS}", values.len())));
    }
    for (k, v) in values {
        if k.len() > MAX_TEXT || v.len() > MAX_TEXT {
            let k: String = k.chars().take(64).collect();
            return Err(Error::invalid(field, format!("fact '{k}' is longer than {MAX_TEXT} bytes")));
        }
    }
    Ok(())
}

fn check_list(field: &str, list: &[String]) -> Result<()> {
    if list.len() > MAX_MODALIASES {
        return Err(Error::invalid(field, format!("{} modaliases; at most {MAX_MODALIASES}", list.len())));
    }
    if list.iter().any(|m| m.len() > MAX_TEXT) {
        return Err(Error::invalid(field, format!("a modalias is longer than {MAX_TEXT} bytes")));
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn host() -> pb::HostFacts {
        pb::HostFacts {
            values: [("uname.sysname", "Linux"), ("cpuinfo.cpu_cores", "8")]
                .into_iter()
                .map(|(k, v)| (k.into(), v.into()))
                .collect(),
            modaliases: vec!["pci:host".into()],
        }
    }

    fn over(nodes: &str, values: &[(&str, &str)], modaliases: Option<&[&str]>) -> pb::FactsOverride {
        pb::FactsOverride {
            nodes: nodes.into(),
            values: values.iter().map(|(k, v)| (k.to_string(), v.to_string())).collect(),
            modaliases: modaliases.unwrap_or_default().iter().map(|m| m.to_string()).collect(),
            has_modaliases: modaliases.is_some(),
        }
    }

    fn req(nodes: &str, overrides: Vec<pb::FactsOverride>) -> pb::RegisterRequest {
        pb::RegisterRequest {
            nodes: hostlist::expand(nodes).unwrap(),
            facts: Some(host()),
            fact_overrides: overrides,
            ..Default::default()
        }
    }

    #[test]
    fn overrides_apply_in_order_over_the_host() {
        let r = req(
            "n[1-4]",
            vec![
                over("n[1-2]", &[("cpuinfo.cpu_cores", "64"), ("cpuinfo.vendor_id", "AuthenticAMD")], None),
                over("n2", &[("cpuinfo.cpu_cores", "128")], Some(&["pci:gpu"])),
                over("n3", &[], Some(&[])),
            ],
        );
        let f = resolve(&r).unwrap();
        assert_eq!(f[0].get("cpuinfo.cpu_cores"), Some("64"));
        assert_eq!(f[0].get("cpuinfo.vendor_id"), Some("AuthenticAMD"));
        assert_eq!(f[0].modaliases, ["pci:host"], "kept when the override has none");
        assert_eq!(f[1].get("cpuinfo.cpu_cores"), Some("128"), "the later override wins");
        assert_eq!(f[1].get("cpuinfo.vendor_id"), Some("AuthenticAMD"), "values merge");
        assert_eq!(f[1].modaliases, ["pci:gpu"]);
        assert!(f[2].modaliases.is_empty(), "an empty list replaces the host's");
        assert_eq!(f[2].get("cpuinfo.cpu_cores"), Some("8"));
        assert_eq!(
            *f[3],
            HostFacts { values: host().values.into_iter().collect(), modaliases: vec!["pci:host".into()] }
        );
    }

    #[test]
    fn nodes_with_the_same_facts_share_one_arc() {
        let f = resolve(&req("sim[0001-1000]", vec![])).unwrap();
        assert_eq!(f.len(), 1000);
        assert!(f.iter().all(|x| Arc::ptr_eq(x, &f[0])));
        // An override that changes nothing still shares the host's facts.
        let f = resolve(&req("n[1-3]", vec![over("n2", &[("uname.sysname", "Linux")], None)])).unwrap();
        assert!(Arc::ptr_eq(&f[0], &f[1]) && Arc::ptr_eq(&f[0], &f[2]));
        let f = resolve(&req("n[1-3]", vec![over("n[2-3]", &[("cpuinfo.cpu_cores", "2")], None)])).unwrap();
        assert!(!Arc::ptr_eq(&f[0], &f[1]) && Arc::ptr_eq(&f[1], &f[2]));
    }

    #[test]
    fn bad_overrides_and_oversized_facts_are_refused_naming_the_field() {
        let err = |r: pb::RegisterRequest| resolve(&r).unwrap_err().to_string();
        let e = err(req("n[1-2]", vec![over("n[1-", &[], None)]));
        assert!(e.contains("fact_overrides: entry 1: nodes:"), "{e}");
        let e = err(req("n[1-2]", vec![over("n1", &[], None), over("n3", &[], None)]));
        assert!(e.contains("fact_overrides: entry 2: nodes: 'n3' is not one of the agent's nodes"), "{e}");
        let e = err(req("n[1-2]", vec![over("m[1-1000000]", &[], None)]));
        assert!(e.contains("more than 2 hosts"), "built no million names: {e}");
        let mut r = req("n1", vec![]);
        r.facts.as_mut().unwrap().values.insert("big".into(), "x".repeat(MAX_TEXT + 1));
        assert!(err(r).contains("facts.values: fact 'big' is longer than 4096 bytes"));
        let mut r = req("n1", vec![]);
        r.facts.as_mut().unwrap().values = (0..=MAX_FACTS).map(|i| (i.to_string(), String::new())).collect();
        assert!(err(r).contains("facts.values: 65 facts; at most 64"));
        let many: Vec<String> = (0..=MAX_MODALIASES).map(|i| i.to_string()).collect();
        let many: Vec<&str> = many.iter().map(String::as_str).collect();
        let e = err(req("n1", vec![over("n1", &[], Some(&many))]));
        assert!(e.contains("fact_overrides: entry 1: modaliases: 1025 modaliases"), "{e}");
        let e = err(req("n1", (0..=MAX_OVERRIDES).map(|_| over("n1", &[], None)).collect()));
        assert!(e.contains("fact_overrides: 257 overrides; at most 256"), "{e}");
    }

    /// Through the node service: stored per node, shared, and replaced by a new registration.
    #[tokio::test]
    async fn registration_stores_each_nodes_facts() {
        let text = "[[nodes]]\nname = \"n[1-3]\"\n[[partitions]]\nname = \"p\"\nnodes = \"n[1-3]\"\n";
        let cfg = crate::config::Config::parse(text, "spur.conf", "/etc/spur".into()).unwrap();
        let hub = Arc::new(crate::audit::Hub::new(None));
        let admission = Arc::new(crate::admission::Admission::load(cfg.admission.mode, None).await.unwrap());
        let svc = super::super::NodeService::new(&cfg, None, hub, admission).await.unwrap();
        let facts = |svc: &super::super::NodeService, n: &str| svc.read().nodes[n].facts.clone();
        assert!(facts(&svc, "n1").is_none(), "no facts before registration");
        let r = req("n[1-3]", vec![over("n3", &[("cpuinfo.cpu_cores", "64")], None)]);
        svc.register(&r, 0).unwrap();
        let (n1, n2, n3) =
            (facts(&svc, "n1").unwrap(), facts(&svc, "n2").unwrap(), facts(&svc, "n3").unwrap());
        assert!(Arc::ptr_eq(&n1, &n2));
        assert_eq!(n3.get("cpuinfo.cpu_cores"), Some("64"));
        assert_eq!(n3.get("uname.sysname"), Some("Linux"));
        svc.register(&req("n3", vec![]), 0).unwrap();
        assert_eq!(
            facts(&svc, "n3").unwrap().get("cpuinfo.cpu_cores"),
            Some("8"),
            "the newest agent's facts"
        );
        let bad = req("n[1-3]", vec![over("n4", &[], None)]);
        let e = svc.register(&bad, 0).unwrap_err();
        assert!(matches!(e, Error::InvalidArgument(_)), "{e}");
        assert_eq!(
            facts(&svc, "n3").unwrap().get("cpuinfo.cpu_cores"),
            Some("8"),
            "a refusal changes nothing"
        );
    }

    #[test]
    fn an_agent_that_sends_no_facts_gives_its_nodes_empty_ones() {
        let r = pb::RegisterRequest { nodes: vec!["n1".into()], ..Default::default() };
        assert_eq!(*resolve(&r).unwrap()[0], HostFacts::default());
    }
}
