//! A one-node Slurm of Debian's packages (`slurmctld`, `slurmd`) on
//! loopback in a temp dir of its own: the real upstream of the `slurm`
//! provisioner's tests. Both daemons run as root in the foreground, as this
//! process's children, under the host's munged (Slurm has no private-socket
//! option as our tests' munged does); their ports are free ones, their state
//! and spool in the temp dir, and nothing needs cgroups, accounting or a
//! systemd (`proctrack/linuxproc`, `task/none`, `accounting_storage/none`),
//! so it runs in a container. Clients reach it through `SLURM_CONF`.
//!
//! Tests check [`available`] first: without root, Slurm's daemons or a
//! munged that answers they are skipped with a note, unless
//! `SPUR_TEST_SLURM=1` (`.ci/run` sets it after installing Slurm), where a
//! missing piece fails them.

use crate::wait::wait_until_blocking;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Output, Stdio};
use std::time::{Duration, Instant};

/// Where Debian puts Slurm's client commands: `[upstream.slurm] bin_dir`.
pub const BIN_DIR: &str = "/usr/bin";

/// Slurm's daemons and the clients the tests use.
const NEEDED: [&str; 6] = [
    "/usr/sbin/slurmctld",
    "/usr/sbin/slurmd",
    "/usr/bin/sbatch",
    "/usr/bin/squeue",
    "/usr/bin/scancel",
    "/usr/bin/sinfo",
];

/// Why a real Slurm cannot run here, or None when it can.
fn missing() -> Option<String> {
    let root = std::fs::metadata("/proc/self").is_ok_and(|m| std::os::unix::fs::MetadataExt::uid(&m) == 0);
    if !root {
        return Some("a real Slurm runs its daemons as root, and this is not root".into());
    }
    if let Some(p) = NEEDED.iter().find(|p| !Path::new(p).exists()) {
        return Some(format!("{p} is not installed (apt-get install slurmctld slurmd slurm-client)"));
    }
    let munge = Command::new("munge").arg("-n").stdout(Stdio::null()).stderr(Stdio::null()).status();
    if !munge.is_ok_and(|s| s.success()) {
        return Some("the host's munged does not answer (`munge -n` fails); Slurm's daemons need it".into());
    }
    None
}

/// Whether `test` can run against a real Slurm. Skipped (with a note saying
/// why) where it cannot, unless `SPUR_TEST_SLURM=1`, which fails it instead.
pub fn available(test: &str) -> bool {
    let Some(why) = missing() else { return true };
    assert!(std::env::var("SPUR_TEST_SLURM").as_deref() != Ok("1"), "SPUR_TEST_SLURM=1, but {why}");
    eprintln!("note: {why}; skipping {test}");
    false
}

/// Two ports nobody listens on now, for slurmctld and slurmd (they bind them a
/// moment later).
fn free_ports() -> (u16, u16) {
    let a = std::net::TcpListener::bind("127.0.0.1:0").expect("bind a free port");
    let b = std::net::TcpListener::bind("127.0.0.1:0").expect("bind a free port");
    let port = |l: &std::net::TcpListener| l.local_addr().expect("local_addr").port();
    (port(&a), port(&b))
}

/// A running one-node Slurm; both daemons are killed on drop.
pub struct Slurm {
    dir: tempfile::TempDir,
    /// Its slurm.conf: `SLURM_CONF` for every client.
    pub conf: PathBuf,
    daemons: Vec<Child>,
}

/// Its one node and partition (the default one).
pub const NODE: &str = "up01";
pub const PARTITION: &str = "compute";

