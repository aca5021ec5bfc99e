//! The caller's identity handed from a follower to the leader.
//!
//! Under `munge`, a caller's credential decodes once (munged's replay
//! cache refuses a second decode), so the follower that decoded it cannot
//! pass it on. It seals the caller it established into a new credential of
//! its own, as a MUNGE payload: the leader decodes that, checks it was
//! encoded by the controllers' own uid on a host with the cluster's key,
//! and takes the caller from the payload. No new secret, no new channel:
//! MUNGE is already what vouches for every host here. Under `jwt` and
//! `none` the leader verifies the caller's own headers again (a token is
//! not replay-protected), and the hop only marks the request forwarded.

use super::{AuthError, Authenticator, header};
use crate::accounting::Caller;
use serde::{Deserialize, Serialize};
use spur_proto::wire::{
    FORWARD_MUNGE_HEADER, FORWARDED_HEADER, MUNGE_ERROR_HEADER, MUNGE_HEADER, UID_HEADER, USER_HEADER,
};
use spur_vocab::names::AdminLevel;

/// What of a [`Caller`] crosses the hop (the peer does not: the leader's
/// Peer is the follower, as the spec's audit section says).
#[derive(Debug, Serialize, Deserialize)]
struct Handed {
    user: String,
    uid: Option<u32>,
    gid: Option<u32>,
    verified: bool,
    asserted_uid: Option<u32>,
    claimed_level: Option<String>,
}

impl Authenticator {
    /// The follower's side: replaces the caller's credential in `headers`
    /// with the caller as established here (munge), or marks the request
    /// forwarded (the other plugins). Blocking under munge (munged's socket).
    pub fn seal(&self, caller: &Caller, headers: &mut http::HeaderMap) -> Result<(), AuthError> {
        let Some(m) = &self.munge else {
            headers.insert(FORWARDED_HEADER, http::HeaderValue::from_static("1"));
            return Ok(());
        };
        let handed = Handed {
            user: caller.user.clone(),
            uid: caller.uid,
            gid: caller.gid,
            verified: caller.verified,
            asserted_uid: caller.asserted_uid,
            claimed_level: caller.claimed_level.map(|l| l.as_str().to_string()),
        };
        let payload = serde_json::to_vec(&handed).map_err(|e| AuthError::Munge(e.to_string()))?;
        let cred = m.encode_with(&payload)?;
        for h in [MUNGE_HEADER, MUNGE_ERROR_HEADER, USER_HEADER, UID_HEADER, "authorization"] {
            headers.remove(h);
        }
        let v = http::HeaderValue::from_str(&cred).map_err(|e| AuthError::Munge(e.to_string()))?;
        headers.insert(FORWARD_MUNGE_HEADER, v);
        Ok(())
    }

    /// The leader's side: the caller a forwarded request carries, or None
    /// when it is not one (then the usual checks apply). Under munge only a
    /// credential of this controller's own uid (or root) may hand a caller over.
    pub fn unseal(&self, headers: &http::HeaderMap, peer: &str) -> Option<Result<Caller, AuthError>> {
        let m = self.munge.as_ref()?;
        let cred = header(headers, FORWARD_MUNGE_HEADER)?;
        Some(m.decode_with(cred).and_then(|(who, payload)| {
            let own = nix::unistd::geteuid().as_raw();
            if who.uid != own && who.uid != 0 {
                return Err(AuthError::Munge(format!(
                    "a forwarded request sealed by uid {} (the controllers run as uid {own})",
                    who.uid
                )));
            }
            let h: Handed = serde_json::from_slice(&payload)
                .map_err(|e| AuthError::Munge(format!("a forwarded identity that does not parse: {e}")))?;
            Ok(Caller {
                user: h.user,
                uid: h.uid,
                gid: h.gid,
                verified: h.verified,
                asserted_uid: h.asserted_uid,
                claimed_level: h.claimed_level.as_deref().and_then(|l| AdminLevel::parse(l).ok()),
                peer: peer.to_string(),
                forwarded: true,
                ..Caller::default()
            })
        }))
    }

    /// Whether a request a plugin other than munge verified came through a follower.
    pub fn marked_forwarded(&self, headers: &http::HeaderMap) -> bool {
        self.munge.is_none() && header(headers, FORWARDED_HEADER).is_some()
    }
}
