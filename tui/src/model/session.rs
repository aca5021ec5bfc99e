//! Who the controller says the console is (`Session.WhoAmI`) and the one
//! rule that turns that into "may this console write?".
//!
//! The controller is the authority: it refuses writes from a caller without
//! the role whatever the console does. The console refuses them first so an
//! operator learns why before filling in a form, not after.

use spur_proto::v1::WhoAmIResponse;

/// The controller's roles, ordered: `None < Operator < Administrator`.
pub use spur_vocab::names::AdminLevel as Role;

/// The least role the controller accepts for accounting writes (and for
/// reading the txn log).
pub const WRITE_ROLE: Role = Role::Operator;

/// The least role for node state changes (drain, resume, down): they take
/// hardware in or out of service, so the controller keeps them to admins.
pub const NODE_ROLE: Role = Role::Administrator;

/// Job actions (cancel, hold, release, requeue) are open to every user for
/// their own jobs, so the role gate lets them through; whose jobs they are
/// is checked per job against [`OTHERS_JOBS_ROLE`].
pub const JOB_ROLE: Role = Role::None;

/// The least role for acting on someone else's job.
pub const OTHERS_JOBS_ROLE: Role = Role::Operator;

#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Session {
    /// The user the controller attributes requests to (may differ from the
    /// local login when a token names someone else).
    pub user: String,
    pub role: Role,
    /// Whether the kernel or a credential vouched for the user, rather than
    /// the user merely asserting a name.
    pub verified: bool,
    pub cluster: String,
    /// permissive | required | disabled.
    pub auth_mode: String,
}

impl Session {
    pub fn from_pb(r: WhoAmIResponse) -> Session {
        Session {
            user: r.user,
            // A role this console does not know grants nothing: least privilege.
            role: Role::parse(&r.role).unwrap_or(Role::None),
            verified: r.verified,
            cluster: r.cluster_name,
            auth_mode: r.auth_mode,
        }
    }

    /// `alice: Operator, verified` for the status bar.
    pub fn label(&self) -> String {
        let verified = if self.verified { "verified" } else { "unverified" };
        format!("{}: {}, {verified}", self.user, self.role.as_str())
    }
}

/// Why this session may not do what needs `need`, or None when it may. An
/// unknown session (WhoAmI not answered yet, or a controller without it) is
/// not refused: the controller still decides, and a missing API must not
/// lock the console.
pub fn refusal(session: Option<&Session>, need: Role) -> Option<String> {
    let s = session?;
    (s.role < need).then(|| format!("needs {}; you are {}", need.as_str(), s.role.as_str()))
}

/// [`refusal`] for accounting writes.
pub fn write_refusal(session: Option<&Session>) -> Option<String> {
    refusal(session, WRITE_ROLE)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn session(role: &str) -> Session {
        Session::from_pb(WhoAmIResponse { user: "u".into(), role: role.into(), ..Default::default() })
    }

    #[test]
    fn only_operator_and_up_may_write() {
        assert_eq!(write_refusal(None), None);
        assert_eq!(write_refusal(Some(&session("None"))).as_deref(), Some("needs Operator; you are None"));
        assert_eq!(write_refusal(Some(&session("Operator"))), None);
        assert_eq!(write_refusal(Some(&session("Administrator"))), None);
        // Unknown spellings grant nothing.
        assert!(write_refusal(Some(&session("Wizard"))).is_some());
        let op = session("Operator");
        assert_eq!(refusal(Some(&op), NODE_ROLE).as_deref(), Some("needs Administrator; you are Operator"));
        assert_eq!(refusal(Some(&session("Administrator")), NODE_ROLE), None);
    }
}
