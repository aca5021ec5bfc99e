//! `sinfo` (also `spur info`): partitions and nodes, printed the way Slurm's
//! sinfo prints them. Nodes are grouped into one line per distinct value of
//! the fields shown (partition, state, reason, ...), exactly as sinfo does;
//! `-o` takes Slurm's `%[.][width]X` codes and `-O` its field names (the
//! fields are [`cells`]'s). The printf-style format engine (rather than the
//! comfy-table renderer) is what makes the bytes match.

pub mod cells;
mod json;
pub mod resv;

use super::fmt::{natural, status};
use super::getopt::{Mode, Opt, Spec, check, switch, value};
use super::kv::{self, Item, fit};
use super::nodefmt::state;
use crate::conn::{self, Identity};
use crate::vocab::hostlist;
pub use cells::{DEFINITION, sinfo_time};
use cells::{Group, Kind, cell, kind, named, spec, state_num};
use spur_proto::v1 as pb;
use std::collections::{HashMap, HashSet};

pub const USAGE: &str = "\
usage: sinfo [-adehNrRsT] [-p PARTITION,...] [-n NODELIST] [-t STATE,...] [-o FORMAT | -O FIELDS]
             [--definition=ID,...] [--json] [--controller URL]
  -N, --Node            one line per node (and partition)
  -R, --list-reasons    why nodes are down or drained: REASON USER TIMESTAMP NODELIST
  -s, --summarize       node counts as allocated/idle/other/total per partition
  -T, --reservation     the reservations: name, state, start, end, duration, nodes
  -p, --partition=P,... only these partitions      -n, --nodes=LIST  only these nodes
  --definition=ID,...   only nodes in these provisioner definitions (provisioners.yaml; see
                        scontrol show provisioner)
  -t, --states=S,...    idle alloc mix down drain drained draining unk no_respond (or all)
  -d, --dead / -r, --responding   only non-responding / responding nodes
  -e, --exact           group only nodes with identical CPUs, memory and weight
  -h, --noheader        no header line              -a, --all   accepted (no hidden partitions)
  -o, --format=FORMAT   e.g. \"%9P %.5a %.10l %.6D %.6t %N\"; %[.][width]X, '.' right-justifies; %all:
      %P partition (* default)  %R partition  %a avail  %l timelimit  %L default time
      %p priority tier  %M preempt mode  %D nodes  %N nodelist  %t/%T state short/long
      %c cpus  %m memory MB  %w weight  %C cpus A/I/O/T  %F nodes A/I/O/T  %A nodes A/I  %G gres
      %f/%b features  %E reason  %u reason user  %U user(uid)  %H reason time  %n/%o agent host
      %X %Y %Z %z sockets, cores, threads (Slurm's defaults: 1 socket of CPUs cores)
      %B %g %h %I %r %s %S %V %d %e %O %i %v: accepted, Slurm's unset value (Spur has no data)
  -O, --Format=FIELDS   every name of Slurm's sinfo -O (All, Partition, StateComplete, AllocMem,
      GresUsed, CPUsLoad, ...), plus AgentHost and Definition (Spur: the node's provisioner
      definitions)  (name[:[.]width], default width 20)
  --json / --yaml       data_parser's document (sinfo: a record per line of the default listing,
                        meta, errors), plus Spur's nodes and partitions, as JSON / YAML";

static FLAGS: Spec<Args> = Spec { opts: OPTS, mode: Mode::Anywhere, noun: "flag" };
const OPTS: &[Opt<Args>] = &[
    switch("a/all", |_| {}),
    switch("d/dead", |a| a.dead = true),
    switch("e/exact", |a| a.exact = true),
    switch("h/noheader", |a| a.noheader = true),
    check("n/nodes", nodes),
    switch("N/Node", |a| a.node_mode = true),
    value("o/format", |a, v| (a.format, a.fields) = (Some(v), None)),
    value("O/Format", |a, v| (a.format, a.fields) = (None, Some(v))),
    value("-/definition", |a, v| a.definitions = kv::list(&v)),
    value("p/partition", |a, v| {
        a.partitions = v.split(',').filter(|s| !s.is_empty()).map(String::from).collect()
    }),
    switch("r/responding", |a| a.responding = true),
    switch("R/list-reasons", |a| a.reasons = true),
    switch("s/summarize", |a| a.summarize = true),
    switch("T/reservation", |a| a.reservations = true),
    check("t/states", states),
    switch("-/json", |a| a.json = true),
    switch("-/yaml", |a| a.yaml = true),
    value("-/controller", |a, v| a.controller = Some(v)),
    switch("-/help", |a| a.help = true),
    switch("-/usage", |a| a.help = true),
];

