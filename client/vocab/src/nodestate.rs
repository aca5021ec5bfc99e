//! Node state names, as Slurm spells them in each place: `scontrol show
//! node` (`IDLE+DRAIN`, `DOWN*`), `sinfo %t` (`drain`, `drng`, `idle*`) and
//! `sinfo %T` (`drained`, `draining`).

/// The parts of a node's state, as the controller reports them.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct NodeState<'a> {
    /// IDLE | MIXED | ALLOCATED | DOWN | UNKNOWN
    pub base: &'a str,
    /// Drained or draining.
    pub drain: bool,
    /// Its agent has stopped answering.
    pub not_responding: bool,
    /// Jobs still run on it (DRAINING rather than DRAINED).
    pub busy: bool,
}

impl NodeState<'_> {
    fn star(&self) -> &'static str {
        if self.not_responding { "*" } else { "" }
    }

    /// `scontrol show node`: `IDLE`, `MIXED+DRAIN`, `DOWN*`.
    pub fn scontrol(&self) -> String {
        let drain = if self.drain { "+DRAIN" } else { "" };
        format!("{}{drain}{}", self.base.to_ascii_uppercase(), self.star())
    }

    /// `sinfo %T`: `idle`, `mixed`, `allocated`, `down`, `drained`, `draining`, `unknown`.
    pub fn long(&self) -> String {
        let s = match (self.drain, self.busy) {
            (true, true) if self.base != "DOWN" => "draining".to_string(),
            (true, _) if self.base != "DOWN" => "drained".to_string(),
            _ => self.base.to_ascii_lowercase(),
        };
        format!("{s}{}", self.star())
    }

    /// `sinfo %t`: `idle`, `mix`, `alloc`, `down`, `drain`, `drng`, `unk`.
    pub fn short(&self) -> String {
        let s = match (self.drain, self.busy, self.base) {
            (true, true, b) if b != "DOWN" => "drng",
            (true, _, b) if b != "DOWN" => "drain",
            (_, _, "IDLE") => "idle",
            (_, _, "MIXED") => "mix",
            (_, _, "ALLOCATED") => "alloc",
            (_, _, "DOWN") => "down",
            _ => "unk",
        };
        format!("{s}{}", self.star())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn drain_shows_draining_then_drained() {
        let busy = NodeState { base: "MIXED", drain: true, not_responding: false, busy: true };
        assert_eq!(
            (busy.short(), busy.long(), busy.scontrol()),
            ("drng".into(), "draining".into(), "MIXED+DRAIN".into())
        );
        let idle = NodeState { base: "IDLE", busy: false, ..busy };
        assert_eq!(
            (idle.short(), idle.long(), idle.scontrol()),
            ("drain".into(), "drained".into(), "IDLE+DRAIN".into())
        );
        let lost = NodeState { base: "DOWN", drain: false, not_responding: true, busy: false };
        assert_eq!(
            (lost.short(), lost.long(), lost.scontrol()),
            ("down*".into(), "down*".into(), "DOWN*".into())
        );
    }
}
