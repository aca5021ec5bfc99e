//! A cgroup v2 per job, where the host offers a writable one: the job's
//! processes stay in it whatever they do to their process group (`setsid`,
//! `setpgid`), so ending the job reaches all of them (`cgroup.kill`). Where
//! there is none (cgroup v1 only, or not writable), the job's process group
//! is the unit, and a process that leaves it escapes the kill.

use std::path::{Path, PathBuf};
use std::time::Duration;

#[derive(Debug, Clone)]
pub struct JobCgroup(pub PathBuf);

/// The cgroup v2 this process is in, as a directory, if the host mounts one.
fn own_v2_dir() -> Option<PathBuf> {
    let mounts = std::fs::read_to_string("/proc/self/mountinfo").ok()?;
    // Fields: id parent major:minor root mount-point options ... - fstype source options
    let mount = mounts.lines().find_map(|l| {
        let (pre, post) = l.split_once(" - ")?;
        (post.split_whitespace().next()? == "cgroup2")
            .then(|| pre.split_whitespace().nth(4).map(PathBuf::from))?
    })?;
    let own = std::fs::read_to_string("/proc/self/cgroup").ok()?;
    let path = own.lines().find_map(|l| l.strip_prefix("0::"))?;
    Some(mount.join(path.trim_start_matches('/')))
}

impl JobCgroup {
    /// A new cgroup `name` under the one this process is in; None where
    /// cgroup v2 is not mounted or not writable here.
    pub fn create(name: &str) -> Option<JobCgroup> {
        let dir = own_v2_dir()?.join(name);
        std::fs::create_dir(&dir).ok()?;
        let cg = JobCgroup(dir);
        cg.procs_file().exists().then_some(cg)
    }

    /// Writing `0` here moves the writer into the cgroup.
    pub fn procs_file(&self) -> PathBuf {
        self.0.join("cgroup.procs")
    }

    /// Every process in it now.
    pub fn pids(&self) -> Vec<i32> {
        let text = std::fs::read_to_string(self.procs_file()).unwrap_or_default();
        text.lines().filter_map(|l| l.trim().parse().ok()).collect()
    }

    /// SIGKILLs everything in it (the kernel's `cgroup.kill`, 5.14 and later;
    /// each pid otherwise).
    pub fn kill(&self) {
        if std::fs::write(self.0.join("cgroup.kill"), "1").is_err() {
            self.signal(nix::sys::signal::Signal::SIGKILL);
        }
    }

    pub fn signal(&self, sig: nix::sys::signal::Signal) {
        for pid in self.pids() {
            let _ = nix::sys::signal::kill(nix::unistd::Pid::from_raw(pid), sig);
        }
    }

    /// Kills what is left and removes the cgroup once it is empty (a short
    /// wait: killed processes leave it as the kernel reaps them).
    pub fn remove(&self) {
        self.kill();
        for _ in 0..100 {
            if std::fs::remove_dir(&self.0).is_ok() || !self.0.exists() {
                return;
            }
            std::thread::sleep(Duration::from_millis(10));
        }
    }

    pub fn at(path: &Path) -> JobCgroup {
        JobCgroup(path.to_path_buf())
    }
}
