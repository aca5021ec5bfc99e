//! The Fairshare pane: the account tree from `Jobs.ListShares` (accounts
//! under their parents, each account's users as its leaves) with the six
//! numbers `sshare -l` prints, and a detail page that explains each number
//! with its formula filled in with the row's own numbers. Every number and
//! every input of a formula (the siblings' RawShares, the parent's
//! NormShares, the cluster's usage) comes from the controller; nothing here
//! recomputes a value, so the pane and `sshare -l` cannot disagree.

use crate::model::table::{Column, Detail, Row, SortKey, TableModel, Target, filter_and_sort, text_key};
use crate::model::tree::{Node, flatten};
use crate::model::view::{PaneView, Refetch};
use spur_proto::v1::{ListSharesResponse, ShareRow};
use std::collections::HashMap;

const fn col(name: &'static str, priority: u8, max: u16, numeric: bool) -> Column {
    Column { name, priority, max, numeric, sparse: false }
}

pub const COLUMNS: &[Column] = &[
    col("Account", 0, 24, false),
    col("User", 0, 10, false),
    col("RawShares", 2, 9, true),
    col("NormShares", 1, 10, true),
    col("RawUsage", 2, 11, true),
    col("EffectvUsage", 1, 12, true),
    col("LevelFS", 0, 9, true),
    col("FairShare", 0, 9, true),
];

/// The pane's data and its re-read (on opening the pane and on `r`).
#[derive(Debug, Clone, Default)]
pub struct Fairshare {
    /// None until first read.
    pub data: Option<ListSharesResponse>,
    pub refetch: Refetch,
}

/// Six decimals as `sshare` prints them, `inf` for a LevelFS with no usage.
pub fn dbl(v: f64) -> String {
    if v.is_infinite() { "inf".into() } else { format!("{v:.6}") }
}

fn raw(v: f64) -> String {
    format!("{v}")
}

fn usage(v: f64) -> String {
    format!("{:.0}", v.max(0.0))
}

/// An account row's key is its name; a user's is `account/user` (account
/// names hold no `/`), so the same user under two accounts has two rows.
fn key(r: &ShareRow) -> String {
    if r.user.is_empty() { r.account.clone() } else { format!("{}/{}", r.account, r.user) }
}

fn row(r: &ShareRow) -> Row {
    let is_user = !r.user.is_empty();
    let cells = vec![
        // A user's line names its account too, as sshare's does.
        r.account.clone(),
        r.user.clone(),
        raw(r.raw_shares),
        dbl(r.norm_shares),
        usage(r.raw_usage),
        dbl(r.norm_usage),
        dbl(r.level_fs),
        if is_user { dbl(r.fair_share) } else { String::new() },
    ];
    let num = SortKey::Num;
    let sort = vec![
        text_key(&r.account),
        text_key(&r.user),
        num(r.raw_shares),
        num(r.norm_shares),
        num(r.raw_usage),
        num(r.norm_usage),
        num(r.level_fs),
        if is_user { num(r.fair_share) } else { SortKey::Blank },
    ];
    let target = match is_user {
        true => Target::Assoc { user: r.user.clone(), account: r.account.clone(), partition: String::new() },
        false => Target::Account(r.account.clone()),
    };
    Row::new(key(r), target, cells, sort)
}

/// The accounts by parent and the users by account, each sorted by name:
/// indexed once per table, not searched again for every account.
struct Index<'a> {
    kids: HashMap<&'a str, Vec<&'a ShareRow>>,
    users: HashMap<&'a str, Vec<&'a ShareRow>>,
}

