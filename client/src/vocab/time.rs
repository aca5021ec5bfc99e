//! Slurm's time formats: parsing limits typed by an admin, rendering them back.

/// Parses a wall-clock limit into whole minutes (seconds are truncated).
///
/// A bare integer is minutes; `hh:mm`, `hh:mm:ss`, `d-hh`, `d-hh:mm` and
/// `d-hh:mm:ss` follow Slurm.
pub fn parse_minutes(raw: &str) -> Result<u64, String> {
    parse_secs(raw, Bare::Minutes).map(|s| s / 60)
}

/// Parses a duration in seconds: a bare integer is seconds, and the Slurm
/// time formats are accepted too (`preemptexempttime=120` or `00:02:00`).
pub fn parse_seconds(raw: &str) -> Result<u64, String> {
    parse_secs(raw, Bare::Seconds)
}

#[derive(Clone, Copy)]
enum Bare {
    Minutes,
    Seconds,
}

const EXPECTED: &str = "expected minutes, hh:mm, hh:mm:ss, d-hh, d-hh:mm or d-hh:mm:ss";

fn parse_secs(raw: &str, bare: Bare) -> Result<u64, String> {
    let s = raw.trim();
    let bad = || format!("'{raw}' is not a time ({EXPECTED})");
    let num = |p: &str| -> Result<u64, String> {
        if p.is_empty() || !p.bytes().all(|b| b.is_ascii_digit()) {
            return Err(bad());
        }
        p.parse::<u64>().map_err(|_| bad())
    };
    let (days, rest) = match s.split_once('-') {
        Some((d, r)) => (Some(num(d)?), r),
        None => (None, s),
    };
    let parts: Vec<&str> = rest.split(':').collect();
    let secs = match (days, parts.as_slice()) {
        (None, [n]) => match bare {
            Bare::Minutes => num(n)?.checked_mul(60).ok_or_else(bad)?,
            Bare::Seconds => num(n)?,
        },
        (None, [h, m]) => num(h)? * 3600 + minute_part(num(m)?, raw)? * 60,
        (None, [h, m, sec]) => {
            num(h)? * 3600 + minute_part(num(m)?, raw)? * 60 + minute_part(num(sec)?, raw)?
        }
        (Some(d), [h]) => d * 86400 + num(h)? * 3600,
        (Some(d), [h, m]) => d * 86400 + num(h)? * 3600 + minute_part(num(m)?, raw)? * 60,
        (Some(d), [h, m, sec]) => {
            d * 86400 + num(h)? * 3600 + minute_part(num(m)?, raw)? * 60 + minute_part(num(sec)?, raw)?
        }
        _ => return Err(bad()),
    };
    Ok(secs)
}

fn minute_part(v: u64, raw: &str) -> Result<u64, String> {
    if v < 60 {
        Ok(v)
    } else {
        Err(format!("'{raw}' has a minutes or seconds field of {v}, which must be below 60"))
    }
}

/// Renders minutes the way Slurm does: `1-00:00:00`, `02:30:00`.
pub fn format_minutes(minutes: u64) -> String {
    format_seconds(minutes.saturating_mul(60))
}

/// Renders seconds the way Slurm does: `1-00:00:00`, `00:02:00`.
pub fn format_seconds(secs: u64) -> String {
    let (d, rem) = (secs / 86400, secs % 86400);
    let (h, m, s) = (rem / 3600, (rem % 3600) / 60, rem % 60);
    if d > 0 { format!("{d}-{h:02}:{m:02}:{s:02}") } else { format!("{h:02}:{m:02}:{s:02}") }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parses_every_slurm_form() {
        let cases = [
            ("600", 600),
            ("10:00", 600),
            ("10:00:59", 600),
            ("1-00:00:00", 1440),
            ("1-02", 1560),
            ("2-01:30", 2970),
            ("0", 0),
        ];
        for (raw, want) in cases {
            assert_eq!(parse_minutes(raw), Ok(want), "{raw}");
        }
    }

    #[test]
    fn rejects_garbage_with_the_value_named() {
        for raw in ["abc", "", "1:2:3:4", "-5", "1-", "10:75", "1.5", "x-01:00"] {
            let err = parse_minutes(raw).unwrap_err();
            assert!(err.contains(&format!("'{raw}'")), "{raw}: {err}");
        }
    }

    #[test]
    fn seconds_take_a_bare_integer_as_seconds() {
        assert_eq!(parse_seconds("120"), Ok(120));
        assert_eq!(parse_seconds("00:02:00"), Ok(120));
    }

    #[test]
    fn renders_like_slurm() {
        assert_eq!(format_minutes(1440), "1-00:00:00");
        assert_eq!(format_minutes(150), "02:30:00");
        assert_eq!(format_minutes(0), "00:00:00");
        assert_eq!(format_seconds(59), "00:00:59");
    }
}
