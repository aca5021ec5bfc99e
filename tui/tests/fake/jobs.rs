//! An in-test `Jobs` service on loopback (port 0): serves a fixed job list
//! and logs the calls, refusing to touch jobs the caller does not own (like
//! the controller, for a caller without a role). Shared by `tests/net_jobs.rs`
//! and the start-up bench.
#![allow(dead_code)]

use spur_client::conn::USER_HEADER;
use spur_proto::v1::jobs_server::{Jobs, JobsServer};
use spur_proto::v1::*;
use std::sync::{Arc, Mutex};
use tokio::net::TcpListener;
use tokio_stream::wrappers::TcpListenerStream;
use tonic::{Request, Response, Status};

pub type Log = Arc<Mutex<Vec<String>>>;

struct Fake {
    jobs: Arc<Vec<Job>>,
    log: Log,
}

impl Fake {
    /// The caller, and the owner check the controller makes for a user without a role.
    fn check<T>(&self, r: &Request<T>, id: u64) -> Result<(), Status> {
        let who = r.metadata().get(USER_HEADER).and_then(|v| v.to_str().ok()).unwrap_or("");
        match self.jobs.iter().find(|j| j.id == id) {
            None => Err(Status::not_found(format!("job {id} does not exist"))),
            Some(j) if j.user != who => {
                Err(Status::permission_denied(format!("job {id} belongs to '{}'", j.user)))
            }
            Some(_) => Ok(()),
        }
    }
}

#[tonic::async_trait]
impl Jobs for Fake {
    async fn submit(&self, _: Request<SubmitRequest>) -> Result<Response<SubmitResponse>, Status> {
        Err(Status::unimplemented("not in this fake"))
    }

    async fn test_submit(&self, _: Request<SubmitRequest>) -> Result<Response<TestSubmitResponse>, Status> {
        Err(Status::unimplemented("not in this fake"))
    }

    async fn usage(&self, _: Request<UsageRequest>) -> Result<Response<UsageResponse>, Status> {
        Err(Status::unimplemented("not in this fake"))
    }
    async fn list_shares(&self, _: Request<ListRequest>) -> Result<Response<ListSharesResponse>, Status> {
        Err(Status::unimplemented("not in this fake"))
    }

    async fn explain(&self, r: Request<ExplainRequest>) -> Result<Response<Explanation>, Status> {
        let id = r.into_inner().job_id;
        self.log.lock().unwrap().push(format!("explain {id}"));
        match self.jobs.iter().any(|j| j.id == id) {
            true => Ok(Response::new(Explanation {
                job_id: id,
                reason: "Resources".into(),
                ..Default::default()
            })),
            false => Err(Status::not_found(format!("job {id} does not exist"))),
        }
    }

    async fn list_jobs(&self, _: Request<ListRequest>) -> Result<Response<ListJobsResponse>, Status> {
        self.log.lock().unwrap().push("list".into());
        Ok(Response::new(ListJobsResponse { jobs: self.jobs.as_ref().clone(), ..Default::default() }))
    }

    type StreamJobsStream = tokio_stream::Iter<std::vec::IntoIter<Result<ListJobsResponse, Status>>>;

    async fn stream_jobs(&self, _: Request<ListRequest>) -> Result<Response<Self::StreamJobsStream>, Status> {
        Err(Status::unimplemented("not in this fake"))
    }

    async fn cancel(&self, r: Request<CancelRequest>) -> Result<Response<CancelResponse>, Status> {
        for id in &r.get_ref().ids {
            self.check(&r, *id)?;
        }
        let ids = r.into_inner().ids;
        self.log.lock().unwrap().push(format!("cancel {ids:?}"));
        let active = |id: &u64| self.jobs.iter().any(|j| j.id == *id && j.end_ms == 0);
        Ok(Response::new(CancelResponse { cancelled: ids.into_iter().filter(active).collect() }))
    }

    async fn update_job(&self, r: Request<UpdateJobRequest>) -> Result<Response<UpdateJobResponse>, Status> {
        self.check(&r, r.get_ref().id)?;
        let r = r.into_inner();
        let set: Vec<String> = r.set.iter().map(|kv| format!("{}={}", kv.key, kv.value)).collect();
        self.log.lock().unwrap().push(format!("update {} {}", r.id, set.join(" ")));
        Ok(Response::new(UpdateJobResponse {}))
    }
}

pub struct Server {
    pub url: String,
    pub log: Log,
}

/// Serve `jobs` on a fresh loopback port.
pub async fn serve(jobs: Vec<Job>) -> Server {
    let listener = TcpListener::bind("127.0.0.1:0").await.unwrap();
    let url = format!("http://{}", listener.local_addr().unwrap());
    let log = Log::default();
    let fake = Fake { jobs: Arc::new(jobs), log: log.clone() };
    let router = tonic::transport::Server::builder().add_service(JobsServer::new(fake));
    tokio::spawn(router.serve_with_incoming(TcpListenerStream::new(listener)));
    Server { url, log }
}
