//! The HRES pane: layer trees per resource with usage bars and disabled
//! markers (snapshots at 80x24 and 120x40), the holders in the detail, and
//! re-reading the licenses when the cluster watch says they changed.

mod common;

use common::{draw, loaded};
use spur_console::{Action, ClusterUpdate, Effect, Msg, PaneId, Rpc, dispatch};
use spur_proto::v1::{License, LicenseHolder};

fn layer(name: &str, layer: &str, parent: &str, nodes: &str, conf: i64, base: u64, used: u64) -> License {
    let total = if conf < 0 { 0 } else { conf as u64 - base };
    License {
        name: name.into(),
        total,
        used,
        free: total.saturating_sub(used),
        infinite: conf < 0,
        layer_name: layer.into(),
        parent_name: parent.into(),
        nodes: nodes.into(),
        mode: match name {
            "power" => 3,
            "natural" => 1,
            _ => 2,
        },
        conf_total: conf,
        base_usage: base,
        ..License::default()
    }
}

/// The spec's example, part-used: power in the order resources.yaml lists it.
fn licenses() -> Vec<License> {
    let mut rack1 = layer("power", "rack1", "row1", "node[01-08]", 40000, 5000, 8000);
    rack1.base = "storage:5000".into();
    rack1.holders = vec![LicenseHolder { job_id: 12, amount: 8000 }];
    let mut rack3 = layer("power", "rack3", "row2", "node[17-24]", 40000, 0, 0);
    rack3.disable_layer = true;
    vec![
        License { name: "matlab".into(), total: 20, used: 2, free: 18, conf_total: 20, ..License::default() },
        layer("flat", "top", "", "node[01-32]", 24, 0, 12),
        layer("flat", "mid1", "", "node[01-16]", 16, 0, 12),
        layer("flat", "low1", "", "node[01-08]", 12, 0, 12),
        layer("natural", "top", "", "node[01-32]", 50, 0, 0),
        layer("natural", "low1", "", "node[01-16]", 100, 0, 100),
        layer("natural", "low2", "", "node[17-32]", -1, 0, 7),
        rack1,
        rack3,
        layer("power", "rack2", "row1", "node[09-16]", 40000, 0, 8000),
        layer("power", "rack4", "row2", "node[25-32]", 40000, 0, 0),
        layer("power", "row1", "datacenter", "node[01-16]", 60000, 8000, 16000),
        layer("power", "row2", "datacenter", "node[17-32]", 80000, 2000, 0),
        layer("power", "datacenter", "", "node[01-32]", 130000, 28000, 16000),
    ]
}

fn on_hres(size: (u16, u16)) -> spur_console::State {
    let mut state = loaded(false, size);
    dispatch(&mut state, Action::Net(Msg::Licenses(licenses())));
    dispatch(&mut state, Action::GoPane(PaneId::Hres));
    state
}

fn keys(state: &spur_console::State) -> Vec<String> {
    state.table(PaneId::Hres).unwrap().rows.into_iter().map(|r| r.key).collect()
}

#[test]
fn layers_nest_as_trees() {
    let state = on_hres((120, 40));
    let k = keys(&state);
    let at = |key: &str| k.iter().position(|x| x == key).unwrap_or_else(|| panic!("{key} in {k:?}"));
    // Mode 3 by parent: datacenter > row1 > rack1, rack2; modes 1-2 by containment.
    assert!(at("power/datacenter") < at("power/row1") && at("power/row1") < at("power/rack1"));
    assert!(at("power/rack2") < at("power/row2"));
    assert!(at("flat/top") < at("flat/mid1") && at("flat/mid1") < at("flat/low1"));
    assert_eq!(k[0], "matlab");
}

#[test]
fn hres_pane_snapshots() {
    for size in [(80, 24), (120, 40)] {
        let state = on_hres(size);
        let name = format!("hres_{}x{}", size.0, size.1);
        insta::assert_snapshot!(name, draw(&state).backend());
    }
}

#[test]
fn the_detail_lists_holders() {
    let d = on_hres((80, 24)).detail(PaneId::Hres, "power/rack1").unwrap();
    assert!(d.fields.contains(&("Base".into(), "storage:5000".into())), "{:?}", d.fields);
    assert_eq!(d.body, ["Held by 1 running job(s):", "  job 12         8000"]);
}

