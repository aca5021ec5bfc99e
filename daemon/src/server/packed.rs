//! The brief job listing (and sprio's, with the priority factors) written straight from the records into protobuf
//! bytes, paged for `StreamJobs` (`ListJobsResponse.packed`): `squeue` over
//! a large queue.
//!
//! Building a `pb::Job` per record clones eight strings and a node list only
//! for prost to copy them again into the response; over 100,000 jobs that was
//! most of the listing's time. Here each field goes from the record to the
//! buffer once. The bytes are a valid `ListJobsResponse` (jobs only), and
//! the tests hold them equal to what [`super::convert::job_brief`] encodes.

use crate::jobs::record::JobRecord;
use prost::bytes::Bytes;
use prost::encoding::{WireType, encode_key, encode_varint};
use spur_proto::states;

/// Field numbers of `spur.v1.Job`, as in jobs.proto.
mod tag {
    pub const ID: u32 = 1;
    pub const NAME: u32 = 2;
    pub const USER: u32 = 3;
    pub const ACCOUNT: u32 = 4;
    pub const QOS: u32 = 5;
    pub const PARTITION: u32 = 6;
    pub const PRIORITY: u32 = 10;
    pub const TIME_LIMIT: u32 = 11;
    pub const SUBMIT_MS: u32 = 12;
    pub const START_MS: u32 = 13;
    pub const END_MS: u32 = 14;
    pub const NODES: u32 = 15;
    pub const NUM_NODES: u32 = 16;
    pub const NUM_CPUS: u32 = 17;
    pub const EXIT_CODE: u32 = 18;
    pub const PRIO_BASE: u32 = 20;
    pub const PRIO_FAIR_SHARE: u32 = 21;
    pub const PRIO_AGE: u32 = 22;
    pub const PRIO_TIER: u32 = 23;
    pub const ARRAY_JOB_ID: u32 = 41;
    pub const ARRAY_TASK_ID: u32 = 42;
    pub const ARRAY_PENDING: u32 = 43;
    pub const ARRAY_THROTTLE: u32 = 44;
    pub const BORROWED: u32 = 45;
    pub const RECLAIMS: u32 = 46;
    pub const UID: u32 = 61;
    pub const GID: u32 = 62;
    pub const GROUP: u32 = 63;
    pub const STATE: u32 = 70;
    pub const REASON: u32 = 71;
    pub const HELD: u32 = 72;
    pub const EXIT_SIGNAL: u32 = 73;
    pub const PRIO_ORDERED: u32 = 48;
}

/// `ListJobsResponse.jobs`.
const JOBS_FIELD: u32 = 1;

/// Jobs per StreamJobs page: some 700 KB, small enough that a client
/// decodes the first while the rest are sent.
const PAGE_JOBS: usize = 8192;

/// A brief listing being written: reuses one scratch buffer for every job.
#[derive(Default)]
pub struct Packer {
    out: Vec<u8>,
    job: Vec<u8>,
    /// Where each page after the first begins in `out`.
    breaks: Vec<usize>,
    count: usize,
}

impl Packer {
    /// Sized for `jobs` records of about 90 bytes each.
    pub fn with_jobs(jobs: usize) -> Packer {
        Packer { out: Vec::with_capacity(jobs * 96), job: Vec::with_capacity(256), ..Packer::default() }
    }

    /// Appends one job as a `jobs` entry: the brief view, or sprio's
    /// fields only when `prio`.
    pub fn push(&mut self, j: &JobRecord, prio: bool) {
        if self.count > 0 && self.count.is_multiple_of(PAGE_JOBS) {
            self.breaks.push(self.out.len());
        }
        self.count += 1;
        let b = &mut self.job;
        b.clear();
        if prio {
            prio_fields(b, j);
        } else {
            brief_fields(b, j);
        }
        encode_key(JOBS_FIELD, WireType::LengthDelimited, &mut self.out);
        encode_varint(self.job.len() as u64, &mut self.out);
        self.out.extend_from_slice(&self.job);
    }

