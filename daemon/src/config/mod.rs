//! spur.conf: a TOML file. Unknown keys and wrong types are errors that name
//! the key and the file.
//!
//! - `cluster`: `[[nodes]]` and `[[partitions]]`.
//! - [`resources`]: resources.yaml, the hierarchical resources.

mod cluster;
pub mod provision;
pub mod resources;
mod scheduler;
pub mod upstream;

#[cfg(test)]
mod props;
#[cfg(test)]
mod reference;

pub use cluster::{NodeConfig, PartitionConfig, TimeValue, parse_gres};
pub use scheduler::{PreemptType, SchedulerConfig, Seconds};

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
    #[serde(default)]
    pub auth: AuthConfig,
    #[serde(default)]
    pub admission: AdmissionConfig,
    #[serde(default)]
    pub logging: LoggingConfig,
    #[serde(default)]
    pub metrics: MetricsConfig,
    #[serde(default)]
    pub mail: MailConfig,
    #[serde(default)]
    pub scheduler: SchedulerConfig,
    #[serde(default)]
    pub nodes: Vec<NodeConfig>,
    #[serde(default)]
    pub partitions: Vec<PartitionConfig>,
    /// Plain cluster-wide licenses: `matlab = 20`.
    #[serde(default)]
    pub licenses: std::collections::BTreeMap<String, u32>,
    /// resources.yaml; relative to this file. Unset: `resources.yaml` beside it, when present.
    #[serde(default)]
    pub resources_file: Option<PathBuf>,
    /// `[upstream.slurm]`: the cluster `slurm` provisioner definitions borrow nodes from.
    #[serde(default)]
    pub upstream: upstream::UpstreamConfig,
    /// The deadlines of HRES plugin callbacks.
    #[serde(default, rename = "hres")]
    pub hres_limits: resources::HresConfig,
    /// Loaded from `resources_file` by [`Config::load`].
    #[serde(skip)]
    pub hres: Vec<crate::model::HresResource>,
    /// Loaded from provisioners.yaml by [`Config::load`].
    #[serde(skip)]
    pub provision: Option<std::sync::Arc<spur_sched::provision::Provision>>,
    /// The keys spur.conf sets in `[scheduler]`, so provisioners.yaml may not set them too.
    #[serde(skip)]
    pub scheduler_keys: std::collections::BTreeSet<String>,
    /// The directory of the config file; relative paths resolve against it.
    #[serde(skip)]
    pub base_dir: PathBuf,
    /// The file it was read from, for `scontrol reconfigure`.
    #[serde(skip)]
    pub path: Option<PathBuf>,
}

#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ControllerConfig {
    #[serde(default = "default_listen_addr")]
    pub listen_addr: String,
    /// How often node agents heartbeat.
    #[serde(default = "default_heartbeat")]
    pub heartbeat_interval_secs: u32,
    /// A node whose agent is silent this long is set DOWN, "Not responding".
    #[serde(default = "default_node_timeout")]
    pub node_timeout_secs: u32,
    /// provisioners.yaml (Fuzzball's central config), relative to spur.conf.
    /// Unset: `provisioners.yaml` beside it, when present.
    #[serde(default)]
    pub provisioners_file: Option<PathBuf>,
    /// How long the leader's lease lasts unrenewed (PostgreSQL only): a
    /// standby takes over within this of the leader's death or stall.
    #[serde(default = "default_lease")]
    pub leader_lease_secs: u32,
    /// The `host:port` other controllers forward to and clients are shown;
    /// empty: the address the controller listens on.
    #[serde(default)]
    pub advertise_addr: String,
    /// How many dynamic nodes (not in spur.conf) may exist at once; 0 allows
    /// none, so `spurd --dynamic` and `scontrol create` are refused (Slurm's MaxNodeCount).
    #[serde(default)]
    pub max_dynamic_nodes: u32,
    /// The partitions every dynamic node joins, beside those whose `nodes` is `ALL`.
    #[serde(default)]
    pub dynamic_partitions: Vec<String>,
}

