//! A batch script as its supervisor runs it: a file in the state directory,
//! executed itself, so the kernel runs the interpreter its `#!` line names
//! (`#!/bin/bash`, `#!/usr/bin/env python3`), as Slurm does. The interpreter
//! is checked before the job starts: a shell's `exec` of a file whose
//! interpreter is missing ends in an anonymous exit 127, and the kernel's
//! ENOENT names the script, not what is missing.

use std::ffi::OsString;
use std::io::Write;
use std::os::unix::fs::{OpenOptionsExt, PermissionsExt};
use std::path::{Path, PathBuf};

/// The interpreter a `#!` line names, read as the kernel reads it: after
/// `#!` and any blanks, up to the next blank or the line's end (a `\r` is
/// part of the name). None for a script without a `#!` line.
pub fn interpreter(script: &str) -> Option<&str> {
    let line = script.strip_prefix("#!")?.split('\n').next().unwrap_or("");
    Some(line.split([' ', '\t']).find(|w| !w.is_empty()).unwrap_or(""))
}

/// Whether the script can start, as far as its `#!` line goes; the error
/// names the interpreter. A relative interpreter is found from `workdir`,
/// where the kernel will look for it.
pub fn check(script: &str, workdir: &Path) -> Result<(), String> {
    let Some(interp) = interpreter(script) else { return Ok(()) };
    if interp.is_empty() {
        return Err("the script's #! line names no interpreter".into());
    }
    if let Some(bare) = interp.strip_suffix('\r') {
        return Err(format!(
            "the script's #! line ends in a carriage return (DOS line ends), so its interpreter \
             would be '{bare}\\r'; convert the script with dos2unix"
        ));
    }
    match std::fs::metadata(workdir.join(interp)) {
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => {
            Err(format!("the script's interpreter {interp} does not exist"))
        }
        Err(e) => Err(format!("the script's interpreter {interp} cannot be read: {e}")),
        Ok(m) if !m.is_file() || m.permissions().mode() & 0o111 == 0 => {
            Err(format!("the script's interpreter {interp} is not an executable file"))
        }
        Ok(_) => Ok(()),
    }
}

/// One run's script file; removed when dropped, that is when the run is over
/// (the interpreter reads it by name, so it must outlive the job's start).
/// The next run of the job starts only once this run's supervisor has gone,
/// so a removal never takes a later run's file.
#[derive(Debug)]
pub struct ScriptFile {
    path: PathBuf,
    /// The command line that runs it.
    pub argv: Vec<OsString>,
}

impl ScriptFile {
    /// Writes `text` to `path`, mode 0700, owned by whoever runs the
    /// supervisor, or by `owner` (uid, gid): the user the job runs as.
    pub fn write(path: &Path, text: &str, owner: Option<(u32, u32)>) -> std::io::Result<ScriptFile> {
        // Created afresh, so the mode is ours whatever a stale file had.
        match std::fs::remove_file(path) {
            Err(e) if e.kind() != std::io::ErrorKind::NotFound => return Err(e),
            _ => {}
        }
        // Absolute: the job starts in its own working directory.
        let path = std::path::absolute(path)?;
        let file = ScriptFile { argv: argv(&path, text), path };
        let mut f = std::fs::OpenOptions::new().write(true).create_new(true).mode(0o700).open(&file.path)?;
        // The umask may have taken the owner's execute bit.
        f.set_permissions(std::fs::Permissions::from_mode(0o700))?;
        if let Some((uid, gid)) = owner {
            use nix::unistd::{Gid, Uid, fchown};
            fchown(&f, Some(Uid::from_raw(uid)), Some(Gid::from_raw(gid))).map_err(std::io::Error::from)?;
        }
        f.write_all(text.as_bytes())?;
        // Closed before anything is executed: an executable open for writing is ETXTBSY.
        drop(f);
        Ok(file)
    }

    pub fn path(&self) -> &Path {
        &self.path
    }
}

impl Drop for ScriptFile {
    fn drop(&mut self) {
        let _ = std::fs::remove_file(&self.path);
    }
}

/// The file itself when it has a `#!` line; else `/bin/sh FILE`, what
/// execvp does with a file the kernel cannot execute (sbatch refuses such
/// scripts, but a job submitted through the API may still have one).
fn argv(path: &Path, text: &str) -> Vec<OsString> {
    let file = path.as_os_str().to_os_string();
    if interpreter(text).is_some() { vec![file] } else { vec!["/bin/sh".into(), file] }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_interpreter_is_read_as_the_kernel_reads_it() {
        assert_eq!(interpreter("#!/bin/bash\necho"), Some("/bin/bash"));
        assert_eq!(interpreter("#! /usr/bin/env python3\nprint(1)"), Some("/usr/bin/env"));
        assert_eq!(interpreter("#!\t/bin/sh -e\n"), Some("/bin/sh"));
        assert_eq!(interpreter("#!/bin/sh\r\n"), Some("/bin/sh\r"));
        assert_eq!(interpreter("#!"), Some(""));
        assert_eq!(interpreter("echo hi\n"), None);
        assert_eq!(interpreter(" #!/bin/sh\n"), None, "the kernel wants #! as the first two bytes");
    }

    #[test]
    fn a_missing_or_unusable_interpreter_is_named() {
        let dir = tempfile::tempdir().unwrap();
        let d = dir.path();
        assert_eq!(check("#!/bin/sh\ntrue\n", d), Ok(()));
        assert_eq!(check("no line\n", d), Ok(()));
        let e = check("#!/nonexistent/interp -x\n", d).unwrap_err();
        assert_eq!(e, "the script's interpreter /nonexistent/interp does not exist");
        std::fs::write(d.join("plain"), "").unwrap();
        let e = check("#!plain\n", d).unwrap_err();
        assert!(e.contains("plain is not an executable file"), "{e}");
        assert!(check("#!/tmp\n", d).unwrap_err().contains("/tmp is not an executable file"));
        assert!(check("#!/bin/sh\r\ntrue\r\n", d).unwrap_err().contains("dos2unix"));
        assert!(check("#!\n", d).unwrap_err().contains("names no interpreter"));
    }

    #[test]
    fn the_file_is_executable_by_its_owner_alone_and_goes_when_dropped() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("job-3.script");
        std::fs::write(&path, "stale").unwrap();
        let f = ScriptFile::write(&path, "#!/bin/sh\nexit 0\n", None).unwrap();
        assert!(f.path().is_absolute());
        assert_eq!(f.argv, [f.path().as_os_str()]);
        let m = std::fs::metadata(&path).unwrap();
        assert_eq!(m.permissions().mode() & 0o777, 0o700);
        assert_eq!(std::fs::read_to_string(&path).unwrap(), "#!/bin/sh\nexit 0\n");
        drop(f);
        assert!(!path.exists());
        let f = ScriptFile::write(&path, "exit 0\n", None).unwrap();
        assert_eq!(f.argv, [OsString::from("/bin/sh"), f.path().as_os_str().to_os_string()]);
    }
}
