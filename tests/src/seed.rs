//! What the load commands seed: jobs as sbatch leaves them, written straight
//! into a store so a queue of 100,000 is set up in seconds and the
//! controller loads it as it would after a restart.

use spur_daemon::jobs::env::Env;
use spur_daemon::jobs::{KIND_JOB, record::JobRecord};

/// A batch script of the size users submit.
pub fn script(id: u64) -> String {
    format!("#!/bin/sh\n#SBATCH -J job{id}\nsrun ./simulate --step {id} --out /scratch/run\n")
}

/// The 20 exported variables of a job, as sbatch's --export=ALL would send a short environment.
pub fn env(id: u64) -> Env {
    let vars: Vec<(String, String)> =
        (0..20).map(|i| (format!("VAR{i}"), format!("value-{i}-{id}"))).collect();
    Env::from_pairs(vars.iter().map(|(k, v)| (k.as_str(), v.as_str()))).expect("plain names")
}

/// Writes `make(id)` for every id into the store at `db_url`, 10,000 a transaction.
pub async fn jobs(
    db_url: &str,
    ids: impl Iterator<Item = u64>,
    make: impl Fn(u64) -> JobRecord,
) -> anyhow::Result<()> {
    let store = spur_daemon::store::open(db_url).await?;
    let ids: Vec<u64> = ids.collect();
    for chunk in ids.chunks(10_000) {
        let docs = chunk
            .iter()
            .map(|&id| Ok((id.to_string(), Some(serde_json::to_string(&make(id))?))))
            .collect::<anyhow::Result<Vec<_>>>()?;
        store.put_raw(KIND_JOB, &docs).await?;
    }
    store.close().await;
    Ok(())
}
