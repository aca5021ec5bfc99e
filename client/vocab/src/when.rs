//! Slurm's date-times, as its commands read them (Slurm's `parse_time`):
//! `now[{+|-}N[unit]]`, `HH:MM[:SS] [AM|PM]`, `midnight`, `noon`,
//! `elevenses`, `fika`, `teatime`, `today`, `tomorrow`, `YYYY-MM-DD`,
//! `MMDD[YY]`, `MM/DD[/YY]` and `MM.DD[.YY]`, a date followed by a time
//! after `T`, `-` or a blank. One parser for every command, so `sacct -S`,
//! `sbatch --begin` and `show txn Start=` accept the same words; what differs
//! is only which way a time without a date, or a date without a year, is
//! read ([`Lean`]). Pure: `now` comes from the caller.

use chrono::{DateTime, Datelike, Duration, Local, NaiveDate, NaiveTime, TimeZone, Timelike};

/// Which way an incomplete time is read, as Slurm's `past` flag.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Lean {
    /// A query's bound (sacct's window, `show txn`): a bare time is today's,
    /// `midnight` the one that began today, and a date without a year is
    /// the last one on or before this month.
    Past,
    /// A request (sbatch `--begin`): a bare time is the next one (today's if
    /// it is later than now, to the minute, else tomorrow's), and a date
    /// without a year the next one.
    Future,
}

const FORMS: &str = "now[{+|-}N[seconds|minutes|hours|days|weeks]], HH:MM[:SS], midnight, noon, \
    today, tomorrow, YYYY-MM-DD[THH:MM[:SS]], MM/DD[/YY][-HH:MM[:SS]], MMDD[YY]";

/// The longest date-time read: every form fits in well under it, and past
/// it a value is refused before the search for where its date ends, which
/// tries each `T`, `-` and blank and so costs the square of the length (a
/// 64 KB `show txn Start=` took 1.2 s, a 4 MiB one would take hours).
pub const MAX_WHEN_LEN: usize = 64;

/// A time in Slurm's forms, as Unix ms in local time.
pub fn parse_when(raw: &str, now: DateTime<Local>, lean: Lean) -> Result<i64, String> {
    if raw.len() > MAX_WHEN_LEN {
        let cut: String = raw.chars().take(MAX_WHEN_LEN).collect();
        return Err(format!(
            "'{cut}…' is not a time: {} bytes, more than the {MAX_WHEN_LEN} a date-time may have",
            raw.len()
        ));
    }
    let bad = || format!("'{raw}' is not a time ({FORMS})");
    let s = raw.trim().to_ascii_lowercase();
    if let Some(rest) = s.strip_prefix("now") {
        return relative(rest, now).ok_or_else(bad);
    }
    let (date, time) = split(&s, now.date_naive()).ok_or_else(bad)?;
    let today = now.date_naive();
    let day = match (date, time) {
        (Some(Day::Full(d)), _) => d,
        (Some(Day::NoYear(m, d)), t) => {
            let t = t.unwrap_or(NaiveTime::MIN);
            let later = (m, d, t.hour(), t.minute()) > (now.month(), now.day(), now.hour(), now.minute());
            let year = match lean {
                Lean::Past if m > now.month() => now.year() - 1,
                Lean::Past => now.year(),
                Lean::Future if later => now.year(),
                Lean::Future => now.year() + 1,
            };
            NaiveDate::from_ymd_opt(year, m, d).ok_or_else(bad)?
        }
        (None, Some(t)) => {
            let later = (t.hour(), t.minute()) > (now.hour(), now.minute());
            if lean == Lean::Past || later { today } else { today + Duration::days(1) }
        }
        (None, None) => return Err(bad()),
    };
    let at = day.and_time(time.unwrap_or(NaiveTime::MIN));
    Local.from_local_datetime(&at).earliest().map(|t| t.timestamp_millis()).ok_or_else(bad)
}

/// A date as written: whole, or a month and day whose year depends on the lean.
#[derive(Debug, Clone, Copy)]
enum Day {
    Full(NaiveDate),
    NoYear(u32, u32),
}

/// `+N[unit]` or `-N[unit]` after `now` (seconds without a unit).
fn relative(rest: &str, now: DateTime<Local>) -> Option<i64> {
    let rest = rest.trim();
    if rest.is_empty() {
        return Some(now.timestamp_millis());
    }
    let (sign, rest) = match (rest.strip_prefix('+'), rest.strip_prefix('-')) {
        (Some(r), _) => (1, r.trim_start()),
        (_, Some(r)) => (-1, r.trim_start()),
        _ => return None,
    };
    let digits = rest.bytes().take_while(u8::is_ascii_digit).count();
    let n: i64 = rest[..digits].parse().ok()?;
    let unit = match rest[digits..].trim() {
        "" | "s" | "sec" | "secs" | "second" | "seconds" => 1,
        "m" | "min" | "mins" | "minute" | "minutes" => 60,
        "h" | "hour" | "hours" => 3600,
        "d" | "day" | "days" => 86_400,
        "w" | "week" | "weeks" => 604_800,
        _ => return None,
    };
    let ms = n.checked_mul(unit * 1000)?.checked_mul(sign)?;
    now.timestamp_millis().checked_add(ms)
}

