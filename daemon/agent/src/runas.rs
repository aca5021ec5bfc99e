//! Running a job's program as its user: `spurd __exec`, the last process
//! between the (root) agent or supervisor and the job's program, as Slurm's
//! slurmstepd forks before it execs a task. Spawned with the job's
//! environment, a spec in `SPUR_EXEC_SPEC` and the program's command
//! line as its own arguments (`spurd __exec PROGRAM ARGS...`), it joins the job's cgroup
//! while it is still root, drops to the user (initgroups, setgid, setuid),
//! sets the soft limits `--propagate` sent (`rlimits`), and only then opens the job's `-i/-o/-e` files, changes to its working
//! directory and execs the program, so nothing of the user's is touched as
//! root. A failure before the exec is one line on its stderr (`spurd:
//! error: ...`) and exit 1; the supervisor reads it as the job's reason.

use serde::{Deserialize, Serialize};
use std::fs::File;
use std::os::unix::process::CommandExt;
use std::path::{Path, PathBuf};
use std::process::Command;

/// The first argument that makes spurd (or the demo console) this trampoline.
pub const EXEC_ARG: &str = "__exec";
/// The environment variable carrying the [`ExecSpec`]; removed before the exec.
pub const SPEC_ENV: &str = "SPUR_EXEC_SPEC";

/// Who a job runs as on this node, from the user database here.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct RunAs {
    pub uid: u32,
    pub gid: u32,
    pub name: String,
    pub home: String,
    pub shell: String,
}

impl RunAs {
    /// Who a job of `uid` (and `gid`, else the user's primary group) runs as
    /// here: None when that is this process's own user (no change), an error
    /// when it cannot run here (no such user on this node; an agent that is
    /// not root asked to run another user's job).
    pub fn resolve(
        uid: Option<u32>,
        gid: Option<u32>,
        user: &str,
        node: &str,
    ) -> Result<Option<RunAs>, String> {
        let me = nix::unistd::geteuid().as_raw();
        let Some(uid) = uid.filter(|u| *u != me) else { return Ok(None) };
        if me != 0 {
            return Err(format!(
                "spurd on {node} runs as uid {me}, not root, so it runs only jobs of uid {me}; \
                 this job is {user}'s (uid {uid})"
            ));
        }
        let pw = nix::unistd::User::from_uid(nix::unistd::Uid::from_raw(uid))
            .ok()
            .flatten()
            .ok_or_else(|| format!("user {user} (uid {uid}) does not exist on {node}"))?;
        Ok(Some(RunAs {
            uid,
            gid: gid.unwrap_or(pw.gid.as_raw()),
            name: pw.name,
            home: pw.dir.display().to_string(),
            shell: pw.shell.display().to_string(),
        }))
    }

    /// Drops this process to the user for good: supplementary groups, group, user.
    fn become_user(&self) -> Result<(), String> {
        use nix::unistd::{Gid, Uid, initgroups, setgid, setuid};
        let name =
            std::ffi::CString::new(self.name.as_str()).map_err(|_| "a user name with a NUL".to_string())?;
        let gid = Gid::from_raw(self.gid);
        initgroups(&name, gid).map_err(|e| format!("initgroups({}, {}): {e}", self.name, self.gid))?;
        setgid(gid).map_err(|e| format!("setgid({}): {e}", self.gid))?;
        setuid(Uid::from_raw(self.uid)).map_err(|e| format!("setuid({}): {e}", self.uid))?;
        if self.uid != 0 && setuid(Uid::from_raw(0)).is_ok() {
            return Err("root could be regained after dropping privileges".into());
        }
        Ok(())
    }
}

/// An output file as a run's trampoline opened it, before the run's program
/// started: which file (a path truncated in place keeps its inode), and
/// where the run's output in it begins (0, or the length it had, appended to).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct OpenedFile {
    pub path: String,
    pub dev: u64,
    pub ino: u64,
    pub start: u64,
}