impl<'a> Index<'a> {
    fn of(data: &'a ListSharesResponse) -> Index<'a> {
        let mut kids: HashMap<&str, Vec<&ShareRow>> = HashMap::new();
        for a in &data.accounts {
            kids.entry(a.parent.as_str()).or_default().push(a);
        }
        let mut users: HashMap<&str, Vec<&ShareRow>> = HashMap::new();
        for u in &data.rows {
            users.entry(u.account.as_str()).or_default().push(u);
        }
        kids.values_mut().for_each(|v| v.sort_by(|a, b| a.account.cmp(&b.account)));
        users.values_mut().for_each(|v| v.sort_by(|x, y| x.user.cmp(&y.user)));
        Index { kids, users }
    }
}

/// The accounts under `parent` as trees, each with its users first (as
/// sshare lists them) and then its child accounts. `depth` stops a parent
/// cycle in the data from recursing for ever.
fn grow(ix: &Index, parent: &str, depth: usize, accounts: usize) -> Vec<Node> {
    let none = Vec::new();
    (ix.kids.get(parent).unwrap_or(&none).iter())
        .map(|a| {
            let users = ix.users.get(a.account.as_str()).unwrap_or(&none);
            let mut children: Vec<Node> = users.iter().map(|u| Node::leaf(row(u))).collect();
            if depth <= accounts {
                children.extend(grow(ix, &a.account, depth + 1, accounts));
            }
            Node { row: row(a), children }
        })
        .collect()
}

/// The tree: `root` (the cluster's total usage) over every account.
pub fn table(data: &ListSharesResponse, view: &PaneView) -> TableModel {
    let mut cells = vec![String::new(); COLUMNS.len()];
    cells[0] = "root".into();
    cells[4] = usage(data.total_usage);
    let mut sort = vec![SortKey::Blank; COLUMNS.len()];
    sort[0] = text_key("root");
    let top = Row::new("root".into(), Target::Root, cells, sort);
    let mut rows = vec![];
    let children = grow(&Index::of(data), "root", 1, data.accounts.len());
    flatten(Node { row: top, children }, &mut rows);
    let total = rows.len();
    TableModel { columns: COLUMNS, rows: filter_and_sort(rows, view).into(), total, cell_widths: None }
}

/// The row's numbers, then each explained: its formula, and the formula
/// filled in with this row's inputs and the controller's result.
pub fn detail(data: &ListSharesResponse, key_: &str) -> Option<Detail> {
    if key_ == "root" {
        return Some(root(data));
    }
    let r = data.rows.iter().chain(&data.accounts).find(|r| key(r) == key_)?;
    let is_user = !r.user.is_empty();
    let f = |label: &str, value: String| (label.to_string(), value);
    let mut fields = vec![f("Account", r.account.clone())];
    if is_user {
        fields.push(f("User", r.user.clone()));
    } else {
        fields.push(f("Parent", r.parent.clone()));
    }
    fields.extend([
        f("RawShares", raw(r.raw_shares)),
        f("NormShares", dbl(r.norm_shares)),
        f("RawUsage", usage(r.raw_usage)),
        f("EffectvUsage", dbl(r.norm_usage)),
        f("LevelFS", dbl(r.level_fs)),
    ]);
    if is_user {
        fields.push(f("FairShare", dbl(r.fair_share)));
    }
    let title = match is_user {
        true => format!("User {} in {}", r.user, r.account),
        false => format!("Account {}", r.account),
    };
    Some(Detail { title, crumb: key(r), fields, body: explain(r, data.total_usage) })
}

/// The top of the tree: the whole cluster.
fn root(data: &ListSharesResponse) -> Detail {
    let mut tops: Vec<String> = data
        .accounts
        .iter()
        .filter(|a| a.parent == "root")
        .map(|a| format!("{} {}", a.account, raw(a.raw_shares)))
        .collect();
    tops.sort();
    let body = vec![
        "root is the whole cluster: its NormShares is 1, and RawUsage is all decayed usage.".to_string(),
        match tops.is_empty() {
            true => "No account is under it yet (sacctmgr add account).".to_string(),
            false => format!("The accounts under it divide it by their RawShares: {}.", tops.join(", ")),
        },
    ];
    let fields =
        vec![("NormShares".to_string(), dbl(1.0)), ("RawUsage".to_string(), usage(data.total_usage))];
    Detail { title: "root".into(), crumb: "root".into(), fields, body }
}

/// The formulas with this row's numbers, as the controller computed them.
pub fn explain(r: &ShareRow, total_usage: f64) -> Vec<String> {
    let is_user = !r.user.is_empty();
    let mut out = vec!["How each number is made:".to_string(), String::new()];
    let (shares_is, siblings, parent) = match is_user {
        true => (
            "RawShares is 1 for a user: the account's share is split evenly between its users.".to_string(),
            format!("{} user(s) of {}", raw(r.sibling_shares), r.account),
            format!("{}'s NormShares", r.account),
        ),
        false => (
            format!("RawShares is the account's fairshare ({}).", raw(r.raw_shares)),
            "sum of siblings' RawShares".to_string(),
            "parent's NormShares".to_string(),
        ),
    };
    out.push(shares_is);
    out.push(format!("NormShares = RawShares / {siblings} × {parent}"));
    out.push(format!(
        "           = {} / {} × {} = {}",
        raw(r.raw_shares),
        raw(r.sibling_shares),
        dbl(r.parent_shares),
        dbl(r.norm_shares)
    ));
    out.push(String::new());
    let whose = if is_user { "its jobs'" } else { "its subtree's jobs'" };
    out.push(format!("RawUsage is {whose} CPU-seconds, decayed by the half-life, × the QOS UsageFactor."));
    out.push("EffectvUsage = RawUsage / the cluster's RawUsage".to_string());
    out.push(format!(
        "             = {} / {} = {}",
        usage(r.raw_usage),
        usage(total_usage),
        dbl(r.norm_usage)
    ));
    out.push(String::new());
    out.push("LevelFS = NormShares / EffectvUsage".to_string());
    let verdict = match r.level_fs {
        v if v.is_infinite() => "no usage yet: nothing to weigh against its shares",
        v if v > 1.0 => "above 1: under-served, it used less than its share",
        v if v < 1.0 => "below 1: over-served, it used more than its share",
        _ => "exactly 1: it used its share",
    };
    out.push(format!("        = {} / {} = {}", dbl(r.norm_shares), dbl(r.norm_usage), dbl(r.level_fs)));
    out.push(format!("  ({verdict})"));
    out.push(String::new());
    if !is_user {
        out.push("FairShare is a user's factor; an account has none of its own.".to_string());
        return out;
    }
    out.push("FairShare = 2^(1 - EffectvUsage / NormShares)".to_string());
    if r.norm_shares > 0.0 {
        out.push(format!(
            "          = 2^(1 - {} / {}) = {}",
            dbl(r.norm_usage),
            dbl(r.norm_shares),
            dbl(r.fair_share)
        ));
    } else {
        out.push(format!("          = {} (no shares: 1 with no usage, 0 with some)", dbl(r.fair_share)));
    }
    out.push("  (2 idle, 1 at its share, below 1 above it; the priority caps it at 10)".to_string());
    out
}
