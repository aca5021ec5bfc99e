//! Who a new job belongs to and runs as. The caller, with the uid and gid
//! MUNGE vouched for (none under plugins `none` and `jwt`, where nothing
//! vouches for a uid, so the job runs as the node agent's user); or, for an
//! Operator and up (Slurm: root), `--uid`/`--gid`, looked up in this host's
//! user database as Slurm's controller does.

use crate::accounting::Caller;
use crate::auth::Role;
use crate::error::{Error, Result};
use nix::unistd::{Gid, Group, Uid, User};

#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Owner {
    pub user: String,
    pub uid: Option<u32>,
    pub gid: Option<u32>,
    pub group: String,
}

/// The owner of a job `caller` submits, with `--uid`/`--gid` as given ("" when not).
pub fn owner(caller: &Caller, role: Role, as_user: &str, as_group: &str) -> Result<Owner> {
    let (as_user, as_group) = (as_user.trim(), as_group.trim());
    if (!as_user.is_empty() || !as_group.is_empty()) && role < Role::Operator {
        let flag = if as_user.is_empty() { "gid" } else { "uid" };
        return Err(Error::PermissionDenied(format!(
            "--{flag}: submitting as another user or group needs the Operator role ('{}' has {})",
            caller.user,
            role.as_str()
        )));
    }
    let mut out = match as_user {
        "" => Owner { user: caller.user.clone(), uid: caller.uid, gid: caller.gid, group: String::new() },
        u => {
            let found = match u.parse::<u32>() {
                Ok(n) => User::from_uid(Uid::from_raw(n)),
                Err(_) => User::from_name(u),
            };
            let pw = found.ok().flatten().ok_or_else(|| {
                Error::invalid("uid", format!("no user '{u}' in the controller's user database"))
            })?;
            Owner {
                user: pw.name,
                uid: Some(pw.uid.as_raw()),
                gid: Some(pw.gid.as_raw()),
                group: String::new(),
            }
        }
    };
    if !as_group.is_empty() {
        let found = match as_group.parse::<u32>() {
            Ok(n) => Group::from_gid(Gid::from_raw(n)),
            Err(_) => Group::from_name(as_group),
        };
        let gr = found.ok().flatten().ok_or_else(|| {
            Error::invalid("gid", format!("no group '{as_group}' in the controller's user database"))
        })?;
        out.gid = Some(gr.gid.as_raw());
        out.group = gr.name;
    } else if let Some(g) = out.gid {
        out.group = group_name(g);
    }
    Ok(out)
}

/// A gid's name here, or the number when this host has none for it.
pub fn group_name(gid: u32) -> String {
    Group::from_gid(Gid::from_raw(gid)).ok().flatten().map_or_else(|| gid.to_string(), |g| g.name)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn caller(uid: Option<u32>) -> Caller {
        Caller { user: "alice".into(), uid, gid: uid, ..Caller::default() }
    }

    #[test]
    fn the_caller_owns_the_job_with_the_uid_munge_vouched_for() {
        let o = owner(&caller(Some(0)), Role::None, "", "").unwrap();
        assert_eq!((o.user.as_str(), o.uid, o.gid, o.group.as_str()), ("alice", Some(0), Some(0), "root"));
        let asserted = owner(&caller(None), Role::None, "", "").unwrap();
        assert_eq!((asserted.uid, asserted.gid), (None, None), "nothing vouched: the agent's user");
    }

    #[test]
    fn uid_and_gid_are_for_operators_and_must_exist() {
        let e = owner(&caller(Some(1000)), Role::None, "root", "").unwrap_err();
        assert!(matches!(e, Error::PermissionDenied(_)) && e.to_string().contains("--uid"), "{e}");
        let e = owner(&caller(Some(1000)), Role::None, "", "0").unwrap_err();
        assert!(e.to_string().contains("--gid"), "{e}");
        let o = owner(&caller(Some(0)), Role::Operator, "0", "").unwrap();
        assert_eq!((o.user.as_str(), o.uid, o.gid), ("root", Some(0), Some(0)));
        let e = owner(&caller(Some(0)), Role::Administrator, "no-such-user-here", "").unwrap_err();
        assert!(e.to_string().contains("no user 'no-such-user-here'"), "{e}");
        let e = owner(&caller(Some(0)), Role::Administrator, "", "no-such-group").unwrap_err();
        assert!(e.to_string().contains("no group 'no-such-group'"), "{e}");
    }
}
