//! Slurm's time formats: parsing limits typed by an admin, rendering them back.

/// The largest time limit a job may have, in minutes: the largest finite
/// value of Slurm's 32-bit time limit (whose top two values are its NO_VAL
/// and INFINITE), some 8,000 years. Past it a deadline in milliseconds is
/// still far inside an i64, so no arithmetic on a limit can overflow.
pub const MAX_TIME_LIMIT_MINUTES: u64 = u32::MAX as u64 - 2;

/// Parses a wall-clock limit into whole minutes (seconds are truncated).
///
/// A bare integer is minutes; `hh:mm`, `hh:mm:ss`, `d-hh`, `d-hh:mm` and
/// `d-hh:mm:ss` follow Slurm.
pub fn parse_minutes(raw: &str) -> Result<u64, String> {
    parse_secs(raw, Bare::Minutes).map(|s| s / 60)
}

/// A job's time limit: [`parse_minutes`], at most [`MAX_TIME_LIMIT_MINUTES`].
pub fn parse_limit(raw: &str) -> Result<u64, String> {
    parse_minutes(raw).and_then(check_limit)
}

/// `minutes` when a job may have it as its time limit; the error says the largest.
pub fn check_limit(minutes: u64) -> Result<u64, String> {
    if minutes <= MAX_TIME_LIMIT_MINUTES {
        Ok(minutes)
    } else {
        Err(format!(
            "{minutes} minutes is more than the largest time limit, {MAX_TIME_LIMIT_MINUTES} minutes \
             ({}); for no limit give UNLIMITED",
            format_minutes(MAX_TIME_LIMIT_MINUTES)
        ))
    }
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
    let part = |p: &str| num(p).and_then(|v| minute_part(v, raw));
    let (d, h, m, sec) = match (days, parts.as_slice()) {
        (None, [n]) => match bare {
            Bare::Minutes => (0, 0, num(n)?, 0),
            Bare::Seconds => (0, 0, 0, num(n)?),
        },
        (None, [h, m]) => (0, num(h)?, part(m)?, 0),
        (None, [h, m, sec]) => (0, num(h)?, part(m)?, part(sec)?),
        (Some(d), [h]) => (d, num(h)?, 0, 0),
        (Some(d), [h, m]) => (d, num(h)?, part(m)?, 0),
        (Some(d), [h, m, sec]) => (d, num(h)?, part(m)?, part(sec)?),
        _ => return Err(bad()),
    };
    // Checked, so a huge field is an error rather than an overflow.
    [(d, 86400), (h, 3600), (m, 60), (sec, 1)]
        .iter()
        .try_fold(0u64, |acc, &(v, unit)| v.checked_mul(unit).and_then(|t| acc.checked_add(t)))
        .ok_or_else(bad)
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

/// squeue's duration style: `0:00`, `5:03`, `1:00:00`, `2-03:04:05`.
pub fn squeue_secs(secs: u64) -> String {
    let mut out = String::new();
    let _ = squeue_secs_into(&mut out, secs);
    out
}

/// [`squeue_secs`] appended to `out`.
pub fn squeue_secs_into(out: &mut String, secs: u64) -> std::fmt::Result {
    use std::fmt::Write;
    let (d, h, m, s) = (secs / 86400, (secs / 3600) % 24, (secs / 60) % 60, secs % 60);
    match (d, h) {
        (0, 0) => write!(out, "{m}:{s:02}"),
        (0, _) => write!(out, "{h}:{m:02}:{s:02}"),
        _ => write!(out, "{d}-{h:02}:{m:02}:{s:02}"),
    }
}

/// How squeue, sacct and scontrol print a job or partition without a time limit.
pub const UNLIMITED: &str = "UNLIMITED";

/// A time limit: whole minutes, or none. The one parser of Slurm's spellings
/// of "no limit" (`UNLIMITED`, `INFINITE`, any case) and the one renderer.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum TimeLimit {
    /// Minutes, at most [`MAX_TIME_LIMIT_MINUTES`].
    Minutes(u64),
    /// No limit.
    Unlimited,
}

impl TimeLimit {
    /// `UNLIMITED`, `INFINITE` (any case), or a time as [`parse_limit`] reads it.
    pub fn parse(raw: &str) -> Result<TimeLimit, String> {
        let t = raw.trim();
        if t.eq_ignore_ascii_case("unlimited") || t.eq_ignore_ascii_case("infinite") {
            Ok(TimeLimit::Unlimited)
        } else {
            parse_limit(t).map(TimeLimit::Minutes)
        }
    }

