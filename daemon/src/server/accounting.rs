//! The Accounting service: every handler goes through the gate, which
//! checks the role and audits; the accounting core does the work.

use super::convert;
use super::gate::Gate;
use super::path::accounting as path;
use crate::accounting::qos::synthetic_normal;
use crate::accounting::{AcctService, ChangeOut, SetMode};
use crate::error::{Error, Result};
use spur_proto::v1 as pb;
use spur_proto::v1::accounting_server::Accounting;
use spur_vocab::keys::{Entity, parse_name_list};
use std::sync::Arc;
use tonic::{Request, Response, Status};

pub struct AccountingApi {
    acct: Arc<AcctService>,
    gate: Arc<Gate>,
    cluster: String,
}

impl AccountingApi {
    pub fn new(gate: Arc<Gate>, cluster: String) -> Self {
        AccountingApi { acct: gate.acct.clone(), gate, cluster }
    }

    async fn set(
        &self,
        path: &str,
        entity: Entity,
        req: Request<pb::SetRequest>,
    ) -> Result<Response<pb::SetResponse>, Status> {
        self.gate
            .run(path, req, |ctx, r| async move {
                let mode = match pb::SetMode::try_from(r.mode) {
                    Ok(pb::SetMode::Add) => SetMode::Add,
                    Ok(pb::SetMode::Modify) => SetMode::Modify,
                    _ => return Err(Error::invalid("mode", "must be ADD or MODIFY")),
                };
                let (filter, set) = (convert::kvs(&r.r#where), convert::kvs(&r.set));
                let out = self.acct.set(entity, &ctx.caller, mode, &filter, &set, r.dry_run).await?;
                Ok((changes(&out), vec![]))
            })
            .await
    }

    async fn delete(
        &self,
        path: &str,
        entity: Entity,
        req: Request<pb::DeleteRequest>,
    ) -> Result<Response<pb::SetResponse>, Status> {
        self.gate
            .run(path, req, |ctx, r| async move {
                let out = self.acct.delete(entity, &ctx.caller, &convert::kvs(&r.r#where), r.dry_run).await?;
                Ok((changes(&out), vec![]))
            })
            .await
    }

    fn qos(&self, req: &pb::ListRequest) -> Result<pb::ListQosResponse> {
        let f = Filter::parse(req, &["name"])?;
        let cat = self.acct.loaded_catalog()?;
        let mut qos: Vec<pb::Qos> =
            cat.qos.values().filter(|q| f.admits("name", &q.name)).map(|q| convert::qos(q, false)).collect();
        if cat.qos.is_empty() && f.is_empty() {
            qos.push(convert::qos(&synthetic_normal(), true));
        }
        Ok(pb::ListQosResponse { qos })
    }

    fn accounts(&self, req: &pb::ListRequest) -> Result<pb::ListAccountsResponse> {
        let f = Filter::parse(req, &["name", "parent"])?;
        let cat = self.acct.loaded_catalog()?;
        let accounts = cat
            .accounts
            .values()
            .filter(|a| f.admits("name", &a.name) && f.admits("parent", &a.parent))
            .map(convert::account)
            .collect();
        Ok(pb::ListAccountsResponse { accounts, cluster_name: self.cluster.clone() })
    }

    fn users(&self, req: &pb::ListRequest) -> Result<pb::ListUsersResponse> {
        let f = Filter::parse(req, &["name", "account"])?;
        let cat = self.acct.loaded_catalog()?;
        let users = cat
            .users
            .values()
            .filter(|u| f.admits("name", &u.name))
            .filter_map(|u| {
                let assocs: Vec<_> = u.assocs.iter().filter(|a| f.admits("account", &a.account)).collect();
                (!assocs.is_empty()).then(|| convert::user(u, &assocs))
            })
            .collect();
        Ok(pb::ListUsersResponse { users, cluster_name: self.cluster.clone() })
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
        self.gate.run(path::LIST_QOS, req, |_, r| async move { Ok((self.qos(&r)?, vec![])) }).await
    }

    async fn set_qos(&self, req: Request<pb::SetRequest>) -> Result<Response<pb::SetResponse>, Status> {
        self.set(path::SET_QOS, Entity::Qos, req).await
    }

    async fn delete_qos(&self, req: Request<pb::DeleteRequest>) -> Result<Response<pb::SetResponse>, Status> {
        self.delete(path::DELETE_QOS, Entity::Qos, req).await
    }

    async fn list_accounts(
        &self,
        req: Request<pb::ListRequest>,
    ) -> Result<Response<pb::ListAccountsResponse>, Status> {
        self.gate.run(path::LIST_ACCOUNTS, req, |_, r| async move { Ok((self.accounts(&r)?, vec![])) }).await
    }

    async fn set_account(&self, req: Request<pb::SetRequest>) -> Result<Response<pb::SetResponse>, Status> {
        self.set(path::SET_ACCOUNT, Entity::Account, req).await
    }

    async fn delete_account(
        &self,
        req: Request<pb::DeleteRequest>,
    ) -> Result<Response<pb::SetResponse>, Status> {
        self.delete(path::DELETE_ACCOUNT, Entity::Account, req).await
    }

    async fn list_users(
        &self,
        req: Request<pb::ListRequest>,
    ) -> Result<Response<pb::ListUsersResponse>, Status> {
        self.gate.run(path::LIST_USERS, req, |_, r| async move { Ok((self.users(&r)?, vec![])) }).await
    }

    async fn set_user(&self, req: Request<pb::SetRequest>) -> Result<Response<pb::SetResponse>, Status> {
        self.set(path::SET_USER, Entity::User, req).await
    }

    async fn delete_user(
        &self,
        req: Request<pb::DeleteRequest>,
    ) -> Result<Response<pb::SetResponse>, Status> {
        self.delete(path::DELETE_USER, Entity::User, req).await
    }

    async fn list_tres(
        &self,
        req: Request<pb::ListRequest>,
    ) -> Result<Response<pb::ListTresResponse>, Status> {
        let tres = || pb::ListTresResponse { tres: convert::tres_table() };
        self.gate.run(path::LIST_TRES, req, |_, _| async move { Ok((tres(), vec![])) }).await
    }
}
