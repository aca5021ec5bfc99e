//! MUNGE against no authentication (issue 34): the same load on two
//! controllers of the real `spurctld`, one under `[auth] plugin = "none"`
//! and one under `plugin = "munge"` with a private munged (its own key and
//! socket), printed side by side. Target: munge within 10% of none.
//!
//! - `squeue -j ID` and `sbatch --wrap true` as one-shot commands (the real
//!   `spur` binary through its personality links), median and p95 over RUNS
//!   runs each. The two plugins' runs alternate, so whatever else loads the
//!   machine falls on both alike.
//! - Submits per second from 4 in-process clients (`spur_client::conn`),
//!   each waiting for its answer before the next submit, over SUBMITS
//!   submits per plugin, in rounds none, munge, munge, none for the same
//!   reason.
//!
//! Clients get their credentials as every client does
//! (`Credentials::local()`): the munge run's with `SPUR_MUNGE_SOCKET` naming
//! the private munged, so each request carries a new credential; the none
//! run's with `SPUR_AUTH=none`, so they attach nothing. The in-process
//! clients run in a child process of this example, since the environment is
//! read when a process starts (and this workspace forbids `unsafe`
//! `set_var`). No agents: jobs stay pending, so only the request path is
//! measured.
//!
//! Needs munged, and the binaries built into the same target directory,
//! since the commands are found beside this executable:
//!
//! ```sh
//! cargo build --release --workspace --bins
//! cargo run --release -p spur-tests --example munge_load [-- RUNS [SUBMITS]]
//! ```
//!
//! RUNS is 100 and SUBMITS 2000 unless given. Every loop is bounded in count
//! and time: each command is killed after 30 s, each one-shot metric stops
//! after 5 minutes and each submit round after 2 (the figures then say how
//! many runs or submits they cover).

use anyhow::{Context, anyhow, bail};
use spur_client::conn::{self, Identity};
use spur_munge::daemon::TestMunged;
use spur_proto::credential::Credentials;
use spur_proto::v1 as pb;
use spur_proto::wire::{AUTH_ENV, MUNGE_SOCKET_ENV};
use spur_tests::proc::{Controller, bin_dir, client, conf};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

const USAGE: &str = "usage: munge_load [RUNS [SUBMITS]] (RUNS >= 1, SUBMITS >= 8)";
const CLIENTS: usize = 4;
/// Above this a count is a typo, not a benchmark.
const MAX_COUNT: usize = 1_000_000;
/// A command that takes this long is hung, not slow: it is killed.
const COMMAND_TIMEOUT: Duration = Duration::from_secs(30);
/// Each one-shot metric stops here even with runs left (a loaded machine).
const ONE_SHOT_BUDGET: Duration = Duration::from_secs(300);
/// Each submit round stops here even with submits left.
const ROUND_BUDGET: Duration = Duration::from_secs(120);
/// The argument that makes this executable the in-process clients.
const CHILD_MODE: &str = "__submits";
/// Target from issue 34.
const TARGET: f64 = 1.10;

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Plugin {
    None,
    Munge,
}

impl Plugin {
    fn name(self) -> &'static str {
        match self {
            Plugin::None => "none",
            Plugin::Munge => "munge",
        }
    }
}

/// One controller under one plugin, and what its clients need.
/// Fields drop in order: the controller before munged and its directory.
struct Side {
    plugin: Plugin,
    controller: Controller,
    /// The private munged's socket, on the munge side.
    socket: Option<String>,
    /// A pending job, for `squeue -j`.
    job: u64,
    _munged: Option<TestMunged>,
    _dir: tempfile::TempDir,
}

