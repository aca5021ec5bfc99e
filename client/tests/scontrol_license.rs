//! `scontrol show license` in the spec's layout, and `update HRESName=` parsing.

use spur_client::cli::scontrol::license::license_record;
use spur_client::cli::scontrol::{Command, parse};
use spur_proto::v1::License;

fn args(line: &str) -> Vec<String> {
    line.split_whitespace().map(String::from).collect()
}

#[test]
fn a_layer_prints_as_the_spec_shows_it() {
    let rack1 = License {
        name: "power".into(),
        total: 35000,
        free: 35000,
        layer_name: "rack1".into(),
        parent_name: "row1".into(),
        nodes: "node[01-08]".into(),
        mode: 3,
        conf_total: 40000,
        base_usage: 5000,
        base: "storage:5000".into(),
        ..License::default()
    };
    assert_eq!(
        license_record(&rack1, false),
        "LicenseName=power\n   Total=35000 Used=0 Free=35000 Reserved=0 Remote=no\n   \
         LayerName=rack1 ParentName=row1 Nodes=node[01-08] Mode=3 DisableHRES=false DisableLayer=false \
         ConfTotal=40000 BaseUsage=5000\n   Base=storage:5000\n\n"
    );
    let matlab = License { name: "matlab".into(), total: 20, used: 2, free: 18, ..License::default() };
    assert_eq!(
        license_record(&matlab, true),
        "LicenseName=matlab Total=20 Used=2 Free=18 Reserved=0 Remote=no\n"
    );
    let inf = License {
        name: "natural".into(),
        layer_name: "x".into(),
        infinite: true,
        conf_total: -1,
        ..License::default()
    };
    assert!(license_record(&inf, true).contains("Total=UNLIMITED Used=0 Free=UNLIMITED"));
}

#[test]
fn hres_updates_are_checked_before_sending() {
    let (_, cmd) =
        parse(&args("update HRESName=power LayerName=rack2 Nodes=+node[33-36] Count=45000")).unwrap();
    let Command::UpdateHres(r) = cmd else { panic!("{cmd:?}") };
    assert_eq!((r.hres_name.as_str(), r.layer_name.as_str()), ("power", "rack2"));
    assert_eq!((r.nodes.as_deref(), r.count), (Some("+node[33-36]"), Some(45000)));
    let (_, cmd) = parse(&args("update HRESName=power LayerName=rack1 Base=")).unwrap();
    let Command::UpdateHres(r) = cmd else { panic!("{cmd:?}") };
    assert_eq!(r.base.as_deref(), Some(""));
    for (line, says) in [
        ("update HRESName=power DisableHRES=yes", "DisableHRES: 'yes' is neither true nor false"),
        ("update HRESName=power LayerName=x Count=-2", "Count: '-2'"),
        ("update HRESName=power LayerName=x Nodes=node[1-", "Nodes:"),
        ("update HRESName=power Colour=red", "'Colour' is not a key"),
        ("update HRESName= DisableHRES=true", "HRESName: needs a resource name"),
    ] {
        let e = parse(&args(line)).unwrap_err();
        assert!(e.contains(says), "{line}: {e}");
    }
    assert_eq!(parse(&args("show license power")).unwrap().1, Command::ShowLicenses(Some("power".into())));
    assert_eq!(parse(&args("show lic")).unwrap().1, Command::ShowLicenses(None));
}
