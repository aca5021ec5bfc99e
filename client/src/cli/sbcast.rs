//! `sbcast` (also `spur bcast`): copies a file to every node of a running
//! job, as the job's user, from inside its allocation (`SLURM_JOB_ID`) or for
//! the job `-j` names. The file goes to the controller in pieces, which
//! passes each on to the nodes' agents; each node writes it through the
//! trampoline that drops to the job's user first (see the manual's sbcast page).

use super::fmt::status;
use super::getopt::{Mode, Opt, Spec, check, switch, value};
use super::kv::list;
use crate::conn::{self, Identity};
use spur_proto::v1 as pb;
use std::io::Read;
use std::os::unix::fs::MetadataExt;

pub const USAGE: &str = "\
usage: sbcast [-fpCv] [-j JOB] [--exclude=NODES] [-s SIZE] [--controller URL] SOURCE DEST
  -f, --force          replace DEST where it exists (otherwise that node fails)
  -p, --preserve       keep SOURCE's mode and modification time
  -j, --jobid=JOB      the job whose nodes get the file (default: $SLURM_JOB_ID)
  --exclude=NODES      not these of the job's nodes
  -s, --size=SIZE      the size of each piece sent (at most 1M)
The file is written on each node as the job's user; at most 1 GiB.";

/// The largest file sbcast sends (the controller's cap), and the largest piece.
pub const MAX_BYTES: u64 = 1 << 30;
pub const MAX_PIECE: usize = 1 << 20;

#[derive(Debug, Clone, Default)]
pub struct Args {
    pub help: bool,
    pub version: bool,
    pub force: bool,
    pub preserve: bool,
    pub job: Option<u64>,
    pub exclude: Vec<String>,
    pub piece: Option<usize>,
    pub words: Vec<String>,
    pub controller: Option<String>,
    pub warnings: Vec<String>,
}

fn warn(a: &mut Args, flag: &str, why: &str) {
    a.warnings.push(format!("sbcast: warning: {flag}: {why}"));
}

/// `-j JOB`, `JOB.STEP` or `JOB+0` (a step or component still names its job).
fn job(a: &mut Args, v: String) -> Result<(), String> {
    let id = v.split(['.', '+', '_']).next().unwrap_or_default();
    a.job = Some(id.trim().parse().map_err(|_| format!("--jobid: '{v}' is not a job id"))?);
    Ok(())
}

/// `-s SIZE`: bytes, with k/m suffixes as Slurm's; at most [`MAX_PIECE`].
fn piece(a: &mut Args, v: String) -> Result<(), String> {
    let t = v.trim().to_ascii_lowercase();
    let (n, mult) = match t.strip_suffix('k') {
        Some(n) => (n, 1 << 10),
        None => t.strip_suffix('m').map_or((t.as_str(), 1), |n| (n, 1 << 20)),
    };
    let n: usize = n.parse().map_err(|_| format!("--size: '{v}' is not a size (N, Nk or Nm)"))?;
    a.piece = Some(n.saturating_mul(mult).clamp(1, MAX_PIECE));
    Ok(())
}

static FLAGS: Spec<Args> = Spec { opts: OPTS, mode: Mode::Anywhere, noun: "flag" };
pub const OPTS: &[Opt<Args>] = &[
    switch("C/compress", |a| {
        warn(a, "--compress", "pieces go uncompressed over the controller's connections")
    }),
    value("-/exclude", |a, v| a.exclude.extend(list(&v))),
    switch("f/force", |a| a.force = true),
    check("j/jobid", job),
    switch("Z/no-allocation", |a| {
        warn(a, "--no-allocation", "Spur copies only to a running job's nodes; the job's nodes are used")
    }),
    value("w/nodelist", |a, _| {
        warn(a, "--nodelist", "only with --no-allocation, which Spur has not; the job's nodes are used")
    }),
    switch("p/preserve", |a| a.preserve = true),
    value("-/send-libs", |a, _| {
        warn(a, "--send-libs", "the file alone is copied, not the libraries it links")
    }),
    check("s/size", piece),
    value("t/timeout", |a, _| warn(a, "--timeout", "each node has 60 s after the last piece")),
    value("F/treewidth", |a, _| warn(a, "--treewidth", "the controller sends to each node itself")),
    switch("v/verbose", |a| warn(a, "--verbose", "sbcast has nothing more to say")),
    switch("V/version", |a| a.version = true),
    switch("h/help", |a| a.help = true),
    switch("-/usage", |a| a.help = true),
    value("-/controller", |a, v| a.controller = Some(v)),
];

