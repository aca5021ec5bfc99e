//! Whether a job's `--dependency` holds, from the states of the jobs it
//! names: pure, so the controller calls it when it builds a snapshot and
//! the tests call it on plain data. `singleton` is the one kind that needs
//! the pass as well (two jobs of one name must not start in one pass):
//! [`DepGate::Singleton`] carries the key the pass checks.

use super::reason::{Facts, Reason, ReasonCode as C};
use spur_vocab::JobState;
use spur_vocab::depend::{DepItem, DepKind, Dependency};

/// What the scheduler needs of a job another depends on.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Target {
    pub state: JobState,
    pub exit_code: i32,
    /// 0 until it starts.
    pub start_ms: i64,
}

/// A pending job's dependency as the pass sees it.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub enum DepGate {
    /// None, or every item holds.
    #[default]
    Clear,
    /// Waiting (reason `Dependency`) or never to hold (`DependencyNeverSatisfied`).
    Blocked(Reason),
    /// The rest holds; no other job of `key` (user and name) may start with it.
    Singleton(String),
}

/// How one item stands.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Holds {
    Yes = 0,
    NotYet = 1,
    Never = 2,
}

fn item_holds(item: &DepItem, t: Option<Target>, now: i64) -> Holds {
    // A job no longer known is one that ended long ago and whose fate was not
    // kept: Slurm then treats the dependency as fulfilled.
    let Some(t) = t else { return Holds::Yes };
    let ended = !t.state.is_active();
    let ok = t.state == JobState::Completed && t.exit_code == 0;
    match item.kind {
        DepKind::After if t.start_ms > 0 => {
            let after = t.start_ms.saturating_add(i64::from(item.minutes) * 60_000);
            if ended || after <= now { Holds::Yes } else { Holds::NotYet }
        }
        DepKind::After | DepKind::AfterAny if ended => Holds::Yes,
        DepKind::After | DepKind::AfterAny => Holds::NotYet,
        DepKind::AfterOk | DepKind::AfterCorr if ended => {
            if ok {
                Holds::Yes
            } else {
                Holds::Never
            }
        }
        DepKind::AfterNotOk if ended => {
            if ok {
                Holds::Never
            } else {
                Holds::Yes
            }
        }
        DepKind::AfterOk | DepKind::AfterCorr | DepKind::AfterNotOk => Holds::NotYet,
        DepKind::Singleton => Holds::Yes,
    }
}

/// Evaluates `dep` at `now`. `lookup` gives a named job's state (None: not
/// known); `singleton` is the job's user and name, and `running` whether a
/// job of that key other than this one is running or suspended.
pub fn gate(
    dep: &Dependency,
    now: i64,
    lookup: impl Fn(u64) -> Option<Target>,
    singleton: impl FnOnce() -> (String, bool),
) -> DepGate {
    if dep.is_empty() {
        return DepGate::Clear;
    }
    let reason = |code, item: &DepItem, t: Option<Target>| {
        let state = t.map_or("PURGED", |t| t.state.as_str()).to_string();
        DepGate::Blocked(Reason::new(code, Facts::Dependency { item: item.to_string(), state }))
    };
    let mut found = [None, None, None];
    for item in dep.items.iter().filter(|i| i.kind != DepKind::Singleton) {
        let t = lookup(item.job);
        let h = item_holds(item, t, now);
        let slot = &mut found[h as usize];
        if slot.is_none() {
            *slot = Some((item, t));
        }
        if dep.any && h == Holds::Yes {
            return DepGate::Clear;
        }
    }
    let [_, not_yet, never] = found;
    let blocked = if dep.any {
        // None holds: waiting while one still may; never once none can.
        not_yet
            .map(|(i, t)| reason(C::Dependency, i, t))
            .or(never.map(|(i, t)| reason(C::DependencyNeverSatisfied, i, t)))
    } else {
        never
            .map(|(i, t)| reason(C::DependencyNeverSatisfied, i, t))
            .or(not_yet.map(|(i, t)| reason(C::Dependency, i, t)))
    };
    let wants_singleton = dep.items.iter().any(|i| i.kind == DepKind::Singleton);
    match blocked {
        // Under `?` a free singleton is enough by itself.
        Some(b) if !(dep.any && wants_singleton) => return b,
        None if !wants_singleton => return DepGate::Clear,
        _ => {}
    }
    let (key, running) = singleton();
    if running {
        let item = DepItem { kind: DepKind::Singleton, job: 0, minutes: 0 };
        let facts = Facts::Dependency { item: item.to_string(), state: "RUNNING".into() };
        return DepGate::Blocked(Reason::new(C::Dependency, facts));
    }
    DepGate::Singleton(key)
}
