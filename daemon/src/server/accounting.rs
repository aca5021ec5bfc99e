//! The Accounting service: every handler goes through the gate, which
//! checks the role and audits; the accounting core does the work.

use super::gate::Gate;
use super::path::accounting as path;
use super::{convert, filter};
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
        let f = Filter::<QosKey>::parse(req)?;
        let cat = self.acct.loaded_catalog()?;
        let mut qos: Vec<pb::Qos> = cat
            .qos
            .values()
            .filter(|q| f.admits(QosKey::Name, &q.name))
            .map(|q| convert::qos(q, false))
            .collect();
        if cat.qos.is_empty() && f.is_empty() {
            qos.push(convert::qos(&synthetic_normal(), true));
        }
        Ok(pb::ListQosResponse { qos })
    }

    fn accounts(&self, req: &pb::ListRequest) -> Result<pb::ListAccountsResponse> {
        let f = Filter::<AccountKey>::parse(req)?;
        let cat = self.acct.loaded_catalog()?;
        let accounts = cat
            .accounts
            .values()
            .filter(|a| f.admits(AccountKey::Name, &a.name) && f.admits(AccountKey::Parent, &a.parent))
            .map(convert::account)
            .collect();
        Ok(pb::ListAccountsResponse { accounts, cluster_name: self.cluster.clone() })
    }

    fn users(&self, req: &pb::ListRequest) -> Result<pb::ListUsersResponse> {
        let f = Filter::<UserKey>::parse(req)?;
        let cat = self.acct.loaded_catalog()?;
        let users = cat
            .users
            .values()
            .filter(|u| f.admits(UserKey::Name, &u.name))
            .filter_map(|u| {
                let assocs: Vec<_> =
                    u.assocs.iter().filter(|a| f.admits(UserKey::Account, &a.account)).collect();
                (!assocs.is_empty()).then(|| convert::user(u, &assocs))
            })
            .collect();
        Ok(pb::ListUsersResponse { users, cluster_name: self.cluster.clone() })
    }
}

fn changes(out: &[ChangeOut]) -> pb::SetResponse {
    pb::SetResponse { changes: out.iter().map(convert::change).collect() }
}

filter::keys! {
    /// `sacctmgr show qos` filters; `user=` is another spelling of `name=`.
    enum QosKey, "unknown filter (use name=)" {
        Name = "name" | "user",
    }
}

filter::keys! {
    /// `sacctmgr show account` filters.
    enum AccountKey, "unknown filter (use name=, parent=)" {
        Name = "name" | "user",
        Parent = "parent",
    }
}

filter::keys! {
    /// `sacctmgr show user` and `show assoc` filters.
    enum UserKey, "unknown filter (use name=, account=)" {
        Name = "name" | "user",
        Account = "account",
    }
}

/// List filters: each key maps to a set of names.
struct Filter<K> {
    pairs: Vec<(K, Vec<String>)>,
}

impl<K: filter::Key + PartialEq> Filter<K> {
    fn parse(req: &pb::ListRequest) -> Result<Filter<K>> {
        let pairs = filter::parse::<K>(&req.filter)?
            .into_iter()
            .map(|p| Ok((p.key, parse_name_list(p.value).map_err(|m| p.invalid(m))?)))
            .collect::<Result<_>>()?;
        Ok(Filter { pairs })
    }

    fn is_empty(&self) -> bool {
        self.pairs.is_empty()
    }

    fn admits(&self, key: K, value: &str) -> bool {
        self.pairs.iter().filter(|(k, _)| *k == key).all(|(_, names)| names.iter().any(|n| n == value))
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

#[cfg(test)]
mod tests {
    use super::*;

    fn req(pairs: &[(&str, &str)]) -> pb::ListRequest {
        let filter = pairs.iter().map(|(k, v)| pb::KeyValue { key: k.to_string(), value: v.to_string() });
        pb::ListRequest { filter: filter.collect() }
    }

    fn refusal<K: filter::Key + PartialEq>(pairs: &[(&str, &str)]) -> String {
        Filter::<K>::parse(&req(pairs)).err().map(|e| e.to_string()).unwrap_or_default()
    }

    #[test]
    fn list_filters_take_name_lists_and_refuse_other_keys() {
        let f = Filter::<UserKey>::parse(&req(&[("User", "Alice, bob"), ("account", "phys")])).unwrap();
        assert!(f.admits(UserKey::Name, "alice") && f.admits(UserKey::Account, "phys"));
        assert!(!f.admits(UserKey::Name, "carol") && !f.admits(UserKey::Account, "chem"));
        assert!(Filter::<QosKey>::parse(&req(&[])).unwrap().is_empty());
        assert_eq!(refusal::<QosKey>(&[("parent", "root")]), "parent: unknown filter (use name=)");
        assert_eq!(refusal::<AccountKey>(&[("Colour", "x")]), "Colour: unknown filter (use name=, parent=)");
        assert_eq!(refusal::<UserKey>(&[("parent", "x")]), "parent: unknown filter (use name=, account=)");
        assert!(refusal::<AccountKey>(&[("Parent", "a b")]).starts_with("Parent: "));
    }
}

/// For `daemon/fuzz`: the three accounting listings' filters.
#[cfg(feature = "fuzzing")]
pub(super) fn fuzz_filters(req: &pb::ListRequest) -> [Result<()>; 3] {
    [
        Filter::<QosKey>::parse(req).map(drop),
        Filter::<AccountKey>::parse(req).map(drop),
        Filter::<UserKey>::parse(req).map(drop),
    ]
}