impl Slurm {
    /// Starts slurmctld and slurmd for node [`NODE`] of `cpus` CPUs and
    /// `memory_mb` MB in partition [`PARTITION`], and waits until `sinfo`
    /// shows the node idle. The node's size is the configured one, not the
    /// host's (`SlurmdParameters=config_overrides`), so a test asks the same
    /// of any machine.
    pub fn start(cpus: u32, memory_mb: u64) -> Slurm {
        let dir = tempfile::tempdir().expect("tempdir");
        let d = dir.path();
        for sub in ["state", "spool"] {
            std::fs::create_dir(d.join(sub)).expect("mkdir");
        }
        let (ctld_port, slurmd_port) = free_ports();
        let p = |name: &str| d.join(name).display().to_string();
        let text = format!(
            "ClusterName=spurup\nSlurmctldHost=localhost\nSlurmctldPort={ctld_port}\nSlurmdPort={slurmd_port}\n\
             SlurmUser=root\nSlurmdUser=root\nAuthType=auth/munge\nCredType=cred/munge\n\
             StateSaveLocation={}\nSlurmdSpoolDir={}\nSlurmctldPidFile={}\nSlurmdPidFile={}\n\
             SlurmctldLogFile={}\nSlurmdLogFile={}\nSlurmctldDebug=info\nSlurmdDebug=info\n\
             ProctrackType=proctrack/linuxproc\nTaskPlugin=task/none\nJobAcctGatherType=jobacct_gather/none\n\
             AccountingStorageType=accounting_storage/none\nJobCompType=jobcomp/none\n\
             SelectType=select/cons_tres\nSelectTypeParameters=CR_Core_Memory\nMpiDefault=none\n\
             SlurmdParameters=config_overrides\nReturnToService=2\nMailProg=/bin/true\nKillWait=5\n\
             NodeName={NODE} NodeAddr=127.0.0.1 CPUs={cpus} RealMemory={memory_mb} State=UNKNOWN\n\
             PartitionName={PARTITION} Nodes={NODE} Default=YES MaxTime=INFINITE State=UP\n",
            p("state"),
            p("spool"),
            p("slurmctld.pid"),
            p("slurmd.pid"),
            p("slurmctld.log"),
            p("slurmd.log"),
        );
        let conf = d.join("slurm.conf");
        std::fs::write(&conf, text).expect("write slurm.conf");
        let spawn = |program: &str, args: &[&str]| {
            Command::new(program)
                .args(args)
                .arg("-f")
                .arg(&conf)
                .stdin(Stdio::null())
                .stdout(Stdio::null())
                .stderr(Stdio::null())
                .spawn()
                .unwrap_or_else(|e| panic!("spawn {program}: {e}"))
        };
        // Each daemon logs to its file in the temp dir, read back on a failure.
        let daemons =
            vec![spawn("/usr/sbin/slurmctld", &["-D", "-i"]), spawn("/usr/sbin/slurmd", &["-D", "-N", NODE])];
        let s = Slurm { dir, conf, daemons };
        wait_until_blocking("the Slurm node idle in sinfo", || {
            let out = s.run("sinfo", &["-h", "-o", "%t"]);
            let state = String::from_utf8_lossy(&out.stdout).trim().to_string();
            match state == "idle" {
                true => Ok(()),
                false => Err(format!(
                    "sinfo says {state:?} {}\n{}",
                    String::from_utf8_lossy(&out.stderr),
                    s.logs()
                )),
            }
        });
        s
    }

    /// `SLURM_CONF`, for `[upstream.slurm] env` and every client.
    pub fn env(&self) -> (&'static str, String) {
        ("SLURM_CONF", self.conf.display().to_string())
    }

    /// Runs Slurm's client `name` (`squeue`, ...) against this cluster.
    pub fn run(&self, name: &str, args: &[&str]) -> Output {
        Command::new(Path::new(BIN_DIR).join(name))
            .args(args)
            .env("SLURM_CONF", &self.conf)
            .stdin(Stdio::null())
            .output()
            .unwrap_or_else(|e| panic!("run {name}: {e}"))
    }

    /// [`Slurm::run`] that must succeed; its stdout.
    pub fn ok(&self, name: &str, args: &[&str]) -> String {
        let out = self.run(name, args);
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert!(out.status.success(), "{name} {args:?}: {}: {stderr}\n{}", out.status, self.logs());
        String::from_utf8_lossy(&out.stdout).into_owned()
    }

    /// The names of the jobs in its queue.
    pub fn queue_names(&self) -> Vec<String> {
        self.ok("squeue", &["-h", "-o", "%j"]).lines().map(str::to_string).collect()
    }

    /// The last lines of both daemons' logs, for a failure's message.
    pub fn logs(&self) -> String {
        let tail = |name: &str| {
            let text = std::fs::read_to_string(self.dir.path().join(name)).unwrap_or_default();
            let lines: Vec<&str> = text.lines().collect();
            format!("== {name}\n{}", lines[lines.len().saturating_sub(20)..].join("\n"))
        };
        format!("{}\n{}", tail("slurmctld.log"), tail("slurmd.log"))
    }
}

impl Drop for Slurm {
    /// Cancels what is left in its queue (a pilot's agent would outlive
    /// slurmd, under its slurmstepd), waits a little for it to end, then
    /// kills the daemons.
    fn drop(&mut self) {
        let ctld_alive = self.daemons.first_mut().is_some_and(|c| matches!(c.try_wait(), Ok(None)));
        if ctld_alive {
            let _ = self.run("scancel", &["--user=root"]);
            let until = Instant::now() + Duration::from_secs(10);
            while Instant::now() < until
                && self.run("squeue", &["-h", "-o", "%i"]).stdout.iter().any(|b| *b != b'\n')
            {
                std::thread::sleep(Duration::from_millis(100));
            }
        }
        for c in &mut self.daemons {
            let _ = c.kill();
            let _ = c.wait();
        }
    }
}
