//! `sbatch --get-user-env`: the job's user's login environment, loaded on
//! the node as Slurm loads it (`su - USER -c env`, here the user's login
//! shell run as the user by the `__exec` trampoline, after the drop). The
//! variables sbatch sent take precedence: the login's fill in only what the
//! job's environment lacks, as the man page says.

use std::io::Read;
use std::process::{Command, Stdio};
use std::time::Duration;

/// What sbatch sets in the job's environment to ask for it (Slurm's name).
pub const ASK: &str = "SLURM_GET_USER_ENV";
/// Slurm's default time for the login shell to answer.
pub const TIMEOUT: Duration = Duration::from_secs(8);

/// The variables `shell -l -c 'env -0'` prints; an error names why none came.
pub fn login_env(
    shell: &str,
    home: Option<&str>,
    timeout: Duration,
) -> Result<Vec<(String, String)>, String> {
    let mut cmd = Command::new(shell);
    cmd.args(["-l", "-c", "env -0"]).stdin(Stdio::null()).stdout(Stdio::piped()).stderr(Stdio::null());
    if let Some(h) = home {
        cmd.env("HOME", h);
    }
    let mut child = cmd.spawn().map_err(|e| format!("cannot run the login shell {shell}: {e}"))?;
    let mut out = child.stdout.take().ok_or("the login shell has no output")?;
    let (tx, rx) = std::sync::mpsc::channel();
    std::thread::spawn(move || {
        let mut buf = vec![];
        let _ = tx.send(out.read_to_end(&mut buf).map(|_| buf));
    });
    let got = rx.recv_timeout(timeout);
    let _ = child.kill();
    let _ = child.wait();
    let bytes = match got {
        Ok(Ok(b)) => b,
        Ok(Err(e)) => return Err(format!("cannot read the login shell's environment: {e}")),
        Err(_) => return Err(format!("the login shell {shell} did not answer within {timeout:?}")),
    };
    Ok(parse(&String::from_utf8_lossy(&bytes)))
}

/// `env -0`'s output: `NAME=value` items NUL apart.
pub fn parse(text: &str) -> Vec<(String, String)> {
    text.split('\0')
        .filter_map(|item| item.split_once('='))
        .filter(|(k, _)| !k.is_empty() && !k.contains(char::is_whitespace))
        .map(|(k, v)| (k.to_string(), v.to_string()))
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_login_shell_s_profile_is_read_and_its_variables_parsed() {
        let home = tempfile::tempdir().unwrap();
        std::fs::write(home.path().join(".profile"), "export FROM_LOGIN='a b'\n").unwrap();
        let home = home.path().display().to_string();
        let vars = login_env("/bin/sh", Some(&home), TIMEOUT).unwrap();
        assert!(vars.contains(&("FROM_LOGIN".into(), "a b".into())), "{vars:?}");
        assert_eq!(parse("A=1\0B=x=y\0junk\0"), [("A".into(), "1".into()), ("B".into(), "x=y".into())]);
        let e = login_env("/nonexistent/shell", None, TIMEOUT).unwrap_err();
        assert!(e.starts_with("cannot run the login shell /nonexistent/shell"), "{e}");
    }
}
