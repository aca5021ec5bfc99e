//! `console.toml`: key rebinding, the theme and plugins.
//!
//! ```toml
//! [keys]
//! quit = "q"              # one key, or a list: ["q", "ctrl-q"]
//! delete = ["D", "del"]
//! [theme]
//! name = "default"        # or "mono"
//! [[plugins]]             # see model/plugin.rs
//! key = "S"
//! name = "ssh"
//! panes = ["nodes"]
//! command = ["ssh", "{node}"]
//! ```
//!
//! and the clusters the console can switch between (`[[contexts]]`, see
//! `config/contexts.rs`).
//!
//! Every mistake is an error at start-up naming the key, so a typo never
//! silently leaves an action on its default.

mod contexts;

use crate::model::context::Context;
use crate::model::keymap::{Keymap, KeymapError};
use crate::model::plugin::{self, Plugin};
use crate::model::state::ThemeName;
use std::fmt;
use std::path::{Path, PathBuf};

#[derive(Debug, Clone, Default)]
pub struct Config {
    pub keymap: Keymap,
    pub theme: ThemeName,
    /// `[[contexts]]`, in the file's order.
    pub contexts: Vec<Context>,
    /// `default_context` (or `current`): the context to start on; it names one of `contexts`.
    pub default_context: Option<String>,
    pub plugins: Vec<Plugin>,
}

#[derive(Debug)]
pub struct ConfigError {
    pub path: PathBuf,
    pub message: String,
}

impl fmt::Display for ConfigError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}: {}", self.path.display(), self.message)
    }
}

impl std::error::Error for ConfigError {}

/// Where the config lives: `--config`, else `SPUR_CONSOLE_CONFIG`, else
/// `$XDG_CONFIG_HOME/spur/console.toml`, else `~/.config/spur/console.toml`.
/// The bool says whether the path was asked for explicitly (then it must exist).
pub fn resolve_path(flag: Option<&Path>) -> Option<(PathBuf, bool)> {
    if let Some(p) = flag {
        return Some((p.to_path_buf(), true));
    }
    if let Some(p) = std::env::var_os("SPUR_CONSOLE_CONFIG").filter(|v| !v.is_empty()) {
        return Some((PathBuf::from(p), true));
    }
    let base =
        std::env::var_os("XDG_CONFIG_HOME").filter(|v| !v.is_empty()).map(PathBuf::from).or_else(|| {
            std::env::var_os("HOME").filter(|v| !v.is_empty()).map(|h| PathBuf::from(h).join(".config"))
        })?;
    Some((base.join("spur").join("console.toml"), false))
}

/// Load the config; a missing default file means the defaults.
pub fn load(flag: Option<&Path>) -> Result<Config, ConfigError> {
    let Some((path, explicit)) = resolve_path(flag) else {
        return Ok(Config::default());
    };
    let text = match std::fs::read_to_string(&path) {
        Ok(t) => t,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound && !explicit => return Ok(Config::default()),
        Err(e) => return Err(ConfigError { path, message: e.to_string() }),
    };
    parse(&text).map_err(|message| ConfigError { path, message })
}

/// Parse config text; the error names the offending key.
pub fn parse(text: &str) -> Result<Config, String> {
    let table: toml::Table = text.parse().map_err(|e: toml::de::Error| e.message().to_string())?;
    let mut config = Config::default();
    let mut overrides = Vec::new();
    let mut plugins = None;
    for (section, value) in &table {
        match section.as_str() {
            "keys" => {
                let keys = value.as_table().ok_or("[keys] must be a table")?;
                for (action, v) in keys {
                    overrides.push((action.clone(), key_list(action, v)?));
                }
            }
            "theme" => {
                let theme = value.as_table().ok_or("[theme] must be a table")?;
                for (k, v) in theme {
                    match (k.as_str(), v.as_str()) {
                        ("name", Some("default")) => config.theme = ThemeName::Default,
                        ("name", Some("mono")) => config.theme = ThemeName::Mono,
                        ("name", _) => {
                            return Err(format!("[theme] name = {v}: expected \"default\" or \"mono\""));
                        }
                        _ => return Err(format!("[theme] unknown key \"{k}\" (known: name)")),
                    }
                }
            }
            "contexts" => config.contexts = contexts::parse(value)?,
            "default_context" | "current" => {
                let name = value.as_str().ok_or_else(|| format!("{section}: expected a context's name"))?;
                config.default_context = Some(name.to_string());
            }
            // Checked against the keymap, so after [keys] wherever it is written.
            "plugins" => plugins = Some(value),
            other => {
                return Err(format!(
                    "unknown key \"{other}\" (known: keys, theme, plugins, contexts, default_context)"
                ));
            }
        }
    }
    if let Some(name) = &config.default_context
        && !config.contexts.iter().any(|c| &c.name == name)
    {
        return Err(format!("default_context = \"{name}\": no [[contexts]] has that name"));
    }
    config.keymap = Keymap::with_overrides(&overrides).map_err(|e: KeymapError| e.to_string())?;
    if let Some(value) = plugins {
        config.plugins = plugin::parse_all(value, &config.keymap)?;
    }
    Ok(config)
}

fn key_list(action: &str, v: &toml::Value) -> Result<Vec<String>, String> {
    let bad = || format!("[keys] {action}: expected a key like \"q\" or a list of keys");
    match v {
        toml::Value::String(s) => Ok(vec![s.clone()]),
        toml::Value::Array(items) => {
            items.iter().map(|i| i.as_str().map(str::to_string).ok_or_else(bad)).collect()
        }
        _ => Err(bad()),
    }
}
