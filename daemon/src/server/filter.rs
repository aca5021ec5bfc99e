//! The `key=value` filters of the listing RPCs (sacctmgr show, squeue and
//! scancel, sinfo), parsed by one function into typed keys. Each listing
//! declares its keys with [`keys!`]: their spellings (case-blind, with
//! aliases) and the hint an unknown key is refused with. An error names the
//! key as the caller spelled it, so `Colour=red` is refused as `Colour: ...`.

use crate::error::Error;
use spur_proto::v1 as pb;

/// A listing's filter keys.
pub trait Key: Copy + Sized {
    /// The refusal of a key the listing does not know, naming those it does.
    const HINT: &'static str;
    /// The key spelled `lower` (already lower-cased), if the listing has it.
    fn of(lower: &str) -> Option<Self>;
}

/// Declares a listing's filter keys: `Variant = "spelling" | "alias"`.
macro_rules! keys {
    ($(#[$doc:meta])* enum $name:ident, $hint:literal { $($var:ident = $($spell:literal)|+,)+ }) => {
        $(#[$doc])*
        #[derive(Debug, Clone, Copy, PartialEq, Eq)]
        enum $name { $($var),+ }

        impl $crate::server::filter::Key for $name {
            const HINT: &'static str = $hint;
            fn of(lower: &str) -> Option<Self> {
                match lower {
                    $($($spell)|+ => Some(Self::$var),)+
                    _ => None,
                }
            }
        }
    };
}
pub(crate) use keys;

/// One `key=value` pair with its key resolved.
#[derive(Debug, Clone, Copy)]
pub struct Pair<'a, K> {
    pub key: K,
    /// The key as the caller spelled it, for errors.
    pub given: &'a str,
    pub value: &'a str,
}

impl<K> Pair<'_, K> {
    /// Refuses the value, naming the key as given.
    pub fn invalid(&self, message: impl std::fmt::Display) -> Error {
        Error::invalid(self.given, message)
    }

    /// `a, b,,c` as `[a, b, c]`: trimmed, empty items dropped.
    pub fn items(&self) -> Vec<String> {
        self.value.split(',').map(str::trim).filter(|s| !s.is_empty()).map(String::from).collect()
    }
}

/// Resolves every key of `kvs`, in order; the first unknown key is refused
/// with `K::HINT`.
pub fn parse<K: Key>(kvs: &[pb::KeyValue]) -> Result<Vec<Pair<'_, K>>, Error> {
    kvs.iter()
        .map(|kv| match K::of(&kv.key.to_ascii_lowercase()) {
            Some(key) => Ok(Pair { key, given: &kv.key, value: &kv.value }),
            None => Err(Error::invalid(&kv.key, K::HINT)),
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    keys! {
        /// A listing of fruit.
        enum Fruit, "unknown filter (use name=, colour=)" {
            Name = "name" | "fruit",
            Colour = "colour" | "color",
        }
    }

    fn kvs(pairs: &[(&str, &str)]) -> Vec<pb::KeyValue> {
        pairs.iter().map(|(k, v)| pb::KeyValue { key: k.to_string(), value: v.to_string() }).collect()
    }

    #[test]
    fn keys_resolve_case_blind_with_aliases_in_order() {
        let kvs = kvs(&[("NAME", "apple"), ("Fruit", "pear"), ("color", " red, ,green ")]);
        let pairs = parse::<Fruit>(&kvs).unwrap();
        let keys: Vec<Fruit> = pairs.iter().map(|p| p.key).collect();
        assert_eq!(keys, [Fruit::Name, Fruit::Name, Fruit::Colour]);
        assert_eq!(pairs[1].given, "Fruit");
        assert_eq!(pairs[2].items(), ["red", "green"]);
        assert!(parse::<Fruit>(&[]).unwrap().is_empty());
    }

    #[test]
    fn an_unknown_key_is_refused_by_its_own_spelling() {
        let err = parse::<Fruit>(&kvs(&[("name", "apple"), ("Shape", "round")])).unwrap_err();
        assert!(matches!(err, Error::InvalidArgument(_)));
        assert_eq!(err.to_string(), "Shape: unknown filter (use name=, colour=)");
    }

    #[test]
    fn a_bad_value_names_the_key_as_given() {
        let kvs = kvs(&[("COLOUR", "")]);
        let pairs = parse::<Fruit>(&kvs).unwrap();
        assert_eq!(pairs[0].invalid("is empty").to_string(), "COLOUR: is empty");
        assert!(pairs[0].items().is_empty());
    }
}
