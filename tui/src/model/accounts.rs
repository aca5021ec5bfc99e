//! The Accounts pane: the account tree by `parent`, root at the top, and
//! under each account its user associations.

use crate::model::action::Snapshot;
use crate::model::filter::Filter;
use crate::model::format;
use crate::model::table::{
    Column, Detail, Row, SortKey, TableModel, Target, compare_rows, num_key, text_key,
};
use crate::model::tree::{Node, flatten};
use crate::model::view::{PaneView, Refetch};
use spur_proto::v1::{Account, Association, User};
use std::collections::{HashMap, HashSet};

const fn col(name: &'static str, priority: u8, max: u16, numeric: bool) -> Column {
    Column { name, priority, max, numeric, sparse: false }
}

pub const COLUMNS: &[Column] = &[
    col("Account/User", 0, 32, false),
    col("Share", 1, 6, true),
    col("GrpTRES", 2, 22, false),
    col("QOS", 3, 22, false),
    col("Def QOS", 4, 12, false),
    col("MaxJobs", 5, 7, true),
    col("MaxSubmit", 7, 9, true),
    col("GrpSubmit", 8, 9, true),
    col("MaxWall", 6, 11, true),
    col("MaxTRES", 7, 22, false),
];

const ROOT: &str = "root";

fn account_key(name: &str) -> String {
    format!("acct:{name}")
}

fn assoc_key(a: &Association) -> String {
    format!("user:{}@{}/{}", a.user, a.account, a.partition)
}

fn account_row(a: &Account) -> Row {
    let share = format::share(a.fairshare);
    let cells = vec![
        a.name.clone(),
        share,
        a.grp_tres.clone(),
        String::new(),
        String::new(),
        format::limit(a.max_jobs),
        String::new(),
        format::limit(a.grp_submit),
    ];
    let mut sort = vec![text_key(&a.name), SortKey::Num(a.fairshare), text_key(&a.grp_tres)];
    sort.extend([SortKey::Blank, SortKey::Blank, num_key(a.max_jobs), SortKey::Blank, num_key(a.grp_submit)]);
    padded(account_key(&a.name), Target::Account(a.name.clone()), cells, sort)
}

fn root_row() -> Row {
    padded(account_key(ROOT), Target::Root, vec![ROOT.into()], vec![text_key(ROOT)])
}

fn assoc_row(a: &Association) -> Row {
    let name = if a.partition.is_empty() { a.user.clone() } else { format!("{} [{}]", a.user, a.partition) };
    let qos = format::list(&a.qos);
    let cells = vec![
        name,
        String::new(),
        a.grp_tres.clone(),
        qos.clone(),
        a.default_qos.clone(),
        format::limit(a.max_jobs),
        format::limit(a.max_submit_jobs),
        format::limit(a.grp_submit),
        format::wall(a.max_wall_minutes),
        a.max_tres_per_job.clone(),
    ];
    let sort = vec![
        text_key(&a.user),
        SortKey::Blank,
        text_key(&a.grp_tres),
        text_key(&qos),
        text_key(&a.default_qos),
        num_key(a.max_jobs),
        num_key(a.max_submit_jobs),
        num_key(a.grp_submit),
        num_key(a.max_wall_minutes),
        text_key(&a.max_tres_per_job),
    ];
    let target =
        Target::Assoc { user: a.user.clone(), account: a.account.clone(), partition: a.partition.clone() };
    Row::new(assoc_key(a), target, cells, sort)
}

/// Fill a row out to every column so renderers and sorters can index freely.
fn padded(key: String, target: Target, mut cells: Vec<String>, mut sort: Vec<SortKey>) -> Row {
    cells.resize(COLUMNS.len(), String::new());
    sort.resize(COLUMNS.len(), SortKey::Blank);
    Row::new(key, target, cells, sort)
}

struct Tree<'a> {
    kids: HashMap<&'a str, Vec<&'a Account>>,
    assocs: HashMap<&'a str, Vec<&'a Association>>,
    sort: Option<(usize, bool)>,
    filter: Option<&'a Filter>,
    visited: HashSet<&'a str>,
}

impl<'a> Tree<'a> {
    fn matches(&self, row: &Row) -> bool {
        self.filter.is_none_or(|f| f.matches(&row.text()))
    }

    /// The subtree under `name`, or None when the filter hides all of it.
    /// `visited` guards against parent cycles in the data.
    fn grow(&mut self, name: &'a str, row: Row) -> Option<Node> {
        self.visited.insert(name);
        let mut users: Vec<Node> = self
            .assocs
            .get(name)
            .into_iter()
            .flatten()
            .map(|a| assoc_row(a))
            .filter(|r| self.matches(r))
            .map(Node::leaf)
            .collect();
        let subs: Vec<&'a Account> = self.kids.get(name).cloned().unwrap_or_default();
        let mut accounts = Vec::new();
        for a in subs {
            if !self.visited.contains(a.name.as_str()) {
                accounts.extend(self.grow(&a.name, account_row(a)));
            }
        }
        let sort = self.sort;
        users.sort_by(|x, y| compare_rows(&x.row, &y.row, sort));
        accounts.sort_by(|x, y| compare_rows(&x.row, &y.row, sort));
        users.extend(accounts);
        (self.matches(&row) || !users.is_empty()).then_some(Node { row, children: users })
    }
}