impl OpenedFile {
    pub(crate) fn of(path: &str, f: &File) -> Result<OpenedFile, String> {
        use std::os::unix::fs::MetadataExt;
        let m = f.metadata().map_err(|e| format!("cannot stat {path}: {e}"))?;
        Ok(OpenedFile { path: path.to_string(), dev: m.dev(), ino: m.ino(), start: m.len() })
    }

    /// Whether `f` is this file (not one put at its path since).
    pub fn is(&self, f: &File) -> bool {
        use std::os::unix::fs::MetadataExt;
        f.metadata().is_ok_and(|m| m.dev() == self.dev && m.ino() == self.ino)
    }
}

/// The line that carries the [`OpenedFile`]s to the supervisor, on the trampoline's stderr.
pub const OPENED_LINE: &str = "spurd: opened ";

/// A job's output file: `path` empty is /dev/null.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct Output {
    pub path: String,
    /// Slurm's `--open-mode=append`; otherwise emptied first.
    pub append: bool,
}

/// What the trampoline does, in order.
#[derive(Debug, Clone, Default, Serialize, Deserialize)]
pub struct ExecSpec {
    /// None: stay the user this process is (no drop).
    pub user: Option<RunAs>,
    /// The job's `cgroup.procs`, joined before the drop.
    pub cgroup_procs: Option<PathBuf>,
    /// None keeps the descriptor the trampoline was given.
    pub stdin: Option<String>,
    /// srun --pty: the terminal (its stdin, stdout and stderr already) that
    /// becomes its session's controlling terminal.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub tty: Option<String>,
    pub stdout: Option<Output>,
    pub stderr: Option<Output>,
    pub workdir: String,
    /// Say the output files as opened ([`OPENED_LINE`]) before the exec: a
    /// batch job's supervisor records them for spur tail. Off for a step's
    /// tasks, whose stderr is theirs from the start.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub say_opened: bool,
    /// The program and its arguments: passed as the trampoline's own
    /// arguments after [`EXEC_ARG`], not in [`SPEC_ENV`], since Linux caps
    /// one environment string at 128 KiB and a batch script's arguments may
    /// take up to 1 MiB. Still read from a spec that has it: a supervisor
    /// started by the spurd before an upgrade spawns this binary so.
    #[serde(default, skip_serializing)]
    pub argv: Vec<String>,
}

impl ExecSpec {
    /// The command that runs this spec (`this-binary __exec`) with `env`:
    /// added to this process's own environment, or (`inherit` false) alone.
    pub fn command<K: AsRef<std::ffi::OsStr>, V: AsRef<std::ffi::OsStr>>(
        &self,
        env: impl IntoIterator<Item = (K, V)>,
        inherit: bool,
    ) -> Result<Command, String> {
        let me = std::env::current_exe().map_err(|e| format!("cannot find spurd's own binary: {e}"))?;
        let spec = serde_json::to_string(self).map_err(|e| e.to_string())?;
        let mut cmd = Command::new(me);
        cmd.arg(EXEC_ARG).args(&self.argv);
        if !inherit {
            cmd.env_clear();
        }
        cmd.envs(env).env(SPEC_ENV, spec);
        Ok(cmd)
    }
}

/// Runs the trampoline if `args` ask for it; returns its exit code when the exec failed.
pub fn dispatch(args: &[String]) -> Option<i32> {
    match args.split_first() {
        Some((first, argv)) if first == EXEC_ARG => Some(main(argv)),
        _ => None,
    }
}