fn default_lease() -> u32 {
    10
}

fn default_heartbeat() -> u32 {
    5
}
fn default_node_timeout() -> u32 {
    30
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

#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum AuthPlugin {
    /// Trust the caller's asserted local identity; uid 0 is an admin.
    #[default]
    None,
    /// HS256 JSON Web Tokens.
    Jwt,
    /// MUNGE credentials, decoded by the local munged: the kernel-vouched uid and gid.
    Munge,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum AuthMode {
    /// A token is verified when present; without one the asserted identity is used.
    #[default]
    Permissive,
    /// Every request needs a valid token.
    Required,
    /// Tokens are ignored; the asserted identity is used.
    Disabled,
}

impl AuthMode {
    pub fn as_str(self) -> &'static str {
        match self {
            AuthMode::Permissive => "permissive",
            AuthMode::Required => "required",
            AuthMode::Disabled => "disabled",
        }
    }
}

#[derive(Debug, Clone, Default, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct AuthConfig {
    #[serde(default)]
    pub plugin: AuthPlugin,
    /// The HS256 secret, used literally.
    #[serde(default)]
    pub jwt_key: Option<String>,
    /// A file holding the secret; one trailing line ending is ignored.
    #[serde(default)]
    pub jwt_key_file: Option<PathBuf>,
    #[serde(default)]
    pub mode: AuthMode,
    /// munged's socket for decoding (plugin `munge`); unset: munged's default.
    #[serde(default)]
    pub munge_socket: Option<PathBuf>,
    /// Besides uid 0, the uid whose credentials the agent protocol accepts
    /// under `munge` (Slurm's SlurmdUser).
    #[serde(default)]
    pub agent_uid: Option<u32>,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum AdmissionMode {
    #[default]
    Open,
    Token,
}

#[derive(Debug, Clone, Default, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct AdmissionConfig {
    #[serde(default)]
    pub mode: AdmissionMode,
}

#[derive(Debug, Clone, Default, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct LoggingConfig {
    /// Log every RPC, reads included, on the `audit_rpc` tracing target.
    #[serde(default)]
    pub audit_rpcs: bool,
}

#[derive(Debug, Clone, Default, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct MetricsConfig {
    /// `host:port` for the Prometheus `/metrics` endpoint; empty: not served.
    #[serde(default)]
    pub listen_addr: String,
}

#[derive(Debug, Clone, Default, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct MailConfig {
    /// Slurm's MailProg: run as `program -s SUBJECT RECIPIENT` for each mail
    /// a job's `--mail-type` asks for. Unset: no mail is sent. Relative to
    /// the config file's directory.
    #[serde(default)]
    pub program: Option<PathBuf>,
}

impl MailConfig {
    /// The program to run, resolved against `base`; None when unset.
    pub fn resolved(&self, base: &Path) -> Option<PathBuf> {
        self.program.as_ref().map(|p| base.join(p))
    }
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
        ControllerConfig {
            listen_addr: default_listen_addr(),
            heartbeat_interval_secs: default_heartbeat(),
            node_timeout_secs: default_node_timeout(),
            provisioners_file: None,
            leader_lease_secs: default_lease(),
            advertise_addr: String::new(),
            max_dynamic_nodes: 0,
            dynamic_partitions: vec![],
        }
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
            auth: AuthConfig::default(),
            admission: AdmissionConfig::default(),
            logging: LoggingConfig::default(),
            metrics: MetricsConfig::default(),
            mail: MailConfig::default(),
            scheduler: SchedulerConfig::default(),
            nodes: vec![],
            partitions: vec![],
            licenses: Default::default(),
            resources_file: None,
            upstream: Default::default(),
            hres_limits: Default::default(),
            hres: vec![],
            provision: None,
            scheduler_keys: Default::default(),
            base_dir: PathBuf::from("."),
            path: None,
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
    /// Whether dynamic nodes join partition `pc`: its `nodes` is `ALL`, or
    /// `controller.dynamic_partitions` names it (the one rule for the
    /// partitions' members and for submit's check of what could be lent).
    pub fn dynamic_joins(&self, pc: &PartitionConfig) -> bool {
        pc.nodes.eq_ignore_ascii_case("all") || self.controller.dynamic_partitions.contains(&pc.name)
    }

