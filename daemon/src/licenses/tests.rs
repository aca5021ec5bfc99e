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
