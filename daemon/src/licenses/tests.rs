//! The service's table writes against a real store: concurrent updates of
//! one resource (an admin's, a plugin's maintenance) each keep the other's.

use super::*;

async fn service(dir: &std::path::Path) -> Arc<LicenseService> {
    std::fs::copy("../examples/hres/resources.yaml", dir.join("resources.yaml")).unwrap();
    std::fs::write(dir.join("spur.conf"), "[[nodes]]\nname = \"node[01-40]\"\n").unwrap();
    let cfg = Config::load(&dir.join("spur.conf")).unwrap();
    let store = crate::store::open(&format!("sqlite://{}/spur.db", dir.display())).await.unwrap();
    Arc::new(LicenseService::new(&cfg, Some(store)).await.unwrap())
}

fn layer(svc: &LicenseService, name: &str) -> (bool, usize) {
    let all = svc.hres();
    let r = all.iter().find(|r| r.name == "power").unwrap();
    let l = &r.layers[r.layer(name).unwrap()];
    (l.disabled, l.nodes.len())
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_node_move_and_a_plugin_s_layer_change_each_keep_the_other() {
    let dir = tempfile::tempdir().unwrap();
    let svc = service(dir.path()).await;
    let before = layer(&svc, "rack2").1;
    for round in 0..100 {
        let add = if round % 2 == 0 { "+node[33-36]" } else { "-node[33-36]" };
        let (a, b) = (svc.clone(), svc.clone());
        let moving = tokio::spawn(async move {
            let u = HresUpdate { layer: "rack2".into(), nodes: Some(add.into()), ..HresUpdate::default() };
            a.update("power", &u).await.map(|_| ())
        });
        let mark =
            (round % 2 == 0).then(|| plugins::Mark { state: "disabled", at_ms: 0, message: String::new() });
        let marking =
            tokio::spawn(async move { b.plugin_set_layer("power", "rack1", mark).await.map(|_| ()) });
        moving.await.unwrap().unwrap();
        marking.await.unwrap().unwrap();
        let want_nodes = if round % 2 == 0 { before + 4 } else { before };
        assert_eq!(layer(&svc, "rack2").1, want_nodes, "round {round}: the node move is kept");
        assert_eq!(layer(&svc, "rack1").0, round % 2 == 0, "round {round}: the plugin's change is kept");
    }
}

fn nodes_of(svc: &LicenseService, res: &str, layer: &str) -> Vec<String> {
    let all = svc.hres();
    let r = all.iter().find(|r| r.name == res).unwrap();
    r.layers[r.layer(layer).unwrap()].nodes.clone()
}

fn pair(res: &str, layer: &str) -> spur_vocab::dynamic::HresPair {
    spur_vocab::dynamic::HresPair { hres_name: res.into(), layer_name: layer.into() }
}

/// The spec's Dynamic Nodes: a node joins the listed layers and their
/// parents, an unsuitable layer joins it to none, and a delete takes it off
/// every layer, also the saved membership of a layer changed at run time.
#[tokio::test]
async fn a_dynamic_node_joins_its_layers_and_their_parents_and_leaves_them_all() {
    let dir = tempfile::tempdir().unwrap();
    let svc = service(dir.path()).await;
    let dc = nodes_of(&svc, "power", "datacenter").len();
    let layers = [pair("power", "rack2"), pair("natural", "low1")];
    assert_eq!(svc.join_dynamic("dyn1", &layers).await, None);
    for (res, layer) in [("power", "rack2"), ("power", "row1"), ("power", "datacenter"), ("natural", "low1")]
    {
        assert!(nodes_of(&svc, res, layer).contains(&"dyn1".to_string()), "{res}/{layer}");
    }
    assert!(!nodes_of(&svc, "power", "rack1").contains(&"dyn1".to_string()));
    assert_eq!(nodes_of(&svc, "power", "datacenter").len(), dc + 1);

    // Rebuilt from resources.yaml (a reconfigure), it is there again.
    let cfg = Config::load(&dir.path().join("spur.conf")).unwrap();
    svc.reconfigure(&cfg).await.unwrap();
    assert!(nodes_of(&svc, "power", "row1").contains(&"dyn1".to_string()));

    // An admin moves it at run time too (saved), then it is deleted.
    let u = HresUpdate { layer: "low2".into(), nodes: Some("+dyn1".into()), ..HresUpdate::default() };
    svc.update("natural", &u).await.unwrap();
    svc.leave_dynamic("dyn1").await.unwrap();
    for (res, layer) in [("power", "datacenter"), ("natural", "low1"), ("natural", "low2")] {
        assert!(!nodes_of(&svc, res, layer).contains(&"dyn1".to_string()), "{res}/{layer}");
    }
    let restarted = service(dir.path()).await;
    assert!(!nodes_of(&restarted, "natural", "low2").contains(&"dyn1".to_string()));

    // An agent naming other layers than before leaves the old ones.
    svc.join_dynamic("dyn3", &[pair("natural", "low1")]).await;
    svc.join_dynamic("dyn3", &[pair("natural", "low2")]).await;
    assert!(!nodes_of(&svc, "natural", "low1").contains(&"dyn3".to_string()));
    assert!(nodes_of(&svc, "natural", "low2").contains(&"dyn3".to_string()));

    // Unsuitable: a MODE_3 parent, two leaves of one MODE_3 resource, an unknown layer.
    for bad in [
        vec![pair("power", "row1")],
        vec![pair("power", "rack1"), pair("power", "rack2")],
        vec![pair("natural", "low1"), pair("flat", "nope")],
    ] {
        let e = svc.join_dynamic("dyn2", &bad).await.expect("refused");
        assert!(e.starts_with("HRES: "), "{e}");
        assert!(!nodes_of(&svc, "natural", "low1").contains(&"dyn2".to_string()), "{bad:?}: none joined");
    }
}