    pub fn load(path: &Path) -> Result<Config, ConfigError> {
        let file = path.display().to_string();
        let text =
            std::fs::read_to_string(path).map_err(|err| ConfigError::Read { file: file.clone(), err })?;
        let base = path.parent().map(Path::to_path_buf).unwrap_or_default();
        let mut cfg = Config::parse(&text, &file, base)?;
        cfg.path = Some(path.to_path_buf());
        // A key file too short is as much a config error as a literal key.
        cfg.jwt_secret()?;
        cfg.load_provisioners()?;
        cfg.load_resources()?;
        if let Some(p) = cfg.mail.resolved(&cfg.base_dir).filter(|p| !p.is_file()) {
            let msg = format!("key 'mail.program': '{}' is not a file", p.display());
            return Err(ConfigError::Invalid { file, msg });
        }
        Ok(cfg)
    }

    /// Parses config text. Errors name the offending key path (`accounting.require_qos`).
    pub fn parse(text: &str, file: &str, base_dir: PathBuf) -> Result<Config, ConfigError> {
        let invalid = |msg: String| ConfigError::Invalid { file: file.to_string(), msg: printable(&msg) };
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
        if let Ok(t) = text.parse::<toml::Table>()
            && let Some(toml::Value::Table(s)) = t.get("scheduler")
        {
            cfg.scheduler_keys = s.keys().cloned().collect();
        }
        cfg.validate().map_err(invalid)?;
        Ok(cfg)
    }

    fn validate(&self) -> Result<(), String> {
        let url = &self.accounting.database_url;
        // The prefixes store::open accepts, so a URL that passes here is one
        // spurctld may wait for, never one it could not open at all.
        let known = ["sqlite://", "postgres://", "postgresql://"];
        if !url.is_empty() && !known.iter().any(|p| url.starts_with(p)) {
            return Err(format!(
                "key 'accounting.database_url': '{url}' is neither sqlite://PATH nor postgresql://..."
            ));
        }
        let a = &self.auth;
        if a.jwt_key.is_some() && a.jwt_key_file.is_some() {
            return Err("keys 'auth.jwt_key' and 'auth.jwt_key_file' are both set; set only one".into());
        }
        if a.plugin == AuthPlugin::Jwt && a.jwt_key.is_none() && a.jwt_key_file.is_none() {
            return Err("key 'auth.plugin': \"jwt\" needs auth.jwt_key or auth.jwt_key_file".into());
        }
        if a.plugin != AuthPlugin::None
            && let Some(k) = &a.jwt_key
        {
            spur_proto::token::check_key(k.as_bytes()).map_err(|m| format!("key 'auth.jwt_key': {m}"))?;
        }
        if a.mode == AuthMode::Required && a.plugin != AuthPlugin::Jwt {
            return Err("key 'auth.mode': \"required\" needs auth.plugin = \"jwt\"".into());
        }
        if a.plugin != AuthPlugin::Munge && (a.munge_socket.is_some() || a.agent_uid.is_some()) {
            let key = if a.munge_socket.is_some() { "munge_socket" } else { "agent_uid" };
            return Err(format!("key 'auth.{key}' needs auth.plugin = \"munge\""));
        }
        self.scheduler.validate()?;
        if self.controller.heartbeat_interval_secs == 0 {
            return Err("key 'controller.heartbeat_interval_secs': must be at least 1".into());
        }
        if self.controller.node_timeout_secs <= self.controller.heartbeat_interval_secs {
            return Err(
                "key 'controller.node_timeout_secs': must be longer than heartbeat_interval_secs".into()
            );
        }
        if !(2..=3600).contains(&self.controller.leader_lease_secs) {
            return Err("key 'controller.leader_lease_secs': must be from 2 to 3600".into());
        }
        cluster::validate(&self.nodes, &self.partitions)?;
        cluster::validate_dynamic(&self.controller.dynamic_partitions, &self.partitions)?;
        self.upstream.validate()?;
        for name in self.licenses.keys() {
            if name.is_empty() || !name.chars().all(|c| c.is_ascii_alphanumeric() || "_-.".contains(c)) {
                return Err(format!("key 'licenses.{name}': a license name is letters, digits, _ - or ."));
            }
        }
        if self.mail.program.as_ref().is_some_and(|p| p.as_os_str().is_empty()) {
            return Err("key 'mail.program': must not be empty (leave it out to send no mail)".into());
        }
        if self.cluster_name.trim().is_empty() {
            return Err("key 'cluster_name': must not be empty".into());
        }
        Ok(())
    }