pub fn parse(argv: &[String]) -> Result<Args, String> {
    let mut a = Args::default();
    // Slurm's optional values (`-Clz4`, `--compress=lz4`, `--send-libs=no`) have no
    // effect here: the flag is kept and its value dropped.
    let argv: Vec<String> = argv
        .iter()
        .map(|s| match s.split_once('=') {
            Some((f @ "--compress", _)) => f.to_string(),
            Some((f @ "--send-libs", v)) => format!("{f}={v}"),
            _ if s.starts_with("-C") && s.len() > 2 && !s.starts_with("--") => "-C".into(),
            _ => s.clone(),
        })
        .collect();
    // --send-libs takes its value only attached; alone it is a switch.
    let argv: Vec<String> =
        argv.into_iter().map(|s| if s == "--send-libs" { "--send-libs=yes".into() } else { s }).collect();
    a.words = FLAGS.parse(&argv, &mut a)?;
    Ok(a)
}

/// The job: `-j`, else `SLURM_JOB_ID` from the allocation sbcast runs in.
pub fn job_of(a: &Args, env_job: Option<&str>) -> Result<u64, String> {
    match (a.job, env_job) {
        (Some(j), _) => Ok(j),
        (None, Some(v)) => v.trim().parse().map_err(|_| format!("SLURM_JOB_ID: '{v}' is not a job id")),
        (None, None) => Err("no job: run sbcast inside an allocation (SLURM_JOB_ID) or give -j JOB".into()),
    }
}

/// SOURCE and DEST; a relative DEST is taken from the current directory, as the nodes have no other.
pub fn paths(a: &Args, cwd: &std::path::Path) -> Result<(String, String), String> {
    let [source, dest] = &a.words[..] else {
        return Err(format!("give SOURCE and DEST ({} words given)", a.words.len()));
    };
    // An absolute DEST replaces the directory it is joined to.
    let dest = std::path::Path::new(dest);
    Ok((source.clone(), cwd.join(dest).display().to_string()))
}

async fn run(a: Args) -> Result<String, String> {
    let job = job_of(&a, std::env::var("SLURM_JOB_ID").ok().as_deref())?;
    let cwd = std::env::current_dir().map_err(|e| format!("cannot read the current directory: {e}"))?;
    let (source, dest) = paths(&a, &cwd)?;
    let mut file = std::fs::File::open(&source).map_err(|e| format!("cannot open {source}: {e}"))?;
    let meta = file.metadata().map_err(|e| format!("{source}: {e}"))?;
    if !meta.is_file() {
        return Err(format!("{source} is not a regular file"));
    }
    if meta.len() > MAX_BYTES {
        return Err(format!("{source} is {} bytes; sbcast copies at most {MAX_BYTES} (1 GiB)", meta.len()));
    }
    let first = pb::BcastChunk {
        job_id: job,
        dest,
        force: a.force,
        preserve: a.preserve,
        mode: meta.mode(),
        mtime: meta.mtime(),
        size: meta.len(),
        data: vec![],
        exclude: a.exclude.clone(),
    };
    let size = a.piece.unwrap_or(MAX_PIECE);
    let (tx, rx) = tokio::sync::mpsc::channel(4);
    // Read on a thread of its own, a piece at a time, so the file is never all in memory.
    let reader = tokio::task::spawn_blocking(move || -> Result<(), String> {
        if tx.blocking_send(first).is_err() {
            return Ok(());
        }
        let mut buf = vec![0u8; size];
        loop {
            let n = file.read(&mut buf).map_err(|e| format!("reading {source}: {e}"))?;
            if n == 0
                || tx.blocking_send(pb::BcastChunk { data: buf[..n].to_vec(), ..Default::default() }).is_err()
            {
                return Ok(());
            }
        }
    });
    let mut c = conn::connect_flag(a.controller.as_deref(), Identity::local()).await?;
    let answer = c.steps.bcast(tokio_stream::wrappers::ReceiverStream::new(rx)).await;
    reader.await.map_err(|e| e.to_string())??;
    answer.map_err(status)?;
    Ok(String::new())
}

/// Runs sbcast with its arguments (without `argv[0]`); returns the exit code.
pub async fn main(argv: &[String]) -> i32 {
    let result = match parse(argv) {
        Ok(a) if a.help => Ok(format!("{USAGE}\n")),
        Ok(a) if a.version => Ok(format!("spur {}\n", env!("CARGO_PKG_VERSION"))),
        Ok(a) => {
            a.warnings.iter().for_each(|w| super::output::complain(w));
            run(a).await
        }
        Err(e) => Err(e),
    };
    super::output::finish("sbcast", result)
}
