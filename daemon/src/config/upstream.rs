//! `[upstream.slurm]`: how the controller reaches an existing Slurm (or
//! Spur) cluster whose nodes `slurm` provisioner definitions borrow. Parsed
//! and checked at load, each error naming its key; used by the driver in
//! `crate::pilots`.

use serde::Deserialize;
use std::collections::BTreeMap;
use std::path::PathBuf;

/// `[upstream]`: one table per kind of upstream cluster.
#[derive(Debug, Clone, Default, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct UpstreamConfig {
    #[serde(default)]
    pub slurm: Option<SlurmUpstream>,
}

/// `[upstream.slurm]`. The upstream is reached only through its commands
/// (`sbatch`, `squeue`, `scancel` in `bin_dir`), run behind `command_prefix`.
#[derive(Debug, Clone, PartialEq, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct SlurmUpstream {
    /// Where the upstream's sbatch, squeue and scancel are.
    #[serde(default = "default_bin_dir")]
    pub bin_dir: PathBuf,
    /// Run before every command, e.g. `["ssh", "login01"]`; empty runs them here.
    #[serde(default)]
    pub command_prefix: Vec<String>,
    /// The commands' environment on top of the controller's, e.g. `SLURM_CONF`.
    #[serde(default)]
    pub env: BTreeMap<String, String>,
    /// The agent as the upstream's nodes see it.
    #[serde(default = "default_spurd")]
    pub spurd_path: PathBuf,
    /// How a pilot's agent reaches this controller.
    pub controller_url: String,
    #[serde(default = "default_call_timeout")]
    pub call_timeout_secs: u64,
    #[serde(default = "default_boot_timeout")]
    pub boot_timeout_secs: u64,
    #[serde(default = "default_idle_timeout")]
    pub idle_timeout_secs: u64,
}

fn default_bin_dir() -> PathBuf {
    "/usr/bin".into()
}
fn default_spurd() -> PathBuf {
    "/usr/sbin/spurd".into()
}
fn default_call_timeout() -> u64 {
    30
}
fn default_boot_timeout() -> u64 {
    300
}
fn default_idle_timeout() -> u64 {
    300
}

/// The most any of the timeouts may be: a day.
const MAX_SECS: u64 = 86_400;

