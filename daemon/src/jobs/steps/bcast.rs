//! sbcast: a file copied to every node of a running job. The client streams
//! it in pieces; the controller passes each piece on, in order, to the agent
//! of each of the job's nodes (`BcastFile` commands), whose trampoline has
//! dropped to the job's user before it opens the destination, and waits for
//! each node's `ReportBcast`. Nothing is kept: a piece is forwarded as it
//! arrives, so the controller holds at most the agents' command buffers.

use crate::accounting::Caller;
use crate::auth::Role;
use crate::error::{Error, Result};
use crate::jobs::JobService;
use spur_proto::v1 as pb;
use spur_vocab::JobState;
use std::collections::BTreeSet;
use std::time::Duration;
use tokio_stream::{Stream, StreamExt};

/// The largest file one sbcast copies.
pub const MAX_BCAST_BYTES: u64 = 1 << 30;
/// The largest piece of it in one message.
pub const MAX_BCAST_CHUNK: usize = 1 << 20;
/// Nodes one `--exclude` names at most.
pub const MAX_EXCLUDE: usize = 10_000;
/// How long the nodes have, after the last piece, to say the file is in place.
pub const BCAST_DEADLINE: Duration = Duration::from_secs(60);

fn invalid(msg: impl Into<String>) -> Error {
    Error::invalid("bcast", msg.into())
}

impl JobService {
    /// Copies the file `chunks` carries to each node of the job its first names; returns those nodes.
    pub async fn bcast(
        &self,
        role: Role,
        caller: &Caller,
        first: pb::BcastChunk,
        mut rest: impl Stream<Item = std::result::Result<pb::BcastChunk, tonic::Status>> + Unpin,
    ) -> Result<pb::BcastResponse> {
        if first.dest.is_empty() || first.dest.contains('\0') {
            return Err(invalid("dest: name the file to write on each node"));
        }
        if first.exclude.len() > MAX_EXCLUDE {
            return Err(invalid(format!("exclude: {} nodes; at most {MAX_EXCLUDE}", first.exclude.len())));
        }
        if first.size > MAX_BCAST_BYTES {
            return Err(invalid(format!(
                "the file is {} bytes; sbcast copies at most {MAX_BCAST_BYTES}",
                first.size
            )));
        }
        let (nodes, uid, gid, user) = {
            let q = self.lock();
            let j = q.get(first.job_id)?;
            crate::jobs::queue::owns(role, caller, j)?;
            if j.state != JobState::Running {
                return Err(Error::FailedPrecondition(format!(
                    "job {} is {}: sbcast copies to the nodes of a running job",
                    first.job_id,
                    j.state.as_str()
                )));
            }
            let nodes: Vec<String> = j.nodes.iter().filter(|n| !first.exclude.contains(n)).cloned().collect();
            (nodes, j.uid, j.gid, j.user.clone())
        };
        let (id, mut rx) = self.bcasts.open();
        let piece =
            |c: &pb::BcastChunk, data: Vec<u8>, is_first: bool, last: bool, node: &str| pb::AgentCommand {
                cmd: Some(pb::agent_command::Cmd::BcastFile(pb::BcastFile {
                    request_id: id,
                    job_id: first.job_id,
                    node: node.to_string(),
                    dest: first.dest.clone(),
                    force: first.force,
                    preserve: first.preserve,
                    mode: first.mode,
                    mtime: first.mtime,
                    data: if is_first { c.data.clone() } else { data },
                    first: is_first,
                    last,
                    uid,
                    gid,
                    user: user.clone(),
                })),
            };
        let mut live: BTreeSet<String> = nodes.iter().cloned().collect();
        let mut failed: Vec<String> = vec![];
        let mut sent = first.data.len() as u64;
        // The first piece starts each node's copy.
        for node in &nodes {
            if let Err(e) = self.link.send(node, piece(&first, vec![], true, false, node)).await {
                live.remove(node);
                failed.push(format!("{node}: {e}"));
            }
        }
        while let Some(c) = rest.next().await {
            let c = match c {
                Ok(c) => c,
                Err(s) => {
                    // sbcast went away part way: the nodes abandon their copies when no piece comes.
                    self.bcasts.close(id);
                    return Err(invalid(s.message().to_string()));
                }
            };
            if c.data.len() > MAX_BCAST_CHUNK {
                self.bcasts.close(id);
                return Err(invalid(format!("a piece of {} bytes; at most {MAX_BCAST_CHUNK}", c.data.len())));
            }
            sent += c.data.len() as u64;
            if sent > MAX_BCAST_BYTES.min(first.size) {
                self.bcasts.close(id);
                return Err(invalid(format!(
                    "more bytes than the {} the first message announced",
                    first.size
                )));
            }
            for node in live.clone() {
                if let Err(e) = self.link.send(&node, piece(&c, c.data.clone(), false, false, &node)).await {
                    live.remove(&node);
                    failed.push(format!("{node}: {e}"));
                }
            }
        }
        for node in live.clone() {
            if let Err(e) = self.link.send(&node, piece(&first, vec![], false, true, &node)).await {
                live.remove(&node);
                failed.push(format!("{node}: {e}"));
            }
        }
        let mut done = vec![];
        let deadline = tokio::time::Instant::now() + BCAST_DEADLINE;
        while done.len() + failed.len() < nodes.len() {
            match tokio::time::timeout_at(deadline, rx.recv()).await {
                Ok(Some(r)) if live.remove(&r.node) => match r.error.as_str() {
                    "" => done.push(r.node),
                    e => failed.push(format!("{}: {e}", r.node)),
                },
                Ok(Some(_)) => {}
                Ok(None) | Err(_) => break,
            }
        }
        self.bcasts.close(id);
        failed.extend(live.iter().map(|n| format!("{n}: no answer within {} s", BCAST_DEADLINE.as_secs())));
        if !failed.is_empty() {
            failed.sort();
            return Err(Error::FailedPrecondition(format!(
                "sbcast to {}: {}",
                first.dest,
                failed.join("; ")
            )));
        }
        done.sort();
        Ok(pb::BcastResponse { nodes: done })
    }

    /// A node's answer to a copy; `nodes` are the nodes the reporting agent hosts.
    pub fn bcast_reported(&self, nodes: &[String], r: pb::BcastReport) -> Result<()> {
        if !nodes.contains(&r.node) {
            return Err(Error::PermissionDenied(format!("this agent does not host node '{}'", r.node)));
        }
        self.bcasts.answer(r.request_id, r);
        Ok(())
    }
}
