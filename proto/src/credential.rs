//! What every client (the CLI, the console, `spurd`) attaches so the
//! controller knows who calls: under MUNGE, a new credential for each request
//! from the local munged, so the uid is the one this host's kernel gave the
//! caller. A client does not know the controller's plugin (as Slurm's
//! commands read it from slurm.conf, ours would need a file): it attaches a
//! credential whenever munged's socket is there, and a controller under
//! another plugin ignores it. `SPUR_AUTH=none` turns it off.

use crate::wire::{AUTH_ENV, MUNGE_ERROR_HEADER, MUNGE_HEADER, MUNGE_SOCKET_ENV};
use spur_munge::Munge;
use std::path::PathBuf;
use std::sync::Arc;
use tonic::metadata::{MetadataMap, MetadataValue};

#[derive(Debug, Clone, Default)]
pub struct Credentials {
    munge: Option<Arc<Munge>>,
    /// Why there is no MUNGE (the library is missing), told to the controller.
    missing: Option<String>,
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
        if !socket.exists() {
            let why = format!("munged's socket {} is not there (is munged running?)", socket.display());
            return Credentials { munge: None, missing: Some(why) };
        }
        match Munge::load(Some(&socket)) {
            Ok(m) => Credentials { munge: Some(Arc::new(m)), missing: None },
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
            Some(m) => m.encode().map_err(|e| e.message),
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
