//! MUNGE credentials: encode one for a request, decode one to learn who sent it.
//!
//! - `lib.rs`: [`Munge`], libmunge's four calls behind a safe API, and [`MungeError`].
//! - `daemon.rs`: a private munged for tests (feature `test-daemon`).
//! - `ffi.rs`: the library loaded at run time (`libmunge.so.2`), its symbols and codes.
//!
//! Why a crate of our own: the binding crates on crates.io leak the
//! credential string on every call and panic on a credential with a NUL or a
//! payload that is not UTF-8, which a server cannot take from the network.
//! libmunge is loaded with `dlopen` rather than linked, so the binaries build
//! and run on a machine without MUNGE (the demo, a laptop) and only the
//! `munge` auth plugin needs it, as Slurm loads its auth plugins.
//! This is the workspace's one crate with `unsafe` code; it is small on
//! purpose: four C calls, a payload only where a caller asks for one (an
//! identity forwarded between controllers), a context per call (libmunge contexts are not shared between
//! threads).

#[cfg(any(test, feature = "test-daemon"))]
pub mod daemon;
mod ffi;

use std::ffi::{CStr, CString};
use std::path::{Path, PathBuf};

/// Longest credential taken for decoding. A credential with an empty payload
/// is about 120 bytes; anything this long is not one of ours.
pub const MAX_CREDENTIAL: usize = 4096;

/// Longest payload sealed into a credential: an identity handed between
/// controllers, a few hundred bytes.
pub const MAX_PAYLOAD: usize = 1024;

/// The socket libmunge uses when told nothing (munged's default).
pub const DEFAULT_SOCKET: &str = "/run/munge/munge.socket.2";

/// Why MUNGE said no, in its own terms: callers branch on the kind.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Kind {
    /// libmunge is not installed (or not loadable).
    NoLibrary,
    /// munged is not running, or its socket cannot be reached.
    Socket,
    /// Not a credential, or one encoded with another key (or realm).
    Invalid,
    /// Older than its time-to-live.
    Expired,
    /// Encoded in the future (clocks apart).
    Rewound,
    /// Decoded once already: MUNGE's replay cache saw it.
    Replayed,
    /// Restricted to another uid or gid.
    Unauthorized,
    /// Anything else libmunge reports.
    Other,
}

#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{message}")]
pub struct MungeError {
    pub kind: Kind,
    pub message: String,
}

impl MungeError {
    fn new(kind: Kind, message: impl Into<String>) -> Self {
        MungeError { kind, message: message.into() }
    }
}

/// Who encoded a credential, as munged on this host vouches.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Decoded {
    pub uid: u32,
    pub gid: u32,
}

/// libmunge, loaded once, talking to one munged socket.
pub struct Munge {
    lib: ffi::Lib,
    socket: CString,
    socket_path: PathBuf,
}

impl std::fmt::Debug for Munge {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Munge").field("socket", &self.socket_path).finish()
    }
}

impl Munge {
    /// Loads libmunge for `socket` (None: munged's default socket).
    pub fn load(socket: Option<&Path>) -> Result<Munge, MungeError> {
        let socket_path = socket.map_or_else(|| PathBuf::from(DEFAULT_SOCKET), Path::to_path_buf);
        let text = socket_path.to_str().ok_or_else(|| {
            MungeError::new(Kind::Socket, format!("munge socket {} is not UTF-8", socket_path.display()))
        })?;
        let socket = CString::new(text).map_err(|_| {
            MungeError::new(Kind::Socket, format!("munge socket {} has a NUL byte", socket_path.display()))
        })?;
        let lib = ffi::Lib::load().map_err(|m| MungeError::new(Kind::NoLibrary, m))?;
        Ok(Munge { lib, socket, socket_path })
    }

    /// The socket this talks to.
    pub fn socket(&self) -> &Path {
        &self.socket_path
    }

    /// A new credential for the calling process's uid and gid, with no payload.
    pub fn encode(&self) -> Result<String, MungeError> {
        self.encode_with(&[])
    }

    /// A new credential for the calling process's uid and gid carrying
    /// `payload` (at most [`MAX_PAYLOAD`] bytes), which munged seals with
    /// the credential: a decoder learns both, or neither.
    pub fn encode_with(&self, payload: &[u8]) -> Result<String, MungeError> {
        if payload.len() > MAX_PAYLOAD {
            return Err(MungeError::new(
                Kind::Other,
                format!("a payload of {} bytes is longer than {MAX_PAYLOAD}", payload.len()),
            ));
        }
        let len = libc::c_int::try_from(payload.len()).unwrap_or(0);
        let ctx = self.context()?;
        let mut cred: *mut libc::c_char = std::ptr::null_mut();
        let buf = if payload.is_empty() { std::ptr::null() } else { payload.as_ptr().cast() };
        // SAFETY: `ctx` is a live context; `buf` is null with length 0 (no
        // payload) or points at `len` readable bytes that outlive the call;
        // `cred` receives a malloc'd string or stays null.
        let err = unsafe { (self.lib.encode)(&mut cred, ctx.0, buf, len) };
        if err != 0 {
            if !cred.is_null() {
                // SAFETY: allocated by libmunge with malloc, not yet freed.
                unsafe { libc::free(cred.cast()) };
            }
            return Err(self.error(err, &ctx));
        }
        if cred.is_null() {
            return Err(MungeError::new(Kind::Other, "munge_encode returned no credential"));
        }
        // SAFETY: on success `cred` is a NUL-terminated string libmunge allocated.
        let text = unsafe { CStr::from_ptr(cred) }.to_string_lossy().into_owned();
        // SAFETY: as above; freed exactly once.
        unsafe { libc::free(cred.cast()) };
        Ok(text)
    }