#[derive(Debug, Default, Clone)]
pub struct Args {
    pub noheader: bool,
    pub node_mode: bool,
    pub reasons: bool,
    pub summarize: bool,
    /// `-T`: the reservations instead of the nodes.
    pub reservations: bool,
    pub exact: bool,
    pub dead: bool,
    pub responding: bool,
    pub json: bool,
    /// `--yaml`: the `--json` document in YAML.
    pub yaml: bool,
    pub help: bool,
    /// Empty: every partition.
    pub partitions: Vec<String>,
    /// `-n`, expanded.
    pub nodes: Option<HashSet<String>>,
    pub states: Vec<Test>,
    pub format: Option<String>,
    /// `-O`: Slurm's field names (the last of `-o` and `-O` wins).
    pub fields: Option<String>,
    /// `--definition`: nodes in any of these provisioner definitions.
    pub definitions: Vec<String>,
    pub controller: Option<String>,
}

/// A `-t` state test.
type Test = fn(&pb::Node) -> bool;

/// `-t` names in Slurm's lookup order (so the prefix `d` means `down`). States a
/// Spur node cannot be in (fail, maint, ...) are accepted and match nothing.
const STATES: &[(&str, Test)] = &[
    ("unknown unk", |n| !matches!(n.base_state.as_str(), "DOWN" | "IDLE" | "ALLOCATED" | "MIXED")),
    ("down", |n| n.base_state == "DOWN"),
    // Slurm's `idle` is a plain idle node: no drain flag.
    ("idle", |n| n.base_state == "IDLE" && !n.drain),
    ("allocated alloc", |n| n.base_state == "ALLOCATED"),
    ("error err", |_| false),
    ("mixed mix", |n| n.base_state == "MIXED"),
    ("future futr", |_| false),
    ("drain", |n| n.drain),
    ("drained", |n| n.drain && !state(n).busy),
    ("draining drng", |n| n.drain && state(n).busy),
    ("completing comp", |_| false),
    ("no_respond", |n| n.not_responding),
    ("fail failing maint reserved resv planned reboot", |_| false),
];

fn state_test(tok: &str) -> Option<Test> {
    let t = tok.to_ascii_lowercase();
    STATES.iter().find(|(names, _)| names.split(' ').any(|n| n.starts_with(t.as_str()))).map(|(_, f)| *f)
}

pub fn parse(argv: &[String]) -> Result<Args, String> {
    let mut a = Args::default();
    FLAGS.parse_flags(argv, &mut a, "sinfo")?;
    Ok(a)
}

fn nodes(a: &mut Args, v: String) -> Result<(), String> {
    let names = hostlist::expand(&v).map_err(|e| format!("--nodes: {e}"))?;
    a.nodes = Some(names.into_iter().collect());
    Ok(())
}

/// `-t`: "all" clears the filter, like Slurm.
fn states(a: &mut Args, v: String) -> Result<(), String> {
    a.states.clear();
    if v.eq_ignore_ascii_case("all") {
        return Ok(());
    }
    for tok in v.split(',').filter(|s| !s.is_empty()) {
        let valid = "idle, alloc, mix, down, drain, drained, draining, unk, no_respond, all";
        a.states.push(state_test(tok).ok_or_else(|| format!("bad state '{tok}' (valid: {valid})"))?);
    }
    Ok(())
}

impl Args {
    /// Filters that hide nodes also hide partitions left with none (as sinfo does).
    fn filtering(&self) -> bool {
        self.nodes.is_some()
            || !self.states.is_empty()
            || self.dead
            || self.responding
            || self.reasons
            || !self.definitions.is_empty()
    }

    fn keep(&self, n: &pb::Node) -> bool {
        if self.nodes.as_ref().is_some_and(|set| !set.contains(&n.name))
            || !(self.definitions.is_empty() || n.definitions.iter().any(|d| self.definitions.contains(d)))
            || (self.dead && !n.not_responding)
            || (self.responding && n.not_responding)
        {
            return false;
        }
        if self.states.is_empty() {
            // -R alone lists down and drained nodes, and any node carrying a reason.
            return !self.reasons || n.base_state == "DOWN" || n.drain || !n.reason.is_empty();
        }
        self.states.iter().any(|test| test(n))
    }

