//! `sacctmgr` (also `spur accounts`): add/modify/delete/show against the controller.

use super::args::{self, Command, Target, Verb};
use super::columns::{self, AssocRow, Column};
use super::events;
use super::fmt::status;
use super::output;
use crate::conn::{self, Clients, Identity};
use crate::vocab::txn::{DEFAULT_LIMIT, MAX_LIMIT};
use spur_proto::v1 as pb;
use spur_proto::v1::audit_client::AuditClient;
use std::io::{BufRead, IsTerminal};

pub const USAGE: &str = "\
usage: sacctmgr [-n] [-p|-P] [-i] [--json] [--controller URL] VERB ENTITY [key=value ...]
  VERB:   add | modify | delete | show
  ENTITY: account | user | qos | association | tres | txn (transaction) | event
  txn filters: Actor= Action= Entity= Name= Outcome= Peer= Start= End= limit=
  event filters: Nodes= Start= End= States= User= (node history, from the txn log; Operator)
  modify: sacctmgr modify ENTITY [where] key=value ... set key=value ...
  show:   format=Col1,Col2 picks and orders columns
flags (anywhere on the line):
  -n, --noheader   no header line
  -p, --parsable   '|' delimited, trailing '|'
  -P, --parsable2  '|' delimited, no trailing '|'
  -i, --immediate  commit without asking
  --json           JSON output for show";

/// Runs sacctmgr with its arguments (without `argv[0]`); returns the exit code.
pub async fn main(argv: &[String]) -> i32 {
    if args::parse_flags(argv).help {
        return output::emit("sacctmgr", &format!("{USAGE}\n"));
    }
    output::finish("sacctmgr", run(argv).await)
}

async fn run(argv: &[String]) -> Result<String, String> {
    let cmd = args::parse(argv).map_err(|e| e.0)?;
    for w in &cmd.warnings {
        output::complain(&format!("sacctmgr: warning: {w}"));
    }
    // Every change asked for had no effect (each warned about): nothing to send.
    if cmd.verb == Verb::Modify && cmd.set.is_empty() {
        return Ok(String::new());
    }
    let clients = conn::connect_flag(cmd.flags.controller.as_deref(), Identity::local()).await?;
    execute(&cmd, clients).await
}

pub async fn execute(cmd: &Command, mut c: Clients) -> Result<String, String> {
    match cmd.verb {
        Verb::Show => show(cmd, &mut c).await,
        _ => write(cmd, &mut c).await,
    }
}

fn kvs(pairs: &[(String, String)]) -> Vec<pb::KeyValue> {
    pairs.iter().map(|(k, v)| pb::KeyValue { key: k.clone(), value: v.clone() }).collect()
}