    /// Who encoded `cred`, or why it is refused (replayed, expired, another
    /// key, not a credential). A credential decodes once: a second decode is
    /// [`Kind::Replayed`].
    pub fn decode(&self, cred: &str) -> Result<Decoded, MungeError> {
        self.decode_inner(cred, false).map(|(d, _)| d)
    }

    /// [`Munge::decode`], with the payload the credential carries (empty
    /// when it has none).
    pub fn decode_with(&self, cred: &str) -> Result<(Decoded, Vec<u8>), MungeError> {
        self.decode_inner(cred, true)
    }

    fn decode_inner(&self, cred: &str, want_payload: bool) -> Result<(Decoded, Vec<u8>), MungeError> {
        if cred.len() > MAX_CREDENTIAL {
            return Err(MungeError::new(
                Kind::Invalid,
                format!("a credential of {} bytes is longer than {MAX_CREDENTIAL}", cred.len()),
            ));
        }
        let c =
            CString::new(cred).map_err(|_| MungeError::new(Kind::Invalid, "a credential with a NUL byte"))?;
        let ctx = self.context()?;
        let (mut uid, mut gid): (libc::uid_t, libc::gid_t) = (0, 0);
        let mut buf: *mut libc::c_void = std::ptr::null_mut();
        let mut len: libc::c_int = 0;
        let (buf_out, len_out) = if want_payload {
            (&mut buf as *mut *mut libc::c_void, &mut len as *mut libc::c_int)
        } else {
            (std::ptr::null_mut(), std::ptr::null_mut())
        };
        // SAFETY: `c` is NUL-terminated and outlives the call; null `buf_out`
        // and `len_out` ask for no payload, so libmunge allocates nothing;
        // otherwise `buf` receives a malloc'd copy of the payload (or null)
        // and `len` its length.
        let err = unsafe { (self.lib.decode)(c.as_ptr(), ctx.0, buf_out, len_out, &mut uid, &mut gid) };
        let payload = if buf.is_null() {
            Vec::new()
        } else {
            let n = usize::try_from(len).unwrap_or(0);
            // SAFETY: libmunge allocated `n` bytes at `buf` for us.
            let bytes = unsafe { std::slice::from_raw_parts(buf.cast::<u8>(), n) }.to_vec();
            // SAFETY: allocated by libmunge with malloc, not yet freed; freed once.
            unsafe { libc::free(buf) };
            bytes
        };
        if err != 0 {
            return Err(self.error(err, &ctx));
        }
        Ok((Decoded { uid, gid }, payload))
    }

    fn context(&self) -> Result<Ctx<'_>, MungeError> {
        // SAFETY: no arguments; returns null when out of memory.
        let raw = unsafe { (self.lib.ctx_create)() };
        if raw.is_null() {
            return Err(MungeError::new(Kind::Other, "munge_ctx_create failed"));
        }
        let ctx = Ctx(raw, &self.lib);
        // SAFETY: a live context; MUNGE_OPT_SOCKET takes one `char *`, which
        // libmunge copies before it returns.
        let err = unsafe { (self.lib.ctx_set)(ctx.0, ffi::OPT_SOCKET, self.socket.as_ptr()) };
        if err != 0 {
            return Err(self.error(err, &ctx));
        }
        Ok(ctx)
    }

    fn error(&self, code: libc::c_int, ctx: &Ctx<'_>) -> MungeError {
        // SAFETY: a live context; the message belongs to it and is copied at once.
        let detail = unsafe { (self.lib.ctx_strerror)(ctx.0) };
        let message = if detail.is_null() {
            // SAFETY: munge_strerror returns a static string for any code.
            let s = unsafe { (self.lib.strerror)(code) };
            if s.is_null() {
                format!("munge error {code}")
            } else {
                // SAFETY: a static NUL-terminated string.
                unsafe { CStr::from_ptr(s) }.to_string_lossy().into_owned()
            }
        } else {
            // SAFETY: NUL-terminated, owned by the context, which is alive.
            unsafe { CStr::from_ptr(detail) }.to_string_lossy().into_owned()
        };
        MungeError::new(ffi::kind(code), message)
    }
}

/// One libmunge context, destroyed when dropped.
struct Ctx<'a>(ffi::RawCtx, &'a ffi::Lib);

impl Drop for Ctx<'_> {
    fn drop(&mut self) {
        // SAFETY: created by munge_ctx_create and destroyed once, here.
        unsafe { (self.1.ctx_destroy)(self.0) }
    }
}

#[cfg(test)]
mod tests;
