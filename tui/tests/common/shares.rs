//! A fairshare tree as ListShares sends it, for the Fairshare pane's tests.

use spur_proto::v1::{ListSharesResponse, ShareRow};

#[allow(clippy::too_many_arguments)]
fn share(
    account: &str,
    user: &str,
    parent: &str,
    raw: f64,
    sib: f64,
    up: f64,
    norm: f64,
    usage: f64,
) -> ShareRow {
    let total = 36000.0;
    let norm_usage = usage / total;
    ShareRow {
        account: account.into(),
        user: user.into(),
        parent: parent.into(),
        raw_shares: raw,
        sibling_shares: sib,
        parent_shares: up,
        norm_shares: norm,
        raw_usage: usage,
        norm_usage,
        level_fs: if norm_usage > 0.0 { norm / norm_usage } else { f64::INFINITY },
        // Deliberately not 2^(1 - u/s) for bob: the pane shows the wire's value, never its own.
        fair_share: if user == "bob" {
            1.234567
        } else if user.is_empty() {
            0.0
        } else {
            2f64.powf(1.0 - norm_usage / norm)
        },
    }
}

/// root → {ml (10), science (30) → {physics (1), chem (1)}}; alice and bob in ml, carol in physics.
pub fn shares() -> ListSharesResponse {
    ListSharesResponse {
        accounts: vec![
            share("science", "", "root", 30.0, 40.0, 1.0, 0.75, 32400.0),
            share("ml", "", "root", 10.0, 40.0, 1.0, 0.25, 3600.0),
            share("physics", "", "science", 1.0, 2.0, 0.75, 0.375, 32400.0),
            share("chem", "", "science", 1.0, 2.0, 0.75, 0.375, 0.0),
        ],
        rows: vec![
            share("ml", "bob", "", 1.0, 2.0, 0.25, 0.125, 0.0),
            share("ml", "alice", "", 1.0, 2.0, 0.25, 0.125, 3600.0),
            share("physics", "carol", "", 1.0, 1.0, 0.375, 0.375, 32400.0),
        ],
        total_usage: 36000.0,
    }
}