    /// A job's request (`sbatch -t`): as [`TimeLimit::parse`], and `0` asks for no limit as in Slurm.
    pub fn parse_request(raw: &str) -> Result<TimeLimit, String> {
        match raw.trim() {
            "0" => Ok(TimeLimit::Unlimited),
            t => TimeLimit::parse(t),
        }
    }

    /// From the stored form, where None is no limit.
    pub fn from_minutes(minutes: Option<u64>) -> TimeLimit {
        minutes.map_or(TimeLimit::Unlimited, TimeLimit::Minutes)
    }

    /// The stored form: None is no limit.
    pub fn minutes(self) -> Option<u64> {
        match self {
            TimeLimit::Minutes(m) => Some(m),
            TimeLimit::Unlimited => None,
        }
    }
}

impl std::fmt::Display for TimeLimit {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            TimeLimit::Minutes(m) => f.write_str(&format_minutes(*m)),
            TimeLimit::Unlimited => f.write_str(UNLIMITED),
        }
    }
}

/// A stored limit (None is no limit) as Slurm prints it: `UNLIMITED` or `1-00:00:00`.
pub fn format_limit(minutes: Option<u64>) -> String {
    TimeLimit::from_minutes(minutes).to_string()
}

/// A duration written as whole seconds (`60`) or as text (`"60s"`, `"5m"`,
/// `"1h"`, or Slurm's `hh:mm:ss`), as the provisioner spec writes them.
#[derive(Debug, Clone, serde::Deserialize, PartialEq)]
#[serde(untagged)]
pub enum Seconds {
    /// `60`.
    Whole(u64),
    /// `"60s"`, `"5m"`, `"1h"`, `"00:01:00"`.
    Text(String),
}

impl Seconds {
    /// The duration in seconds, or why the text is not one.
    pub fn secs(&self) -> Result<u64, String> {
        let t = match self {
            Seconds::Whole(n) => return Ok(*n),
            Seconds::Text(t) => t.trim(),
        };
        let unit = |suffix: &str, mult: u64| -> Option<Result<u64, String>> {
            let n = t.strip_suffix(suffix)?;
            let n = n.trim().parse::<u64>().ok().and_then(|n| n.checked_mul(mult));
            Some(n.ok_or_else(|| format!("'{t}' is not a duration")))
        };
        unit("s", 1).or_else(|| unit("m", 60)).or_else(|| unit("h", 3600)).unwrap_or_else(|| {
            parse_seconds(t).map_err(|_| format!("'{t}' is not a duration (60, 60s, 5m, 1h)"))
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn time_limit_reads_every_no_limit_spelling_and_renders_back() {
        for raw in ["UNLIMITED", "unlimited", " Infinite "] {
            assert_eq!(TimeLimit::parse(raw), Ok(TimeLimit::Unlimited));
        }
        assert_eq!(TimeLimit::parse("0"), Ok(TimeLimit::Minutes(0)));
        assert_eq!(TimeLimit::parse_request("0"), Ok(TimeLimit::Unlimited));
        assert_eq!(TimeLimit::parse("1-00:00"), Ok(TimeLimit::Minutes(1440)));
        assert!(TimeLimit::parse("forever").unwrap_err().contains("'forever'"));
        assert!(TimeLimit::parse("99999999999").is_err());
        assert_eq!(format_limit(None), "UNLIMITED");
        assert_eq!(format_limit(Some(90)), "01:30:00");
        assert_eq!(TimeLimit::from_minutes(Some(5)).minutes(), Some(5));
    }

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
    fn huge_fields_are_errors_not_overflows() {
        for raw in ["18446744073709551615", "99999999999999999:00", "213503982334602-00:00:00"] {
            assert!(parse_minutes(raw).unwrap_err().contains(&format!("'{raw}'")), "{raw}");
        }
    }

    #[test]
    fn limits_stop_at_slurms_largest_finite_value() {
        assert_eq!(parse_limit("4294967293"), Ok(4_294_967_293));
        let err = parse_limit("4294967294").unwrap_err();
        assert!(err.contains("largest time limit, 4294967293 minutes"), "{err}");
        assert!(parse_limit(&u64::MAX.to_string()).is_err());
        assert_eq!(check_limit(60), Ok(60));
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
