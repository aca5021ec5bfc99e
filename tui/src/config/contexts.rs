//! console.toml's `[[contexts]]` and `default_context`: checked whole at
//! load, each error naming the context and the key, so a typo never sends
//! a write to the wrong cluster or leaves a production cluster unmarked.
//!
//! ```toml
//! default_context = "prod"   # or `current`; before the first [[contexts]]
//! [[contexts]]
//! name = "prod"
//! controllers = ["ctl1:6817", "ctl2:6817"]
//! token_file = "~/.spur/prod.token"
//! read_only = false
//! production = true
//! ```

use crate::model::context::Context;
use std::path::PathBuf;

const KEYS: &str = "name, controllers, token_file, read_only, production";

/// The `contexts` value: an array of tables.
pub fn parse(value: &toml::Value) -> Result<Vec<Context>, String> {
    let list = value.as_array().ok_or("contexts: expected [[contexts]] tables")?;
    let mut out: Vec<Context> = Vec::with_capacity(list.len());
    for (i, item) in list.iter().enumerate() {
        let table = item.as_table().ok_or_else(|| format!("contexts[{i}]: expected a table"))?;
        let ctx = one(i, table)?;
        if out.iter().any(|c| c.name == ctx.name) {
            return Err(format!("context \"{}\": duplicate name", ctx.name));
        }
        out.push(ctx);
    }
    Ok(out)
}

fn one(i: usize, table: &toml::Table) -> Result<Context, String> {
    let name = match table.get("name") {
        Some(toml::Value::String(s)) if !s.trim().is_empty() && !s.contains(char::is_whitespace) => s.clone(),
        Some(v) => return Err(format!("contexts[{i}] name = {v}: expected a name without spaces")),
        None => return Err(format!("contexts[{i}]: name is required")),
    };
    let at = |key: &str| format!("context \"{name}\" {key}");
    let mut ctx = Context {
        name: name.clone(),
        controllers: Vec::new(),
        token: None,
        read_only: false,
        production: false,
    };
    for (key, v) in table {
        match key.as_str() {
            "name" => {}
            "controllers" => ctx.controllers = controllers(&at("controllers"), v)?,
            "token_file" => {
                let path = v.as_str().ok_or_else(|| format!("{}: expected a path", at("token_file")))?;
                ctx.token = Some(token(&at("token_file"), path)?);
            }
            "read_only" => {
                ctx.read_only = v.as_bool().ok_or_else(|| format!("{}: expected true or false", at(key)))?
            }
            "production" => {
                ctx.production = v.as_bool().ok_or_else(|| format!("{}: expected true or false", at(key)))?
            }
            "default_context" | "current" => {
                return Err(format!(
                    "{}: {key} is a top-level key; put it before the first [[contexts]]",
                    at(key)
                ));
            }
            other => return Err(format!("context \"{name}\": unknown key \"{other}\" (known: {KEYS})")),
        }
    }
    if ctx.controllers.is_empty() {
        return Err(format!("{}: at least one controller is required", at("controllers")));
    }
    Ok(ctx)
}

fn controllers(at: &str, v: &toml::Value) -> Result<Vec<String>, String> {
    let bad = || format!("{at}: expected a list of addresses like [\"ctl1:6817\"]");
    let items = match v {
        toml::Value::Array(items) => items,
        _ => return Err(bad()),
    };
    let mut out = Vec::with_capacity(items.len());
    for item in items {
        let addr = item.as_str().ok_or_else(bad)?.trim();
        // One address per entry: a comma would be read as two controllers.
        if addr.is_empty() || addr.contains(',') || addr.contains(char::is_whitespace) {
            return Err(format!("{at}: {item} is not one address"));
        }
        let url = spur_proto::wire::controllers(addr).into_iter().next().ok_or_else(bad)?;
        if url.parse::<tonic::transport::Uri>().is_err() {
            return Err(format!("{at}: {item} is not an address (host:port or http://host:port)"));
        }
        out.push(url);
    }
    Ok(out)
}

/// The token, read now: a file that cannot be read is an error at start-up,
/// not a refusal on the first write.
fn token(at: &str, path: &str) -> Result<String, String> {
    let path = expand(path);
    let text = std::fs::read_to_string(&path).map_err(|e| format!("{at}: {}: {e}", path.display()))?;
    let token = text.trim();
    if token.is_empty() {
        return Err(format!("{at}: {} is empty", path.display()));
    }
    Ok(token.to_string())
}

/// `~/` is the home directory, as a shell would read it.
fn expand(path: &str) -> PathBuf {
    match (path.strip_prefix("~/"), std::env::var_os("HOME").filter(|h| !h.is_empty())) {
        (Some(rest), Some(home)) => PathBuf::from(home).join(rest),
        _ => PathBuf::from(path),
    }
}