    fn keep_part(&self, p: &pb::Partition) -> bool {
        self.partitions.is_empty() || self.partitions.contains(&p.name)
    }
}

/// What to print: Slurm's default formats; `%P` and `-N`'s `%N` size to fit (at least 9).
pub struct Plan {
    pub items: Vec<Item>,
    auto_part: bool,
    auto_node: bool,
}

pub fn plan(a: &Args) -> Result<Plan, String> {
    if let Some(names) = &a.fields {
        // `All` is `%all`'s fields; the other names are `-O`'s, each in its place.
        let mut items = vec![];
        for tok in names.split(',').filter(|t| !t.trim().is_empty()) {
            if tok.split(':').next().unwrap_or_default().trim().eq_ignore_ascii_case("all") {
                items.extend(all_items());
            } else {
                items.extend(kv::long_format(tok, named, "sinfo")?);
            }
        }
        if items.is_empty() {
            return Err("--Format: no fields given".into());
        }
        return Ok(Plan { items, auto_part: false, auto_node: false });
    }
    if a.format.as_deref().is_some_and(|f| f.eq_ignore_ascii_case("%all")) {
        return Ok(Plan { items: all_items(), auto_part: false, auto_node: false });
    }
    let (fmt, auto_part, auto_node) = match &a.format {
        Some(f) => (f.as_str(), false, false),
        None if a.summarize => ("%9P %.5a %.10l %.16F  %N", true, false),
        None if a.node_mode => ("%N %.6D %.9P %6t", true, true),
        None if a.reasons => ("%20E %9u %19H %N", false, false),
        None => ("%9P %.5a %.10l %.6D %.6t %N", true, false),
    };
    Ok(Plan { items: kv::parse_format(fmt, |c| spec(c).is_some(), "sinfo")?, auto_part, auto_node })
}

/// `%all`'s items: every field, unpadded, each followed by its separator.
fn all_items() -> Vec<Item> {
    let field = |code| Item::Field { code, width: 0, right: false };
    cells::all_letters().into_iter().flat_map(|(c, sep)| [field(c), Item::Text(sep.into())]).collect()
}

/// The grouping key of one node in one partition: every shown field that splits groups.
fn key(items: &[Item], p: &pb::Partition, n: &pb::Node, a: &Args) -> Vec<String> {
    let one = Group { part: Some((0, p)), nodes: vec![n] };
    let mut k: Vec<String> = items
        .iter()
        .filter_map(|it| match it {
            Item::Field { code: c @ ('t' | 'T'), .. } => {
                Some(format!("{c}{}{}", state_num(n), state(n).busy))
            }
            Item::Field { code, .. } => match kind(*code) {
                Kind::Part | Kind::Node => Some(cell(*code, &one)),
                Kind::Size if a.exact => Some(cell(*code, &one)),
                _ => None,
            },
            Item::Text(_) => None,
        })
        .collect();
    if a.node_mode {
        k.push(n.name.clone());
    }
    k
}

fn build<'a>(items: &[Item], nodes: &'a [pb::Node], parts: &'a [pb::Partition], a: &Args) -> Vec<Group<'a>> {
    let mut groups: Vec<Group<'a>> = vec![];
    let mut index: HashMap<Vec<String>, usize> = HashMap::new();
    let mut members: HashSet<(usize, &str)> = HashSet::new();
    for (pi, p) in parts.iter().enumerate().filter(|(_, p)| a.keep_part(p)) {
        let mut any = false;
        for n in nodes.iter().filter(|n| n.partitions.contains(&p.name) && a.keep(n)) {
            any = true;
            let gi = *index.entry(key(items, p, n, a)).or_insert_with(|| {
                groups.push(Group { part: Some((pi, p)), nodes: vec![] });
                groups.len() - 1
            });
            if members.insert((gi, n.name.as_str())) {
                groups[gi].nodes.push(n);
            }
        }
        // sinfo shows every partition, even one without nodes, unless filtering nodes.
        let shows_part = items.iter().any(|i| matches!(i, Item::Field { code: 'P' | 'R', .. }));
        if !any && shows_part && !a.node_mode && !a.filtering() {
            groups.push(Group { part: Some((pi, p)), nodes: vec![] });
        }
    }
    let part_of = |g: &Group| g.part.map(|(i, _)| i).unwrap_or(usize::MAX);
    if a.node_mode {
        let first = |g: &Group<'a>| {
            g.nodes.iter().map(|n| n.name.as_str()).min_by(|x, y| natural(x, y)).unwrap_or("")
        };
        groups.sort_by(|x, y| natural(first(x), first(y)));
    } else {
        // Slurm's "#P,-t": partition order, then state, highest first.
        let st = |g: &Group| g.nodes.first().map(|n| state_num(n)).unwrap_or(0);
        groups.sort_by(|x, y| part_of(x).cmp(&part_of(y)).then(st(y).cmp(&st(x))));
    }
    groups
}

