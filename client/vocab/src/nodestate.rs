//! Node state names, as Slurm spells them in each place: `scontrol show
//! node` (`IDLE+DRAIN`, `DOWN*`), `sinfo %t` (`drain`, `drng`, `idle*`) and
//! `sinfo %T` (`drained`, `draining`), and `sinfo -O StateComplete`
//! (`IDLE+DRAIN+DYNAMIC_NORM`).

/// A dynamic node (not in spur.conf) as `scontrol show node` flags it: NORM
/// once an agent registered it, CLOUD (powered down) or FUTURE while a node
/// `scontrol create` made waits for its agent.
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
#[serde(rename_all = "UPPERCASE")]
pub enum Dynamic {
    /// An agent registered it (`spurd --dynamic`).
    Norm,
    /// Created with `State=CLOUD`: powered down until its agent registers.
    Cloud,
    /// Created with `State=FUTURE`: not yet in service.
    Future,
    /// Borrowed through a pilot job upstream that has not registered yet
    /// (Slurm's cloud node powering up).
    #[serde(rename = "POWERING_UP")]
    PoweringUp,
}

impl Dynamic {
    /// Every state, in order.
    pub const ALL: [Dynamic; 4] = [Dynamic::Norm, Dynamic::Cloud, Dynamic::Future, Dynamic::PoweringUp];

    /// The wire's (and `scontrol create State=`'s) spelling.
    pub fn as_str(self) -> &'static str {
        match self {
            Dynamic::Norm => "NORM",
            Dynamic::Cloud => "CLOUD",
            Dynamic::Future => "FUTURE",
            Dynamic::PoweringUp => "POWERING_UP",
        }
    }

    /// The wire's spelling back (`Node.dynamic`); empty or unknown is a node of spur.conf.
    pub fn parse(s: &str) -> Option<Dynamic> {
        Dynamic::ALL.into_iter().find(|d| d.as_str().eq_ignore_ascii_case(s.trim()))
    }
}

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
    /// A dynamic node, and whether it still waits for its agent.
    pub dynamic: Option<Dynamic>,
}

impl NodeState<'_> {
    fn star(&self) -> &'static str {
        if self.not_responding { "*" } else { "" }
    }

    /// `scontrol show node`: `IDLE`, `MIXED+DRAIN`, `DOWN*`, `IDLE+MAINT+RESERVED`,
    /// `IDLE+DYNAMIC_NORM`, `IDLE+CLOUD+POWERED_DOWN+DYNAMIC_NORM`, `FUTURE+DYNAMIC_NORM`.
    pub fn scontrol(&self) -> String {
        let drain = if self.drain { "+DRAIN" } else { "" };
        let maint = if self.maint { "+MAINT" } else { "" };
        let resv = if self.reserved { "+RESERVED" } else { "" };
        format!("{}{drain}{maint}{resv}{}{}", self.base_word(), self.dynamic_flags(), self.star())
    }

    /// The base as Slurm names it: a created dynamic node waiting for its
    /// agent is FUTURE, or IDLE (powered down) when CLOUD.
    fn base_word(&self) -> String {
        match self.dynamic {
            Some(Dynamic::Future) => "FUTURE".into(),
            Some(Dynamic::Cloud | Dynamic::PoweringUp) if self.base.eq_ignore_ascii_case("UNKNOWN") => {
                "IDLE".into()
            }
            _ => self.base.to_ascii_uppercase(),
        }
    }

    fn dynamic_flags(&self) -> &'static str {
        match self.dynamic {
            None => "",
            Some(Dynamic::Norm | Dynamic::Future) => "+DYNAMIC_NORM",
            Some(Dynamic::Cloud) => "+CLOUD+POWERED_DOWN+DYNAMIC_NORM",
            Some(Dynamic::PoweringUp) => "+CLOUD+POWERING_UP+DYNAMIC_NORM",
        }
    }

    /// `sinfo -O StateComplete`: every flag, `IDLE+DRAIN+NOT_RESPONDING+DYNAMIC_NORM`.
    pub fn complete(&self) -> String {
        let mut s = self.base_word();
        for (on, flag) in [(self.drain, "+DRAIN"), (self.not_responding, "+NOT_RESPONDING")] {
            if on {
                s.push_str(flag);
            }
        }
        s.push_str(self.dynamic_flags());
        s
    }

    /// A created dynamic node waiting for its agent: Slurm's `idle~` (powered
    /// down) for CLOUD, `future`/`futr` for FUTURE.
    fn waiting_word(&self) -> Option<(&'static str, &'static str)> {
        match self.dynamic {
            Some(Dynamic::Cloud) => Some(("idle~", "idle~")),
            // Slurm's `#`: powering up.
            Some(Dynamic::PoweringUp) => Some(("idle#", "idle#")),
            Some(Dynamic::Future) => Some(("future", "futr")),
            _ => None,
        }
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
        if let Some((long, _)) = self.waiting_word() {
            return long.into();
        }
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
        if let Some((_, short)) = self.waiting_word() {
            return short.into();
        }
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

/// A node state an admin can ask for with `scontrol update State=`; the
/// controller applies it and node history (`sacctmgr show event`) reads it
/// back from the audit row, so both read the words here.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Requested {
    /// `drain`: no new jobs; running ones finish.
    Drain,
    /// `resume`, `idle`, `undrain`, and any word not known: back to service.
    Resume,
    /// `down`: out of service now.
    Down,
}