impl Side {
    async fn start(plugin: Plugin) -> anyhow::Result<Side> {
        let dir = tempfile::tempdir()?;
        let (munged, socket) = match plugin {
            Plugin::None => (None, None),
            Plugin::Munge => {
                let m = TestMunged::start(&dir.path().join("munge")).map_err(|e| anyhow!("munged: {e}"))?;
                let s = m.socket().to_str().context("munged's socket path is not UTF-8")?.to_string();
                (Some(m), Some(s))
            }
        };
        let auth = match &socket {
            None => "[auth]\nplugin = \"none\"\n".to_string(),
            Some(s) => format!("[auth]\nplugin = \"munge\"\nmunge_socket = {s:?}\n"),
        };
        // Nodes so that submits are accepted (as submit_load's controller has);
        // no agent, so the jobs stay pending.
        let extra = format!(
            "[[nodes]]\nname = \"n[1-4]\"\n[[partitions]]\nname = \"batch\"\nnodes = \"ALL\"\ndefault = true\n{auth}"
        );
        let db = format!("sqlite://{}/load.db", dir.path().display());
        let controller = Controller::start(dir.path(), &conf(&db, &extra));
        let mut side = Side { plugin, controller, socket, job: 0, _munged: munged, _dir: dir };
        let (_, out) = run(side.command("sbatch", &["--parsable", "--wrap", "true"])).await?;
        let id = out.trim().split(';').next().unwrap_or_default();
        side.job = id.parse().with_context(|| format!("sbatch --parsable printed {out:?}, not a job id"))?;
        Ok(side)
    }

    /// What this side's clients find in their environment: a munged to ask
    /// for credentials, or the word to attach none.
    fn auth_env(&self, c: &mut Command) {
        match &self.socket {
            Some(s) => c.env(MUNGE_SOCKET_ENV, s).env_remove(AUTH_ENV),
            None => c.env(AUTH_ENV, "none").env_remove(MUNGE_SOCKET_ENV),
        };
    }

    /// A client personality against this side's controller.
    fn command(&self, personality: &str, args: &[&str]) -> Command {
        let mut c = client(personality, &self.controller.url, args, &[]);
        self.auth_env(&mut c);
        c
    }
}

/// Runs a command to its end (killed at [`COMMAND_TIMEOUT`]): how long it
/// took, from spawn to exit, and its stdout; an error unless it succeeded.
async fn run(c: Command) -> anyhow::Result<(Duration, String)> {
    let what = format!("{} {:?}", c.get_program().to_string_lossy(), c.get_args().collect::<Vec<_>>());
    let mut c = tokio::process::Command::from(c);
    // Dropped at the timeout, the child is killed rather than left running.
    c.stdin(Stdio::null()).stdout(Stdio::piped()).stderr(Stdio::piped()).kill_on_drop(true);
    let started = Instant::now();
    let out = tokio::time::timeout(COMMAND_TIMEOUT, c.output())
        .await
        .map_err(|_| anyhow!("{what}: no exit in {} s, killed", COMMAND_TIMEOUT.as_secs()))?
        .with_context(|| format!("{what}: cannot run"))?;
    let took = started.elapsed();
    if !out.status.success() {
        bail!("{what} failed ({}): {}", out.status, String::from_utf8_lossy(&out.stderr).trim());
    }
    Ok((took, String::from_utf8_lossy(&out.stdout).into_owned()))
}

/// Latencies in ms of one one-shot command on each side (none, munge),
/// alternating which side goes first so neither always runs warmer.
async fn one_shot(
    sides: &[Side; 2],
    runs: usize,
    personality: &str,
    args: impl Fn(&Side) -> Vec<String>,
) -> anyhow::Result<[Vec<f64>; 2]> {
    let cmd = |s: &Side| s.command(personality, &args(s).iter().map(String::as_str).collect::<Vec<_>>());
    // One untimed run each: the first maps the binary and its libraries from disk.
    for s in sides {
        run(cmd(s)).await?;
    }
    let mut ms: [Vec<f64>; 2] = [vec![], vec![]];
    let started = Instant::now();
    for i in 0..runs {
        if started.elapsed() > ONE_SHOT_BUDGET {
            eprintln!("stopped after {i} of {runs} runs: {} s spent", ONE_SHOT_BUDGET.as_secs());
            break;
        }
        let order = if i % 2 == 0 { [0, 1] } else { [1, 0] };
        for k in order {
            let (took, _) = run(cmd(&sides[k])).await?;
            ms[k].push(took.as_secs_f64() * 1e3);
        }
    }
    Ok(ms)
}

