//! `--dependency`: Slurm's job dependency expressions, parsed once for the
//! CLI (which checks them before it sends anything) and the controller
//! (which stores and evaluates them).
//!
//! `after:ID[:ID...][+MIN]`, `afterany:`, `afterok:`, `afternotok:`,
//! `aftercorr:`, `singleton`; items joined by `,` (all must hold) or `?`
//! (any one), never both, as Slurm refuses the mix.

use std::fmt;

/// The kind of one dependency item.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum DepKind {
    /// Once the job has started (plus `minutes`), or ended (cancelled before starting).
    After,
    /// Once the job has ended, however.
    AfterAny,
    /// Once the job has ended successfully (COMPLETED, exit 0).
    AfterOk,
    /// Once the job has ended in failure (any end but COMPLETED).
    AfterNotOk,
    /// Array task by task; for a job that is not an array, as `afterok`.
    AfterCorr,
    /// Once no other job of the same user and name is running.
    Singleton,
}

impl DepKind {
    /// Slurm's spelling.
    pub fn as_str(self) -> &'static str {
        match self {
            DepKind::After => "after",
            DepKind::AfterAny => "afterany",
            DepKind::AfterOk => "afterok",
            DepKind::AfterNotOk => "afternotok",
            DepKind::AfterCorr => "aftercorr",
            DepKind::Singleton => "singleton",
        }
    }

    fn parse(s: &str) -> Option<DepKind> {
        Some(match s.to_ascii_lowercase().as_str() {
            "after" => DepKind::After,
            "afterany" => DepKind::AfterAny,
            "afterok" => DepKind::AfterOk,
            "afternotok" => DepKind::AfterNotOk,
            "aftercorr" => DepKind::AfterCorr,
            "singleton" => DepKind::Singleton,
            _ => return None,
        })
    }
}

/// One item: a kind and one job (none for `singleton`).
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct DepItem {
    /// What must happen to the job.
    pub kind: DepKind,
    /// The job depended on; 0 for `singleton`.
    pub job: u64,
    /// `after:ID+MIN`: minutes after its start.
    pub minutes: u32,
}

/// A whole `--dependency` value.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct Dependency {
    /// The items, each with one job.
    pub items: Vec<DepItem>,
    /// `?`: any one item suffices; otherwise all must hold.
    pub any: bool,
}

/// Items past this many are refused: each is looked up every pass.
pub const MAX_ITEMS: usize = 1000;

impl Dependency {
    /// Parses Slurm's syntax; an empty value is no dependency. The error names the item.
    pub fn parse(raw: &str) -> Result<Dependency, String> {
        let s = raw.trim();
        if s.is_empty() {
            return Ok(Dependency::default());
        }
        let (any, all) = (s.contains('?'), s.contains(','));
        if any && all {
            return Err(format!("'{raw}' mixes ',' (all) and '?' (any); Slurm allows one or the other"));
        }
        let mut items = vec![];
        for part in s.split([',', '?']) {
            let part = part.trim();
            let (kind, rest) = part.split_once(':').unwrap_or((part, ""));
            let kind = DepKind::parse(kind).ok_or_else(|| {
                format!(
                    "'{part}': unknown dependency type '{kind}' (after, afterany, afterok, afternotok, aftercorr, singleton)"
                )
            })?;
            if kind == DepKind::Singleton {
                if !rest.is_empty() {
                    return Err(format!("'{part}': singleton takes no job id"));
                }
                items.push(DepItem { kind, job: 0, minutes: 0 });
                continue;
            }
            if rest.is_empty() {
                return Err(format!("'{part}': {} needs a job id", kind.as_str()));
            }
            for id in rest.split(':') {
                let (id, minutes) = match id.split_once('+') {
                    Some((id, m)) if kind == DepKind::After => {
                        let m = m
                            .parse::<u32>()
                            .map_err(|_| format!("'{part}': '+{m}' is not a number of minutes"))?;
                        (id, m)
                    }
                    Some(_) => return Err(format!("'{part}': only after takes +minutes")),
                    None => (id, 0),
                };
                if id.contains('_') {
                    return Err(format!(
                        "'{part}': array task ids ('{id}') are not supported yet; name the job"
                    ));
                }
                let job = id.parse::<u64>().ok().filter(|j| *j > 0);
                let job = job.ok_or_else(|| format!("'{part}': '{id}' is not a job id"))?;
                items.push(DepItem { kind, job, minutes });
                // Checked per id: one item may name many jobs (`afterok:1:2:3`).
                if items.len() > MAX_ITEMS {
                    return Err(format!("more than {MAX_ITEMS} dependencies"));
                }
            }
        }
        Ok(Dependency { items, any })
    }

    /// No items.
    pub fn is_empty(&self) -> bool {
        self.items.is_empty()
    }

    /// The jobs named, in order, without `singleton`.
    pub fn jobs(&self) -> impl Iterator<Item = u64> + '_ {
        self.items.iter().filter(|i| i.kind != DepKind::Singleton).map(|i| i.job)
    }
}

impl fmt::Display for DepItem {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self.kind {
            DepKind::Singleton => f.write_str("singleton"),
            k if self.minutes > 0 => write!(f, "{}:{}+{}", k.as_str(), self.job, self.minutes),
            k => write!(f, "{}:{}", k.as_str(), self.job),
        }
    }
}

/// Slurm's canonical form: one item per job, joined by `,` or `?`.
impl fmt::Display for Dependency {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let sep = if self.any { "?" } else { "," };
        for (i, item) in self.items.iter().enumerate() {
            if i > 0 {
                f.write_str(sep)?;
            }
            write!(f, "{item}")?;
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_kind_and_both_joins_parse_and_print_canonically() {
        let d = Dependency::parse("afterok:12:13,after:5+10,singleton").unwrap();
        assert!(!d.any);
        assert_eq!(d.to_string(), "afterok:12,afterok:13,after:5+10,singleton");
        assert_eq!(d.jobs().collect::<Vec<_>>(), [12, 13, 5]);
        let d = Dependency::parse("afternotok:7?afterany:8?aftercorr:9").unwrap();
        assert!(d.any);
        assert_eq!(d.to_string(), "afternotok:7?afterany:8?aftercorr:9");
        assert!(Dependency::parse("  ").unwrap().is_empty());
        assert_eq!(Dependency::parse("AFTEROK:3").unwrap().items[0].kind, DepKind::AfterOk);
    }

    #[test]
    fn bad_expressions_name_the_item() {
        let e = |s: &str| Dependency::parse(s).unwrap_err();
        assert!(e("afterok:1,afterany:2?afterok:3").contains("mixes"));
        assert!(e("afterwards:1").contains("unknown dependency type 'afterwards'"));
        assert!(e("afterok").contains("afterok needs a job id"));
        assert!(e("afterok:x").contains("'x' is not a job id"));
        assert!(e("afterok:0").contains("'0' is not a job id"));
        assert!(e("afterok:3+5").contains("only after takes"));
        assert!(e("after:3+z").contains("'+z'"));
        assert!(e("singleton:4").contains("singleton takes no job id"));
        assert!(e("afterok:12_3").contains("array task ids"));
        let many = format!("afterok:{}", vec!["1"; MAX_ITEMS + 1].join(":"));
        assert!(e(&many).contains("more than"));
    }
}
