//! A job's exported environment, held as one block of text (each name and
//! value followed by a NUL) rather than two strings per variable: sbatch exports
//! the submitter's whole environment, and a queue of 100,000 jobs held it
//! as four million small allocations (2.7 KB a job for 20 variables; issue
//! 15). Stored and listed as `[key, value]` pairs, as before.

use serde::{Deserialize, Deserializer, Serialize, Serializer};

#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Env(String);

impl Env {
    /// The pairs as one block. A NUL can be in no environment an exec
    /// passes on, so a name or value holding one is refused, by its name.
    pub fn from_pairs<'a>(pairs: impl IntoIterator<Item = (&'a str, &'a str)>) -> Result<Env, String> {
        let mut block = String::new();
        for (k, v) in pairs {
            if k.contains('\0') || v.contains('\0') {
                let shown: String = k.chars().filter(|c| *c != '\0').take(64).collect();
                return Err(format!(
                    "env: variable '{shown}' holds a NUL byte, which no process environment can"
                ));
            }
            for part in [k, v] {
                block.push_str(part);
                block.push('\0');
            }
        }
        block.shrink_to_fit();
        Ok(Env(block))
    }

    /// The variables in the order they were given.
    pub fn iter(&self) -> impl Iterator<Item = (&str, &str)> {
        let mut parts = self.0.split_terminator('\0');
        std::iter::from_fn(move || Some((parts.next()?, parts.next().unwrap_or(""))))
    }

    pub fn len(&self) -> usize {
        self.0.matches('\0').count() / 2
    }

    pub fn is_empty(&self) -> bool {
        self.0.is_empty()
    }
}

impl Serialize for Env {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        s.collect_seq(self.iter())
    }
}

impl<'de> Deserialize<'de> for Env {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Env, D::Error> {
        let pairs = Vec::<(String, String)>::deserialize(d)?;
        Env::from_pairs(pairs.iter().map(|(k, v)| (k.as_str(), v.as_str()))).map_err(serde::de::Error::custom)
    }
}

#[cfg(test)]
mod tests {
    use super::Env;

    #[test]
    fn pairs_round_trip_through_the_block_and_json() {
        let given = [("PATH", "/bin:/usr/bin"), ("EQ", "a=b"), ("EMPTY", ""), ("", "x"), ("=C:", "odd")];
        let env = Env::from_pairs(given).unwrap();
        assert_eq!(env.iter().collect::<Vec<_>>(), given);
        assert_eq!(env.len(), 5);
        let json = serde_json::to_string(&env).unwrap();
        assert_eq!(json, r#"[["PATH","/bin:/usr/bin"],["EQ","a=b"],["EMPTY",""],["","x"],["=C:","odd"]]"#);
        assert_eq!(serde_json::from_str::<Env>(&json).unwrap(), env);
        assert!(Env::default().is_empty() && Env::default().iter().next().is_none());
    }

    #[test]
    fn a_nul_byte_is_refused_by_name() {
        for (k, v) in [("BAD\0", "x"), ("BAD", "x\0y")] {
            let e = Env::from_pairs([("OK", "1"), (k, v)]).unwrap_err();
            assert!(e.starts_with("env: variable 'BAD' holds a NUL byte"), "{e}");
        }
        assert!(serde_json::from_str::<Env>(r#"[["A","x\u0000"]]"#).is_err());
    }
}
