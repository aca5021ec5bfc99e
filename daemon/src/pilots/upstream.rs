//! The upstream's commands (`sbatch`, `squeue`, `scancel` in `bin_dir`,
//! behind `command_prefix`, with `env`), each killed after
//! `call_timeout_secs`. The upstream is reached only through them, never
//! through its files or database, so a Slurm and a Spur serve alike.

use crate::config::upstream::SlurmUpstream;
use std::time::Duration;

/// One upstream command's failure, naming the command.
#[derive(Debug, Clone, PartialEq)]
pub struct CallError(pub String);

impl std::fmt::Display for CallError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.0)
    }
}

/// `s` quoted for `/bin/sh`, as `--wrap` runs it.
pub fn sh_quote(s: &str) -> String {
    if !s.is_empty() && s.chars().all(|c| c.is_ascii_alphanumeric() || "-_./:=,@+".contains(c)) {
        return s.to_string();
    }
    format!("'{}'", s.replace('\'', "'\\''"))
}

/// What one pilot asks of the upstream.
#[derive(Debug, Clone, PartialEq)]
pub struct PilotJob {
    /// The node it hosts here, `<definition>-<n>`.
    pub node: String,
    pub partition: String,
    pub cpus: u32,
    pub memory_mb: u64,
    /// Its time limit upstream, in seconds (ttl plus ttlBuffer).
    pub time_secs: u32,
    /// A single-use admission token bound to `node`; None when admission is open.
    pub token: Option<String>,
}

/// The upstream job name of `node`'s pilot: what `squeue --name` finds it by
/// after a restart, so it is spelt here alone.
pub fn job_name(node: &str) -> String {
    format!("spur-{node}")
}

impl PilotJob {
    /// The pilot's job name upstream: `squeue --name` finds it by this.
    pub fn job_name(&self) -> String {
        job_name(&self.node)
    }

    /// sbatch's arguments: the agent for one dynamic node of this shape.
    pub fn sbatch_args(&self, u: &SlurmUpstream) -> Vec<String> {
        let mut agent = vec![
            u.spurd_path.display().to_string(),
            "--dynamic".into(),
            "--controller".into(),
            u.controller_url.clone(),
            "--nodes".into(),
            self.node.clone(),
            "--cpus".into(),
            self.cpus.to_string(),
            "--memory-mb".into(),
            self.memory_mb.to_string(),
        ];
        if let Some(t) = &self.token {
            agent.extend(["--token".into(), t.clone()]);
        }
        let wrap: Vec<String> = agent.iter().map(|a| sh_quote(a)).collect();
        vec![
            "--parsable".into(),
            format!("--job-name={}", self.job_name()),
            "-p".into(),
            self.partition.clone(),
            format!("--cpus-per-task={}", self.cpus),
            format!("--mem={}", self.memory_mb),
            // Not the controller's directory, which the upstream's nodes may not have;
            // the agent logs nowhere upstream (its node's state is read here).
            "--chdir=/tmp".into(),
            "--output=/dev/null".into(),
            "-t".into(),
            // Whole minutes, rounded up: Slurm's -t takes minutes.
            self.time_secs.div_ceil(60).max(1).to_string(),
            "--wrap".into(),
            format!("exec {}", wrap.join(" ")),
        ]
    }
}

/// The upstream, as `[upstream.slurm]` reaches it.
#[derive(Debug, Clone)]
pub struct Upstream {
    pub cfg: SlurmUpstream,
}

impl Upstream {
    /// Runs `bin_dir/<name> args` behind the prefix; its stdout, or an error
    /// naming the command and the key to look at.
    pub async fn call(&self, name: &str, args: &[String]) -> Result<String, CallError> {
        let program = self.cfg.bin_dir.join(name);
        let mut words: Vec<String> = self.cfg.command_prefix.clone();
        let command = std::iter::once(program.display().to_string()).chain(args.iter().cloned());
        match words.is_empty() {
            true => words.extend(command),
            // A prefix is a remote shell (ssh joins its words into one command
            // line there), so each word is quoted: --wrap's stays one word.
            false => words.extend(command.map(|w| sh_quote(&w))),
        }
        let mut cmd = tokio::process::Command::new(&words[0]);
        cmd.args(&words[1..]).envs(&self.cfg.env).stdin(std::process::Stdio::null()).kill_on_drop(true);
        let secs = self.cfg.call_timeout_secs;
        let shown = format!("{} (upstream.slurm.bin_dir)", program.display());
        let out = match tokio::time::timeout(Duration::from_secs(secs), cmd.output()).await {
            Err(_) => {
                return Err(CallError(format!(
                    "{shown}: no answer in {secs}s (upstream.slurm.call_timeout_secs)"
                )));
            }
            Ok(Err(e)) => return Err(CallError(format!("{shown}: could not run: {e}"))),
            Ok(Ok(o)) => o,
        };
        if !out.status.success() {
            let err = String::from_utf8_lossy(&out.stderr);
            let err = err.split_whitespace().collect::<Vec<_>>().join(" ");
            return Err(CallError(format!("{shown}: {}: {err}", out.status)));
        }
        Ok(String::from_utf8_lossy(&out.stdout).into_owned())
    }