/// The date and the time of `s`: either alone, or a date then a time after
/// `T`, `-` or a blank (`2026-04-01T08:15`, `04/01-08:15`, `0401 noon`).
fn split(s: &str, today: NaiveDate) -> Option<(Option<Day>, Option<NaiveTime>)> {
    if let Some(t) = clock(s) {
        return Some((None, Some(t)));
    }
    if let Some(d) = date(s, today) {
        return Some((Some(d), None));
    }
    s.char_indices().filter(|(_, c)| matches!(c, 't' | '-' | ' ')).find_map(|(i, _)| {
        let (d, t) = (s[..i].trim(), s[i + 1..].trim());
        Some((Some(date(d, today)?), Some(clock(t)?)))
    })
}

/// Whole decimal digits, `len` of them (any of `lens`).
fn digits(s: &str, lens: &[usize]) -> Option<u32> {
    (lens.contains(&s.len()) && s.bytes().all(|b| b.is_ascii_digit())).then(|| s.parse().ok()).flatten()
}

/// `HH:MM[:SS]` with an optional `AM`/`PM`, or a named hour.
fn clock(s: &str) -> Option<NaiveTime> {
    let named = match s {
        "midnight" => Some(0),
        "elevenses" => Some(11),
        "noon" => Some(12),
        "fika" => Some(15),
        "teatime" => Some(16),
        _ => None,
    };
    if let Some(h) = named {
        return NaiveTime::from_hms_opt(h, 0, 0);
    }
    let (body, half) = match s.strip_suffix("am").or_else(|| s.strip_suffix("pm")) {
        Some(b) => (b.trim_end(), Some(s.ends_with("pm"))),
        None => (s, None),
    };
    let parts: Vec<&str> = body.split(':').collect();
    let (h, m, sec) = match parts.as_slice() {
        [h, m] => (digits(h, &[1, 2])?, digits(m, &[2])?, 0),
        [h, m, sec] => (digits(h, &[1, 2])?, digits(m, &[2])?, digits(sec, &[2])?),
        _ => return None,
    };
    let h = match half {
        Some(_) if !(1..=12).contains(&h) => return None,
        Some(pm) => h % 12 + if pm { 12 } else { 0 },
        None => h,
    };
    NaiveTime::from_hms_opt(h, m, sec)
}

/// `today`, `tomorrow`, `YYYY-MM-DD`, `MM/DD[/YY]`, `MM.DD[.YY]`, `MMDD[YY]`.
fn date(s: &str, today: NaiveDate) -> Option<Day> {
    match s {
        "today" => return Some(Day::Full(today)),
        "tomorrow" => return Some(Day::Full(today + Duration::days(1))),
        _ => {}
    }
    let full = |y: i32, m: u32, d: u32| NaiveDate::from_ymd_opt(y, m, d).map(Day::Full);
    // Two-digit years are this century's, as Slurm reads them.
    let year = |y: &str| digits(y, &[2, 4]).map(|n| if y.len() == 2 { 2000 + n as i32 } else { n as i32 });
    let parts: Vec<&str> = s.split(['-', '/', '.']).collect();
    let md = |m: &str, d: &str| Some((digits(m, &[1, 2])?, digits(d, &[1, 2])?));
    match (parts.as_slice(), s.contains('-')) {
        ([y, m, d], true) if y.len() == 4 => full(year(y)?, digits(m, &[1, 2])?, digits(d, &[1, 2])?),
        (_, true) => None,
        ([m, d], _) => md(m, d).and_then(|(m, d)| no_year(m, d)),
        ([m, d, y], _) => md(m, d).and_then(|(m, d)| full(year(y)?, m, d)),
        ([one], _) if digits(one, &[4, 6]).is_some() => {
            let (m, d) = md(&one[..2], &one[2..4])?;
            if one.len() == 6 { full(year(&one[4..])?, m, d) } else { no_year(m, d) }
        }
        _ => None,
    }
}

