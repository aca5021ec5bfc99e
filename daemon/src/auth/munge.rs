//! The `munge` plugin: the caller's credential decoded by this host's munged
//! (so it was encoded by a host with the cluster's key, for the uid and gid
//! that host's kernel gave the caller), and the caller's name looked up for
//! that uid, never taken from the request.

use super::AuthError;
use crate::accounting::Caller;
use spur_munge::{Decoded, Kind, Munge};
use std::path::Path;

pub struct Decoder(Munge);

impl Decoder {
    /// libmunge for `socket`; a controller configured for munge without it
    /// does not start (every request would be refused).
    pub fn load(socket: Option<&Path>) -> anyhow::Result<Decoder> {
        let m = Munge::load(socket).map_err(|e| anyhow::anyhow!("key 'auth.plugin': \"munge\": {e}"))?;
        if !m.socket().exists() {
            tracing::warn!(
                socket = %m.socket().display(),
                "munged's socket is not there yet: requests are refused until munged runs"
            );
        }
        Ok(Decoder(m))
    }

    /// Who encoded `cred`, or why it is refused. munged keeps a replay
    /// cache, so this is called once per request.
    pub fn decode(&self, cred: &str) -> Result<Decoded, AuthError> {
        self.0.decode(cred).map_err(|e| self.refusal(e))
    }

    fn refusal(&self, e: spur_munge::MungeError) -> AuthError {
        {
            let what = match e.kind {
                Kind::Replayed => "replayed",
                Kind::Expired => "expired",
                Kind::Rewound => "encoded in the future (clock skew)",
                Kind::Invalid => "invalid (another key, or not a credential)",
                Kind::Unauthorized => "not for this host",
                Kind::Socket => "munged cannot be reached on the controller",
                Kind::NoLibrary | Kind::Other => "not decoded",
            };
            AuthError::Munge(format!("{what}: {}", e.message))
        }
    }

    /// A new credential of this process carrying `payload` (a caller handed to the leader).
    pub fn encode_with(&self, payload: &[u8]) -> Result<String, AuthError> {
        self.0.encode_with(payload).map_err(|e| AuthError::Munge(format!("encoding failed: {}", e.message)))
    }

    /// [`Decoder::decode`], with the payload.
    pub fn decode_with(&self, cred: &str) -> Result<(Decoded, Vec<u8>), AuthError> {
        let (who, payload) = self.0.decode_with(cred).map_err(|e| self.refusal(e))?;
        Ok((who, payload))
    }

    /// The caller a credential names: uid and gid as munged vouches, the
    /// name from the user database.
    pub fn caller(&self, cred: &str, peer: String) -> Result<Caller, AuthError> {
        let who = self.decode(cred)?;
        let user = user_name(who.uid).ok_or(AuthError::UnknownUid(who.uid))?;
        Ok(Caller {
            user,
            uid: Some(who.uid),
            gid: Some(who.gid),
            verified: true,
            peer,
            asserted_uid: Some(who.uid),
            ..Caller::default()
        })
    }
}

/// The login name of `uid` in the system's user database (NSS: files, LDAP, ...).
pub fn user_name(uid: u32) -> Option<String> {
    nix::unistd::User::from_uid(nix::unistd::Uid::from_raw(uid)).ok().flatten().map(|u| u.name)
}
