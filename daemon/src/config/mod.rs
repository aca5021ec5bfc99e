//! spur.conf: a TOML file. Unknown keys and wrong types are errors that name
//! the key and the file.

use serde::Deserialize;
use std::path::{Path, PathBuf};

#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Config {
    #[serde(default = "default_cluster_name")]
    pub cluster_name: String,
    #[serde(default)]
    pub controller: ControllerConfig,
    #[serde(default)]
    pub accounting: AccountingConfig,
    /// The directory of the config file; relative paths resolve against it.
    #[serde(skip)]
    pub base_dir: PathBuf,
}

#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ControllerConfig {
    #[serde(default = "default_listen_addr")]
    pub listen_addr: String,
}

#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct AccountingConfig {
    /// `sqlite://PATH`, `postgresql://...`, or empty for accounting off.
    #[serde(default)]
    pub database_url: String,
    #[serde(default)]
    pub default_qos: String,
    #[serde(default)]
    pub require_qos: bool,
    #[serde(default)]
    pub require_association: bool,
    #[serde(default = "default_refresh")]
    pub fairshare_refresh_secs: u64,
    #[serde(default = "default_grp_wall_window")]
    pub grp_wall_window_days: u64,
    /// 0 or unset keeps txn rows forever.
    #[serde(default)]
    pub txn_retention_days: u64,
}

fn default_cluster_name() -> String {
    "spur".into()
}
fn default_listen_addr() -> String {
    "[::]:6817".into()
}
fn default_refresh() -> u64 {
    300
}
fn default_grp_wall_window() -> u64 {
    14
}

impl Default for ControllerConfig {
    fn default() -> Self {
        ControllerConfig { listen_addr: default_listen_addr() }
    }
}

impl Default for AccountingConfig {
    fn default() -> Self {
        AccountingConfig {
            database_url: String::new(),
            default_qos: String::new(),
            require_qos: false,
            require_association: false,
            fairshare_refresh_secs: default_refresh(),
            grp_wall_window_days: default_grp_wall_window(),
            txn_retention_days: 0,
        }
    }
}

impl Default for Config {
    fn default() -> Self {
        Config {
            cluster_name: default_cluster_name(),
            controller: ControllerConfig::default(),
            accounting: AccountingConfig::default(),
            base_dir: PathBuf::from("."),
        }
    }
}

#[derive(Debug, thiserror::Error)]
pub enum ConfigError {
    #[error("{file}: cannot read: {err}")]
    Read { file: String, err: std::io::Error },
    #[error("{file}: {msg}")]
    Invalid { file: String, msg: String },
}

impl Config {
    pub fn load(path: &Path) -> Result<Config, ConfigError> {
        let file = path.display().to_string();
        let text =
            std::fs::read_to_string(path).map_err(|err| ConfigError::Read { file: file.clone(), err })?;
        let base = path.parent().map(Path::to_path_buf).unwrap_or_default();
        Config::parse(&text, &file, base)
    }

    /// Parses config text. Errors name the offending key path (`accounting.require_qos`).
    pub fn parse(text: &str, file: &str, base_dir: PathBuf) -> Result<Config, ConfigError> {
        let invalid = |msg: String| ConfigError::Invalid { file: file.to_string(), msg };
        let de = toml::Deserializer::parse(text).map_err(|e| invalid(one_line(&e.to_string())))?;
        let mut cfg: Config = serde_path_to_error::deserialize(de).map_err(|e| {
            let path = e.path().to_string();
            let inner = one_line(&e.into_inner().to_string());
            if path == "." || path.is_empty() {
                invalid(inner)
            } else {
                invalid(format!("key '{path}': {inner}"))
            }
        })?;
        cfg.base_dir = base_dir;
        cfg.validate().map_err(invalid)?;
        Ok(cfg)
    }

    fn validate(&self) -> Result<(), String> {
        let url = &self.accounting.database_url;
        if !url.is_empty() && !url.starts_with("sqlite:") && !url.starts_with("postgres") {
            return Err(format!(
                "key 'accounting.database_url': '{url}' is neither sqlite://PATH nor postgresql://..."
            ));
        }
        if self.cluster_name.trim().is_empty() {
            return Err("key 'cluster_name': must not be empty".into());
        }
        Ok(())
    }

    /// The database URL with a relative SQLite path resolved against the config's directory.
    pub fn database_url(&self) -> String {
        let url = &self.accounting.database_url;
        match url.strip_prefix("sqlite://") {
            Some(p) if !p.starts_with('/') && !p.starts_with(':') => {
                format!("sqlite://{}", self.base_dir.join(p).display())
            }
            _ => url.clone(),
        }
    }
}

/// toml's messages carry a multi-line source excerpt; one line reads better on stderr.
fn one_line(s: &str) -> String {
    s.lines().map(str::trim).filter(|l| !l.is_empty() && !l.starts_with('|')).collect::<Vec<_>>().join(" ")
}

#[cfg(test)]
mod tests {
    use super::*;

    fn parse(text: &str) -> Result<Config, String> {
        Config::parse(text, "spur.conf", PathBuf::from("/etc/spur")).map_err(|e| e.to_string())
    }

    #[test]
    fn defaults_match_the_spec() {
        let c = parse("").unwrap();
        assert_eq!(c.controller.listen_addr, "[::]:6817");
        assert_eq!(c.accounting.fairshare_refresh_secs, 300);
        assert_eq!(c.accounting.grp_wall_window_days, 14);
        assert!(c.accounting.database_url.is_empty());
    }

    #[test]
    fn unknown_key_names_key_and_file() {
        let e = parse("[accounting]\ndatabse_url = \"x\"\n").unwrap_err();
        assert!(e.starts_with("spur.conf:"), "{e}");
        assert!(e.contains("databse_url"), "{e}");
    }

    #[test]
    fn wrong_type_names_the_key() {
        let e = parse("[accounting]\nrequire_qos = \"yes\"\n").unwrap_err();
        assert!(e.contains("accounting.require_qos"), "{e}");
    }

    #[test]
    fn relative_sqlite_resolves_beside_the_file() {
        let c = parse("[accounting]\ndatabase_url = \"sqlite://spur.db\"\n").unwrap();
        assert_eq!(c.database_url(), "sqlite:///etc/spur/spur.db");
        assert!(parse("[accounting]\ndatabase_url = \"mysql://x\"\n").is_err());
    }
}