#[test]
fn the_detail_says_what_reservations_hold() {
    let mut held = licenses();
    let low1 = held.iter_mut().find(|l| l.name == "flat" && l.layer_name == "low1").unwrap();
    (low1.reserved, low1.used, low1.free) = (3, 0, 9);
    let mut state = loaded(false, (80, 24));
    dispatch(&mut state, Action::Net(Msg::Licenses(held)));
    let d = state.detail(PaneId::Hres, "flat/low1").unwrap();
    assert!(d.fields.contains(&("Reserved".into(), "3".into())), "{:?}", d.fields);
    assert!(d.fields.contains(&("Free".into(), "9".into())), "{:?}", d.fields);
    let d = state.detail(PaneId::Hres, "flat/top").unwrap();
    assert!(!d.fields.iter().any(|(k, _)| k == "Reserved"), "nothing held, nothing said");
}

#[test]
fn a_licenses_event_rereads_them() {
    let mut state = on_hres((80, 24));
    let up = ClusterUpdate { snapshot: true, ..Default::default() };
    dispatch(&mut state, Action::Net(Msg::Cluster(up)));
    let effects = dispatch(
        &mut state,
        Action::Net(Msg::Cluster(ClusterUpdate { licenses: true, ..Default::default() })),
    );
    assert!(effects.contains(&Effect::Rpc(Rpc::FetchLicenses)), "{effects:?}");
    let mut next = licenses();
    next[7].disable_layer = true;
    dispatch(&mut state, Action::Net(Msg::Licenses(next)));
    let rows = state.table(PaneId::Hres).unwrap().rows.into_iter();
    let rack1 = rows.into_iter().find(|r| r.key == "power/rack1").unwrap();
    assert_eq!(rack1.cells[1], "⊘ OFF");
}

/// One read in flight, plus one follow-up for the changes that came
/// meanwhile, as every pane's re-reads (a burst of license changes no longer
/// sends a read each); a refused read leaves the next change to read again.
#[test]
fn license_re_reads_are_coalesced() {
    let mut state = on_hres((80, 24));
    let up = ClusterUpdate { snapshot: true, ..Default::default() };
    dispatch(&mut state, Action::Net(Msg::Cluster(up)));
    let cue = || Action::Net(Msg::Cluster(ClusterUpdate { licenses: true, ..Default::default() }));
    let reads = |e: Vec<Effect>| e.iter().filter(|e| **e == Effect::Rpc(Rpc::FetchLicenses)).count();
    assert_eq!(reads(dispatch(&mut state, cue())), 1);
    assert_eq!(reads(dispatch(&mut state, cue())), 0, "a read is under way");
    assert_eq!(reads(dispatch(&mut state, cue())), 0, "a read is under way");
    assert_eq!(reads(dispatch(&mut state, Action::Net(Msg::Licenses(licenses())))), 1, "the follow-up");
    assert_eq!(reads(dispatch(&mut state, Action::Net(Msg::LicensesFailed))), 0);
    assert_eq!(reads(dispatch(&mut state, cue())), 1, "refused, then read on the next change");
    dispatch(&mut state, Action::Net(Msg::Licenses(licenses())));
    // The hint line offers `r refresh` here: it reads the licenses too.
    assert_eq!(reads(dispatch(&mut state, Action::Refresh)), 1);
}

