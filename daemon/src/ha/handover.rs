//! `scontrol takeover`: the leader hands its lease to a named backup. The
//! request reaches the leading term's loop (`super::run`) through a slot
//! that exists only while this process leads under HA; the loop stops the
//! controller cleanly, then marks the lease for the successor alone
//! (`lease.rs`, `HAND_OVER`).

use crate::error::{Error, Result};
use std::sync::Mutex;
use std::time::Duration;
use tokio::sync::mpsc;
use tonic_health::ServingStatus;
use tonic_health::pb::HealthCheckRequest;
use tonic_health::pb::health_client::HealthClient;

/// This leader's advertised address and its loop's inbox, while it leads.
static SLOT: Mutex<Option<(String, mpsc::Sender<String>)>> = Mutex::new(None);

/// How long the backup gets to say it is one.
const ASK: Duration = Duration::from_secs(2);

/// Opens the slot for one leading term; its inbox is what `lead` waits on.
pub(super) fn open(addr: &str) -> mpsc::Receiver<String> {
    let (tx, rx) = mpsc::channel(1);
    if let Ok(mut slot) = SLOT.lock() {
        *slot = Some((addr.to_string(), tx));
    }
    rx
}

/// Closes it when the term ends, however it ends.
pub(super) fn close() {
    if let Ok(mut slot) = SLOT.lock() {
        *slot = None;
    }
}

/// Asks this leader to hand over to the backup at `to` (host:port as it
/// advertises itself); the leader's address when the hand-over is under way.
/// Refused, naming why, when this controller does not lead under HA, when
/// `to` is itself, or when `to` does not answer as a backup.
pub async fn hand_over(to: &str) -> Result<String> {
    let to = to.trim();
    if to.is_empty() {
        return Err(Error::InvalidArgument("to: name the backup controller (host:port)".into()));
    }
    let (me, tx) = SLOT.lock().ok().and_then(|s| s.clone()).ok_or_else(|| {
        Error::FailedPrecondition(
            "this controller is the only one (no postgresql:// database_url, or not leading): \
             there is no backup to take over"
                .into(),
        )
    })?;
    if to == me {
        return Err(Error::InvalidArgument(format!("to: {to} is the leader itself; name a backup")));
    }
    // Only a follower advertising exactly `to` serves this name, so the
    // lease marked for `to` is one that controller will take.
    match status_of(to, &format!("{}{to}", spur_proto::wire::BACKUP_AS)).await {
        Ok(s) if s == ServingStatus::Serving as i32 => {}
        Ok(_) => return Err(Error::FailedPrecondition(format!("to: {to} does not answer as a backup"))),
        Err(e) => {
            return Err(Error::FailedPrecondition(format!(
                "to: {to} does not answer as a backup advertising that address ({e}); \
                 name it as its advertise_addr (else its listening address) says"
            )));
        }
    }
    tx.try_send(to.to_string())
        .map_err(|_| Error::Unavailable("a takeover is already under way; retry".into()))?;
    Ok(me)
}

/// What the controller at `addr` says of the health name `service`.
async fn status_of(addr: &str, service: &str) -> std::result::Result<i32, String> {
    let ask = async {
        let endpoint =
            tonic::transport::Endpoint::from_shared(format!("http://{addr}")).map_err(|e| e.to_string())?;
        let channel = endpoint.connect_timeout(ASK).connect().await.map_err(|e| e.to_string())?;
        let req = HealthCheckRequest { service: service.into() };
        let status = HealthClient::new(channel).check(req).await.map_err(|e| e.message().to_string())?;
        Ok(status.get_ref().status)
    };
    tokio::time::timeout(ASK, ask)
        .await
        .unwrap_or_else(|_| Err(format!("no answer within {}s", ASK.as_secs())))
}