/// The QOS and Accounts panes' data: the accounting catalog both show, and
/// the re-read of each of its lists (by [`crate::model::action::Catalog::index`]).
#[derive(Debug, Clone, Default)]
pub struct Accounting {
    /// None until the first successful fetch.
    pub data: Option<Snapshot>,
    pub refetch: [Refetch; 3],
}

pub fn table(data: Option<&Snapshot>, view: &PaneView) -> TableModel {
    let Some(d) = data else {
        return TableModel { columns: COLUMNS, rows: Vec::new().into(), total: 0, cell_widths: None };
    };
    let names: HashSet<&str> = d.accounts.iter().map(|a| a.name.as_str()).collect();
    let mut kids: HashMap<&str, Vec<&Account>> = HashMap::new();
    for a in d.accounts.iter().filter(|a| a.name != ROOT) {
        // Spec: an account with no (or an unknown) parent renders as a child of root.
        let parent = match a.parent.as_str() {
            p if p.is_empty() || p == a.name || !names.contains(p) => ROOT,
            p => p,
        };
        kids.entry(parent).or_default().push(a);
    }
    let mut assocs: HashMap<&str, Vec<&Association>> = HashMap::new();
    for a in d.users.iter().flat_map(|u: &User| u.associations.iter()) {
        let account = if names.contains(a.account.as_str()) { a.account.as_str() } else { ROOT };
        assocs.entry(account).or_default().push(a);
    }
    let has_root = d.accounts.iter().any(|a| a.name == ROOT);
    let total = d.accounts.len() + usize::from(!has_root) + assocs.values().map(Vec::len).sum::<usize>();
    let mut tree =
        Tree { kids, assocs, sort: view.sort, filter: view.filter.as_ref(), visited: HashSet::new() };
    let root = d.accounts.iter().find(|a| a.name == ROOT).map(account_row).unwrap_or_else(root_row);
    let mut rows = Vec::new();
    if let Some(mut node) = tree.grow(ROOT, root) {
        // Accounts caught in a parent cycle are unreachable from root; show them under it.
        for a in &d.accounts {
            if !tree.visited.contains(a.name.as_str()) {
                node.children.extend(tree.grow(&a.name, account_row(a)));
            }
        }
        flatten(node, &mut rows);
    }
    TableModel { columns: COLUMNS, rows: rows.into(), total, cell_widths: None }
}

pub fn detail(d: &Snapshot, key: &str) -> Option<Detail> {
    let f = |label: &str, value: String| (label.to_string(), value);
    if let Some(name) = key.strip_prefix("acct:") {
        let users: Vec<String> = d
            .users
            .iter()
            .flat_map(|u| u.associations.iter())
            .filter(|a| a.account == name)
            .map(|a| a.user.clone())
            .collect();
        let Some(a) = d.accounts.iter().find(|a| a.name == name) else {
            return (name == ROOT).then(|| Detail {
                title: "Account root".into(),
                crumb: ROOT.into(),
                fields: vec![f("Name", ROOT.into()), f("Note", "implicit top of the account tree".into())],
                body: Vec::new(),
            });
        };
        let parent = if a.parent.is_empty() { ROOT.to_string() } else { a.parent.clone() };
        let fields = vec![
            f("Name", a.name.clone()),
            f("Description", a.description.clone()),
            f("Organization", a.organization.clone()),
            f("Parent", parent),
            f("Share", format::share(a.fairshare)),
            f("MaxJobs", format::limit(a.max_jobs)),
            f("GrpSubmit", format::limit(a.grp_submit)),
            f("GrpTRES", a.grp_tres.clone()),
            f("Users", users.join(",")),
        ];
        let (title, crumb) = (format!("Account {}", a.name), a.name.clone());
        return Some(Detail { title, crumb, fields, body: Vec::new() });
    }
    let (user, a) = d
        .users
        .iter()
        .flat_map(|u| u.associations.iter().map(move |a| (u, a)))
        .find(|(_, a)| assoc_key(a) == key)?;
    let fields = vec![
        f("User", a.user.clone()),
        f("Account", a.account.clone()),
        f("Partition", a.partition.clone()),
        f("Admin", user.admin_level.clone()),
        f("Default Acct", user.default_account.clone()),
        f("QOS", format::list(&a.qos)),
        f("Def QOS", a.default_qos.clone()),
        f("MaxJobs", format::limit(a.max_jobs)),
        f("MaxSubmit", format::limit(a.max_submit_jobs)),
        f("GrpSubmit", format::limit(a.grp_submit)),
        f("MaxWall", format::wall(a.max_wall_minutes)),
        f("MaxTRES", a.max_tres_per_job.clone()),
        f("GrpTRES", a.grp_tres.clone()),
    ];
    Some(Detail {
        title: format!("User {} in account {}", a.user, a.account),
        crumb: format!("{}@{}", a.user, a.account),
        fields,
        body: Vec::new(),
    })
}