/// The trampoline, running `argv` (the program first) as the spec says.
fn main(argv: &[String]) -> i32 {
    let fail = |msg: &str| {
        eprintln!("spurd: error: {msg}");
        1
    };
    let Some(text) = std::env::var_os(SPEC_ENV) else { return fail("no exec spec") };
    let spec = match serde_json::from_str::<ExecSpec>(&text.to_string_lossy()) {
        Ok(s) if s.argv.is_empty() => ExecSpec { argv: argv.to_vec(), ..s },
        Ok(s) => s,
        Err(e) => return fail(&format!("bad exec spec: {e}")),
    };
    let Some((program, args)) = spec.argv.split_first() else { return fail("nothing to run") };
    if let Some(t) = &spec.tty
        && let Err(e) = crate::pty::take(t)
    {
        return fail(&e);
    }
    if let Some(procs) = &spec.cgroup_procs {
        // Where the write fails the job runs without one, as where the host has none.
        let _ = std::fs::write(procs, "0");
    }
    if let Some(u) = &spec.user
        && let Err(e) = u.become_user()
    {
        return fail(&format!("cannot become {} (uid {}): {e}", u.name, u.uid));
    }
    // --propagate: as the user, so a soft limit never passes the hard one.
    // One that cannot be set leaves the node's: a line here would read as a failed start.
    let _ = crate::rlimits::apply(&crate::rlimits::asked(std::env::vars()));
    // srun's --cpu-bind=map_cpu:|mask_cpu: (a step's task); a binding that cannot be made fails the task.
    if let Err(e) = crate::cpubind::from_env() {
        return fail(&e);
    }
    let mut cmd = Command::new(program);
    cmd.args(args).env_remove(SPEC_ENV);
    if std::env::var(crate::userenv::ASK).as_deref() == Ok("1") {
        login_env(&spec, &mut cmd);
        // Once, for the batch script: its sruns' tasks do not load it again.
        cmd.env_remove(crate::userenv::ASK);
    }
    if let Some(u) = &spec.user {
        cmd.env("HOME", &u.home).env("USER", &u.name).env("LOGNAME", &u.name).env("SHELL", &u.shell);
    }
    let opened = match open_all(&spec, &mut cmd) {
        Ok(opened) => opened,
        Err(e) => return fail(&e),
    };
    if spec.say_opened {
        // Before the exec, so the run's identity is taken before it writes a byte.
        match serde_json::to_string(&opened) {
            Ok(line) => eprintln!("{OPENED_LINE}{line}"),
            Err(e) => return fail(&format!("cannot say the opened files: {e}")),
        }
    }
    let e = cmd.exec();
    // Its descriptors may be the job's files by now: this line is in its stderr.
    eprintln!("spurd: error: execve(): {program}: {e}");
    e.raw_os_error().unwrap_or(1)
}

/// `--get-user-env`: the login environment fills in what the job's lacks.
/// One that cannot be loaded leaves the job's as it is (a line here would
/// read as a failed start).
fn login_env(spec: &ExecSpec, cmd: &mut Command) {
    let own = || {
        let me = nix::unistd::User::from_uid(nix::unistd::getuid()).ok().flatten();
        me.map(|u| u.shell.display().to_string())
    };
    let shell = spec.user.as_ref().map(|u| u.shell.clone()).or_else(own).unwrap_or_else(|| "/bin/sh".into());
    let home = spec.user.as_ref().map(|u| u.home.as_str());
    if let Ok(vars) = crate::userenv::login_env(&shell, home, crate::userenv::TIMEOUT) {
        for (k, v) in vars.into_iter().filter(|(k, _)| std::env::var_os(k).is_none()) {
            cmd.env(k, v);
        }
    }
}

