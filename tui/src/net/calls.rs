//! The accounting calls: the snapshot fetch and the writes.

use super::Client;
use crate::action::{Snapshot, WriteOp};
use spur_proto::v1::{DeleteRequest, KeyValue, ListRequest, SetMode, SetRequest, SetResponse};
use tonic::Status;

pub async fn fetch(client: &mut Client) -> Result<Snapshot, Status> {
    let (mut a, mut b, mut c) = (client.clone(), client.clone(), client.clone());
    let (qos, accounts, users) = tokio::try_join!(
        a.list_qos(ListRequest::default()),
        b.list_accounts(ListRequest::default()),
        c.list_users(ListRequest::default()),
    )?;
    let accounts = accounts.into_inner();
    Ok(Snapshot {
        qos: qos.into_inner().qos,
        cluster: accounts.cluster_name,
        accounts: accounts.accounts,
        users: users.into_inner().users,
    })
}

pub fn kv(key: &str, value: &str) -> KeyValue {
    KeyValue { key: key.into(), value: value.into() }
}

fn deleted(n: usize) -> String {
    if n == 1 { "1 record".into() } else { format!("{n} records") }
}

/// Run one write; the summary counts the records the controller says it changed.
// Request messages may grow fields (dry-run variants, cluster); new ones keep their defaults.
#[allow(clippy::needless_update)]
pub async fn write(client: &mut Client, op: WriteOp) -> Result<String, Status> {
    let changes = |r: tonic::Response<SetResponse>| r.into_inner().changes.len();
    let del = |w: Vec<KeyValue>| DeleteRequest { r#where: w, dry_run: false, ..Default::default() };
    match op {
        WriteOp::DeleteQos { names } => {
            let mut n = 0;
            for name in &names {
                n += changes(client.delete_qos(del(vec![kv("name", name)])).await?);
            }
            Ok(format!("deleted QOS {} ({} changed)", names.join(","), deleted(n)))
        }
        WriteOp::ModifyQos { name, set, .. } => {
            let req = SetRequest {
                mode: SetMode::Modify as i32,
                r#where: vec![kv("name", &name)],
                set: set.iter().map(|(k, v)| kv(k, v)).collect(),
                dry_run: false,
                ..Default::default()
            };
            let n = changes(client.set_qos(req).await?);
            Ok(format!("modified QOS {name} ({} changed)", deleted(n)))
        }
        WriteOp::DeleteAccount { names } => {
            let mut n = 0;
            for name in &names {
                n += changes(client.delete_account(del(vec![kv("name", name)])).await?);
            }
            Ok(format!("deleted account {} ({} changed)", names.join(","), deleted(n)))
        }
        WriteOp::DeleteUser { assocs } => {
            let mut n = 0;
            for (user, account) in &assocs {
                n += changes(client.delete_user(del(vec![kv("name", user), kv("account", account)])).await?);
            }
            Ok(format!("deleted {} association(s) ({} changed)", assocs.len(), deleted(n)))
        }
    }
}
