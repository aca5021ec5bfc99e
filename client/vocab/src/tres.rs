//! The built-in TRES table and TRES strings (`cpu=16,mem=32G,gres/gpu=8`).

use std::collections::BTreeMap;

/// One trackable resource: its fixed id and its name as it appears in TRES strings.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct TresDef {
    /// Slurm's TRES id.
    pub id: u32,
    /// The TRES name (`cpu`, `mem`, `gres/gpu`).
    pub name: &'static str,
}

/// Spur's fixed TRES table. There is no TRES CRUD.
pub const TRES: &[TresDef] = &[
    TresDef { id: 1, name: "cpu" },
    TresDef { id: 2, name: "mem" },
    TresDef { id: 3, name: "energy" },
    TresDef { id: 4, name: "node" },
    TresDef { id: 1001, name: "gres/gpu" },
    TresDef { id: 1002, name: "billing" },
];

/// The id of `mem`.
pub const TRES_MEM: u32 = 2;

/// Splits a TRES name into Slurm's `Type` and `Name` columns (`gres/gpu` -> `gres`, `gpu`).
pub fn type_and_name(def: &TresDef) -> (&'static str, &'static str) {
    def.name.split_once('/').unwrap_or((def.name, ""))
}

/// The TRES called `name`.
pub fn by_name(name: &str) -> Option<&'static TresDef> {
    let lower = name.to_ascii_lowercase();
    TRES.iter().find(|t| t.name == lower)
}

/// The TRES with id `id`.
pub fn by_id(id: u32) -> Option<&'static TresDef> {
    TRES.iter().find(|t| t.id == id)
}

/// A set of TRES amounts keyed by TRES id, so it renders in id order as Slurm does.
pub type TresMap = BTreeMap<u32, u64>;

/// A parsed TRES string: each dimension is set, or removed with `-1`.
/// An empty string clears every dimension.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct TresPatch {
    /// Start from an empty map.
    pub clear_all: bool,
    /// Each TRES id and its new value (None removes it).
    pub set: Vec<(u32, Option<u64>)>,
}

impl TresPatch {
    /// The map after this change.
    pub fn apply(&self, base: &TresMap) -> TresMap {
        let mut out = if self.clear_all { TresMap::new() } else { base.clone() };
        for (id, v) in &self.set {
            match v {
                Some(v) => out.insert(*id, *v),
                None => out.remove(id),
            };
        }
        out
    }
}

/// A TRES change as sacctmgr takes it (`cpu=4,mem=-1`).
pub fn parse_patch(raw: &str) -> Result<TresPatch, String> {
    let raw = raw.trim();
    if raw.is_empty() {
        return Ok(TresPatch { clear_all: true, set: vec![] });
    }
    let mut set: Vec<(u32, Option<u64>)> = Vec::new();
    for item in raw.split(',') {
        let (name, value) =
            item.split_once('=').ok_or_else(|| format!("'{item}' is not name=count (for example cpu=16)"))?;
        let def = by_name(name.trim()).ok_or_else(|| {
            let known: Vec<&str> = TRES.iter().map(|t| t.name).collect();
            format!("unknown TRES '{}' (known: {})", name.trim(), known.join(", "))
        })?;
        if set.iter().any(|(id, _)| *id == def.id) {
            return Err(format!("TRES '{}' is given twice", def.name));
        }
        let value = value.trim();
        let amount = if value == "-1" { None } else { Some(parse_amount(def, value)?) };
        set.push((def.id, amount));
    }
    Ok(TresPatch { clear_all: false, set })
}

/// Parses a full TRES string, where `-1` is not meaningful.
pub fn parse_map(raw: &str) -> Result<TresMap, String> {
    let patch = parse_patch(raw)?;
    if patch.set.iter().any(|(_, v)| v.is_none()) {
        return Err(format!("'{raw}': -1 only removes a dimension in a modify"));
    }
    Ok(patch.apply(&TresMap::new()))
}

fn parse_amount(def: &TresDef, value: &str) -> Result<u64, String> {
    let bad = || format!("TRES '{}' has count '{value}', which is not a whole number", def.name);
    if def.id == TRES_MEM {
        let (digits, mult) = match value.char_indices().last() {
            Some((i, c)) if c.is_ascii_alphabetic() => {
                let mult = match c.to_ascii_uppercase() {
                    'M' => 1,
                    'G' => 1024,
                    'T' => 1024 * 1024,
                    _ => return Err(format!("mem '{value}': the unit must be M, G or T")),
                };
                (&value[..i], mult)
            }
            _ => (value, 1),
        };
        return digits.parse::<u64>().ok().and_then(|v| v.checked_mul(mult)).ok_or_else(bad);
    }
    value.parse::<u64>().map_err(|_| bad())
}

/// A TRES map as Slurm prints it.
pub fn format_map(map: &TresMap) -> String {
    map.iter()
        .map(|(id, v)| match by_id(*id) {
            Some(def) => format!("{}={v}", def.name),
            None => format!("{id}={v}"),
        })
        .collect::<Vec<_>>()
        .join(",")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn renders_in_id_order() {
        let m = parse_map("node=2,cpu=64,gres/gpu=8,mem=32G").unwrap();
        assert_eq!(format_map(&m), "cpu=64,mem=32768,node=2,gres/gpu=8");
    }

    #[test]
    fn unknown_tres_is_named() {
        let err = parse_map("cpu=1,gpu=4").unwrap_err();
        assert!(err.contains("unknown TRES 'gpu'"), "{err}");
    }

    #[test]
    fn bad_counts_are_named() {
        assert!(parse_map("cpu=x").unwrap_err().contains("'cpu'"));
        assert!(parse_map("cpu").unwrap_err().contains("'cpu'"));
        assert!(parse_map("mem=4Q").unwrap_err().contains("unit"));
        assert!(parse_map("cpu=1,cpu=2").unwrap_err().contains("twice"));
    }

    #[test]
    fn patch_merges_and_removes() {
        let base = parse_map("cpu=4,node=2").unwrap();
        let p = parse_patch("cpu=-1,gres/gpu=2").unwrap();
        assert_eq!(format_map(&p.apply(&base)), "node=2,gres/gpu=2");
        assert!(parse_patch("").unwrap().apply(&base).is_empty());
    }

    #[test]
    fn zero_is_kept_as_a_literal() {
        assert_eq!(format_map(&parse_map("cpu=0").unwrap()), "cpu=0");
    }
}

/// Serializes a [`TresMap`] as its TRES string, so stored records and audit
/// diffs read `cpu=64,node=2` rather than ids.
pub mod as_string {
    use super::{TresMap, format_map, parse_map};
    use serde::{Deserialize, Deserializer, Serializer};

    /// Writes the map as a TRES string.
    pub fn serialize<S: Serializer>(m: &TresMap, s: S) -> Result<S::Ok, S::Error> {
        s.serialize_str(&format_map(m))
    }

    /// Reads a TRES string.
    pub fn deserialize<'de, D: Deserializer<'de>>(d: D) -> Result<TresMap, D::Error> {
        let s = String::deserialize(d)?;
        parse_map(&s).map_err(serde::de::Error::custom)
    }
}