/// A month and day that exist in some year (29 February included).
fn no_year(m: u32, d: u32) -> Option<Day> {
    NaiveDate::from_ymd_opt(2000, m, d).map(|_| Day::NoYear(m, d))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn at(y: i32, m: u32, d: u32, h: u32, mi: u32) -> i64 {
        Local.with_ymd_and_hms(y, m, d, h, mi, 0).unwrap().timestamp_millis()
    }

    fn now() -> DateTime<Local> {
        Local.with_ymd_and_hms(2026, 3, 10, 14, 30, 0).unwrap()
    }

    #[test]
    fn both_leans_read_whole_dates_and_offsets_alike() {
        for lean in [Lean::Past, Lean::Future] {
            let w = |s: &str| parse_when(s, now(), lean).unwrap();
            let ms = now().timestamp_millis();
            assert_eq!(w("now"), ms);
            assert_eq!(w("NOW"), ms);
            assert_eq!(w("now+60"), ms + 60_000);
            assert_eq!(w("now-2days"), ms - 2 * 86_400_000);
            assert_eq!(w("now - 1 hours"), ms - 3_600_000);
            assert_eq!(w("now+1w"), ms + 604_800_000);
            assert_eq!(w("2026-04-01"), at(2026, 4, 1, 0, 0));
            assert_eq!(w("2026-04-01T08:15"), at(2026, 4, 1, 8, 15));
            assert_eq!(w("2026-04-01 08:15:00"), at(2026, 4, 1, 8, 15));
            assert_eq!(w("040127"), at(2027, 4, 1, 0, 0));
            assert_eq!(w("04/01/27T09:00"), at(2027, 4, 1, 9, 0));
            assert_eq!(w("04.01.2027-09:00"), at(2027, 4, 1, 9, 0));
            assert_eq!(w("today"), at(2026, 3, 10, 0, 0));
            assert_eq!(w("tomorrow"), at(2026, 3, 11, 0, 0));
            assert_eq!(w("tomorrow noon"), at(2026, 3, 11, 12, 0));
        }
    }

    #[test]
    fn past_reads_todays_times_and_the_last_date() {
        let w = |s: &str| parse_when(s, now(), Lean::Past).unwrap();
        assert_eq!(w("midnight"), at(2026, 3, 10, 0, 0));
        assert_eq!(w("16:00"), at(2026, 3, 10, 16, 0), "a bare time is today's even if later");
        assert_eq!(w("9:05:30"), at(2026, 3, 10, 9, 5) + 30_000);
        assert_eq!(w("noon"), at(2026, 3, 10, 12, 0));
        assert_eq!(w("0301"), at(2026, 3, 1, 0, 0));
        assert_eq!(w("03/20"), at(2026, 3, 20, 0, 0), "this month is this year's");
        assert_eq!(w("04/01"), at(2025, 4, 1, 0, 0), "a later month is last year's");
        assert_eq!(w("12/31-23:00"), at(2025, 12, 31, 23, 0));
        assert_eq!(w("02/03-10:00:00"), at(2026, 2, 3, 10, 0));
        assert_eq!(w("1:30pm"), at(2026, 3, 10, 13, 30));
        assert_eq!(w("12:10 am"), at(2026, 3, 10, 0, 10));
    }

    #[test]
    fn future_reads_the_next_such_time() {
        let w = |s: &str| parse_when(s, now(), Lean::Future).unwrap();
        assert_eq!(w("16:00"), at(2026, 3, 10, 16, 0));
        assert_eq!(w("10:00"), at(2026, 3, 11, 10, 0), "a past hour is tomorrow's");
        assert_eq!(w("14:30:59"), at(2026, 3, 11, 14, 30) + 59_000, "Slurm compares to the minute");
        assert_eq!(w("midnight"), at(2026, 3, 11, 0, 0));
        assert_eq!(w("noon"), at(2026, 3, 11, 12, 0));
        assert_eq!(w("teatime"), at(2026, 3, 10, 16, 0));
        assert_eq!(w("0401"), at(2026, 4, 1, 0, 0));
        assert_eq!(w("03/01"), at(2027, 3, 1, 0, 0), "a date gone by is next year's");
        assert_eq!(w("03/10-15:00"), at(2026, 3, 10, 15, 0));
        assert_eq!(w("03/10-14:00"), at(2027, 3, 10, 14, 0));
    }

    #[test]
    fn long_values_are_refused_before_the_search() {
        let long = "1 ".repeat(1 << 20);
        let e = parse_when(&long, now(), Lean::Past).unwrap_err();
        assert!(e.ends_with("2097152 bytes, more than the 64 a date-time may have"), "{e}");
        assert!(e.len() < 200, "{e}");
        let padded = format!("{:>64}", "2026-04-01T08:15:00");
        assert_eq!(parse_when(&padded, now(), Lean::Past).unwrap(), at(2026, 4, 1, 8, 15));
    }

    #[test]
    fn bad_forms_are_named() {
        for bad in [
            "",
            "later",
            "yesterday",
            "now+5fortnights",
            "now+",
            "now*2",
            "nowé",
            "0é01",
            "é:00",
            "13/45",
            "02/30",
            "25:00",
            "10:5",
            "13:00pm",
            "2026-02-30",
            "2026-13-01",
            "12345",
            "04/01T",
            "now-9223372036854775807days",
        ] {
            for lean in [Lean::Past, Lean::Future] {
                let e = parse_when(bad, now(), lean).unwrap_err();
                assert!(e.starts_with(&format!("'{bad}' is not a time (")), "{bad}: {e}");
            }
        }
    }
}
