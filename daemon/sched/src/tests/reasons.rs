//! The reason table: one spelling per code, parsing back, and the TRES ids
//! the scheduler's dimensions use.

use crate::job::Dim;
use crate::{Reason, ReasonCode};
use spur_vocab::tres;
use std::collections::HashSet;

#[test]
fn every_code_round_trips_and_is_spelled_once() {
    let mut seen = HashSet::new();
    for code in ReasonCode::ALL {
        assert!(seen.insert(code.as_str()), "{} twice", code.as_str());
        assert_eq!(ReasonCode::parse(code.as_str()), Ok(*code));
        assert!(!code.description().is_empty());
    }
}

#[test]
fn parse_is_case_insensitive_and_names_unknown_codes() {
    let cases = [
        ("qosgrpnodelimit", Ok(ReasonCode::QOSGrpNodeLimit)),
        (" Resources ", Ok(ReasonCode::Resources)),
        ("MaxSubmitJobsPerAccount", Ok(ReasonCode::MaxSubmitJobsPerAccount)),
        ("NoSuchReason", Err("unknown reason code 'NoSuchReason'".to_string())),
    ];
    for (raw, want) in cases {
        assert_eq!(ReasonCode::parse(raw), want, "{raw}");
    }
}

#[test]
fn a_reason_without_facts_reads_its_description() {
    let r = Reason::new(ReasonCode::JobHeldUser, crate::Facts::None);
    assert_eq!(r.to_string(), "JobHeldUser: held by its user; release with scontrol release");
}

#[test]
fn dimensions_use_the_builtin_tres_ids() {
    let names = [(Dim::Cpu, "cpu"), (Dim::Mem, "mem"), (Dim::Gpu, "gres/gpu"), (Dim::Node, "node")];
    for (dim, name) in names {
        assert_eq!(tres::by_id(dim.tres_id()).map(|t| t.name), Some(name));
        assert_eq!(Dim::ALL[dim.index()], dim);
    }
}
