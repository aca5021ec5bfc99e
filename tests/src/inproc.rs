//! An in-process controller for load commands: spur.conf with four nodes
//! and no agents (jobs stay pending, so only the submit and event paths are
//! measured), SQLite in `dir`, on a loopback port.

use spur_daemon::config::Config;
use spur_daemon::controller::{self, Running};
use std::path::Path;

/// The controller and its URL.
pub async fn pending_only(dir: &Path) -> anyhow::Result<(Running, String)> {
    let conf = dir.join("spur.conf");
    std::fs::write(
        &conf,
        format!(
            "[[nodes]]\nname = \"n[1-4]\"\n[[partitions]]\nname = \"batch\"\nnodes = \"ALL\"\ndefault = true\n\
             [accounting]\ndatabase_url = \"sqlite://{}/load.db\"\n",
            dir.display()
        ),
    )?;
    let running = controller::start(Config::load(&conf)?, "127.0.0.1:0").await?;
    let url = format!("http://{}", running.addr());
    Ok((running, url))
}
