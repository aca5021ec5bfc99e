//! What every client (the CLI, the console, `spurd`) attaches so the
//! controller knows who calls: under MUNGE, a new credential for each request
//! from the local munged, so the uid is the one this host's kernel gave the
//! caller. A client does not know the controller's plugin (as Slurm's
//! commands read it from slurm.conf, ours would need a file): it attaches a
//! credential whenever munged's socket is there, and a controller under
//! another plugin ignores it. `SPUR_AUTH=none` turns it off.

use crate::wire::{AUTH_ENV, MUNGE_ERROR_HEADER, MUNGE_HEADER, MUNGE_SOCKET_ENV};
use spur_munge::Munge;
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use tonic::metadata::{MetadataMap, MetadataValue};

#[derive(Debug, Clone, Default)]
pub struct Credentials {
    munge: Option<Arc<Local>>,
    /// Why there is no MUNGE (the library is missing), told to the controller.
    missing: Option<String>,
}

/// libmunge and its socket, and whether munged answered last time.
#[derive(Debug)]
struct Local {
    lib: Munge,
    socket: PathBuf,
    /// libmunge retries a socket nobody answers for some 2 s per call: a
    /// long-lived client (spurd's heartbeats) would stall on each request
    /// while munged is down. Once a call failed, each request first tries a
    /// plain connect, which a dead munged refuses at once.
    down: AtomicBool,
}

/// Whether something accepts connections on munged's socket.
fn answers(socket: &Path) -> bool {
    std::os::unix::net::UnixStream::connect(socket).is_ok()
}

impl Credentials {
    /// MUNGE when munged's socket (`SPUR_MUNGE_SOCKET`, else munged's
    /// default) is there and `SPUR_AUTH` is not `none`; nothing otherwise.
    pub fn local() -> Credentials {
        if std::env::var(AUTH_ENV).is_ok_and(|v| v.eq_ignore_ascii_case("none")) {
            return Credentials::default();
        }
        let socket = std::env::var_os(MUNGE_SOCKET_ENV)
            .filter(|s| !s.is_empty())
            .map_or_else(|| PathBuf::from(spur_munge::DEFAULT_SOCKET), PathBuf::from);
        Credentials::at(socket)
    }

    /// MUNGE through the munged listening on `socket`, when it is there.
    pub fn at(socket: PathBuf) -> Credentials {
        if !socket.exists() {
            let why = format!("munged's socket {} is not there (is munged running?)", socket.display());
            return Credentials { munge: None, missing: Some(why) };
        }
        match Munge::load(Some(&socket)) {
            Ok(lib) => {
                let down = AtomicBool::new(!answers(&socket));
                Credentials { munge: Some(Arc::new(Local { lib, socket, down })), missing: None }
            }
            Err(e) => Credentials { munge: None, missing: Some(e.message) },
        }
    }

    /// Whether requests carry MUNGE credentials.
    pub fn munge(&self) -> bool {
        self.munge.is_some()
    }

    /// A new credential in `md`, or the reason there is none.
    pub fn attach(&self, md: &mut MetadataMap) {
        let cred = match &self.munge {
            Some(m) if m.down.load(Ordering::Relaxed) && !answers(&m.socket) => {
                Err(format!("munged does not answer on {} (is munged running?)", m.socket.display()))
            }
            Some(m) => {
                let c = m.lib.encode().map_err(|e| e.message);
                m.down.store(c.is_err(), Ordering::Relaxed);
                c
            }
            None => Err(self.missing.clone().unwrap_or_default()),
        };
        match cred {
            Ok(c) => {
                if let Ok(v) = MetadataValue::try_from(c) {
                    md.insert(MUNGE_HEADER, v);
                }
            }
            Err(why) if !why.is_empty() => {
                let ascii: String = why.chars().filter(|c| c.is_ascii() && !c.is_ascii_control()).collect();
                if let Ok(v) = MetadataValue::try_from(ascii) {
                    md.insert(MUNGE_ERROR_HEADER, v);
                }
            }
            Err(_) => {}
        }
    }
}

impl tonic::service::Interceptor for Credentials {
    fn call(&mut self, mut req: tonic::Request<()>) -> Result<tonic::Request<()>, tonic::Status> {
        self.attach(req.metadata_mut());
        Ok(req)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A socket left behind by a munged that died: refused at once, said why.
    #[test]
    fn a_dead_munged_is_told_without_libmunge_s_retries() {
        let dir = std::env::temp_dir().join(format!("spur-cred-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let socket = dir.join("munge.socket.2");
        let _ = std::fs::remove_file(&socket);
        drop(std::os::unix::net::UnixListener::bind(&socket).unwrap());
        let c = Credentials::at(socket.clone());
        if !c.munge() {
            return; // no libmunge on this host: nothing to retry
        }
        for _ in 0..2 {
            let mut md = MetadataMap::new();
            c.attach(&mut md);
            assert!(md.get(MUNGE_HEADER).is_none());
            let why =
                md.get(MUNGE_ERROR_HEADER).and_then(|v| v.to_str().ok()).unwrap_or_default().to_string();
            assert!(why.starts_with("munged does not answer on ") && why.contains("munge.socket.2"), "{why}");
        }
        let _ = std::fs::remove_dir_all(&dir);
    }
}
