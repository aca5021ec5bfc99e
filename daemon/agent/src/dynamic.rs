//! `spurd --dynamic`: the agent of one node that is not in spur.conf (Slurm's
//! `slurmd -Z`), which tells the controller the node's shape when it
//! registers. Its flags are checked here, each error naming its flag.

use spur_proto::v1 as pb;
use spur_vocab::dynamic::{check_name, parse_features, parse_gres, parse_hres};

/// The dynamic-node flags as given on the command line.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Flags {
    pub dynamic: bool,
    pub cpus: Option<u32>,
    pub memory_mb: Option<u64>,
    pub gres: Option<String>,
    pub features: Option<String>,
    pub hres: Option<String>,
}

/// The shape to register `nodes` with: None without `--dynamic` (when the
/// shape flags are refused too, since they would be ignored).
pub fn shape(nodes: &[String], f: &Flags) -> Result<Option<pb::DynamicNode>, String> {
    if !f.dynamic {
        let given = [
            ("--cpus", f.cpus.is_some()),
            ("--memory-mb", f.memory_mb.is_some()),
            ("--gres", f.gres.is_some()),
            ("--features", f.features.is_some()),
            ("--hres", f.hres.is_some()),
        ];
        return match given.iter().find(|(_, on)| *on) {
            Some((flag, _)) => {
                Err(format!("{flag}: only a --dynamic node is shaped here (spur.conf shapes the others)"))
            }
            None => Ok(None),
        };
    }
    let name = match nodes {
        [one] => one,
        _ => {
            return Err(format!(
                "--nodes: --dynamic registers exactly one node; {} given (run one spurd --dynamic per node)",
                nodes.len()
            ));
        }
    };
    check_name(name).map_err(|e| format!("--nodes: {e}"))?;
    let cpus = match f.cpus {
        None => return Err("--cpus: required with --dynamic (the node's CPU count)".into()),
        Some(0) => return Err("--cpus: must be at least 1".into()),
        Some(c) => c,
    };
    let memory_mb = f.memory_mb.ok_or("--memory-mb: required with --dynamic (the node's memory in MB)")?;
    let gres = f.gres.clone().unwrap_or_default();
    parse_gres(&gres).map_err(|e| format!("--gres: {e}"))?;
    let features = parse_features(&f.features).map_err(|e| format!("--features: {e}"))?;
    let hres = f.hres.clone().unwrap_or_default();
    parse_hres(&hres).map_err(|e| format!("--hres: {e}"))?;
    Ok(Some(pb::DynamicNode { cpus, memory_mb, gres, features, hres, state: String::new() }))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn full() -> Flags {
        Flags { dynamic: true, cpus: Some(4), memory_mb: Some(2048), ..Flags::default() }
    }

    #[test]
    fn a_dynamic_node_is_shaped_by_its_flags() {
        let f = Flags {
            gres: Some("gpu:1".into()),
            features: Some("a, b".into()),
            hres: Some(r#"[{"hres_name":"power","layer_name":"rack2"}]"#.into()),
            ..full()
        };
        let s = shape(&["dyn1".into()], &f).unwrap().unwrap();
        assert_eq!((s.cpus, s.memory_mb, s.gres.as_str()), (4, 2048, "gpu:1"));
        assert_eq!(s.features, vec!["a", "b"]);
        assert_eq!(shape(&["n1".into()], &Flags::default()), Ok(None));
    }

    #[test]
    fn each_bad_flag_is_named() {
        let one = ["dyn1".to_string()];
        let err = |nodes: &[String], f: Flags| shape(nodes, &f).unwrap_err();
        assert!(err(&one, Flags { cpus: None, ..full() }).starts_with("--cpus:"));
        assert!(err(&one, Flags { cpus: Some(0), ..full() }).starts_with("--cpus:"));
        assert!(err(&one, Flags { memory_mb: None, ..full() }).starts_with("--memory-mb:"));
        assert!(err(&["a".into(), "b".into()], full()).starts_with("--nodes:"));
        assert!(err(&one, Flags { hres: Some("[{".into()), ..full() }).starts_with("--hres:"));
        assert!(err(&one, Flags { gres: Some("gpu:x".into()), ..full() }).starts_with("--gres:"));
        let stray = Flags { dynamic: false, ..full() };
        assert!(err(&one, stray).starts_with("--cpus:"));
    }
}
