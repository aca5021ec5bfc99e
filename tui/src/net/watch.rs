//! `Cluster.Watch`: a snapshot of every node, then node, catalog and job
//! changes as they commit. This is what keeps the Nodes and Queue panes
//! live and replaces re-fetching after each write.
//!
//! Events are batched like the txn tail's rows: those arriving within
//! [`WINDOW`] of each other travel as one [`ClusterUpdate`], so a reconfigure
//! that touches every node costs one redraw, not one per node.

use super::{describe, gone};
use crate::model::action::{Catalog, ClusterUpdate, Msg};
use spur_client::conn::Svc;
use spur_proto::v1::cluster_client::ClusterClient;
use spur_proto::v1::cluster_event::Event;
use spur_proto::v1::{ClusterEvent, WatchRequest};
use std::time::Duration;
use tokio::sync::mpsc::UnboundedSender;
use tokio::time::Instant;
use tonic::{Code, Status, Streaming};

pub type Client = ClusterClient<Svc>;

/// How long a batch waits for more events after its first: about a frame,
/// so a burst costs one redraw while a change still shows well within 100 ms.
const WINDOW: Duration = Duration::from_millis(20);
/// The controller sends the snapshot at once; silence this long means it is not well.
const FIRST: Duration = Duration::from_secs(10);

pub enum Opened {
    /// Subscribed: the stream and its first event, the node snapshot.
    Live(Box<(Streaming<ClusterEvent>, ClusterUpdate)>),
    /// A controller without the service (older, or a test double): the
    /// console falls back to re-fetching after writes.
    Unsupported,
    /// The controller refused the watch; the reason is shown.
    Refused(String),
}

/// Subscribe and wait for the snapshot. Once it has arrived the controller
/// is subscribed, so a fetch made after it cannot miss a change: the caller
/// reports the connection only then. Err: the controller is gone.
pub async fn open(client: &mut Client) -> Result<Opened, Status> {
    let mut stream = match client.watch(WatchRequest {}).await {
        Ok(r) => r.into_inner(),
        Err(s) if s.code() == Code::Unimplemented => return Ok(Opened::Unsupported),
        Err(s) if gone(&s) => return Err(s),
        Err(s) => return Ok(Opened::Refused(describe(&s))),
    };
    let first = tokio::time::timeout(FIRST, stream.message())
        .await
        .map_err(|_| Status::unavailable("the cluster watch sent no snapshot"))??
        .ok_or_else(|| Status::unavailable("the controller closed the cluster watch"))?;
    let mut batch = ClusterUpdate::default();
    add(&mut batch, first);
    Ok(Opened::Live(Box::new((stream, batch))))
}

/// Fold one event into a batch: a snapshot replaces the nodes gathered so
/// far, a change replaces its node by name, a catalog change names lists.
pub fn add(batch: &mut ClusterUpdate, ev: ClusterEvent) {
    match ev.event {
        Some(Event::Nodes(n)) if n.snapshot => {
            batch.snapshot = true;
            batch.nodes = n.nodes;
        }
        Some(Event::Nodes(n)) => {
            for node in n.nodes {
                match batch.nodes.iter_mut().find(|m| m.name == node.name) {
                    Some(m) => *m = node,
                    None => batch.nodes.push(node),
                }
            }
        }
        Some(Event::Catalog(c)) => {
            for list in Catalog::for_entity(&c.entity) {
                if !batch.stale.contains(list) {
                    batch.stale.push(*list);
                }
            }
        }
        Some(Event::Lagged(note)) => batch.lagged = Some(note),
        Some(Event::Licenses(_)) => batch.licenses = true,
        Some(Event::Jobs(j)) => batch.jobs.push(j),
        Some(Event::Reservations(r)) => batch.reservations = Some(r),
        None => {}
    }
}

/// Forward the rest of the stream until it ends (Ok) or fails. Returns Ok
/// too when the app has hung up. Either end means the connection is
/// reconnected: a watch is not optional once the controller served one.
pub async fn run(mut stream: Streaming<ClusterEvent>, msgs: UnboundedSender<Msg>) -> Result<(), Status> {
    loop {
        let Some(first) = stream.message().await? else { return Ok(()) };
        let mut batch = ClusterUpdate::default();
        add(&mut batch, first);
        let deadline = Instant::now() + WINDOW;
        let end = loop {
            // `message()` keeps its progress in the stream, so timing it out loses nothing.
            match tokio::time::timeout_at(deadline, stream.message()).await {
                Err(_) => break None,
                Ok(Ok(Some(ev))) => add(&mut batch, ev),
                Ok(Ok(None)) => break Some(Ok(())),
                Ok(Err(s)) => break Some(Err(s)),
            }
        };
        if msgs.send(Msg::Cluster(batch)).is_err() {
            return Ok(());
        }
        if let Some(end) = end {
            return end;
        }
    }
}
