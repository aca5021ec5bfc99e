//! The real binaries: `spurctld` on a loopback port, and `spur` under each of
//! its personalities (`sacctmgr`, ...), as a user would run them.

use std::io::{BufRead, BufReader};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, ExitStatus, Output, Stdio};
use std::sync::OnceLock;
use std::sync::mpsc;
use std::time::Duration;

/// How long a test waits for an event before failing.
pub const DEADLINE: Duration = Duration::from_secs(30);

/// target/debug (or target/release), where cargo put the binaries.
pub fn bin_dir() -> PathBuf {
    let exe = std::env::current_exe().expect("current_exe");
    let deps = exe.parent().expect("deps dir");
    deps.parent().expect("target profile dir").to_path_buf()
}

pub fn bin(name: &str) -> PathBuf {
    let p = bin_dir().join(name);
    assert!(p.exists(), "{} is not built; run the tests with `cargo test --workspace`", p.display());
    p
}

/// A directory of personality links (`sacctmgr` -> spur), made once per test process.
pub fn links_dir() -> &'static Path {
    static DIR: OnceLock<tempfile::TempDir> = OnceLock::new();
    DIR.get_or_init(|| {
        let d = tempfile::tempdir().expect("tempdir");
        let out = Command::new(bin("spur")).arg("install-links").arg(d.path()).output().expect("run spur");
        assert!(out.status.success(), "install-links: {}", String::from_utf8_lossy(&out.stderr));
        d
    })
    .path()
}

/// Runs a client personality (`sacctmgr`, ...) against `url`.
pub fn run(personality: &str, url: &str, args: &[&str]) -> Output {
    run_with(personality, url, args, &[])
}

/// Like [`run`], with extra environment (`SPUR_TOKEN`, `USER`, ...).
pub fn run_with(personality: &str, url: &str, args: &[&str], env: &[(&str, &str)]) -> Output {
    client(personality, url, args, env).stdin(Stdio::null()).output().expect("run client")
}

/// The command line of a client, for tests that need to spawn it themselves.
pub fn client(personality: &str, url: &str, args: &[&str], env: &[(&str, &str)]) -> Command {
    let exe = if personality == "spur" { bin("spur") } else { links_dir().join(personality) };
    let mut c = Command::new(exe);
    c.args(args).env("SPUR_CONTROLLER_ADDR", url).env_remove("SPUR_TOKEN");
    for (k, v) in env {
        c.env(k, v);
    }
    c
}

/// Runs a client and returns its stdout, failing the test on a non-zero exit.
pub fn ok(personality: &str, url: &str, args: &[&str]) -> String {
    expect_ok(&format!("{personality} {args:?}"), run(personality, url, args))
}

