//! The Accounting service: decode -> identify -> call the accounting core -> map errors.

use super::{caller_of, convert};
use crate::accounting::qos::synthetic_normal;
use crate::accounting::{AcctService, ChangeOut, SetMode};
use crate::error::{Error, Result};
use spur_client::vocab::keys::{Entity, parse_name_list};
use spur_proto::v1 as pb;
use spur_proto::v1::accounting_server::Accounting;
use std::sync::Arc;
use tonic::{Request, Response, Status};

pub struct AccountingApi {
    acct: Arc<AcctService>,
    cluster: String,
}

impl AccountingApi {
    pub fn new(acct: Arc<AcctService>, cluster: String) -> Self {
        AccountingApi { acct, cluster }
    }

    async fn set(
        &self,
        entity: Entity,
        req: Request<pb::SetRequest>,
    ) -> Result<Response<pb::SetResponse>, Status> {
        let caller = caller_of(&req);
        let r = req.into_inner();
        let mode = match pb::SetMode::try_from(r.mode) {
            Ok(pb::SetMode::Add) => SetMode::Add,
            Ok(pb::SetMode::Modify) => SetMode::Modify,
            _ => return Err(Status::invalid_argument("mode: must be ADD or MODIFY")),
        };
        let out = self
            .acct
            .set(entity, &caller, mode, &convert::kvs(&r.r#where), &convert::kvs(&r.set), r.dry_run)
            .await?;
        Ok(Response::new(changes(&out)))
    }

    async fn delete(
        &self,
        entity: Entity,
        req: Request<pb::DeleteRequest>,
    ) -> Result<Response<pb::SetResponse>, Status> {
        let caller = caller_of(&req);
        let r = req.into_inner();
        let out = self.acct.delete(entity, &caller, &convert::kvs(&r.r#where), r.dry_run).await?;
        Ok(Response::new(changes(&out)))
    }
}

fn changes(out: &[ChangeOut]) -> pb::SetResponse {
    pb::SetResponse { changes: out.iter().map(convert::change).collect() }
}

/// List filters: each allowed key maps to a set of names.
struct Filter {
    pairs: Vec<(String, Vec<String>)>,
}

impl Filter {
    fn parse(req: &pb::ListRequest, allowed: &[&str]) -> Result<Filter> {
        let mut pairs = vec![];
        for kv in &req.filter {
            let key = kv.key.to_ascii_lowercase();
            let key = if key == "user" { "name".to_string() } else { key };
            if !allowed.contains(&key.as_str()) {
                return Err(Error::invalid(
                    &kv.key,
                    format!("unknown filter (use {})", allowed.join("=, ") + "="),
                ));
            }
            let names = parse_name_list(&kv.value).map_err(|m| Error::invalid(&kv.key, m))?;
            pairs.push((key, names));
        }
        Ok(Filter { pairs })
    }

    fn is_empty(&self) -> bool {
        self.pairs.is_empty()
    }

    fn admits(&self, key: &str, value: &str) -> bool {
        self.pairs.iter().filter(|(k, _)| k == key).all(|(_, names)| names.iter().any(|n| n == value))
    }
}

#[tonic::async_trait]
impl Accounting for AccountingApi {
    async fn list_qos(&self, req: Request<pb::ListRequest>) -> Result<Response<pb::ListQosResponse>, Status> {
        let f = Filter::parse(req.get_ref(), &["name"])?;
        let cat = self.acct.catalog();
        let mut qos: Vec<pb::Qos> =
            cat.qos.values().filter(|q| f.admits("name", &q.name)).map(|q| convert::qos(q, false)).collect();
        if cat.qos.is_empty() && f.is_empty() {
            qos.push(convert::qos(&synthetic_normal(), true));
        }
        Ok(Response::new(pb::ListQosResponse { qos }))
    }

    async fn set_qos(&self, req: Request<pb::SetRequest>) -> Result<Response<pb::SetResponse>, Status> {
        self.set(Entity::Qos, req).await
    }

    async fn delete_qos(&self, req: Request<pb::DeleteRequest>) -> Result<Response<pb::SetResponse>, Status> {
        self.delete(Entity::Qos, req).await
    }

    async fn list_accounts(
        &self,
        req: Request<pb::ListRequest>,
    ) -> Result<Response<pb::ListAccountsResponse>, Status> {
        let f = Filter::parse(req.get_ref(), &["name", "parent"])?;
        let cat = self.acct.catalog();
        let accounts = cat
            .accounts
            .values()
            .filter(|a| f.admits("name", &a.name) && f.admits("parent", &a.parent))
            .map(convert::account)
            .collect();
        Ok(Response::new(pb::ListAccountsResponse { accounts, cluster_name: self.cluster.clone() }))
    }

    async fn set_account(&self, req: Request<pb::SetRequest>) -> Result<Response<pb::SetResponse>, Status> {
        self.set(Entity::Account, req).await
    }

    async fn delete_account(
        &self,
        req: Request<pb::DeleteRequest>,
    ) -> Result<Response<pb::SetResponse>, Status> {
        self.delete(Entity::Account, req).await
    }

    async fn list_users(
        &self,
        req: Request<pb::ListRequest>,
    ) -> Result<Response<pb::ListUsersResponse>, Status> {
        let f = Filter::parse(req.get_ref(), &["name", "account"])?;
        let cat = self.acct.catalog();
        let users = cat
            .users
            .values()
            .filter(|u| f.admits("name", &u.name))
            .filter_map(|u| {
                let assocs: Vec<_> = u.assocs.iter().filter(|a| f.admits("account", &a.account)).collect();
                (!assocs.is_empty()).then(|| convert::user(u, &assocs))
            })
            .collect();
        Ok(Response::new(pb::ListUsersResponse { users, cluster_name: self.cluster.clone() }))
    }

    async fn set_user(&self, req: Request<pb::SetRequest>) -> Result<Response<pb::SetResponse>, Status> {
        self.set(Entity::User, req).await
    }

    async fn delete_user(
        &self,
        req: Request<pb::DeleteRequest>,
    ) -> Result<Response<pb::SetResponse>, Status> {
        self.delete(Entity::User, req).await
    }

    async fn list_tres(
        &self,
        _req: Request<pb::ListRequest>,
    ) -> Result<Response<pb::ListTresResponse>, Status> {
        Ok(Response::new(pb::ListTresResponse { tres: convert::tres_table() }))
    }
}