    /// Submits a pilot; its upstream job id.
    pub async fn sbatch(&self, job: &PilotJob) -> Result<String, CallError> {
        let out = self.call("sbatch", &job.sbatch_args(&self.cfg)).await?;
        // --parsable: `ID` or `ID;CLUSTER`.
        let id = out.trim().split(';').next().unwrap_or("").trim().to_string();
        if id.is_empty() || !id.chars().all(|c| c.is_ascii_alphanumeric() || c == '_') {
            return Err(CallError(format!(
                "sbatch (upstream.slurm.bin_dir): '{}' is not a job id",
                out.trim()
            )));
        }
        Ok(id)
    }

    /// The upstream job ids of the jobs named `name` still in its queue.
    pub async fn squeue_ids(&self, name: &str) -> Result<Vec<String>, CallError> {
        let args = ["-h", "--name", name, "-o", "%i"].map(String::from);
        let out = self.call("squeue", &args).await?;
        Ok(out.lines().map(str::trim).filter(|l| !l.is_empty()).map(str::to_string).collect())
    }

    /// Ends a pilot upstream.
    pub async fn scancel(&self, job: &str) -> Result<(), CallError> {
        self.call("scancel", &[job.to_string()]).await.map(|_| ())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn upstream(bin: &str, timeout: u64) -> Upstream {
        let text = format!(
            "[upstream.slurm]\nbin_dir = \"{bin}\"\ncontroller_url = \"http://ctl:6817\"\n\
             spurd_path = \"/opt/spur/spurd\"\ncall_timeout_secs = {timeout}\nboot_timeout_secs = 300\n"
        );
        let c = crate::config::Config::parse(&text, "spur.conf", "/etc/spur".into()).unwrap();
        Upstream { cfg: c.upstream.slurm.unwrap() }
    }

    fn pilot() -> PilotJob {
        PilotJob {
            node: "burst-1".into(),
            partition: "compute".into(),
            cpus: 16,
            memory_mb: 65536,
            time_secs: 3601,
            token: Some("ab.cd'e".into()),
        }
    }

    #[test]
    fn the_pilot_asks_for_its_shape_and_runs_one_dynamic_agent() {
        let a = pilot().sbatch_args(&upstream("/usr/bin", 5).cfg);
        let want = ["--parsable", "--job-name=spur-burst-1", "-p", "compute", "--cpus-per-task=16"];
        assert_eq!(&a[..5], want);
        assert_eq!(&a[5..10], ["--mem=65536", "--chdir=/tmp", "--output=/dev/null", "-t", "61"]);
        assert_eq!(
            a[11],
            "exec /opt/spur/spurd --dynamic --controller http://ctl:6817 --nodes burst-1 \
             --cpus 16 --memory-mb 65536 --token 'ab.cd'\\''e'"
        );
    }

    /// A fake sbatch answers `--parsable`'s `ID;CLUSTER`; one that hangs is
    /// killed after call_timeout_secs; one that fails is named with its stderr.
    #[tokio::test]
    async fn commands_answer_hang_and_fail_with_the_command_named() {
        let dir = tempfile::tempdir().unwrap();
        let write = |name: &str, body: &str| {
            use std::os::unix::fs::PermissionsExt;
            let p = dir.path().join(name);
            std::fs::write(&p, format!("#!/bin/sh\n{body}\n")).unwrap();
            std::fs::set_permissions(&p, std::fs::Permissions::from_mode(0o755)).unwrap();
        };
        write("sbatch", "echo '4242;upstream'");
        write("scancel", "echo 'scancel: error: Invalid job id' >&2; exit 1");
        write("squeue", "exec sleep 30");
        let mut u = upstream(dir.path().to_str().unwrap(), 1);
        assert_eq!(u.sbatch(&pilot()).await.unwrap(), "4242");
        // Behind an ssh-like prefix (it drops the host and runs the joined words in a shell),
        // the --wrap command arrives as one word.
        write("ssh", "shift; exec sh -c \"$*\"");
        write("args", "printf '%s|' \"$#\" \"$2\"");
        u.cfg.command_prefix = vec![dir.path().join("ssh").display().to_string(), "login01".into()];
        let said = u.call("args", &["--wrap".into(), "exec spurd --nodes 'a b'".into()]).await.unwrap();
        assert_eq!(said, "2|exec spurd --nodes 'a b'|");
        u.cfg.command_prefix.clear();
        let e = u.scancel("7").await.unwrap_err().0;
        assert!(e.contains("scancel") && e.contains("Invalid job id"), "{e}");
        let e = u.call("squeue", &[]).await.unwrap_err().0;
        assert!(e.contains("squeue") && e.contains("call_timeout_secs"), "{e}");
        let e = u.call("missing", &[]).await.unwrap_err().0;
        assert!(e.contains("missing") && e.contains("could not run"), "{e}");
    }
}
