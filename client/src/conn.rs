//! Finding the controller and attaching the caller's identity to every request.

use spur_proto::v1::accounting_client::AccountingClient;
use spur_proto::v1::admission_client::AdmissionClient;
use spur_proto::v1::audit_client::AuditClient;
use spur_proto::v1::cluster_client::ClusterClient;
use spur_proto::v1::jobs_client::JobsClient;
use spur_proto::v1::licenses_client::LicensesClient;
use spur_proto::v1::nodes_client::NodesClient;
use spur_proto::v1::session_client::SessionClient;
use tonic::metadata::MetadataValue;
use tonic::service::Interceptor;
use tonic::service::interceptor::InterceptedService;
use tonic::transport::{Channel, Endpoint};

/// HTTP/2 flow-control window for clients and the controller alike.
pub const WINDOW: u32 = 8 << 20;

/// The largest answer a jobs listing may be (a million jobs, roughly):
/// tonic refuses answers over 4 MiB by default, and 100,000 jobs are tens of MiB.
pub const JOBS_MESSAGE_MAX: usize = 1 << 30;

pub const DEFAULT_CONTROLLER: &str = "http://localhost:6817";
pub const CONTROLLER_ENV: &str = "SPUR_CONTROLLER_ADDR";

/// Metadata keys carrying the caller's asserted local identity (auth plugin `none`).
pub const USER_HEADER: &str = "x-spur-user";
pub const UID_HEADER: &str = "x-spur-uid";

/// `--controller URL`, else `SPUR_CONTROLLER_ADDR`, else `http://localhost:6817`.
pub fn resolve_controller(flag: Option<&str>) -> String {
    let raw = flag
        .map(str::to_string)
        .or_else(|| std::env::var(CONTROLLER_ENV).ok().filter(|s| !s.is_empty()))
        .unwrap_or_else(|| DEFAULT_CONTROLLER.to_string());
    if raw.contains("://") { raw } else { format!("http://{raw}") }
}

/// The local identity: the login name, the real uid, and the user's token
/// (`SPUR_TOKEN` or `~/.spur/token`) when there is one.
#[derive(Debug, Clone)]
pub struct Identity {
    pub user: String,
    pub uid: Option<u32>,
    pub token: Option<String>,
}

impl Identity {
    pub fn local() -> Self {
        let uid = local_uid();
        let user = std::env::var("USER")
            .or_else(|_| std::env::var("LOGNAME"))
            .ok()
            .filter(|u| !u.is_empty())
            .or_else(|| uid.and_then(passwd_name))
            .unwrap_or_else(|| "unknown".into());
        Identity { user, uid, token: crate::token::load_local() }
    }
}

/// The login name of `uid` from /etc/passwd, for sessions without $USER (cron, tmux as root).
fn passwd_name(uid: u32) -> Option<String> {
    let passwd = std::fs::read_to_string("/etc/passwd").ok()?;
    passwd.lines().find_map(|l| {
        let mut f = l.split(':');
        let name = f.next()?;
        (f.nth(1)?.parse::<u32>().ok()? == uid).then(|| name.to_string())
    })
}

/// Reads the real uid from /proc, which needs no libc binding.
fn local_uid() -> Option<u32> {
    let status = std::fs::read_to_string("/proc/self/status").ok()?;
    let line = status.lines().find(|l| l.starts_with("Uid:"))?;
    line.split_whitespace().nth(1)?.parse().ok()
}

#[derive(Clone)]
pub struct IdentityInterceptor(Identity);

impl IdentityInterceptor {
    pub fn new(identity: Identity) -> Self {
        IdentityInterceptor(identity)
    }
}

impl Interceptor for IdentityInterceptor {
    fn call(&mut self, mut req: tonic::Request<()>) -> Result<tonic::Request<()>, tonic::Status> {
        if let Ok(v) = MetadataValue::try_from(self.0.user.as_str()) {
            req.metadata_mut().insert(USER_HEADER, v);
        }
        if let Some(uid) = self.0.uid {
            req.metadata_mut().insert(UID_HEADER, MetadataValue::from(uid));
        }
        if let Some(t) = &self.0.token
            && let Ok(v) = MetadataValue::try_from(format!("Bearer {t}"))
        {
            req.metadata_mut().insert("authorization", v);
        }
        Ok(req)
    }
}

pub type Svc = InterceptedService<Channel, IdentityInterceptor>;

#[derive(Debug, thiserror::Error)]
pub enum ConnectError {
    #[error("invalid controller address '{0}': {1}")]
    BadUrl(String, String),
    #[error("cannot reach the controller at {0}: {1}")]
    Unreachable(String, String),
}

/// Typed clients of every Spur service, sharing one channel.
#[derive(Clone)]
pub struct Clients {
    pub url: String,
    pub accounting: AccountingClient<Svc>,
    pub audit: AuditClient<Svc>,
    pub session: SessionClient<Svc>,
    pub admission: AdmissionClient<Svc>,
    pub nodes: NodesClient<Svc>,
    pub cluster: ClusterClient<Svc>,
    pub jobs: JobsClient<Svc>,
    pub licenses: LicensesClient<Svc>,
}

/// What every CLI command does first: the controller from `--controller`
/// (else the environment, else the default), connected, errors as one line.
pub async fn connect_flag(flag: Option<&str>, identity: Identity) -> Result<Clients, String> {
    connect(&resolve_controller(flag), identity).await.map_err(|e| e.to_string())
}

pub async fn connect(url: &str, identity: Identity) -> Result<Clients, ConnectError> {
    let endpoint = Endpoint::from_shared(url.to_string())
        .map_err(|e| ConnectError::BadUrl(url.to_string(), e.to_string()))?
        .connect_timeout(std::time::Duration::from_secs(5))
        .tcp_nodelay(true)
        // Large listings would otherwise stall on 64 KiB flow-control windows.
        .initial_stream_window_size(Some(WINDOW))
        .initial_connection_window_size(Some(WINDOW));
    let channel =
        endpoint.connect().await.map_err(|e| ConnectError::Unreachable(url.to_string(), source_chain(&e)))?;
    let icpt = IdentityInterceptor(identity);
    Ok(Clients {
        url: url.to_string(),
        accounting: AccountingClient::with_interceptor(channel.clone(), icpt.clone()),
        audit: AuditClient::with_interceptor(channel.clone(), icpt.clone()),
        session: SessionClient::with_interceptor(channel.clone(), icpt.clone()),
        admission: AdmissionClient::with_interceptor(channel.clone(), icpt.clone()),
        nodes: NodesClient::with_interceptor(channel.clone(), icpt.clone()),
        cluster: ClusterClient::with_interceptor(channel.clone(), icpt.clone()),
        jobs: JobsClient::with_interceptor(channel.clone(), icpt.clone())
            .max_decoding_message_size(JOBS_MESSAGE_MAX),
        licenses: LicensesClient::with_interceptor(channel, icpt),
    })
}

fn source_chain(e: &dyn std::error::Error) -> String {
    let mut out = e.to_string();
    let mut cur = e.source();
    while let Some(s) = cur {
        out.push_str(": ");
        out.push_str(&s.to_string());
        cur = s.source();
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn flag_wins_and_scheme_is_added() {
        assert_eq!(resolve_controller(Some("h:1")), "http://h:1");
        assert_eq!(resolve_controller(Some("https://h:1")), "https://h:1");
    }
}