/// The stdout of a command that ran, `what` failing the test on a non-zero exit.
pub fn expect_ok(what: &str, out: Output) -> String {
    assert!(
        out.status.success(),
        "{what} failed: {}{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8_lossy(&out.stdout).into_owned()
}

/// One `squeue -o` field of a job.
pub fn field(url: &str, id: u64, code: &str) -> String {
    ok("squeue", url, &["-h", "-j", &id.to_string(), "-o", code]).trim().to_string()
}

/// Runs a client that must fail, and returns its stderr.
pub fn fails(personality: &str, url: &str, args: &[&str]) -> String {
    let out = run(personality, url, args);
    assert!(!out.status.success(), "{personality} {args:?} should have failed");
    assert!(out.stdout.is_empty() || !String::from_utf8_lossy(&out.stderr).is_empty());
    String::from_utf8_lossy(&out.stderr).into_owned()
}

/// A running `spurctld` with its config in `dir`.
pub struct Controller {
    pub url: String,
    /// `http://ADDR/metrics` when `[metrics] listen_addr` is set.
    pub metrics: Option<String>,
    pub config: PathBuf,
    log: Option<PathBuf>,
    child: Option<Child>,
}

impl Controller {
    /// Writes `conf` to `dir/spur.conf` and starts spurctld on 127.0.0.1:0.
    pub fn start(dir: &Path, conf: &str) -> Controller {
        let config = dir.join("spur.conf");
        std::fs::write(&config, conf).expect("write spur.conf");
        Controller::start_with(&config)
    }

    pub fn start_with(config: &Path) -> Controller {
        Controller::spawn(config, "127.0.0.1:0", None)
    }

    /// [`Controller::start`] with its log (stderr) in `dir/spurctld.log`, for
    /// tests that read what it logged ([`Controller::log`]).
    pub fn start_logged(dir: &Path, conf: &str) -> Controller {
        let config = dir.join("spur.conf");
        std::fs::write(&config, conf).expect("write spur.conf");
        Controller::spawn(&config, "127.0.0.1:0", Some(&dir.join("spurctld.log")))
    }

    /// Another controller on the same `config` (several on one PostgreSQL
    /// database), logging to `log`.
    pub fn start_shared(config: &Path, log: &Path) -> Controller {
        Controller::spawn(config, "127.0.0.1:0", Some(log))
    }

    /// Sends `sig` (`STOP`, `CONT`, ...) to the process.
    pub fn signal(&self, sig: &str) {
        let _ = Command::new("kill").arg(format!("-{sig}")).arg(self.pid().to_string()).status();
    }

    /// Kills the process with SIGKILL (nothing of it runs after) and reaps it.
    pub fn kill_hard(&mut self) {
        if let Some(mut c) = self.child.take() {
            let _ = c.kill();
            let _ = c.wait();
        }
    }

    /// Waits until it answers that it leads (`scontrol ping`'s primary): a
    /// controller started while another led follows until it takes over.
    pub fn wait_leading(&self) {
        use spur_client::cli::scontrol::ping::{Role, ask};
        let rt = tokio::runtime::Builder::new_current_thread().enable_all().build().expect("a runtime");
        crate::wait::wait_until_blocking("the controller to lead", || match rt.block_on(ask(&self.url)) {
            Role::Primary => Ok(()),
            other => Err(format!("{other:?}")),
        });
    }

    /// The `host:port` it listens on.
    pub fn addr(&self) -> &str {
        self.url.trim_start_matches("http://")
    }

    /// What the controller has logged so far (started with [`Controller::start_logged`]).
    pub fn log(&self) -> String {
        self.log.as_ref().map(|p| std::fs::read_to_string(p).unwrap_or_default()).unwrap_or_default()
    }

    /// Stops the controller and starts it again on the same address and
    /// config (so the same store), as an admin restarting spurctld would:
    /// agents and clients find it where it was.
    pub fn restart(&mut self) {
        if self.child.is_some() {
            self.stop();
        }
        let listen = self.url.trim_start_matches("http://").to_string();
        let log = self.log.clone();
        *self = Controller::spawn(&self.config, &listen, log.as_deref());
    }

    fn spawn(config: &Path, listen: &str, log: Option<&Path>) -> Controller {
        let stderr = match log {
            Some(p) => Stdio::from(
                std::fs::OpenOptions::new()
                    .create(true)
                    .append(true)
                    .open(p)
                    .expect("open the controller log"),
            ),
            None => Stdio::inherit(),
        };
        let mut child = Command::new(bin("spurctld"))
            .arg("--config")
            .arg(config)
            .arg("--listen")
            .arg(listen)
            // A log a test reads has the warnings (refusals are logged at warn).
            .env("SPUR_LOG", if log.is_some() { "warn".into() } else { log_level() })
            .stdout(Stdio::piped())
            .stderr(stderr)
            .spawn()
            .expect("spawn spurctld");
        let stdout = child.stdout.take().expect("stdout");
        let (tx, rx) = mpsc::channel();
        std::thread::spawn(move || {
            let mut reader = BufReader::new(stdout);
            let mut metrics = None;
            loop {
                let mut line = String::new();
                let _ = reader.read_line(&mut line);
                if let Some(m) = line.trim().strip_prefix("spurctld metrics on ") {
                    metrics = Some(m.to_string());
                    continue;
                }
                let _ = tx.send((line, metrics));
                // Keep draining so the controller never blocks on a full pipe.
                let _ = std::io::copy(&mut reader, &mut std::io::sink());
                return;
            }
        });
        let (line, metrics) = rx.recv_timeout(DEADLINE).expect("spurctld did not report its address in time");
        let addr = line.trim().strip_prefix("spurctld listening on ").unwrap_or_else(|| {
            let _ = child.kill();
            panic!("spurctld did not start: {line:?}")
        });
        Controller {
            url: format!("http://{addr}"),
            metrics,
            config: config.to_path_buf(),
            log: log.map(Path::to_path_buf),
            child: Some(child),
        }
    }

    /// Whether the process is still running (it has not exited on its own).
    pub fn alive(&mut self) -> bool {
        self.child.as_mut().is_some_and(|c| matches!(c.try_wait(), Ok(None)))
    }

    pub fn pid(&self) -> u32 {
        self.child.as_ref().map(|c| c.id()).unwrap_or(0)
    }

    /// The process's peak resident set so far (VmHWM), in KiB.
    pub fn peak_rss_kib(&self) -> Option<u64> {
        self.status_kib("VmHWM:")
    }

    /// The process's resident set now (VmRSS), in KiB.
    pub fn rss_kib(&self) -> Option<u64> {
        self.status_kib("VmRSS:")
    }

    fn status_kib(&self, key: &str) -> Option<u64> {
        status_kib(self.pid(), key)
    }

    /// The body of `/metrics` (`[metrics] listen_addr` must be set).
    pub fn metrics_text(&self) -> String {
        use std::io::{Read, Write};
        let url = self.metrics.as_deref().expect("[metrics] listen_addr is set");
        let hostport = url.trim_start_matches("http://").trim_end_matches("/metrics");
        let mut s = std::net::TcpStream::connect(hostport).expect("connect to /metrics");
        write!(s, "GET /metrics HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n").expect("send");
        let mut body = String::new();
        s.read_to_string(&mut body).expect("read /metrics");
        body
    }

    /// Stops with SIGTERM and waits for a clean exit.
    pub fn stop(&mut self) -> ExitStatus {
        let mut child = self.child.take().expect("controller already stopped");
        let _ = Command::new("kill").arg("-TERM").arg(child.id().to_string()).status();
        let (tx, rx) = mpsc::channel();
        std::thread::spawn(move || {
            let _ = tx.send(child.wait());
        });
        rx.recv_timeout(DEADLINE).expect("spurctld did not stop after SIGTERM").expect("wait")
    }
}

impl Drop for Controller {
    fn drop(&mut self) {
        if let Some(mut c) = self.child.take() {
            let _ = c.kill();
            let _ = c.wait();
        }
    }
}

/// A spur.conf for a test controller on `database_url`.
pub fn conf(database_url: &str, extra: &str) -> String {
    format!("cluster_name = \"test\"\n{extra}\n[accounting]\ndatabase_url = \"{database_url}\"\n")
}

/// A running `spurd` hosting some nodes.
pub struct Agent {
    child: Child,
    state_dir: PathBuf,
}

/// The state directory of the agent of `nodes` under the controller at
/// `url`: the same for a restarted agent, which adopts its jobs, and apart
/// for every test (each has a controller port of its own).
pub fn agent_state_dir(url: &str, nodes: &str) -> PathBuf {
    static BASE: OnceLock<tempfile::TempDir> = OnceLock::new();
    let base = BASE.get_or_init(|| tempfile::tempdir().expect("tempdir")).path();
    let key: String =
        format!("{url}-{nodes}").chars().map(|c| if c.is_ascii_alphanumeric() { c } else { '_' }).collect();
    base.join(key)
}

impl Agent {
    pub fn start(url: &str, nodes: &str, env: &[(&str, &str)]) -> Agent {
        Agent::start_in(url, nodes, env, &agent_state_dir(url, nodes))
    }

    /// [`Agent::start`] with the state directory given (an empty one: a node that lost its disk).
    pub fn start_in(url: &str, nodes: &str, env: &[(&str, &str)], state_dir: &Path) -> Agent {
        Agent::spawn(url, nodes, env, &[], state_dir)
    }

    /// [`Agent::start`] with more of spurd's options (`--facts FILE`).
    pub fn start_args(url: &str, nodes: &str, args: &[&str]) -> Agent {
        Agent::spawn(url, nodes, &[], args, &agent_state_dir(url, nodes))
    }

    /// Runs spurd with `args` where it must refuse to start: how it exited
    /// and what it said on stderr, or a failure at the deadline (killed).
    pub fn refused(args: &[&str]) -> (ExitStatus, String) {
        use std::io::Read;
        let mut child = Command::new(bin("spurd"))
            .args(args)
            .env("SPUR_LOG", log_level())
            .env_remove("SPUR_ADMISSION_TOKEN")
            .stdin(Stdio::null())
            .stdout(Stdio::null())
            .stderr(Stdio::piped())
            .spawn()
            .expect("spawn spurd");
        let mut stderr = child.stderr.take().expect("stderr");
        let said = std::thread::spawn(move || {
            let mut s = String::new();
            let _ = stderr.read_to_string(&mut s);
            s
        });
        let status = Agent { child, state_dir: PathBuf::new() }.wait_exit();
        (status, said.join().unwrap_or_default())
    }

    fn spawn(url: &str, nodes: &str, env: &[(&str, &str)], args: &[&str], state_dir: &Path) -> Agent {
        let mut c = Command::new(bin("spurd"));
        c.args(["--controller", url, "--nodes", nodes, "--hostname", "testhost"])
            .args(args)
            .arg("--state-dir")
            .arg(state_dir)
            .env("SPUR_LOG", log_level())
            .env_remove("SPUR_ADMISSION_TOKEN")
            .stdin(Stdio::null())
            .stdout(Stdio::null())
            .stderr(if std::env::var_os("SPUR_TEST_LOG").is_some() {
                Stdio::inherit()
            } else {
                Stdio::null()
            });
        for (k, v) in env {
            c.env(k, v);
        }
        Agent { child: c.spawn().expect("spawn spurd"), state_dir: state_dir.to_path_buf() }
    }

    pub fn state_dir(&self) -> &Path {
        &self.state_dir
    }

    pub fn pid(&self) -> u32 {
        self.child.id()
    }

    /// Kills the agent alone, as `kill -9` would: its jobs run on.
    pub fn kill_agent_only(mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
        self.state_dir = PathBuf::new();
    }

    /// Waits for the agent to exit by itself (a fatal refusal), with the deadline.
    pub fn wait_exit(mut self) -> ExitStatus {
        // At the deadline the panic drops self, which kills the agent.
        crate::wait::wait_until_blocking("spurd to exit", || self.child.try_wait().expect("try_wait"))
    }

    pub fn kill(mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

impl Drop for Agent {
    /// The agent and, unless [`Agent::kill_agent_only`] left them to a
    /// successor, its jobs: a test leaves no process behind.
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
        if !self.state_dir.as_os_str().is_empty() {
            use spur_daemon::agent::state::{StateDir, alive};
            let dir = StateDir(self.state_dir.clone());
            dir.kill_all();
            // Gone before this returns: a successor must not find a supervisor
            // still dying and adopt it (SIGKILL is delivered, not awaited).
            // Polled with a deadline and no panic: this runs while a failed test unwinds too.
            let until = std::time::Instant::now() + std::time::Duration::from_secs(5);
            while dir.runs().iter().any(|r| alive(r.stepd_pid, r.stepd_start))
                && std::time::Instant::now() < until
            {
                std::thread::sleep(std::time::Duration::from_millis(5));
            }
        }
    }
}

/// How many times job `id`'s script has started, for scripts that append a
/// line to `starts-$SLURM_JOB_ID` in their directory.
pub fn starts(dir: &Path, id: u64) -> usize {
    std::fs::read_to_string(dir.join(format!("starts-{id}"))).map(|s| s.lines().count()).unwrap_or(0)
}

/// A job's state as `sacct -X` shows it (ended and purged jobs too).
pub fn sacct_state(url: &str, id: u64) -> String {
    ok("sacct", url, &["-n", "-P", "-X", "-j", &id.to_string(), "-o", "State"]).trim().to_string()
}

/// Whether a process whose command line matches the regular expression
/// `pattern` runs (`pgrep -f`): how a test checks nothing was left behind.
pub fn pgrep(pattern: &str) -> bool {
    Command::new("pgrep").args(["-f", pattern]).output().is_ok_and(|o| o.status.success())
}

/// A field of process `pid`'s `/proc/PID/status` in KiB (`VmRSS:`, `VmHWM:`).
pub fn status_kib(pid: u32, key: &str) -> Option<u64> {
    let status = std::fs::read_to_string(format!("/proc/{pid}/status")).ok()?;
    let line = status.lines().find(|l| l.starts_with(key))?;
    line.split_whitespace().nth(1)?.parse().ok()
}

/// A user token signed with the JWT key at `key` (`spur token user`), for
/// `name` at `level` (`None`, `Operator`, `Admin`).
pub fn mint_token(key: &Path, name: &str, level: &str) -> String {
    let out = Command::new(bin("spur"))
        .args(["token", "user", "--name", name, "--admin-level", level, "--key-file"])
        .arg(key)
        .output()
        .expect("run spur token");
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    String::from_utf8_lossy(&out.stdout).trim().to_string()
}

/// Polls `check` until it returns Some, failing the test at the deadline.
pub fn wait_for<T>(what: &str, check: impl FnMut() -> Option<T>) -> T {
    crate::wait::wait_until_blocking(what, check)
}

/// The daemons' log level: errors only, unless `SPUR_TEST_LOG` asks for more
/// (`SPUR_TEST_LOG=info cargo test ...` to see why a test failed).
fn log_level() -> String {
    std::env::var("SPUR_TEST_LOG").unwrap_or_else(|_| "error".into())
}