/// The job's files, opened as whoever this process is now; its working
/// directory checked. The output files as opened (those with a path).
fn open_all(spec: &ExecSpec, cmd: &mut Command) -> Result<Vec<OpenedFile>, String> {
    let mut opened = vec![];
    if let Some(p) = &spec.stdin {
        let f = File::open(p).map_err(|e| format!("cannot open {p} for input: {e}"))?;
        cmd.stdin(f);
    }
    if let Some(o) = &spec.stdout {
        let f = open_output(&o.path, o.append)?;
        if !o.path.is_empty() {
            opened.push(OpenedFile::of(&o.path, &f)?);
        }
        cmd.stdout(f);
    }
    if let Some(o) = &spec.stderr {
        // stdout and stderr in one file: the second open appends to the first.
        let same = spec.stdout.as_ref().is_some_and(|s| s.path == o.path);
        let f = open_output(&o.path, o.append || same)?;
        if !o.path.is_empty() && !same {
            opened.push(OpenedFile::of(&o.path, &f)?);
        }
        cmd.stderr(f);
    }
    if !spec.workdir.is_empty() {
        let wd = Path::new(&spec.workdir);
        nix::unistd::access(wd, nix::unistd::AccessFlags::X_OK)
            .map_err(|e| format!("couldn't chdir to '{}': {}", spec.workdir, e.desc()))?;
        cmd.current_dir(wd);
    }
    Ok(opened)
}

/// An output file (`/dev/null` for an empty path), its missing directories
/// made first rather than failing the job; emptied unless `append`, then
/// opened for appending, so stdout and stderr in one file never write over each other.
pub fn open_output(p: &str, append: bool) -> Result<File, String> {
    if p.is_empty() {
        return File::options().write(true).open("/dev/null").map_err(|e| format!("/dev/null: {e}"));
    }
    if let Some(dir) = Path::new(p).parent().filter(|d| !d.as_os_str().is_empty()) {
        std::fs::create_dir_all(dir)
            .map_err(|e| format!("cannot create the directory {} for {p}: {e}", dir.display()))?;
    }
    if !append {
        File::create(p).map_err(|e| format!("cannot open {p}: {e}"))?;
    }
    File::options().create(true).append(true).open(p).map_err(|e| format!("cannot open {p}: {e}"))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_own_user_is_no_change_and_a_missing_one_is_named() {
        let me = nix::unistd::geteuid().as_raw();
        assert_eq!(RunAs::resolve(Some(me), None, "me", "n1"), Ok(None));
        assert_eq!(RunAs::resolve(None, None, "me", "n1"), Ok(None));
        let e = RunAs::resolve(Some(4_000_000_000), None, "ghost", "n1").unwrap_err();
        if me == 0 {
            assert_eq!(e, "user ghost (uid 4000000000) does not exist on n1");
        } else {
            assert!(e.contains("not root, so it runs only jobs of uid"), "{e}");
        }
    }

    #[test]
    fn the_command_line_travels_as_arguments_not_in_the_spec() {
        let spec = ExecSpec { argv: vec!["/bin/echo".into(), "x".repeat(200_000)], ..Default::default() };
        let cmd = spec.command(Vec::<(String, String)>::new(), true).unwrap();
        let args: Vec<_> = cmd.get_args().map(|a| a.to_string_lossy().into_owned()).collect();
        assert_eq!(args, [EXEC_ARG, "/bin/echo", &"x".repeat(200_000)]);
        let (_, text) = cmd.get_envs().find(|(k, _)| *k == SPEC_ENV).unwrap();
        assert!(text.unwrap().len() < 1000, "the spec stays small, whatever the arguments");
        // A spec written by an older spurd still carries its command line.
        let old: ExecSpec = serde_json::from_str(
            r#"{"user":null,"cgroup_procs":null,"stdin":null,
            "stdout":null,"stderr":null,"workdir":"","argv":["/bin/true"]}"#,
        )
        .unwrap();
        assert_eq!(old.argv, ["/bin/true"]);
    }

    #[test]
    fn an_output_file_s_missing_directories_are_made() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("a/b/out.txt");
        let p = path.display().to_string();
        open_output(&p, true).unwrap();
        assert!(path.exists());
        open_output("", false).unwrap();
        std::fs::write(dir.path().join("file"), "").unwrap();
        let blocked = dir.path().join("file/sub/out.txt").display().to_string();
        let e = open_output(&blocked, true).unwrap_err();
        assert!(e.starts_with("cannot create the directory ") && e.contains(&blocked), "{e}");
    }
}
