//! A reservation as the controller keeps and stores it: a window of time
//! over named nodes (and licences), for some users and accounts.

use serde::{Deserialize, Serialize};
use spur_vocab::resv::{Access, ResvFlags};

/// How far UNLIMITED reaches, as Slurm sets it: a year.
pub const UNLIMITED_MS: i64 = 365 * 86_400_000;

/// One reservation.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Resv {
    pub name: String,
    pub start_ms: i64,
    pub end_ms: i64,
    /// Node names, sorted and without duplicates.
    pub nodes: Vec<String>,
    /// The partition its nodes were picked from (`PartitionName=`), or "".
    #[serde(default)]
    pub partition: String,
    #[serde(default)]
    pub users: Vec<String>,
    #[serde(default)]
    pub users_deny: bool,
    #[serde(default)]
    pub accounts: Vec<String>,
    #[serde(default)]
    pub accounts_deny: bool,
    /// Licences held out of the counters for the window: name, count.
    #[serde(default)]
    pub licenses: Vec<(String, u32)>,
    /// [`ResvFlags`] bits.
    #[serde(default)]
    pub flags: u16,
}

impl Resv {
    pub fn flags(&self) -> ResvFlags {
        ResvFlags::from_bits(self.flags)
    }

    pub fn maint(&self) -> bool {
        self.flags().has(ResvFlags::MAINT)
    }

    pub fn users(&self) -> Access {
        Access { names: self.users.clone(), deny: self.users_deny }
    }

    pub fn accounts(&self) -> Access {
        Access { names: self.accounts.clone(), deny: self.accounts_deny }
    }

    /// In its window now.
    pub fn active(&self, now_ms: i64) -> bool {
        self.start_ms <= now_ms && now_ms < self.end_ms
    }

    /// Whether the window `[from, to)` meets this one.
    pub fn overlaps(&self, from: i64, to: i64) -> bool {
        from < self.end_ms && self.start_ms < to
    }

    /// Whether a job of `user` charged to `account` may run in it (Slurm's
    /// rule: with both lists set, both must let the job in; root always may).
    pub fn admits(&self, user: &str, account: Option<&str>) -> bool {
        if user == "root" {
            return true;
        }
        // The lists as they are, not `users()`'s copy: a pass asks this once per job.
        let by_user = !self.users.is_empty() && self.users.iter().any(|u| u == user) != self.users_deny;
        let by_account = !self.accounts.is_empty()
            && account.is_some_and(|a| self.accounts.iter().any(|x| x == a) != self.accounts_deny);
        match (self.users.is_empty(), self.accounts.is_empty()) {
            (false, false) => by_user && by_account,
            (false, true) => by_user,
            (true, false) => by_account,
            (true, true) => false,
        }
    }

    /// A recurring reservation whose window has passed moves on by whole
    /// periods until it ends after `now`; returns whether it moved. Others
    /// are left alone (they are purged once ended).
    pub fn roll_forward(&mut self, now_ms: i64) -> bool {
        let Some(period) = self.flags().period_ms() else { return false };
        if self.end_ms > now_ms {
            return false;
        }
        let periods = (now_ms - self.end_ms) / period + 1;
        self.start_ms += periods * period;
        self.end_ms += periods * period;
        true
    }

    /// Slurm's `State=`: ACTIVE in its window, else INACTIVE.
    pub fn state(&self, now_ms: i64) -> &'static str {
        if self.active(now_ms) { "ACTIVE" } else { "INACTIVE" }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn resv(users: &[&str], accounts: &[&str]) -> Resv {
        Resv {
            name: "r".into(),
            start_ms: 1_000,
            end_ms: 2_000,
            nodes: vec!["n1".into()],
            partition: String::new(),
            users: users.iter().map(|s| s.to_string()).collect(),
            users_deny: false,
            accounts: accounts.iter().map(|s| s.to_string()).collect(),
            accounts_deny: false,
            licenses: vec![],
            flags: 0,
        }
    }

    #[test]
    fn who_may_use_it() {
        let r = resv(&["alice"], &[]);
        assert!(r.admits("alice", None) && !r.admits("bob", Some("phys")) && r.admits("root", None));
        let r = resv(&[], &["phys"]);
        assert!(r.admits("bob", Some("phys")) && !r.admits("bob", Some("chem")) && !r.admits("bob", None));
        let r = resv(&["alice"], &["phys"]);
        assert!(r.admits("alice", Some("phys")) && !r.admits("alice", Some("chem")));
        let mut r = resv(&["bob"], &[]);
        r.users_deny = true;
        assert!(r.admits("alice", None) && !r.admits("bob", None));
    }

    #[test]
    fn a_daily_window_rolls_to_its_next_day() {
        let day = 86_400_000;
        let mut r = resv(&["a"], &[]);
        r.flags = ResvFlags::DAILY.bits();
        assert!(!r.roll_forward(1_500), "still in its window");
        assert!(r.roll_forward(2_000 + 3 * day));
        assert_eq!((r.start_ms, r.end_ms), (1_000 + 4 * day, 2_000 + 4 * day));
        let mut once = resv(&["a"], &[]);
        assert!(!once.roll_forward(10 * day), "a one-off window is purged, not moved");
    }
}