    /// The pages, slices of one buffer; always at least one, maybe empty.
    pub fn pages(self) -> Vec<Bytes> {
        let all = Bytes::from(self.out);
        let mut starts = vec![0];
        starts.extend(&self.breaks);
        let ends = self.breaks.iter().copied().chain([all.len()]);
        starts.into_iter().zip(ends).map(|(s, e)| all.slice(s..e)).collect()
    }
}

/// The brief view: squeue's default columns, in field order as prost writes them.
fn brief_fields(b: &mut Vec<u8>, j: &JobRecord) {
    uint(b, tag::ID, j.id);
    text(b, tag::NAME, &j.name);
    text(b, tag::USER, &j.user);
    text(b, tag::ACCOUNT, j.account.as_deref().unwrap_or(""));
    text(b, tag::QOS, j.qos.as_deref().unwrap_or(""));
    text(b, tag::PARTITION, &j.partition);
    double(b, tag::PRIORITY, j.eff_priority);
    // Optional in the proto: present even when 0.
    if let Some(t) = j.time_limit {
        encode_key(tag::TIME_LIMIT, WireType::Varint, b);
        encode_varint(t, b);
    }
    int(b, tag::SUBMIT_MS, j.submit_ms);
    int(b, tag::START_MS, j.start_ms);
    int(b, tag::END_MS, j.end_ms);
    for n in &j.nodes {
        encode_key(tag::NODES, WireType::LengthDelimited, b);
        encode_varint(n.len() as u64, b);
        b.extend_from_slice(n.as_bytes());
    }
    uint(b, tag::NUM_NODES, j.num_nodes.into());
    uint(b, tag::NUM_CPUS, super::convert::num_cpus(j).into());
    int(b, tag::EXIT_CODE, j.exit_code.into());
    if let Some(a) = j.array.as_deref() {
        uint(b, tag::ARRAY_JOB_ID, a.job_id);
        if let Some(t) = a.task {
            // Optional in the proto: present even when 0.
            encode_key(tag::ARRAY_TASK_ID, WireType::Varint, b);
            encode_varint(t.into(), b);
        }
        text(b, tag::ARRAY_PENDING, &super::convert::array_pending(a));
        uint(b, tag::ARRAY_THROTTLE, a.throttle.into());
    }
    uint(b, tag::BORROWED, j.borrowed.into());
    uint(b, tag::RECLAIMS, j.reclaims.into());
    // Optional in the proto: present even when 0 (root).
    for (t, v) in [(tag::UID, j.uid), (tag::GID, j.gid)] {
        if let Some(v) = v {
            encode_key(t, WireType::Varint, b);
            encode_varint(v.into(), b);
        }
    }
    text(b, tag::GROUP, &j.group);
    uint(b, tag::STATE, j.state as u64);
    uint(b, tag::REASON, states::reason_wire(j.reason) as u64);
    uint(b, tag::HELD, j.is_held().into());
    int(b, tag::EXIT_SIGNAL, j.exit_signal.into());
}

/// sprio's view: the fields of `JobPriority`, nothing else.
fn prio_fields(b: &mut Vec<u8>, j: &JobRecord) {
    uint(b, tag::ID, j.id);
    text(b, tag::USER, &j.user);
    text(b, tag::ACCOUNT, j.account.as_deref().unwrap_or(""));
    text(b, tag::QOS, j.qos.as_deref().unwrap_or(""));
    text(b, tag::PARTITION, &j.partition);
    double(b, tag::PRIORITY, j.eff_priority);
    double(b, tag::PRIO_BASE, j.factors.0);
    double(b, tag::PRIO_FAIR_SHARE, j.factors.1);
    double(b, tag::PRIO_AGE, j.factors.2);
    uint(b, tag::PRIO_TIER, j.factors.3.into());
    if let Some(v) = j.prio_ordered {
        // An optional field: present even at 0.0, as prost writes it.
        encode_key(tag::PRIO_ORDERED, WireType::SixtyFourBit, b);
        b.extend_from_slice(&v.to_le_bytes());
    }
    uint(b, tag::STATE, j.state as u64);
}

fn double(b: &mut Vec<u8>, tag: u32, v: f64) {
    // prost leaves out a 0.0 (proto3 default), and so must we to be byte-equal.
    if v != 0.0 {
        encode_key(tag, WireType::SixtyFourBit, b);
        b.extend_from_slice(&v.to_le_bytes());
    }
}

