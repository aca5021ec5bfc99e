//! Enumerated names (preempt modes, admin levels, QOS flags) with their spellings.

use serde::{Deserialize, Serialize};

#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
/// What a preemptor does to the job it preempts.
pub enum PreemptMode {
    #[default]
    /// Never preempted.
    Off,
    /// Cancelled.
    Cancel,
    /// Requeued.
    Requeue,
    /// Suspended until the preemptor ends.
    Suspend,
}

impl PreemptMode {
    /// Every mode.
    pub const ALL: [PreemptMode; 4] = [Self::Off, Self::Cancel, Self::Requeue, Self::Suspend];

    /// Slurm's spelling.
    pub fn as_str(self) -> &'static str {
        match self {
            Self::Off => "off",
            Self::Cancel => "cancel",
            Self::Requeue => "requeue",
            Self::Suspend => "suspend",
        }
    }

    /// Any case.
    pub fn parse(raw: &str) -> Result<Self, String> {
        let lower = raw.trim().to_ascii_lowercase();
        if lower.is_empty() {
            return Ok(Self::Off);
        }
        Self::ALL
            .into_iter()
            .find(|m| m.as_str() == lower)
            .ok_or_else(|| format!("'{raw}' is not a preempt mode (off, cancel, requeue, suspend)"))
    }
}

/// Slurm's admin levels. `Admin` and `SuperUser` are stored as Administrator.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Default, Serialize, Deserialize)]
pub enum AdminLevel {
    #[default]
    /// An ordinary user.
    None,
    /// An operator.
    Operator,
    /// An administrator.
    Administrator,
}

impl AdminLevel {
    /// Slurm's spelling.
    pub fn as_str(self) -> &'static str {
        match self {
            Self::None => "None",
            Self::Operator => "Operator",
            Self::Administrator => "Administrator",
        }
    }

    /// Any case.
    pub fn parse(raw: &str) -> Result<Self, String> {
        match raw.trim().to_ascii_lowercase().as_str() {
            "none" | "" => Ok(Self::None),
            "operator" => Ok(Self::Operator),
            "admin" | "administrator" | "superuser" => Ok(Self::Administrator),
            _ => Err(format!("'{raw}' is not an admin level (None, Operator, Admin)")),
        }
    }
}

/// QOS flags. Only DenyOnLimit is supported; anything else is refused by name.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize)]
#[serde(into = "String", try_from = "String")]
pub struct QosFlags {
    /// `DenyOnLimit`: refuse at submit what a limit would hold.
    pub deny_on_limit: bool,
}

impl QosFlags {
    /// A comma-separated list of flags.
    pub fn parse(raw: &str) -> Result<Self, String> {
        let mut flags = QosFlags::default();
        for f in raw.split(',').map(str::trim).filter(|f| !f.is_empty()) {
            match f.to_ascii_lowercase().as_str() {
                "denyonlimit" => flags.deny_on_limit = true,
                "-1" | "none" => flags = QosFlags::default(),
                _ => return Err(format!("unknown QOS flag '{f}' (supported: DenyOnLimit)")),
            }
        }
        Ok(flags)
    }

    /// The flags set, by name.
    pub fn names(self) -> Vec<&'static str> {
        let mut out = vec![];
        if self.deny_on_limit {
            out.push("DenyOnLimit");
        }
        out
    }
}

impl From<QosFlags> for String {
    fn from(f: QosFlags) -> String {
        f.names().join(",")
    }
}

impl TryFrom<String> for QosFlags {
    type Error = String;
    fn try_from(s: String) -> Result<Self, String> {
        QosFlags::parse(&s)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn admin_spellings_store_as_administrator() {
        for raw in ["Admin", "administrator", "SuperUser"] {
            assert_eq!(AdminLevel::parse(raw), Ok(AdminLevel::Administrator));
        }
        assert_eq!(AdminLevel::parse("Operator"), Ok(AdminLevel::Operator));
        assert!(AdminLevel::parse("root").unwrap_err().contains("'root'"));
    }

    #[test]
    fn preempt_modes_round_trip() {
        for m in PreemptMode::ALL {
            assert_eq!(PreemptMode::parse(m.as_str()), Ok(m));
        }
        assert!(PreemptMode::parse("kill").is_err());
    }

    #[test]
    fn flags_refuse_unknown_names() {
        assert!(QosFlags::parse("DenyOnLimit").unwrap().deny_on_limit);
        assert!(QosFlags::parse("NoReserve").unwrap_err().contains("NoReserve"));
    }
}
