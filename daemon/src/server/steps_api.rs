//! The Steps service: srun's RunStep (a step's output streamed back as it
//! comes) and scancel of a step. The core is `jobs::steps::service`.

use super::gate::{Gate, Note, Targeted};
use super::limits::{MAX_ENV, MAX_IDS, cap};
use super::path::steps as path;
use crate::error::Error;
use crate::jobs::JobService;
use crate::store::Action;
use serde_json::{Value, json};
use spur_proto::v1 as pb;
use spur_proto::v1::steps_server::Steps;
use spur_vocab::array::{JobRef, StepRef};
use std::pin::Pin;
use std::sync::Arc;
use tokio_stream::Stream;
use tonic::{Request, Response, Status, Streaming};

type StepEvents = Pin<Box<dyn Stream<Item = Result<pb::StepEvent, Status>> + Send>>;
type OutputChunks = Pin<Box<dyn Stream<Item = Result<pb::OutputChunk, Status>> + Send>>;

pub struct StepsApi {
    gate: Arc<Gate>,
    jobs: Arc<JobService>,
}

impl StepsApi {
    pub fn new(gate: Arc<Gate>, jobs: Arc<JobService>) -> Self {
        StepsApi { gate, jobs }
    }
}

/// Words of one step's command line, and their bytes in all.
pub const MAX_ARGV: usize = 4096;
pub const MAX_ARGV_BYTES: usize = 1 << 20;
/// Bytes of one step's environment in all.
pub const MAX_ENV_BYTES: usize = 2 << 20;

/// The step comes inside the stream: `bounds` checks it once read.
impl Targeted for Streaming<pb::StepInput> {}
impl Targeted for Streaming<pb::BcastChunk> {}

/// Refuses a step request past the limits, before any per-task work (the
/// task count's own cap is the layout's, with the job in hand).
fn bounds(r: &pb::StepRequest) -> Result<(), Error> {
    cap("argv", r.argv.len(), MAX_ARGV)?;
    cap("env", r.env.len(), MAX_ENV)?;
    if r.argv.iter().map(String::len).sum::<usize>() > MAX_ARGV_BYTES {
        return Err(Error::invalid("argv", format!("more than {MAX_ARGV_BYTES} bytes")));
    }
    if r.env.iter().map(|kv| kv.key.len() + kv.value.len()).sum::<usize>() > MAX_ENV_BYTES {
        return Err(Error::invalid("env", format!("more than {MAX_ENV_BYTES} bytes")));
    }
    Ok(())
}

impl Targeted for pb::SignalStepsRequest {
    fn target(&self) -> String {
        let shown: Vec<String> = self.steps.iter().take(3).map(|s| s.chars().take(32).collect()).collect();
        match self.steps.len() {
            n if n > 3 => format!("{},…(+{} more)", shown.join(","), n - 3),
            _ => shown.join(","),
        }
    }
    fn params(&self) -> Value {
        let steps: Vec<String> = self.steps.iter().take(16).map(|s| s.chars().take(32).collect()).collect();
        json!({ "steps": steps, "signal": self.signal })
    }
    fn bounds(&self) -> Result<(), Error> {
        cap("steps", self.steps.len(), MAX_IDS)
    }
}

/// `12.0` as (job, step); the batch and extern steps are named as not steps here.
fn step_ref(raw: &str) -> Result<(u64, u32), Error> {
    match JobRef::parse(raw) {
        Ok(JobRef::Step(job, StepRef::Id(step))) => Ok((job, step)),
        Ok(JobRef::Step(job, _)) => Err(Error::invalid(
            "steps",
            format!("'{raw}': the batch script is the job itself; cancel the job (scancel {job})"),
        )),
        Ok(_) => Err(Error::invalid("steps", format!("'{raw}' names no step (JOB.STEP)"))),
        Err(e) => Err(Error::invalid("steps", e)),
    }
}

#[tonic::async_trait]
impl Steps for StepsApi {
    type RunStepStream = StepEvents;
    type AttachStream = StepEvents;
    type TailOutputStream = OutputChunks;

    async fn tail_output(
        &self,
        req: Request<pb::TailOutputRequest>,
    ) -> Result<Response<OutputChunks>, Status> {
        let streams = self.gate.streams.clone();
        self.gate
            .run(path::TAIL_OUTPUT, req, |ctx, r| async move {
                // The owner check comes first in the core: a refused caller holds no slot.
                let mut rx = self.jobs.tail_output(ctx.role, &ctx.caller, r)?;
                let slot = streams.open(&ctx.caller.user)?;
                let (tx, out) = tokio::sync::mpsc::channel(crate::jobs::output::QUEUE);
                // The slot is held while the caller reads; a caller that stops reading is dropped.
                tokio::spawn(async move {
                    loop {
                        tokio::select! {
                            _ = tx.closed() => break,
                            c = rx.recv() => match c {
                                Some(Ok(c)) => if !super::streams::send(&tx, c).await { break },
                                Some(Err(s)) => { let _ = tx.send(Err(s)).await; break }
                                None => break,
                            }
                        }
                    }
                    drop(slot);
                });
                Ok((Box::pin(tokio_stream::wrappers::ReceiverStream::new(out)) as OutputChunks, vec![]))
            })
            .await
    }