fn table(plan: &Plan, groups: &[Group], noheader: bool) -> String {
    let longest = |f: &dyn Fn(&Group) -> usize| groups.iter().map(f).max().unwrap_or(0).max(9);
    let part_w = longest(&|g| g.part.map(|(_, p)| p.name.len() + p.is_default as usize).unwrap_or(3));
    let node_w = longest(&|g| cell('N', g).len());
    let line = |g: Option<&Group>| {
        let mut out = String::new();
        for it in &plan.items {
            let &Item::Field { code, mut width, right } = it else {
                out.push_str(if let Item::Text(t) = it { t } else { "" });
                continue;
            };
            if plan.auto_part && matches!(code, 'P' | 'R') {
                width = part_w;
            }
            if plan.auto_node && code == 'N' {
                width = node_w;
            }
            let header = spec(code).map_or("", |(h, _)| h);
            let mut v = g.map(|g| cell(code, g)).unwrap_or_else(|| header.to_string());
            // A default partition cut short keeps its '*' as the last character.
            if g.is_some() && code == 'P' && width > 0 && v.ends_with('*') && v.chars().count() > width {
                v = v.chars().take(width - 1).chain(['*']).collect();
            }
            out.push_str(&fit(&v, width, right));
        }
        out.push('\n');
        out
    };
    let mut out = if noheader { String::new() } else { line(None) };
    for g in groups {
        out.push_str(&line(Some(g)));
    }
    out
}

/// The whole report from listed nodes and partitions; no I/O.
pub fn report(a: &Args, nodes: &[pb::Node], parts: &[pb::Partition]) -> Result<String, String> {
    if a.json || a.yaml {
        let ps: Vec<&pb::Partition> = parts.iter().filter(|p| a.keep_part(p)).collect();
        let in_parts =
            |n: &pb::Node| a.partitions.is_empty() || ps.iter().any(|p| n.partitions.contains(&p.name));
        let ns: Vec<&pb::Node> = nodes.iter().filter(|n| a.keep(n) && in_parts(n)).collect();
        let default = plan(&Args { format: None, fields: None, ..a.clone() })?;
        return Ok(json::document(&build(&default.items, nodes, parts, a), &ns, &ps, a.yaml));
    }
    let plan = plan(a)?;
    Ok(table(&plan, &build(&plan.items, nodes, parts, a), a.noheader))
}

async fn run(mut a: Args) -> Result<String, String> {
    // SINFO_FORMAT replaces only the plain partition view, as in Slurm.
    if a.format.is_none() && a.fields.is_none() && !(a.summarize || a.node_mode || a.reasons) {
        a.format = std::env::var("SINFO_FORMAT").ok().filter(|f| !f.is_empty());
    }
    plan(&a)?;
    let mut c = conn::connect_flag(a.controller.as_deref(), Identity::local()).await?;
    if a.reservations {
        let req = pb::ListReservationsRequest::default();
        let all = c.reservations.list_reservations(req).await.map_err(status)?.into_inner();
        return Ok(resv::table(&all.reservations, a.noheader));
    }
    // One round trip: the node list carries the partitions.
    let all = c.nodes.list_nodes(pb::ListRequest::default()).await.map_err(status)?.into_inner();
    report(&a, &all.nodes, &all.partitions)
}

/// Runs sinfo with its arguments (without `argv[0]`); returns the exit code.
pub async fn main(argv: &[String]) -> i32 {
    let result = match parse(argv) {
        Ok(a) if a.help => Ok(format!("{USAGE}\n")),
        Ok(a) => run(a).await,
        Err(e) => Err(e),
    };
    super::output::finish("sinfo", result)
}
