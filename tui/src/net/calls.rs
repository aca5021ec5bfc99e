//! The unary calls: the snapshot fetch, single-list re-reads, the job
//! list and the writes.

use super::{Client, JobsClient, LicensesClient, NodesClient, ResvClient};
use crate::model::action::{Catalog, CatalogList, Snapshot};
use crate::model::jobs::{JobOp, JobSet, id_list};
use crate::model::write::{NodeOp, WriteOp, subject};
use spur_proto::v1::{
    CancelRequest, DeleteRequest, KeyValue, ListRequest, SetMode, SetRequest, SetResponse, UpdateJobRequest,
    UpdateNodesRequest,
};
use spur_vocab::hostlist;
use spur_vocab::keys::Entity;
use std::sync::Arc;
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

/// Re-read one list after the watch said it changed.
pub async fn fetch_list(client: &mut Client, list: Catalog) -> Result<CatalogList, Status> {
    Ok(match list {
        Catalog::Qos => CatalogList::Qos(client.list_qos(ListRequest::default()).await?.into_inner().qos),
        Catalog::Accounts => {
            let r = client.list_accounts(ListRequest::default()).await?.into_inner();
            CatalogList::Accounts { cluster: r.cluster_name, accounts: r.accounts }
        }
        Catalog::Users => {
            CatalogList::Users(client.list_users(ListRequest::default()).await?.into_inner().users)
        }
    })
}

/// Every job the controller keeps (pending, running and those recently
/// ended), compacted here, off the UI thread: 100,000 jobs take a while.
pub async fn fetch_jobs(jobs: &mut JobsClient) -> Result<Arc<JobSet>, Status> {
    let answer = jobs.list_jobs(ListRequest::default()).await?.into_inner();
    let now = chrono::Utc::now().timestamp_millis();
    let set = tokio::task::spawn_blocking(move || JobSet::from_pb(answer.jobs, now).at_seq(answer.seq))
        .await
        .map_err(|e| Status::internal(format!("compacting the job list failed: {e}")))?;
    Ok(Arc::new(set))
}

/// Cancel in one call; hold, release and requeue one job at a time (the
/// controller's UpdateJob takes one id). Jobs done before a refusal are
/// reported as done, with the refusal as the warning.
async fn update_jobs(jobs: &mut JobsClient, op: JobOp, ids: Vec<u64>) -> Result<Written, Status> {
    if op == JobOp::Cancel {
        let req = CancelRequest { ids: ids.clone(), ..CancelRequest::default() };
        let done = jobs.cancel(req).await?.into_inner().cancelled;
        let ended: Vec<u64> = ids.iter().copied().filter(|id| !done.contains(id)).collect();
        let warning = (!ended.is_empty()).then(|| format!("{} had already ended", id_list(&ended, ",", 20)));
        return Ok(Written { summary: format!("cancelled {}", id_list(&done, ",", 20)), warning });
    }
    let mut done = Vec::new();
    for id in &ids {
        let req = UpdateJobRequest { id: *id, set: vec![KeyValue::new("action", op.action())] };
        match jobs.update_job(req).await {
            Ok(_) => done.push(*id),
            Err(s) if done.is_empty() => return Err(s),
            Err(s) => {
                let warning = format!("job {id}: {:?}: {}", s.code(), s.message());
                return Ok(Written {
                    summary: format!("{} {}", op.done(), id_list(&done, ",", 20)),
                    warning: Some(warning),
                });
            }
        }
    }
    Ok(Written { summary: format!("{} {}", op.done(), id_list(&done, ",", 20)), warning: None })
}

fn deleted(n: usize) -> String {
    if n == 1 { "1 record".into() } else { format!("{n} records") }
}

/// What a write did, and the controller's warning about it if any.
pub struct Written {
    pub summary: String,
    pub warning: Option<String>,
}