impl Requested {
    /// An unrecognised state falls back to idle (resume), with a warning, as the spec says.
    pub fn parse(raw: &str) -> (Requested, Option<String>) {
        match raw.trim().to_ascii_lowercase().as_str() {
            "drain" => (Requested::Drain, None),
            "resume" | "idle" | "undrain" => (Requested::Resume, None),
            "down" => (Requested::Down, None),
            other => {
                (Requested::Resume, Some(format!("unrecognised state '{other}'; setting the node idle")))
            }
        }
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
            dynamic: None,
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
            dynamic: None,
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

    #[test]
    fn dynamic_nodes_carry_slurm_s_flags() {
        let idle = NodeState {
            base: "IDLE",
            drain: false,
            not_responding: false,
            busy: false,
            reserved: false,
            maint: false,
            dynamic: Some(Dynamic::Norm),
        };
        assert_eq!(
            (idle.short(), idle.long(), idle.scontrol(), idle.complete()),
            ("idle".into(), "idle".into(), "IDLE+DYNAMIC_NORM".into(), "IDLE+DYNAMIC_NORM".into())
        );
        let cloud = NodeState { base: "UNKNOWN", dynamic: Some(Dynamic::Cloud), ..idle };
        assert_eq!(
            (cloud.short(), cloud.long(), cloud.scontrol()),
            ("idle~".into(), "idle~".into(), "IDLE+CLOUD+POWERED_DOWN+DYNAMIC_NORM".into())
        );
        let future = NodeState { base: "UNKNOWN", dynamic: Some(Dynamic::Future), ..idle };
        assert_eq!(
            (future.short(), future.long(), future.scontrol()),
            ("futr".into(), "future".into(), "FUTURE+DYNAMIC_NORM".into())
        );
        let pilot = NodeState { base: "UNKNOWN", dynamic: Some(Dynamic::PoweringUp), ..idle };
        assert_eq!(
            (pilot.short(), pilot.long(), pilot.complete()),
            ("idle#".into(), "idle#".into(), "IDLE+CLOUD+POWERING_UP+DYNAMIC_NORM".into())
        );
        let drained = NodeState { drain: true, not_responding: true, ..idle };
        assert_eq!(drained.complete(), "IDLE+DRAIN+NOT_RESPONDING+DYNAMIC_NORM");
        for d in Dynamic::ALL {
            assert_eq!(Dynamic::parse(d.as_str()), Some(d));
        }
        assert_eq!(Dynamic::parse(""), None);
    }
}