/// The value at quantile `q` (nearest rank) of `v`; NaN for no values.
fn quantile(v: &[f64], q: f64) -> f64 {
    let mut s = v.to_vec();
    s.sort_by(f64::total_cmp);
    let rank = (q * s.len() as f64).ceil() as usize;
    s.get(rank.clamp(1, s.len().max(1)) - 1).copied().unwrap_or(f64::NAN)
}

/// One round of `count` submits on `side` by the in-process clients (a
/// child process of this executable, so that `Credentials::local()` reads
/// the side's environment): (submits done, seconds).
async fn submit_round(side: &Side, count: usize) -> anyhow::Result<(usize, f64)> {
    let mut c = Command::new(std::env::current_exe()?);
    c.args([CHILD_MODE, side.controller.url.as_str(), &count.to_string(), side.plugin.name()]);
    side.auth_env(&mut c);
    let mut c = tokio::process::Command::from(c);
    c.stdin(Stdio::null()).stdout(Stdio::piped()).stderr(Stdio::piped()).kill_on_drop(true);
    // The child stops submitting at ROUND_BUDGET; the margin is for its start and connects.
    let out = tokio::time::timeout(ROUND_BUDGET + COMMAND_TIMEOUT, c.output())
        .await
        .map_err(|_| anyhow!("the {} clients did not finish, killed", side.plugin.name()))??;
    if !out.status.success() {
        bail!("the {} clients failed: {}", side.plugin.name(), String::from_utf8_lossy(&out.stderr).trim());
    }
    let text = String::from_utf8_lossy(&out.stdout);
    let mut f = text.split_whitespace();
    let parsed = (f.next().and_then(|d| d.parse().ok()), f.next().and_then(|s| s.parse().ok()));
    match parsed {
        (Some(done), Some(secs)) => Ok((done, secs)),
        _ => bail!("the {} clients printed {text:?}, not 'SUBMITS SECONDS'", side.plugin.name()),
    }
}

/// The child: CLIENTS connections from this process's identity, `count`
/// submits shared among them, each client one request at a time. Prints
/// "SUBMITS SECONDS", connects not counted.
async fn clients(args: &[String]) -> anyhow::Result<()> {
    let [url, count, plugin] = args else { bail!("usage: munge_load {CHILD_MODE} URL COUNT none|munge") };
    let count: usize = count.parse().with_context(|| format!("COUNT {count:?} is not a number"))?;
    let credentials = Credentials::local();
    // A munge run without credentials would measure none twice: refuse it.
    if credentials.munge() != (plugin == "munge") {
        bail!(
            "the {plugin} run's clients {} MUNGE credentials",
            if credentials.munge() { "attach" } else { "lack" }
        );
    }
    let uid = spur_proto::wire::local_uid();
    let me = Identity { credentials, ..Identity::asserted(spur_proto::wire::user_of(uid), uid) };
    let mut conns = vec![];
    for _ in 0..CLIENTS {
        conns.push(conn::connect(url, me.clone()).await?);
    }
    let started = Instant::now();
    let deadline = started + ROUND_BUDGET;
    let mut tasks = vec![];
    for (i, mut c) in conns.into_iter().enumerate() {
        let n = count / CLIENTS + usize::from(i < count % CLIENTS);
        tasks.push(tokio::spawn(async move {
            let mut done = 0usize;
            for _ in 0..n {
                if Instant::now() >= deadline {
                    break;
                }
                let spec = pb::JobSpec {
                    name: "load".into(),
                    script: "#!/bin/sh\ntrue\n".into(),
                    ..Default::default()
                };
                c.jobs
                    .submit(pb::SubmitRequest { spec: Some(spec) })
                    .await
                    .map_err(|s| anyhow!("submit: {s}"))?;
                done += 1;
            }
            anyhow::Ok(done)
        }));
    }
    let mut done = 0usize;
    for t in tasks {
        done += t.await.map_err(|e| anyhow!("a client task ended: {e}"))??;
    }
    println!("{done} {}", started.elapsed().as_secs_f64());
    Ok(())
}