/// Run one write; the summary counts what the controller says it changed.
pub async fn write(
    client: &mut Client,
    nodes: &mut NodesClient,
    jobs: &mut JobsClient,
    licenses: &mut LicensesClient,
    resvs: &mut ResvClient,
    op: WriteOp,
) -> Result<Written, Status> {
    if let WriteOp::Reservation { editing, words, .. } = op {
        use spur_proto::v1::{CreateReservationRequest as Create, UpdateReservationRequest as Update};
        let reply = match editing {
            None => resvs.create_reservation(Create { name: String::new(), words }).await?,
            Some(name) => resvs.update_reservation(Update { name, words }).await?,
        };
        let name = reply.into_inner().reservation.map(|r| r.name).unwrap_or_default();
        return Ok(Written { summary: format!("reservation {name} stored"), warning: None });
    }
    if let WriteOp::DeleteReservations { names } = op {
        for name in &names {
            resvs.delete_reservation(spur_proto::v1::DeleteReservationRequest { name: name.clone() }).await?;
        }
        return Ok(Written { summary: format!("deleted reservation {}", names.join(",")), warning: None });
    }
    if let WriteOp::UpdateHres { resource, layer, disable } = op {
        let flag = Some(disable.to_string());
        let mut req = spur_proto::v1::UpdateHresRequest {
            hres_name: resource,
            layer_name: layer,
            ..Default::default()
        };
        if req.layer_name.is_empty() {
            req.disable_hres = flag;
        } else {
            req.disable_layer = flag;
        }
        let changes = licenses.update_hres(req).await?.into_inner().changes;
        return Ok(Written { summary: changes.join("; "), warning: None });
    }
    if let WriteOp::UpdateJobs { op, ids, .. } = op {
        return update_jobs(jobs, op, ids).await;
    }
    if let WriteOp::UpdateNodes { nodes: names, op, reason } = op {
        let req = UpdateNodesRequest { nodes: hostlist::compress(&names), state: op.state().into(), reason };
        let r = nodes.update_nodes(req).await?.into_inner();
        let done = match op {
            NodeOp::Drain => "drained",
            NodeOp::Resume => "resumed",
            NodeOp::Down => "marked down",
        };
        let summary = format!("{done} {}", hostlist::compress(&r.updated));
        let warning = Some(r.warning).filter(|w| !w.is_empty());
        return Ok(Written { summary, warning });
    }
    let summary = accounting(client, op).await?;
    Ok(Written { summary, warning: None })
}

// Request messages may grow fields (dry-run variants, cluster); new ones keep their defaults.
#[allow(clippy::needless_update)]
async fn accounting(client: &mut Client, op: WriteOp) -> Result<String, Status> {
    let changes = |r: tonic::Response<SetResponse>| r.into_inner().changes.len();
    let del = |w: Vec<KeyValue>| DeleteRequest { r#where: w, dry_run: false, ..Default::default() };
    match op {
        WriteOp::DeleteQos { names } => {
            let mut n = 0;
            for name in &names {
                n += changes(client.delete_qos(del(vec![KeyValue::new("name", name)])).await?);
            }
            Ok(format!("deleted QOS {} ({} changed)", names.join(","), deleted(n)))
        }
        WriteOp::Modify { entity, filter, set, .. } => {
            // The same request `sacctmgr modify` sends, so the audit row is identical.
            let req = SetRequest {
                mode: SetMode::Modify as i32,
                r#where: filter.iter().map(|(k, v)| KeyValue::new(k, v)).collect(),
                set: set.iter().map(|(k, v)| KeyValue::new(k, v)).collect(),
                dry_run: false,
                ..Default::default()
            };
            let r = match entity {
                Entity::Qos => client.set_qos(req).await?,
                Entity::Account => client.set_account(req).await?,
                Entity::User => client.set_user(req).await?,
            };
            Ok(format!("modified {} ({} changed)", subject(entity, &filter), deleted(changes(r))))
        }
        WriteOp::DeleteAccount { names } => {
            let mut n = 0;
            for name in &names {
                n += changes(client.delete_account(del(vec![KeyValue::new("name", name)])).await?);
            }
            Ok(format!("deleted account {} ({} changed)", names.join(","), deleted(n)))
        }
        WriteOp::DeleteUser { assocs } => {
            let mut n = 0;
            for (user, account) in &assocs {
                n += changes(
                    client
                        .delete_user(del(vec![
                            KeyValue::new("name", user),
                            KeyValue::new("account", account),
                        ]))
                        .await?,
                );
            }
            Ok(format!("deleted {} association(s) ({} changed)", assocs.len(), deleted(n)))
        }
        WriteOp::UpdateNodes { .. }
        | WriteOp::UpdateJobs { .. }
        | WriteOp::UpdateHres { .. }
        | WriteOp::Reservation { .. }
        | WriteOp::DeleteReservations { .. }
        | WriteOp::RunPlugin { .. } => {
            Err(Status::internal("node and job updates are not accounting writes"))
        }
    }
}