async fn call(cmd: &Command, c: &mut Clients, dry_run: bool) -> Result<Vec<pb::Change>, String> {
    let a = &mut c.accounting;
    let set_req = |mode: pb::SetMode| pb::SetRequest {
        mode: mode as i32,
        r#where: kvs(&cmd.filter),
        set: kvs(&cmd.set),
        dry_run,
    };
    let del_req = pb::DeleteRequest { r#where: kvs(&cmd.filter), dry_run };
    let mode = if cmd.verb == Verb::Add { pb::SetMode::Add } else { pb::SetMode::Modify };
    let resp = match (cmd.verb, cmd.target) {
        (Verb::Delete, Target::Qos) => a.delete_qos(del_req).await,
        (Verb::Delete, Target::Account) => a.delete_account(del_req).await,
        (Verb::Delete, Target::User) => a.delete_user(del_req).await,
        (_, Target::Qos) => a.set_qos(set_req(mode)).await,
        (_, Target::Account) => a.set_account(set_req(mode)).await,
        (_, Target::User) => a.set_user(set_req(mode)).await,
        (_, t) => return Err(format!("{} cannot be changed", t.as_str())),
    };
    Ok(resp.map_err(status)?.into_inner().changes)
}

fn describe(changes: &[pb::Change]) -> String {
    let mut out = String::new();
    for ch in changes {
        let verb = match ch.action.as_str() {
            "create" => "Added",
            "delete" => "Deleted",
            _ => "Modified",
        };
        out.push_str(&format!(" {verb} {} '{}'\n", ch.entity, ch.name));
        if let Ok(serde_json::Value::Object(m)) = serde_json::from_str::<serde_json::Value>(&ch.changed_json)
        {
            for (col, ft) in m {
                out.push_str(&format!("  {col:<24} {} -> {}\n", ft["from"], ft["to"]));
            }
        }
    }
    out
}

/// Like sacctmgr, an interactive session is shown the change and asked;
/// `-i`, or a script (no terminal on stdin), commits at once.
async fn write(cmd: &Command, c: &mut Clients) -> Result<String, String> {
    if !cmd.flags.immediate && std::io::stdin().is_terminal() {
        let planned = call(cmd, c, true).await?;
        let prompt = format!("{}Would you like to commit changes? (N/y): ", describe(&planned));
        if output::emit("sacctmgr", &prompt) != 0 {
            return Err("cannot ask whether to commit: standard output is closed".into());
        }
        let mut line = String::new();
        let _ = std::io::stdin().lock().read_line(&mut line);
        if !matches!(line.trim(), "y" | "Y" | "yes") {
            return Ok(" Changes Discarded\n".into());
        }
    }
    Ok(describe(&call(cmd, c, false).await?))
}

fn table<T>(cmd: &Command, all: &[Column<T>], defaults: &[&str], rows: &[T]) -> Result<String, String> {
    let cols = columns::select(all, defaults, cmd.format.as_deref(), cmd.target.as_str())?;
    let cells: Vec<Vec<String>> = rows.iter().map(|r| cols.iter().map(|c| (c.get)(r)).collect()).collect();
    if cmd.flags.json {
        let names: Vec<&str> = cols.iter().map(|c| c.name).collect();
        return Ok(output::json(&names, &cells));
    }
    let headers: Vec<&str> = cols.iter().map(|c| c.header).collect();
    Ok(output::render(&headers, &cells, &cmd.flags))
}

async fn show(cmd: &Command, c: &mut Clients) -> Result<String, String> {
    let req = pb::ListRequest { filter: kvs(&cmd.filter) };
    let a = &mut c.accounting;
    match cmd.target {
        Target::Qos => {
            let qos = a.list_qos(req).await.map_err(status)?.into_inner().qos;
            table(cmd, columns::QOS, columns::QOS_DEFAULT, &qos)
        }
        Target::Account => {
            let accts = a.list_accounts(req).await.map_err(status)?.into_inner().accounts;
            table(cmd, columns::ACCOUNT, columns::ACCOUNT_DEFAULT, &accts)
        }
        Target::User => {
            let resp = a.list_users(req).await.map_err(status)?.into_inner();
            table(cmd, columns::ASSOC, columns::USER_DEFAULT, &user_rows(&resp))
        }
        Target::Association => {
            let resp = a.list_users(req).await.map_err(status)?.into_inner();
            let accts = a.list_accounts(pb::ListRequest::default()).await.map_err(status)?.into_inner();
            let mut rows = account_rows(&accts);
            rows.extend(user_rows(&resp));
            rows.sort_by(|x, y| (&x.assoc.account, &x.user).cmp(&(&y.assoc.account, &y.user)));
            if !cmd.filter.is_empty() {
                rows.retain(|r| !r.user.is_empty());
            }
            table(cmd, columns::ASSOC, columns::ASSOC_DEFAULT, &rows)
        }
        Target::Tres => {
            let tres = a.list_tres(req).await.map_err(status)?.into_inner().tres;
            table(cmd, columns::TRES, columns::TRES_DEFAULT, &tres)
        }
        Target::Txn => {
            let rows = list_txn(&mut c.audit, req.filter).await.map_err(status)?;
            table(cmd, columns::TXN, columns::TXN_DEFAULT, &rows)
        }
        Target::Event => {
            let f = events::parse_filter(&cmd.filter, chrono::Local::now())?;
            let rows = list_txn(&mut c.audit, f.txn_query(MAX_LIMIT)).await.map_err(status)?;
            let who = c.session.who_am_i(pb::WhoAmIRequest {}).await.map_err(status)?.into_inner();
            let found = events::derive(&rows, &who.cluster_name, &f);
            if cmd.flags.json {
                return Ok(events::json(&found, &who.cluster_name));
            }
            table(cmd, events::COLUMNS, events::DEFAULT, &found)
        }
    }
}

fn user_rows(resp: &pb::ListUsersResponse) -> Vec<AssocRow> {
    resp.users
        .iter()
        .flat_map(|u| {
            u.associations.iter().map(|a| AssocRow {
                cluster: resp.cluster_name.clone(),
                user: u.name.clone(),
                admin: u.admin_level.clone(),
                default_account: u.default_account.clone(),
                share: "1".into(),
                assoc: a.clone(),
            })
        })
        .collect()
}

/// Account-level associations: the account's own share and limits, with no user.
fn account_rows(resp: &pb::ListAccountsResponse) -> Vec<AssocRow> {
    resp.accounts
        .iter()
        .map(|a| AssocRow {
            cluster: resp.cluster_name.clone(),
            user: String::new(),
            admin: String::new(),
            default_account: String::new(),
            share: columns::share(a.fairshare),
            assoc: pb::Association {
                account: a.name.clone(),
                max_jobs: a.max_jobs,
                grp_tres: a.grp_tres.clone(),
                grp_submit: a.grp_submit,
                ..Default::default()
            },
        })
        .collect()
}

/// `show txn`: the newest `limit=` rows, oldest first, fetching every page
/// the controller cut to stay under its message limit.
async fn list_txn(
    audit: &mut AuditClient<conn::Svc>,
    filter: Vec<pb::KeyValue>,
) -> Result<Vec<pb::TxnRow>, tonic::Status> {
    let is_limit = |kv: &pb::KeyValue| kv.key.eq_ignore_ascii_case("limit");
    let limit = filter
        .iter()
        .rfind(|kv| is_limit(kv))
        .and_then(|kv| kv.value.trim().parse::<i64>().ok())
        .unwrap_or(DEFAULT_LIMIT)
        .min(MAX_LIMIT);
    // The first request goes as given, so the controller judges the filters.
    let mut req = pb::ListTxnRequest { filter: filter.clone(), before_id: None };
    let (mut pages, mut got) = (vec![], 0i64);
    loop {
        let page = audit.list_txn(req).await?.into_inner();
        got += page.rows.len() as i64;
        let empty = page.rows.is_empty();
        pages.push(page.rows);
        match page.next_before_id {
            Some(before) if got < limit && !empty => {
                let mut rest: Vec<pb::KeyValue> = filter.iter().filter(|kv| !is_limit(kv)).cloned().collect();
                rest.push(pb::KeyValue { key: "limit".into(), value: (limit - got).to_string() });
                req = pb::ListTxnRequest { filter: rest, before_id: Some(before) };
            }
            _ => break,
        }
    }
    // Each page is older than the one before it.
    pages.reverse();
    Ok(pages.concat())
}
