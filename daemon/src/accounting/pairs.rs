//! `key=value` pairs, parsed once with the vocabulary's key table.

use crate::error::{Error, Result};
use spur_vocab::keys::{self, Entity, KeyDef, Value};

#[derive(Debug, Clone)]
pub struct Pair {
    pub def: &'static KeyDef,
    pub value: Value,
    /// The key and value as the caller typed them, for the txn Info.
    pub typed_key: String,
    pub raw: String,
}

pub fn parse(entity: Entity, kvs: &[(String, String)]) -> Result<Vec<Pair>> {
    let mut out: Vec<Pair> = Vec::with_capacity(kvs.len());
    for (k, v) in kvs {
        let (def, value) = keys::parse(entity, k, v)?;
        if out.iter().any(|p| p.def.key == def.key) {
            return Err(Error::invalid(k, format!("'{}' is given twice", def.key)));
        }
        out.push(Pair { def, value, typed_key: k.clone(), raw: v.clone() });
    }
    Ok(out)
}

/// Splits out the pair for `key`, if present.
pub fn take<'a>(pairs: &'a [Pair], key: &str) -> Option<&'a Pair> {
    pairs.iter().find(|p| p.def.key == key)
}

pub fn name_of(p: &Pair) -> Option<&str> {
    match &p.value {
        Value::Name(n) => Some(n),
        _ => None,
    }
}

/// The `name=` of a request, which every write needs.
pub fn required_name(pairs: &[Pair], what: &str) -> Result<String> {
    take(pairs, "name")
        .and_then(name_of)
        .map(str::to_string)
        .ok_or_else(|| Error::invalid("name", format!("missing name= (the {what} to act on)")))
}

/// Refuses filter keys a selection cannot use.
pub fn only_keys(pairs: &[Pair], allowed: &[&str], what: &str) -> Result<()> {
    match pairs.iter().find(|p| !allowed.contains(&p.def.key)) {
        Some(p) => Err(Error::invalid(
            &p.typed_key,
            format!("cannot select {what} records by '{}' (use {})", p.typed_key, allowed.join("=, ") + "="),
        )),
        None => Ok(()),
    }
}

/// The requested parameters as a JSON object, for the txn Info.
pub fn to_json(pairs: &[Pair]) -> serde_json::Map<String, serde_json::Value> {
    pairs.iter().map(|p| (p.typed_key.clone(), serde_json::Value::String(p.raw.clone()))).collect()
}

pub fn internal(key: &str) -> Error {
    Error::Store(format!("key '{key}' has no handler; this is a bug"))
}
