//! `--distribution`: every form of the man page parses and prints back, bad
//! words are named, and the layouts match srun's man page examples.

use spur_vocab::distribution::{CpuDist, Distribution, NodeDist};

/// Given, its levels and Pack, as shown, as SLURM_DISTRIBUTION.
type Row =
    (&'static str, NodeDist, Option<CpuDist>, Option<CpuDist>, Option<bool>, &'static str, &'static str);

#[test]
fn the_man_page_s_forms_parse_and_print_back() {
    let table: &[Row] = &[
        ("block", NodeDist::Block, None, None, None, "block", "block"),
        ("*", NodeDist::Block, None, None, None, "block", "block"),
        ("Cyclic", NodeDist::Cyclic, None, None, None, "cyclic", "cyclic"),
        ("plane=4", NodeDist::Plane(4), None, None, None, "plane=4", "plane"),
        ("arbitrary", NodeDist::Arbitrary, None, None, None, "arbitrary", "arbitrary"),
        ("cyclic:block", NodeDist::Cyclic, Some(CpuDist::Block), None, None, "cyclic:block", "cyclic:block"),
        ("*:*", NodeDist::Block, Some(CpuDist::Default), None, None, "block:*", "block:cyclic"),
        (
            "block:fcyclic:*",
            NodeDist::Block,
            Some(CpuDist::Fcyclic),
            Some(CpuDist::Default),
            None,
            "block:fcyclic:*",
            "block:fcyclic:fcyclic",
        ),
        ("block,Pack", NodeDist::Block, None, None, Some(true), "block,Pack", "block"),
        (
            "cyclic:cyclic:block,nopack",
            NodeDist::Cyclic,
            Some(CpuDist::Cyclic),
            Some(CpuDist::Block),
            Some(false),
            "cyclic:cyclic:block,NoPack",
            "cyclic:cyclic:block",
        ),
    ];
    for &(given, nodes, sockets, cores, pack, shown, env) in table {
        let d = Distribution::parse(given).unwrap();
        assert_eq!(d, Distribution { nodes, sockets, cores, pack }, "{given}");
        assert_eq!(d.to_string(), shown, "{given}");
        assert_eq!(d.env_value(), env, "{given}");
        assert_eq!(Distribution::parse(shown).unwrap(), d, "{shown} reads back");
    }
    assert_eq!(Distribution::parse("plane=2").unwrap().plane_size(), Some(2));
    assert_eq!(Distribution::parse("cyclic").unwrap().plane_size(), None);
}

#[test]
fn bad_words_are_named_with_the_option() {
    for (given, names) in [
        ("round", "'round' is not *, block, cyclic, arbitrary or plane=N"),
        ("plane", "plane needs its size"),
        ("plane=0", "the plane size '0'"),
        ("plane=x", "the plane size 'x'"),
        ("plane=2:block", "plane takes no other levels"),
        ("block:sideways", "'sideways' is not *, block, cyclic or fcyclic"),
        ("block:block:block:block", "at most three levels"),
        ("block,Tight", "'Tight' is not Pack or NoPack"),
        ("", "'' is not"),
    ] {
        let e = Distribution::parse(given).unwrap_err();
        assert!(e.starts_with(&format!("--distribution: '{given}': ")) && e.contains(names), "{given}: {e}");
    }
}

#[test]
fn five_tasks_on_two_nodes_as_the_man_page_lays_them_out() {
    let ids = |d: &str| Distribution::parse(d).unwrap().layout(5, 2).unwrap();
    // block: consecutive tasks share a node, the first node one more.
    assert_eq!(ids("block"), [vec![0, 1, 2], vec![3, 4]]);
    // cyclic: consecutive tasks on consecutive nodes.
    assert_eq!(ids("cyclic"), [vec![0, 2, 4], vec![1, 3]]);
    // plane=2: blocks of two, dealt round-robin.
    assert_eq!(ids("plane=2"), [vec![0, 1, 4], vec![2, 3]]);
    // The man page's: four tasks on three nodes.
    let d = |d: &str| Distribution::parse(d).unwrap().layout(4, 3).unwrap();
    assert_eq!(d("block"), [vec![0, 1], vec![2], vec![3]]);
    assert_eq!(d("cyclic"), [vec![0, 3], vec![1], vec![2]]);
    assert_eq!(Distribution::parse("arbitrary").unwrap().layout(4, 3), None, "the list's own");
}

#[test]
fn arbitrary_s_list_keeps_repeats_in_order() {
    use spur_vocab::hostlist::{expand_bounded, expand_in_order};
    assert_eq!(expand_in_order("n2,n1,n[1-2]", 8, 8).unwrap(), ["n2", "n1", "n1", "n2"]);
    assert_eq!(expand_bounded("n2,n1,n[1-2]", 8, 8).unwrap(), ["n2", "n1"], "a node list names each once");
    assert!(expand_in_order("n[1-9]", 4, 8).unwrap_err().contains("more than 4 hosts"));
}