/// A count from the command line: `default` when absent, an error unless
/// a number from `min` to [`MAX_COUNT`].
fn count_arg(arg: Option<&String>, default: usize, min: usize) -> anyhow::Result<usize> {
    let Some(a) = arg else { return Ok(default) };
    match a.parse::<usize>() {
        Ok(n) if (min..=MAX_COUNT).contains(&n) => Ok(n),
        _ => bail!("{a:?}: {USAGE}"),
    }
}

#[tokio::main]
async fn main() -> anyhow::Result<()> {
    let args: Vec<String> = std::env::args().skip(1).collect();
    if args.first().map(String::as_str) == Some(CHILD_MODE) {
        return clients(&args[1..]).await;
    }
    if args.len() > 2 {
        bail!("{USAGE}");
    }
    let runs = count_arg(args.first(), 100, 1)?;
    // Each of the four rounds gives every client at least one submit.
    let submits = count_arg(args.get(1), 2000, 2 * CLIENTS)?;
    // Checked here: the helpers behind them would panic on a missing binary.
    for b in ["spur", "spurctld"] {
        if !bin_dir().join(b).exists() {
            bail!(
                "{} is not built: run `cargo build --release --workspace --bins` into the same target directory first",
                bin_dir().join(b).display()
            );
        }
    }
    if !TestMunged::available() {
        bail!("munged is not installed (Debian: apt-get install munge)");
    }
    let sides = [Side::start(Plugin::None).await?, Side::start(Plugin::Munge).await?];

    // The munge controller must refuse a client without a credential, or
    // both columns would measure the same thing.
    let mut bare = sides[1].command("sbatch", &["--wrap", "true"]);
    bare.env(AUTH_ENV, "none");
    if run(bare).await.is_ok() {
        bail!("the munge controller accepted a submit without a credential");
    }

    let squeue = one_shot(&sides, runs, "squeue", |s| vec!["-j".into(), s.job.to_string()]).await?;
    let sbatch = one_shot(&sides, runs, "sbatch", |_| vec!["--wrap".into(), "true".into()]).await?;

    // Rounds none, munge, munge, none: a drift in the machine's load
    // during the rounds falls on both plugins alike.
    let half = [submits - submits / 2, submits / 2];
    let mut tally = [(0usize, 0f64); 2];
    for (round, k) in [0, 1, 1, 0].into_iter().enumerate() {
        let (done, secs) = submit_round(&sides[k], half[round / 2]).await?;
        tally[k].0 += done;
        tally[k].1 += secs;
    }
    let rate = tally.map(|(done, secs)| done as f64 / secs);

    println!(
        "{runs} one-shot runs per command and plugin ({} and {} taken), {submits} submits per plugin \
         from {CLIENTS} clients ({} and {} done)",
        squeue[0].len().min(sbatch[0].len()),
        squeue[1].len().min(sbatch[1].len()),
        tally[0].0,
        tally[1].0
    );
    println!("{:<32} {:>10} {:>10} {:>11}", "metric", "none", "munge", "munge/none");
    let mut missed = vec![];
    let mut row = |name: &str, v: [f64; 2], higher_is_better: bool| {
        let ratio = v[1] / v[0];
        // Within 10%: a latency at most 1.10 times none's, a rate at least none's / 1.10.
        if (higher_is_better && ratio < 1.0 / TARGET) || (!higher_is_better && ratio > TARGET) {
            missed.push(name.to_string());
        }
        println!("{name:<32} {:>10.1} {:>10.1} {ratio:>11.2}", v[0], v[1]);
    };
    for (label, ms) in [("squeue -j ID", &squeue), ("sbatch --wrap true", &sbatch)] {
        row(&format!("{label} median (ms)"), [quantile(&ms[0], 0.5), quantile(&ms[1], 0.5)], false);
        row(&format!("{label} p95 (ms)"), [quantile(&ms[0], 0.95), quantile(&ms[1], 0.95)], false);
    }
    row(&format!("submits/s ({CLIENTS} clients)"), rate, true);
    if missed.is_empty() {
        println!("target (munge within 10% of none): met");
    } else {
        println!("target (munge within 10% of none): missed for {}", missed.join(", "));
    }
    Ok(())
}