    /// The JWT secret: `jwt_key` literally, or the contents of `jwt_key_file`
    /// without one trailing line ending. None when neither is set. Under
    /// `plugin = "jwt"` a key shorter than 32 bytes is an error naming its key.
    pub fn jwt_secret(&self) -> Result<Option<Vec<u8>>, ConfigError> {
        let key = self.read_jwt_key()?;
        if self.auth.plugin != AuthPlugin::None
            && let Some((k, name)) = &key
        {
            let file = self.path.as_ref().map_or_else(|| "spur.conf".into(), |p| p.display().to_string());
            spur_proto::token::check_key(k)
                .map_err(|m| ConfigError::Invalid { file, msg: format!("{name}: {m}") })?;
        }
        Ok(key.map(|(k, _)| k))
    }

    /// The key, and the config key it came from as an error names it.
    fn read_jwt_key(&self) -> Result<Option<(Vec<u8>, String)>, ConfigError> {
        if let Some(k) = &self.auth.jwt_key {
            return Ok(Some((k.as_bytes().to_vec(), "key 'auth.jwt_key'".into())));
        }
        let Some(f) = &self.auth.jwt_key_file else { return Ok(None) };
        let path = self.base_dir.join(f);
        let mut bytes = std::fs::read(&path).map_err(|err| ConfigError::Read {
            file: format!("auth.jwt_key_file {}", path.display()),
            err,
        })?;
        if bytes.ends_with(b"\r\n") {
            bytes.truncate(bytes.len() - 2);
        } else if bytes.ends_with(b"\n") {
            bytes.pop();
        }
        Ok(Some((bytes, format!("key 'auth.jwt_key_file' ({})", path.display()))))
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

/// A message quoting a value (a multi-line string's newlines, a `\u001b`)
/// with its control characters escaped, so an error stays one line on
/// stderr and in the log and cannot move the terminal's cursor.
fn printable(msg: &str) -> String {
    msg.chars().map(|c| if c.is_control() { c.escape_default().to_string() } else { c.to_string() }).collect()
}

/// The most of toml's message an error keeps: it quotes the source line and
/// then the value again (escaped, so up to 10 bytes a character), and the
/// start names the key and the place.
const MAX_TOML_MESSAGE: usize = 512;

/// toml's messages carry a multi-line source excerpt; one line, capped, reads
/// better on stderr. The cap counts the escaped text: escaping after it let
/// a line of control characters grow sixfold (found by daemon/fuzz's spur_conf).
fn one_line(s: &str) -> String {
    let lines: Vec<&str> =
        s.lines().map(str::trim).filter(|l| !l.is_empty() && !l.starts_with('|')).collect();
    let mut out = printable(&lines.join(" "));
    if out.len() > MAX_TOML_MESSAGE {
        out.truncate(out.floor_char_boundary(MAX_TOML_MESSAGE));
        out.push('…');
    }
    out
}

#[cfg(test)]
mod tests;