    async fn attach(&self, req: Request<pb::AttachRequest>) -> Result<Response<StepEvents>, Status> {
        let streams = self.gate.streams.clone();
        self.gate
            .run(path::ATTACH, req, |ctx, r| async move {
                let slot = streams.open(&ctx.caller.user)?;
                let mut rx = self.jobs.attach(ctx.role, &ctx.caller, r.job_id, r.step_id)?;
                let (tx, out) = tokio::sync::mpsc::channel(crate::jobs::steps::live::RELAY_QUEUE);
                // The slot is held while the caller reads; a caller that stops reading is dropped.
                tokio::spawn(async move {
                    loop {
                        tokio::select! {
                            _ = tx.closed() => break,
                            e = rx.recv() => {
                                let Some(Ok(e)) = e else { break };
                                if !super::streams::send(&tx, e).await {
                                    break;
                                }
                            }
                        }
                    }
                    drop(slot);
                });
                Ok((Box::pin(tokio_stream::wrappers::ReceiverStream::new(out)) as StepEvents, vec![]))
            })
            .await
    }

    async fn bcast(
        &self,
        req: Request<Streaming<pb::BcastChunk>>,
    ) -> Result<Response<pb::BcastResponse>, Status> {
        self.gate
            .run(path::BCAST, req, |ctx, mut chunks| async move {
                let first = chunks.message().await.map_err(|s| Error::invalid("bcast", s.message()))?;
                let first = first.ok_or_else(|| Error::invalid("bcast", "the stream names no file"))?;
                Ok((self.jobs.bcast(ctx.role, &ctx.caller, first, chunks).await?, vec![]))
            })
            .await
    }

    async fn step_stats(
        &self,
        req: Request<pb::StepStatsRequest>,
    ) -> Result<Response<pb::StepStatsResponse>, Status> {
        self.gate
            .run(path::STEP_STATS, req, |ctx, r| async move {
                Ok((self.jobs.step_stats(ctx.role, &ctx.caller, r.job_id, r.step_id).await?, vec![]))
            })
            .await
    }

    async fn run_step(&self, req: Request<Streaming<pb::StepInput>>) -> Result<Response<StepEvents>, Status> {
        self.gate
            .run(path::RUN_STEP, req, |ctx, mut inbound| async move {
                let first = inbound.message().await.map_err(|s| Error::invalid("step", s.message()))?;
                let Some(pb::StepInput { input: Some(pb::step_input::Input::Step(step)) }) = first else {
                    return Err(Error::invalid("step", "the stream's first message must be the step"));
                };
                bounds(&step)?;
                let rx = self.jobs.run_step(ctx.role, ctx.caller, step, Box::pin(inbound)).await?;
                Ok((Box::pin(tokio_stream::wrappers::ReceiverStream::new(rx)) as StepEvents, vec![]))
            })
            .await
    }

    async fn signal_steps(
        &self,
        req: Request<pb::SignalStepsRequest>,
    ) -> Result<Response<pb::SignalStepsResponse>, Status> {
        self.gate
            .run(path::SIGNAL_STEPS, req, |ctx, r| async move {
                let name = r.target();
                let refs = r.steps.iter().map(|s| step_ref(s)).collect::<Result<Vec<_>, _>>()?;
                let done = self.jobs.signal_steps(ctx.role, &ctx.caller, &refs, r.signal).await?;
                let steps: Vec<String> = done.iter().map(|(j, s)| format!("{j}.{s}")).collect();
                let note = Note { action: Action::Update, name, info: json!({ "steps": steps.clone() }) };
                Ok((pb::SignalStepsResponse { steps }, vec![note]))
            })
            .await
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn step_references_are_read_and_the_rest_named() {
        assert_eq!(step_ref("12.3").unwrap(), (12, 3));
        assert!(step_ref("12.batch").unwrap_err().to_string().contains("scancel 12"));
        assert!(step_ref("12").unwrap_err().to_string().contains("names no step"));
        assert!(step_ref("x.1").is_err());
        let r = pb::SignalStepsRequest { steps: (0..5).map(|i| format!("9.{i}")).collect(), signal: 0 };
        assert_eq!(r.target(), "9.0,9.1,9.2,…(+2 more)");
        let big = pb::StepRequest { argv: vec!["x".into(); MAX_ARGV + 1], ..Default::default() };
        assert_eq!(bounds(&big).unwrap_err().to_string(), "argv: 4097 items in one request; at most 4096");
        let long = pb::StepRequest { argv: vec!["x".repeat(MAX_ARGV_BYTES + 1)], ..Default::default() };
        assert!(bounds(&long).unwrap_err().to_string().starts_with("argv: more than"));
        assert!(bounds(&pb::StepRequest::default()).is_ok());
    }
}