fn uint(b: &mut Vec<u8>, tag: u32, v: u64) {
    if v != 0 {
        encode_key(tag, WireType::Varint, b);
        encode_varint(v, b);
    }
}

/// int64 and int32 are both plain varints of the two's complement, so a
/// negative int32 takes ten bytes, as prost writes it.
fn int(b: &mut Vec<u8>, tag: u32, v: i64) {
    uint(b, tag, v as u64);
}

fn text(b: &mut Vec<u8>, tag: u32, s: &str) {
    if !s.is_empty() {
        encode_key(tag, WireType::LengthDelimited, b);
        encode_varint(s.len() as u64, b);
        b.extend_from_slice(s.as_bytes());
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use prost::Message;
    use spur_proto::v1 as pb;
    use spur_vocab::Hold;

    fn records() -> Vec<JobRecord> {
        let plain = JobRecord { id: 1, name: "a".into(), user: "alice".into(), ..JobRecord::default() };
        let full = JobRecord {
            id: u64::MAX,
            name: "naïve ✓ job".into(),
            user: "bob".into(),
            uid: Some(0),
            gid: Some(1001),
            group: "bob".into(),
            account: Some("phys".into()),
            qos: Some("normal".into()),
            partition: "batch".into(),
            state: spur_vocab::JobState::Running,
            reason: Some(spur_vocab::reason::ReasonCode::Resources),
            eff_priority: 1234.5,
            time_limit: Some(0),
            submit_ms: 1_700_000_000_000,
            start_ms: 1_700_000_100_000,
            end_ms: -1,
            nodes: vec!["node01".into(), "node02".into()],
            num_nodes: 2,
            ntasks: 8,
            cpus_per_task: 4,
            exit_code: -15,
            exit_signal: 9,
            hold: Hold::User,
            factors: (1000.0, 0.25, 0.5, 2),
            prio_ordered: Some(0.0),
            borrowed: true,
            reclaims: 3,
            ..JobRecord::default()
        };
        let ended = JobRecord { time_limit: Some(60), exit_code: 2, end_ms: 5, ..plain.clone() };
        vec![plain, full, ended, JobRecord::default()]
    }

    #[test]
    fn packed_decodes_to_the_brief_view() {
        let recs = records();
        let mut p = Packer::with_jobs(recs.len());
        for r in &recs {
            p.push(r, false);
        }
        let pages = p.pages();
        assert_eq!(pages.len(), 1);
        let got = pb::ListJobsResponse::decode(pages[0].clone()).expect("valid protobuf");
        let want: Vec<pb::Job> = recs.iter().map(super::super::convert::job_brief).collect();
        assert_eq!(got.jobs, want);
    }

    #[test]
    fn pages_split_at_job_boundaries() {
        assert_eq!(Packer::default().pages(), vec![Bytes::new()]);
        let mut p = Packer::default();
        let n = 2 * PAGE_JOBS + 5;
        for id in 1..=n as u64 {
            p.push(&JobRecord { id, name: format!("j{id}"), ..JobRecord::default() }, false);
        }
        let pages = p.pages();
        let sizes: Vec<usize> =
            pages.iter().map(|b| pb::ListJobsResponse::decode(b.clone()).unwrap().jobs.len()).collect();
        assert_eq!(sizes, vec![PAGE_JOBS, PAGE_JOBS, 5]);
        let last = pb::ListJobsResponse::decode(pages[2].clone()).unwrap();
        assert_eq!(last.jobs.last().map(|j| j.id), Some(n as u64));
    }

    #[test]
    fn packed_bytes_equal_prost_encoding() {
        use super::super::convert::{job_brief, job_prio};
        for r in records() {
            for (prio, view) in [(false, job_brief as fn(&JobRecord) -> pb::Job), (true, job_prio)] {
                let mut p = Packer::default();
                p.push(&r, prio);
                let want = pb::ListJobsResponse { jobs: vec![view(&r)], ..Default::default() };
                assert_eq!(p.pages(), vec![Bytes::from(want.encode_to_vec())], "job {} prio {prio}", r.id);
            }
        }
    }
}
