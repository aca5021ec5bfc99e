//! Slurm's spellings of values: wall times, limits, factors, shares.
//! Times come from `spur_vocab::time`, the one definition.
//!
//! Kept apart from the views so the table, the detail view and the edit
//! form show a value the same way an admin would type it to `sacctmgr`.

use ratatui::text::Span;
use spur_vocab::time;

/// Minutes as Slurm prints a time limit (`1-00:00:00`, `02:00:00`), via the shared vocabulary.
pub fn minutes(m: i64) -> String {
    // A negative limit is not valid; show it raw rather than invent a time.
    u64::try_from(m).map(time::format_minutes).unwrap_or_else(|_| m.to_string())
}

/// Seconds in Slurm's time format.
pub fn seconds(s: i64) -> String {
    u64::try_from(s).map(time::format_seconds).unwrap_or_else(|_| s.to_string())
}

/// An optional wall-time limit in minutes: unset is blank, 0 is `00:00:00`.
pub fn wall(m: Option<i64>) -> String {
    m.map(minutes).unwrap_or_default()
}

/// An optional count limit: unset is blank, 0 is "0".
pub fn limit(v: Option<i64>) -> String {
    v.map(|v| v.to_string()).unwrap_or_default()
}

/// A float without trailing zeros (`1`, `1.5`), as an admin would type it.
pub fn factor(v: f64) -> String {
    if v.is_finite() { format!("{v}") } else { String::new() }
}

/// Fairshare is shown as an integer, as `sacctmgr show account` does.
pub fn share(v: f64) -> String {
    if v.is_finite() {
        // Saturating cast: an absurd share must not panic the console.
        format!("{}", v.round() as i64)
    } else {
        String::new()
    }
}

/// Join a list the way sacctmgr prints it (comma, no spaces).
pub fn list(items: &[String]) -> String {
    items.join(",")
}

/// Memory in the largest unit that keeps it short: `512M`, `1.5G`, `2T`.
pub fn mem(mb: u64) -> String {
    const G: u64 = 1024;
    const T: u64 = 1024 * 1024;
    let scaled = |v: u64, unit: u64, suffix: &str| {
        if v.is_multiple_of(unit) || v >= 100 * unit {
            format!("{}{suffix}", v / unit)
        } else {
            format!("{:.1}{suffix}", v as f64 / unit as f64)
        }
    };
    match mb {
        0 => "0".into(),
        m if m >= T => scaled(m, T, "T"),
        m if m >= G => scaled(m, G, "G"),
        m => format!("{m}M"),
    }
}

/// Display width. ASCII (nearly every cell) is its length: measuring
/// thousands of audit cells per frame through unicode-width was the
/// console's hottest path.
pub fn width(s: &str) -> u16 {
    let w = if s.is_ascii() { s.len() } else { Span::raw(s).width() };
    u16::try_from(w).unwrap_or(u16::MAX)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn wall_times_use_slurm_format() {
        assert_eq!(minutes(1440), "1-00:00:00");
        assert_eq!(minutes(120), "02:00:00");
        assert_eq!(minutes(0), "00:00:00");
        assert_eq!(minutes(2 * 1440 + 90), "2-01:30:00");
        assert_eq!(wall(None), "");
        assert_eq!(limit(Some(0)), "0");
        assert_eq!(limit(None), "");
    }

    #[test]
    fn shares_and_factors() {
        assert_eq!(share(50.0), "50");
        assert_eq!(share(f64::NAN), "");
        assert_eq!(factor(1.0), "1");
        assert_eq!(factor(1.5), "1.5");
    }

    #[test]
    fn memory_is_short() {
        assert_eq!(mem(512), "512M");
        assert_eq!(mem(1536), "1.5G");
        assert_eq!(mem(16384), "16G");
        assert_eq!(mem(1024 * 1024 * 2), "2T");
        assert_eq!(mem(0), "0");
    }
}
