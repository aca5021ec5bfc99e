//! Finding the controller and attaching the caller's identity to every request.

use spur_proto::credential::Credentials;
use spur_proto::v1::accounting_client::AccountingClient;
use spur_proto::v1::admission_client::AdmissionClient;
use spur_proto::v1::audit_client::AuditClient;
use spur_proto::v1::cluster_client::ClusterClient;
use spur_proto::v1::jobs_client::JobsClient;
use spur_proto::v1::licenses_client::LicensesClient;
use spur_proto::v1::nodes_client::NodesClient;
use spur_proto::v1::reservations_client::ReservationsClient;
use spur_proto::v1::session_client::SessionClient;
use spur_proto::v1::steps_client::StepsClient;
use spur_proto::wire::LEADER_SERVICE;
use std::time::Duration;
use tonic::metadata::MetadataValue;
use tonic::service::Interceptor;
use tonic::service::interceptor::InterceptedService;
use tonic::transport::{Channel, Endpoint};
use tonic_health::ServingStatus;
use tonic_health::pb::HealthCheckRequest;
use tonic_health::pb::health_client::HealthClient;

pub use spur_proto::wire::{
    CONTROLLER_ENV, DEFAULT_CONTROLLER, JOBS_MESSAGE_MAX, UID_HEADER, USER_HEADER, WINDOW, resolve_controller,
};

/// The local identity: the login name, the real uid, and the user's token
/// (`SPUR_TOKEN` or `~/.spur/token`) when there is one.
#[derive(Debug, Clone)]
pub struct Identity {
    pub user: String,
    pub uid: Option<u32>,
    pub token: Option<String>,
    /// A MUNGE credential for each request, where munged runs here.
    pub credentials: Credentials,
}

impl Identity {
    /// A name and uid as asserted (auth plugin `none`), with no token and
    /// no MUNGE credential: what tests and load commands connect as.
    pub fn asserted(user: impl Into<String>, uid: Option<u32>) -> Self {
        Identity { user: user.into(), uid, token: None, credentials: Credentials::default() }
    }

    pub fn local() -> Self {
        let uid = spur_proto::wire::local_uid();
        Identity {
            user: spur_proto::wire::user_of(uid),
            uid,
            token: crate::token::load_local(),
            credentials: Credentials::local(),
        }
    }
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
        self.0.credentials.attach(req.metadata_mut());
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
    pub reservations: ReservationsClient<Svc>,
    pub steps: StepsClient<Svc>,
}

/// What every CLI command does first: the controller from `--controller`
/// (else the environment, else the default), connected, errors as one line.
pub async fn connect_flag(flag: Option<&str>, identity: Identity) -> Result<Clients, String> {
    connect(&resolve_controller(flag), identity).await.map_err(|e| e.to_string())
}

/// Connects to the leader among the controllers `urls` lists
/// (comma-separated), else the first that answers, in order; the error names
/// the last one tried. With several, each is dialled once and asked on that
/// connection whether it leads (`scontrol ping`'s question), so a command
/// goes straight to the leader and never to a follower whose leader is gone.
pub async fn connect(urls: &str, identity: Identity) -> Result<Clients, ConnectError> {
    let list = spur_proto::wire::controllers(urls);
    let mut last = ConnectError::BadUrl(urls.to_string(), "no controller address".into());
    let mut first_up: Option<(&str, Channel)> = None;
    for url in &list {
        let channel = match dial(url, DIAL).await {
            Ok(ch) => ch,
            Err(e @ ConnectError::BadUrl(..)) => return Err(e),
            Err(e) => {
                last = e;
                continue;
            }
        };
        if list.len() == 1 || leads(&channel).await == Role::Primary {
            return Ok(clients(url, channel, identity));
        }
        first_up.get_or_insert((url, channel));
    }
    match first_up {
        Some((url, channel)) => Ok(clients(url, channel, identity)),
        None => Err(last),
    }
}

/// How long dialling one controller may take.
const DIAL: Duration = Duration::from_secs(5);
/// How long one controller gets to say what it is.
const ASK: Duration = Duration::from_secs(3);

/// What a controller is: the leader (which alone serves the health name
/// [`LEADER_SERVICE`]), a follower forwarding to it, or not answering.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Role {
    Primary,
    Backup,
    Down(String),
}

/// Asks the controller at `url` what it is (`scontrol ping`).
pub async fn ask(url: &str) -> Role {
    let dialled = async {
        let endpoint = Endpoint::from_shared(url.to_string()).map_err(|e| e.to_string())?;
        endpoint.connect_timeout(ASK).connect().await.map_err(|e| e.to_string())
    };
    match tokio::time::timeout(ASK, dialled).await {
        Ok(Ok(ch)) => leads(&ch).await,
        Ok(Err(e)) => Role::Down(e),
        Err(_) => Role::Down(format!("no answer within {}s", ASK.as_secs())),
    }
}

/// Asks a connected controller what it is.
async fn leads(channel: &Channel) -> Role {
    let req = HealthCheckRequest { service: LEADER_SERVICE.into() };
    match tokio::time::timeout(ASK, HealthClient::new(channel.clone()).check(req)).await {
        Ok(Ok(s)) if s.get_ref().status == ServingStatus::Serving as i32 => Role::Primary,
        Ok(Ok(_)) => Role::Backup,
        Ok(Err(s)) => Role::Down(s.message().to_string()),
        Err(_) => Role::Down(format!("no answer within {}s", ASK.as_secs())),
    }
}

async fn dial(url: &str, timeout: Duration) -> Result<Channel, ConnectError> {
    let endpoint = Endpoint::from_shared(url.to_string())
        .map_err(|e| ConnectError::BadUrl(url.to_string(), e.to_string()))?
        .connect_timeout(timeout)
        .tcp_nodelay(true)
        // Large listings would otherwise stall on 64 KiB flow-control windows.
        .initial_stream_window_size(Some(WINDOW))
        .initial_connection_window_size(Some(WINDOW));
    endpoint.connect().await.map_err(|e| ConnectError::Unreachable(url.to_string(), source_chain(&e)))
}

fn clients(url: &str, channel: Channel, identity: Identity) -> Clients {
    let icpt = IdentityInterceptor(identity);
    Clients {
        url: url.to_string(),
        accounting: AccountingClient::with_interceptor(channel.clone(), icpt.clone()),
        audit: AuditClient::with_interceptor(channel.clone(), icpt.clone()),
        session: SessionClient::with_interceptor(channel.clone(), icpt.clone()),
        admission: AdmissionClient::with_interceptor(channel.clone(), icpt.clone()),
        nodes: NodesClient::with_interceptor(channel.clone(), icpt.clone()),
        cluster: ClusterClient::with_interceptor(channel.clone(), icpt.clone()),
        jobs: JobsClient::with_interceptor(channel.clone(), icpt.clone())
            .max_decoding_message_size(JOBS_MESSAGE_MAX),
        licenses: LicensesClient::with_interceptor(channel.clone(), icpt.clone()),
        reservations: ReservationsClient::with_interceptor(channel.clone(), icpt.clone()),
        steps: StepsClient::with_interceptor(channel, icpt),
    }
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
        assert_eq!(resolve_controller(Some("a:1, b:2,,https://c:3")), "http://a:1,http://b:2,https://c:3");
    }
}
