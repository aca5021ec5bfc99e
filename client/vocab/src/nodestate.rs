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
    /// In an active reservation's window (`+RESERVED`); `maint` when that one is MAINT.
    pub reserved: bool,
    /// In an active MAINT reservation's window (`+MAINT`).
    pub maint: bool,
}

impl NodeState<'_> {
    fn star(&self) -> &'static str {
        if self.not_responding { "*" } else { "" }
    }

    /// `scontrol show node`: `IDLE`, `MIXED+DRAIN`, `DOWN*`, `IDLE+MAINT+RESERVED`.
    pub fn scontrol(&self) -> String {
        let drain = if self.drain { "+DRAIN" } else { "" };
        let maint = if self.maint { "+MAINT" } else { "" };
        let resv = if self.reserved { "+RESERVED" } else { "" };
        format!("{}{drain}{maint}{resv}{}", self.base.to_ascii_uppercase(), self.star())
    }

    /// Slurm's sinfo names a reserved node by its reservation only while it is
    /// idle and in service: a busy, drained or down node keeps its own state.
    fn resv_word(&self) -> Option<(&'static str, &'static str)> {
        match (self.drain, self.base) {
            (false, "IDLE") if self.maint => Some(("maint", "maint")),
            (false, "IDLE") if self.reserved => Some(("reserved", "resv")),
            _ => None,
        }
    }

    /// `sinfo %T`: `idle`, `mixed`, `allocated`, `down`, `drained`, `draining`, `unknown`.
    pub fn long(&self) -> String {
        if let Some((long, _)) = self.resv_word() {
            return format!("{long}{}", self.star());
        }
        let s = match (self.drain, self.busy) {
            (true, true) if self.base != "DOWN" => "draining".to_string(),
            (true, _) if self.base != "DOWN" => "drained".to_string(),
            _ => self.base.to_ascii_lowercase(),
        };
        format!("{s}{}", self.star())
    }

    /// `sinfo %t`: `idle`, `mix`, `alloc`, `down`, `drain`, `drng`, `unk`.
    pub fn short(&self) -> String {
        if let Some((_, short)) = self.resv_word() {
            return format!("{short}{}", self.star());
        }
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
        let busy = NodeState {
            base: "MIXED",
            drain: true,
            not_responding: false,
            busy: true,
            reserved: false,
            maint: false,
        };
        assert_eq!(
            (busy.short(), busy.long(), busy.scontrol()),
            ("drng".into(), "draining".into(), "MIXED+DRAIN".into())
        );
        let idle = NodeState { base: "IDLE", busy: false, ..busy };
        assert_eq!(
            (idle.short(), idle.long(), idle.scontrol()),
            ("drain".into(), "drained".into(), "IDLE+DRAIN".into())
        );
        let lost = NodeState { base: "DOWN", drain: false, not_responding: true, busy: false, ..busy };
        assert_eq!(
            (lost.short(), lost.long(), lost.scontrol()),
            ("down*".into(), "down*".into(), "DOWN*".into())
        );
    }

    #[test]
    fn reserved_nodes_say_so_while_idle() {
        let idle = NodeState {
            base: "IDLE",
            drain: false,
            not_responding: false,
            busy: false,
            reserved: true,
            maint: true,
        };
        assert_eq!(
            (idle.short(), idle.long(), idle.scontrol()),
            ("maint".into(), "maint".into(), "IDLE+MAINT+RESERVED".into())
        );
        let resv = NodeState { maint: false, ..idle };
        assert_eq!(
            (resv.short(), resv.long(), resv.scontrol()),
            ("resv".into(), "reserved".into(), "IDLE+RESERVED".into())
        );
        let running = NodeState { base: "ALLOCATED", busy: true, ..idle };
        assert_eq!(
            (running.short(), running.scontrol()),
            ("alloc".into(), "ALLOCATED+MAINT+RESERVED".into())
        );
    }
}
