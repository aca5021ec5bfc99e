//! Signal names (Linux numbering) and sbatch's `--signal=[{R|B}:]SIG[@secs]`,
//! the warning a job gets before its time limit. The CLI checks with these
//! and the controller acts on the same parse, so both agree on what a spec
//! means.

/// The signals taken by name (`USR1`, `SIGUSR1`, `usr1`), Linux numbering.
pub const SIGNALS: &[(&str, i32)] = &[
    ("HUP", 1),
    ("INT", 2),
    ("QUIT", 3),
    ("ABRT", 6),
    ("KILL", 9),
    ("USR1", 10),
    ("USR2", 12),
    ("ALRM", 14),
    ("TERM", 15),
    ("CONT", 18),
    ("STOP", 19),
    ("TSTP", 20),
    ("TTIN", 21),
    ("TTOU", 22),
    ("URG", 23),
    ("XCPU", 24),
    ("WINCH", 28),
];

/// `TERM`, `SIGTERM`, `term` or `15`. Zero is refused: on the wire it means "no signal".
pub fn parse_signal(raw: &str) -> Result<i32, String> {
    let t = raw.trim();
    if let Ok(n) = t.parse::<i32>() {
        return if (1..=64).contains(&n) { Ok(n) } else { Err(format!("invalid signal '{raw}' (1-64)")) };
    }
    let up = t.to_ascii_uppercase();
    let name = up.strip_prefix("SIG").unwrap_or(&up);
    SIGNALS.iter().find(|(n, _)| *n == name).map(|(_, v)| *v).ok_or_else(|| {
        let known: Vec<&str> = SIGNALS.iter().map(|(n, _)| *n).collect();
        format!("invalid signal '{raw}' (use a number or {})", known.join(", "))
    })
}

/// Slurm's default lead time when `@secs` is left out.
pub const DEFAULT_WARN_SECS: u32 = 60;

/// The most `@secs` sbatch takes (Slurm's limit, 0xffff - 2).
pub const MAX_WARN_SECS: u32 = 65_533;

/// A parsed `--signal`: which signal, how long before the time limit, and to whom.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct WarnSignal {
    /// The signal's number.
    pub signal: i32,
    /// Seconds before the end of the time limit.
    pub secs: u32,
    /// `B:`: the batch shell alone. Without it the job's steps get it, not
    /// the batch shell, as in Slurm.
    pub batch_only: bool,
}

impl WarnSignal {
    /// `[{R|B}:]SIG[@secs]`. `R:` (reservation) is accepted and changes nothing here.
    pub fn parse(v: &str) -> Result<WarnSignal, String> {
        let t = v.trim();
        let (flags, body) = match t.split_once(':') {
            Some((pre, rest)) if ["B", "R", "RB", "BR"].contains(&pre) => (pre, rest),
            _ => ("", t),
        };
        let (sig, secs) = body.split_once('@').map_or((body, None), |(s, n)| (s, Some(n)));
        let signal = parse_signal(sig).map_err(|_| format!("'{v}': '{sig}' is not a signal"))?;
        let secs =
            match secs {
                None => DEFAULT_WARN_SECS,
                Some(n) => n.parse::<u32>().ok().filter(|n| *n <= MAX_WARN_SECS).ok_or_else(|| {
                    format!("'{v}': '@{n}' is not a number of seconds (0 to {MAX_WARN_SECS})")
                })?,
            };
        Ok(WarnSignal { signal, secs, batch_only: flags.contains('B') })
    }

    /// When it is due for a job whose run ends at `deadline_ms` (epoch ms).
    pub fn due_ms(&self, deadline_ms: i64) -> i64 {
        deadline_ms.saturating_sub(i64::from(self.secs) * 1000)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_numbers_and_bad_signals() {
        assert_eq!(parse_signal("SIGTERM"), Ok(15));
        assert_eq!(parse_signal("usr2"), Ok(12));
        assert_eq!(parse_signal(" 10 "), Ok(10));
        assert!(parse_signal("0").is_err() && parse_signal("65").is_err());
        assert!(parse_signal("FOO").unwrap_err().contains("USR1"));
    }

    #[test]
    fn warn_specs_as_sbatch_takes_them() {
        let w = |v| WarnSignal::parse(v).unwrap();
        assert_eq!(w("USR2@90"), WarnSignal { signal: 12, secs: 90, batch_only: false });
        assert_eq!(w("B:USR1"), WarnSignal { signal: 10, secs: 60, batch_only: true });
        assert_eq!(w("RB:10@0"), WarnSignal { signal: 10, secs: 0, batch_only: true });
        assert_eq!(w("R:SIGINT@5"), WarnSignal { signal: 2, secs: 5, batch_only: false });
        assert_eq!(w("USR1@90").due_ms(100_000), 10_000);
        assert_eq!(w("USR1@90").due_ms(i64::MIN), i64::MIN, "saturates");
    }

    #[test]
    fn bad_warn_specs_name_the_part() {
        let e = |v| WarnSignal::parse(v).unwrap_err();
        assert!(e("FOO@1").contains("'FOO' is not a signal"), "{}", e("FOO@1"));
        assert!(e("X:USR1").contains("'X:USR1' is not a signal"), "{}", e("X:USR1"));
        assert!(e("USR1@x").contains("'@x'"));
        assert!(e("USR1@65534").contains("0 to 65533"));
        assert!(e("USR1@-1").contains("'@-1'"));
    }
}
