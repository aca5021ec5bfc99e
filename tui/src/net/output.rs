//! One job output stream (`Steps.TailOutput`, following): its pieces go to
//! the app as they come, and its end (the job's, or a refusal) as
//! `OutputEnded`. The app keeps only the last lines; closing the view drops
//! this task, which ends the stream and, with it, the agent's reading.

use crate::model::action::{Msg, OutputSpec};
use spur_client::conn::Svc;
use spur_proto::v1::TailOutputRequest;
use spur_proto::v1::steps_client::StepsClient;
use tokio::sync::mpsc::UnboundedSender;
use tonic::Status;

pub type Client = StepsClient<Svc>;

/// The last lines the view starts with; the controller reads at most 64 KiB of them.
pub const FIRST_LINES: u32 = 200;

/// Runs the stream until it ends; reports its end itself, so it returns Ok.
pub async fn run(mut client: Client, spec: OutputSpec, msgs: UnboundedSender<Msg>) -> Result<(), Status> {
    let OutputSpec { sub, job, stderr } = spec;
    let req = TailOutputRequest { job_id: job, stderr, follow: true, lines: FIRST_LINES };
    let error = match client.tail_output(req).await {
        Ok(stream) => {
            let mut stream = stream.into_inner();
            loop {
                match stream.message().await {
                    Ok(Some(c)) => {
                        if msgs.send(Msg::Output { sub, data: c.data, note: c.note }).is_err() {
                            return Ok(());
                        }
                    }
                    Ok(None) => break None,
                    Err(s) => break Some(s.message().to_string()),
                }
            }
        }
        Err(s) => Some(s.message().to_string()),
    };
    let _ = msgs.send(Msg::OutputEnded { sub, error });
    Ok(())
}