impl UpstreamConfig {
    /// Checks every key; the error names it (`key 'upstream.slurm.bin_dir': ...`).
    pub fn validate(&self) -> Result<(), String> {
        let Some(s) = &self.slurm else { return Ok(()) };
        let key = |k: &str, msg: String| format!("key 'upstream.slurm.{k}': {msg}");
        for (k, p) in [("bin_dir", &s.bin_dir), ("spurd_path", &s.spurd_path)] {
            if !p.is_absolute() {
                return Err(key(k, format!("'{}' is not an absolute path", p.display())));
            }
            if p.as_os_str().as_encoded_bytes().contains(&0) {
                return Err(key(k, "has a NUL byte".into()));
            }
        }
        if let Some((i, _)) =
            s.command_prefix.iter().enumerate().find(|(_, w)| w.is_empty() || w.contains('\0'))
        {
            return Err(key(&format!("command_prefix[{i}]"), "empty, or has a NUL byte".into()));
        }
        for (name, value) in &s.env {
            let mut chars = name.chars();
            let ok = chars.next().is_some_and(|c| c.is_ascii_alphabetic() || c == '_')
                && chars.all(|c| c.is_ascii_alphanumeric() || c == '_');
            if !ok {
                return Err(key(&format!("env.{name}"), "not an environment variable name".into()));
            }
            if value.contains('\0') {
                return Err(key(&format!("env.{name}"), "has a NUL byte".into()));
            }
        }
        let url = s.controller_url.trim();
        let rest = url.strip_prefix("http://").or_else(|| url.strip_prefix("https://"));
        if rest.is_none_or(|r| r.is_empty() || r.starts_with('/') || r.contains(char::is_whitespace)) {
            return Err(key(
                "controller_url",
                format!("'{url}' is not http://HOST:PORT or https://HOST:PORT"),
            ));
        }
        for (k, v) in [
            ("call_timeout_secs", s.call_timeout_secs),
            ("boot_timeout_secs", s.boot_timeout_secs),
            ("idle_timeout_secs", s.idle_timeout_secs),
        ] {
            if !(1..=MAX_SECS).contains(&v) {
                return Err(key(k, format!("{v} is outside 1 to {MAX_SECS} seconds")));
            }
        }
        if s.boot_timeout_secs < s.call_timeout_secs {
            return Err(key(
                "boot_timeout_secs",
                format!(
                    "{} is shorter than call_timeout_secs ({})",
                    s.boot_timeout_secs, s.call_timeout_secs
                ),
            ));
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use crate::config::Config;

    fn parse(body: &str) -> Result<Config, String> {
        let text = format!("[upstream.slurm]\ncontroller_url = \"http://ctl:6817\"\n{body}");
        Config::parse(&text, "spur.conf", "/etc/spur".into()).map_err(|e| e.to_string())
    }

    #[test]
    fn the_issue_s_block_parses_with_its_defaults() {
        let text = "[upstream.slurm]\nbin_dir = \"/opt/slurm/bin\"\ncommand_prefix = [\"ssh\", \"login01\"]\n\
            env = { SLURM_CONF = \"/etc/slurm/slurm.conf\" }\nspurd_path = \"/usr/sbin/spurd\"\n\
            controller_url = \"http://ctl:6817\"\ncall_timeout_secs = 30\nboot_timeout_secs = 300\n\
            idle_timeout_secs = 600\n";
        let c = Config::parse(text, "spur.conf", "/etc/spur".into()).unwrap();
        let s = c.upstream.slurm.unwrap();
        assert_eq!((s.command_prefix.len(), s.env["SLURM_CONF"].as_str()), (2, "/etc/slurm/slurm.conf"));
        assert_eq!((s.bin_dir.to_str(), s.idle_timeout_secs), (Some("/opt/slurm/bin"), 600));
        let d = parse("").unwrap().upstream.slurm.unwrap();
        assert_eq!((d.bin_dir.to_str(), d.spurd_path.to_str()), (Some("/usr/bin"), Some("/usr/sbin/spurd")));
        assert_eq!((d.call_timeout_secs, d.boot_timeout_secs, d.idle_timeout_secs), (30, 300, 300));
        assert!(Config::parse("", "spur.conf", "/etc/spur".into()).unwrap().upstream.slurm.is_none());
    }

    #[test]
    fn each_bad_key_is_named() {
        for (body, key) in [
            ("bin_dir = \"bin\"\n", "upstream.slurm.bin_dir"),
            ("spurd_path = \"spurd\"\n", "upstream.slurm.spurd_path"),
            ("command_prefix = [\"ssh\", \"\"]\n", "upstream.slurm.command_prefix[1]"),
            ("env = { \"1X\" = \"y\" }\n", "upstream.slurm.env.1X"),
            ("call_timeout_secs = 0\n", "upstream.slurm.call_timeout_secs"),
            ("idle_timeout_secs = 100000\n", "upstream.slurm.idle_timeout_secs"),
            ("boot_timeout_secs = 10\n", "upstream.slurm.boot_timeout_secs"),
            ("bin_dri = \"/x\"\n", "bin_dri"),
            ("call_timeout_secs = \"30\"\n", "upstream.slurm.call_timeout_secs"),
        ] {
            let e = parse(body).unwrap_err();
            assert!(e.contains(key), "{body}: {e}");
        }
        let e = Config::parse("[upstream.slurm]\n", "spur.conf", "/etc/spur".into()).unwrap_err().to_string();
        assert!(e.contains("upstream.slurm") && e.contains("controller_url"), "{e}");
        let e = Config::parse("[upstream.slurm]\ncontroller_url = \"ctl:6817\"\n", "spur.conf", "/".into())
            .unwrap_err()
            .to_string();
        assert!(e.contains("upstream.slurm.controller_url"), "{e}");
        let e = Config::parse("[upstream.pbs]\n", "spur.conf", "/".into()).unwrap_err().to_string();
        assert!(e.contains("pbs"), "{e}");
    }
}
