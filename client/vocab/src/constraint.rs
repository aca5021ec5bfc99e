//! `-C/--constraint`: node features a job needs, as Slurm writes them:
//! `gpu`, `a&b` (all), `a|b` (any), and both (`&` binds tighter, so
//! `a&b|c` is `(a&b)|c`). Counts and brackets (`[a*2&b]`) are refused by name.

use std::fmt;

/// Alternatives, each a set of features that must all be present.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct Constraint {
    /// One `Vec` per `|` alternative, each holding its `&` features.
    pub any_of: Vec<Vec<String>>,
}

impl Constraint {
    /// Parses a constraint; empty is none. The error names the bad part.
    pub fn parse(raw: &str) -> Result<Constraint, String> {
        let s = raw.trim();
        if s.is_empty() {
            return Ok(Constraint::default());
        }
        if let Some(c) = s.chars().find(|c| "[]()*".contains(*c)) {
            return Err(format!("'{raw}': '{c}' (feature counts and groups) is not supported; use & and |"));
        }
        let any_of = s
            .split('|')
            .map(|alt| {
                alt.split('&')
                    .map(|f| {
                        let f = f.trim();
                        let ok = !f.is_empty()
                            && f.chars().all(|c| c.is_ascii_alphanumeric() || "_-.:=".contains(c));
                        if ok {
                            Ok(f.to_string())
                        } else {
                            Err(format!("'{raw}': '{f}' is not a feature name"))
                        }
                    })
                    .collect::<Result<Vec<_>, _>>()
            })
            .collect::<Result<Vec<_>, _>>()?;
        Ok(Constraint { any_of })
    }

    /// No features asked.
    pub fn is_empty(&self) -> bool {
        self.any_of.is_empty()
    }

    /// Whether a node with `features` satisfies it (always, when empty).
    pub fn holds(&self, features: &[String]) -> bool {
        self.is_empty() || self.any_of.iter().any(|all| all.iter().all(|f| features.contains(f)))
    }
}

impl fmt::Display for Constraint {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let alts: Vec<String> = self.any_of.iter().map(|a| a.join("&")).collect();
        f.write_str(&alts.join("|"))
    }
}

#[cfg(test)]
mod tests {
    use super::Constraint;

    #[test]
    fn and_binds_tighter_than_or() {
        let c = Constraint::parse("a&b|c").unwrap();
        let has = |fs: &[&str]| c.holds(&fs.iter().map(|s| s.to_string()).collect::<Vec<_>>());
        assert!(has(&["a", "b"]) && has(&["c"]) && !has(&["a"]) && !has(&[]));
        assert_eq!(c.to_string(), "a&b|c");
        assert!(Constraint::parse("").unwrap().holds(&[]));
    }

    #[test]
    fn counts_groups_and_empty_names_are_refused() {
        assert!(Constraint::parse("[a*2&b]").unwrap_err().contains("'['"));
        assert!(Constraint::parse("a&&b").unwrap_err().contains("'' is not a feature name"));
        assert!(Constraint::parse("a|b c").unwrap_err().contains("'b c'"));
    }
}