#[test]
fn layers_a_plugin_disabled_or_downed_say_so_with_when_and_why() {
    let mut state = on_hres((80, 24));
    let mut all = licenses();
    let mut q1 = layer("qpu", "qpu1", "", "node[01-02]", 1, 0, 0);
    (q1.plugin, q1.plugin_path, q1.maintained_ms) = ("hres/lua".into(), "/etc/spur/qpu.lua".into(), 1_000);
    (q1.maintenance_rc, q1.maintenance_message) = ("SUCCESS".into(), "qpu1 calibrating".into());
    (q1.disable_layer, q1.plugin_mark, q1.plugin_mark_ms) = (true, "disabled".into(), 1_000);
    q1.plugin_mark_message = "qpu1 calibrating".into();
    let mut q2 = q1.clone();
    (q2.layer_name, q2.nodes, q2.plugin_mark) = ("qpu2".into(), "node[03-04]".into(), "down".into());
    all.extend([q1, q2]);
    dispatch(&mut state, Action::Net(Msg::Licenses(all)));
    let rows: Vec<_> = state.table(PaneId::Hres).unwrap().rows.into_iter().collect();
    let cell = |key: &str, i: usize| rows.iter().find(|r| r.key == key).map(|r| r.cells[i].clone()).unwrap();
    assert_eq!(cell("qpu/qpu1", 1), "⊘ PLUGIN");
    assert_eq!(cell("qpu/qpu2", 1), "⊘ DOWN");
    assert_eq!(cell("qpu", 8), "plugin hres/lua");
    let d = state.detail(PaneId::Hres, "qpu/qpu2").unwrap();
    let field = |k: &str| d.fields.iter().find(|(n, _)| n == k).map(|(_, v)| v.clone()).unwrap();
    assert_eq!(field("Plugin"), "hres/lua /etc/spur/qpu.lua");
    assert!(field("Maintenance").ends_with("SUCCESS qpu1 calibrating"), "{:?}", d.fields);
    assert!(
        field("PluginMark").starts_with("down by the plugin at ")
            && field("PluginMark").ends_with(": qpu1 calibrating")
    );
}

fn select(state: &mut spur_console::State, key: &str) {
    dispatch(state, Action::Top);
    for _ in 0..30 {
        if spur_console::update::nav::current_key(state).as_deref() == Some(key) {
            return;
        }
        dispatch(state, Action::Down);
    }
    panic!("no row {key}");
}

#[test]
fn an_administrator_toggles_a_layer_after_confirming() {
    use spur_console::WriteOp;
    use spur_console::model::session::Role;
    use spur_console::model::state::Mode;
    let mut state = on_hres((120, 40));
    dispatch(&mut state, Action::Net(Msg::Session(common::session(Role::Administrator))));
    select(&mut state, "power/rack1");
    let mut effects = dispatch(&mut state, Action::HresToggle);
    assert!(matches!(state.mode, Mode::Confirm(_)), "{:?}", state.mode);
    effects.extend(dispatch(&mut state, Action::Submit));
    assert!(effects.is_empty(), "focus starts on Cancel: {effects:?}");
    dispatch(&mut state, Action::HresToggle);
    dispatch(&mut state, Action::FocusNext);
    let effects = dispatch(&mut state, Action::Submit);
    let want = WriteOp::UpdateHres { resource: "power".into(), layer: "rack1".into(), disable: true };
    assert!(effects.contains(&Effect::Rpc(Rpc::Write(want))), "{effects:?}");
    // A resource's own row flips DisableHRES; a plain license has nothing to flip.
    select(&mut state, "power");
    dispatch(&mut state, Action::HresToggle);
    dispatch(&mut state, Action::FocusNext);
    let effects = dispatch(&mut state, Action::Submit);
    let want = WriteOp::UpdateHres { resource: "power".into(), layer: String::new(), disable: true };
    assert!(effects.contains(&Effect::Rpc(Rpc::Write(want))), "{effects:?}");
    dispatch(&mut state, Action::Top);
    assert!(dispatch(&mut state, Action::HresToggle).is_empty());
    assert!(state.last_error.clone().unwrap_or_default().contains("plain license"));
}

#[test]
fn toggling_needs_administrator_and_write_access() {
    use spur_console::model::session::Role;
    use spur_console::model::state::Mode;
    let mut state = on_hres((80, 24));
    dispatch(&mut state, Action::Net(Msg::Session(common::session(Role::Operator))));
    dispatch(&mut state, Action::HresToggle);
    assert!(matches!(state.mode, Mode::Normal));
    assert!(
        state.last_error.clone().unwrap_or_default().contains("needs Administrator"),
        "{:?}",
        state.last_error
    );
    let mut state = on_hres((80, 24));
    state.settings.read_only = true;
    dispatch(&mut state, Action::Net(Msg::Session(common::session(Role::Administrator))));
    dispatch(&mut state, Action::HresToggle);
    assert!(matches!(state.mode, Mode::Normal));
    assert!(state.last_error.clone().unwrap_or_default().contains("read-only"));
}
