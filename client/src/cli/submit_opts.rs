//! The values of sbatch's options that need more than a number: sizes,
//! GRES, `--export`, `--signal`, `--mail-type`, `--open-mode`, and the
//! date forms of `--begin`/`--deadline`. Pure: the environment and the
//! clock come from the caller.

use chrono::{DateTime, Datelike, Duration, Local, NaiveDate, NaiveTime, TimeZone};

/// `--mem`/`--mem-per-cpu`: MB by default; K, M, G, T suffixes (powers of
/// 1024) with an optional B (`1GB`), rounded up to whole MB.
pub fn parse_mem(flag: &str, v: &str) -> Result<u64, String> {
    let bad = || format!("--{flag}: '{v}' is not a size (MB, or a number with K, M, G or T, optionally B)");
    let t = v.trim();
    let t =
        t.strip_suffix(['B', 'b']).filter(|r| r.ends_with(|c: char| c.is_ascii_alphabetic())).unwrap_or(t);
    let (num, shift) = match t.char_indices().last() {
        Some((i, c)) if c.is_ascii_alphabetic() => {
            let mult = match c.to_ascii_uppercase() {
                'K' => -10,
                'M' => 0,
                'G' => 10,
                'T' => 20,
                _ => return Err(bad()),
            };
            (&t[..i], mult)
        }
        _ => (t, 0),
    };
    if num.is_empty() || !num.bytes().all(|b| b.is_ascii_digit()) {
        return Err(bad());
    }
    let n: u64 = num.parse().map_err(|_| bad())?;
    if shift < 0 { Ok(n.div_ceil(1024)) } else { n.checked_mul(1 << shift).ok_or_else(bad) }
}

/// `--gres=gpu:N` (or `gpu`, `gres/gpu:N`, `none`): GPUs per node.
pub fn parse_gres(v: &str) -> Result<u32, String> {
    let mut gpus = 0;
    for item in v.split(',').map(str::trim).filter(|s| !s.is_empty()) {
        if item.eq_ignore_ascii_case("none") {
            continue;
        }
        let item = item.strip_prefix("gres/").unwrap_or(item);
        gpus = match item.split(':').collect::<Vec<_>>().as_slice() {
            ["gpu"] => 1,
            ["gpu", n] => {
                n.parse::<u32>().map_err(|_| format!("--gres: '{item}': '{n}' is not a GPU count"))?
            }
            ["gpu", _, _] => return Err(format!("--gres: '{item}': GPU types are not supported; use gpu:N")),
            _ => return Err(format!("--gres: '{item}': unknown GRES (Spur schedules gpu[:N] only)")),
        };
    }
    Ok(gpus)
}

/// `--gpus=N`, `--gpus-per-task=N` (also `gpu:N`): a count.
pub fn parse_gpu_count(flag: &str, v: &str) -> Result<u32, String> {
    let n = v.trim().strip_prefix("gpu:").unwrap_or(v.trim());
    if n.contains(':') {
        return Err(format!("--{flag}: '{v}': GPU types are not supported; give a count"));
    }
    n.parse::<u32>().map_err(|_| format!("--{flag}: '{v}' is not a GPU count"))
}

/// `--export`: which of the submitter's variables the job gets, in Slurm's
/// order (`ALL` loads everything, explicit `NAME=value` items fill in what the
/// environment lacks; without `ALL` only the named ones and `SLURM_*`).
pub fn export(spec: &str, env: &[(String, String)]) -> Result<Vec<(String, String)>, String> {
    let items: Vec<&str> = spec.split(',').map(str::trim).filter(|s| !s.is_empty()).collect();
    let upper = |s: &str| s.to_ascii_uppercase();
    let mut all = false;
    let mut named: Vec<(String, Option<String>)> = vec![];
    for item in &items {
        match upper(item).as_str() {
            "ALL" => all = true,
            "NONE" | "NIL" if items.len() == 1 => {}
            "NONE" | "NIL" => return Err(format!("--export: '{item}' cannot be combined with variables")),
            _ => match item.split_once('=') {
                Some((k, v)) => named.push((k.to_string(), Some(v.to_string()))),
                None => named.push((item.to_string(), None)),
            },
        }
        if let Some((k, _)) = named.last()
            && (k.is_empty() || k.contains(char::is_whitespace))
        {
            return Err(format!("--export: '{item}' is not a variable name"));
        }
    }
    if items.is_empty() {
        all = true;
    }
    let mut out: Vec<(String, String)> = if all {
        env.to_vec()
    } else {
        env.iter().filter(|(k, _)| k.starts_with("SLURM_")).cloned().collect()
    };
    for (k, v) in named {
        let have = out.iter().any(|(ok, _)| *ok == k);
        match v {
            // With ALL the caller's own value wins, as the man page says.
            Some(v) if !(all && have) => {
                out.retain(|(ok, _)| *ok != k);
                out.push((k, v));
            }
            None if !have => {
                if let Some(found) = env.iter().find(|(ek, _)| *ek == k) {
                    out.push(found.clone());
                }
            }
            _ => {}
        }
    }
    Ok(out)
}

/// `--signal=[{R|B}:]SIG[@secs]`: checked, kept as given.
pub fn check_signal(v: &str) -> Result<String, String> {
    let t = v.trim();
    let body = t.split_once(':').map_or(t, |(pre, rest)| match pre {
        "B" | "R" | "RB" | "BR" => rest,
        _ => t,
    });
    let (sig, secs) = body.split_once('@').map_or((body, None), |(s, n)| (s, Some(n)));
    let named = sig.strip_prefix("SIG").unwrap_or(sig);
    let known = sig.parse::<u8>().is_ok_and(|n| (1..=64).contains(&n))
        || [
            "HUP", "INT", "QUIT", "KILL", "USR1", "USR2", "TERM", "CONT", "STOP", "ALRM", "TSTP", "URG",
            "XCPU",
        ]
        .contains(&named.to_ascii_uppercase().as_str());
    if !known {
        return Err(format!("--signal: '{v}': '{sig}' is not a signal"));
    }
    if let Some(n) = secs
        && n.parse::<u16>().map_or(true, |n| n > 65_533)
    {
        return Err(format!("--signal: '{v}': '@{n}' is not a number of seconds (0 to 65533)"));
    }
    Ok(t.to_string())
}

/// `--mail-type`: Slurm's names, as a comma list; checked, kept as given.
pub fn check_mail_type(v: &str) -> Result<String, String> {
    const TYPES: &[&str] = &[
        "NONE",
        "BEGIN",
        "END",
        "FAIL",
        "REQUEUE",
        "ALL",
        "INVALID_DEPEND",
        "STAGE_OUT",
        "TIME_LIMIT",
        "TIME_LIMIT_90",
        "TIME_LIMIT_80",
        "TIME_LIMIT_50",
        "ARRAY_TASKS",
    ];
    for t in v.split(',').map(str::trim) {
        if !TYPES.contains(&t.to_ascii_uppercase().as_str()) {
            return Err(format!("--mail-type: '{t}' is not one of {}", TYPES.join(", ")));
        }
    }
    Ok(v.trim().to_ascii_uppercase())
}

/// `--open-mode=append|truncate`.
pub fn open_mode(v: &str) -> Result<String, String> {
    match v.trim().to_ascii_lowercase().as_str() {
        "a" | "append" => Ok("append".into()),
        "t" | "truncate" => Ok("truncate".into()),
        _ => Err(format!("--open-mode: '{v}' is not append or truncate")),
    }
}

/// `--begin`/`--deadline`: Slurm's forms, as Unix ms in local time:
/// `now[+N[seconds|minutes|hours|days|weeks]]`, `HH:MM[:SS]` (the next such
/// time), `midnight`, `noon`, `fika` (15:00), `teatime` (16:00), `today`,
/// `tomorrow`, `YYYY-MM-DD[THH:MM[:SS]]`, `MMDD[YY]`, `MM/DD[/YY]` and
/// `MM.DD[.YY]`, each of the last with an optional `THH:MM[:SS]`.
pub fn parse_when(flag: &str, raw: &str, now: DateTime<Local>) -> Result<i64, String> {
    let bad = || {
        format!(
            "--{flag}: '{raw}' is not a time (now+N[units], HH:MM[:SS], YYYY-MM-DD[THH:MM[:SS]], MM/DD[/YY], MMDD[YY], midnight, noon, today, tomorrow)"
        )
    };
    let s = raw.trim().to_ascii_lowercase();
    let local = |d: NaiveDate, t: NaiveTime| {
        Local.from_local_datetime(&d.and_time(t)).earliest().map(|x| x.timestamp_millis()).ok_or_else(bad)
    };
    let today = now.date_naive();
    if let Some(rest) = s.strip_prefix("now") {
        let rest = rest.trim_start_matches('+');
        if rest.is_empty() {
            return Ok(now.timestamp_millis());
        }
        let digits: String = rest.chars().take_while(char::is_ascii_digit).collect();
        let n: i64 = digits.parse().map_err(|_| bad())?;
        let unit = match &rest[digits.len()..] {
            "" | "s" | "sec" | "secs" | "second" | "seconds" => 1,
            "m" | "min" | "mins" | "minute" | "minutes" => 60,
            "h" | "hour" | "hours" => 3600,
            "d" | "day" | "days" => 86_400,
            "w" | "week" | "weeks" => 604_800,
            _ => return Err(bad()),
        };
        let ms = n.checked_mul(unit * 1000).and_then(|d| now.timestamp_millis().checked_add(d));
        return ms.ok_or_else(bad);
    }
    let hm = |h, m| NaiveTime::from_hms_opt(h, m, 0).ok_or_else(bad);
    let named = match s.as_str() {
        "today" => Some((today, NaiveTime::MIN)),
        "midnight" | "tomorrow" => Some((today + Duration::days(1), NaiveTime::MIN)),
        "noon" => Some((today, hm(12, 0)?)),
        "fika" => Some((today, hm(15, 0)?)),
        "teatime" => Some((today, hm(16, 0)?)),
        _ => None,
    };
    if let Some((d, t)) = named {
        // A named hour already past today is tomorrow's, as Slurm reads it.
        let ms = local(d, t)?;
        return if ms < now.timestamp_millis() && s != "today" {
            local(d + Duration::days(1), t)
        } else {
            Ok(ms)
        };
    }
    let clock = |t: &str| ["%H:%M:%S", "%H:%M"].iter().find_map(|f| NaiveTime::parse_from_str(t, f).ok());
    if let Some(t) = clock(&s) {
        let ms = local(today, t)?;
        return if ms <= now.timestamp_millis() { local(today + Duration::days(1), t) } else { Ok(ms) };
    }
    let (date, time) = s.split_once('t').map_or((s.as_str(), None), |(d, t)| (d, Some(t)));
    let time = match time {
        Some(t) => clock(t).ok_or_else(bad)?,
        None => NaiveTime::MIN,
    };
    let year = |yy: &str| yy.parse::<i32>().ok().map(|y| if yy.len() == 2 { 2000 + y } else { y });
    let d = if let Ok(d) = NaiveDate::parse_from_str(date, "%Y-%m-%d") {
        d
    } else {
        let parts: Vec<&str> = if date.contains(['/', '.']) {
            date.split(['/', '.']).collect()
        } else if date.len() == 4 || date.len() == 6 {
            vec![&date[..2], &date[2..4], &date[4..]].into_iter().filter(|p| !p.is_empty()).collect()
        } else {
            return Err(bad());
        };
        let (m, dd) = (parts[0].parse().map_err(|_| bad())?, parts.get(1).and_then(|d| d.parse().ok()));
        let y = match parts.get(2) {
            Some(yy) => year(yy).ok_or_else(bad)?,
            None => today.year(),
        };
        NaiveDate::from_ymd_opt(y, m, dd.ok_or_else(bad)?).ok_or_else(bad)?
    };
    local(d, time)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn kv(pairs: &[(&str, &str)]) -> Vec<(String, String)> {
        pairs.iter().map(|(k, v)| (k.to_string(), v.to_string())).collect()
    }

    #[test]
    fn sizes_take_slurms_suffixes_with_an_optional_b() {
        for (v, mb) in
            [("1GB", 1024), ("1G", 1024), ("512", 512), ("2048K", 2), ("1kb", 1), ("1T", 1 << 20), ("3MB", 3)]
        {
            assert_eq!(parse_mem("mem", v), Ok(mb), "{v}");
        }
        for v in ["", "G", "1.5G", "1X", "1GBB", "-1"] {
            assert!(parse_mem("mem", v).unwrap_err().starts_with("--mem: "), "{v}");
        }
    }

    #[test]
    fn export_follows_the_man_page() {
        let env = kv(&[("PATH", "/bin"), ("HOME", "/h"), ("SLURM_CONF", "/c"), ("EDITOR", "vi")]);
        assert_eq!(export("", &env).unwrap(), env);
        assert_eq!(export("ALL", &env).unwrap(), env);
        assert_eq!(export("NONE", &env).unwrap(), kv(&[("SLURM_CONF", "/c")]));
        assert_eq!(
            export("EDITOR,ARG1=test", &env).unwrap(),
            kv(&[("SLURM_CONF", "/c"), ("EDITOR", "vi"), ("ARG1", "test")])
        );
        // With ALL, the caller's value wins over the given one.
        let all = export("ALL,EDITOR=emacs,NEW=1", &env).unwrap();
        assert!(all.contains(&("EDITOR".into(), "vi".into())) && all.contains(&("NEW".into(), "1".into())));
        assert!(export("NONE,X", &env).unwrap_err().contains("cannot be combined"));
        assert!(export("=x", &env).unwrap_err().contains("not a variable name"));
    }

    #[test]
    fn signals_mail_types_and_open_modes_are_checked() {
        assert_eq!(check_signal("B:USR1@90").unwrap(), "B:USR1@90");
        assert!(check_signal("SIGTERM").is_ok() && check_signal("10@60").is_ok());
        assert!(check_signal("FOO@1").unwrap_err().contains("'FOO' is not a signal"));
        assert!(check_signal("USR1@x").unwrap_err().contains("'@x'"));
        assert_eq!(check_mail_type("end,fail").unwrap(), "END,FAIL");
        assert!(check_mail_type("END,SOMETIMES").unwrap_err().contains("'SOMETIMES'"));
        assert_eq!(open_mode("a").unwrap(), "append");
        assert!(open_mode("x").is_err());
    }

    #[test]
    fn begin_reads_slurms_date_forms() {
        let now = Local.with_ymd_and_hms(2026, 3, 10, 14, 30, 0).unwrap();
        let at = |y, m, d, h, mi| Local.with_ymd_and_hms(y, m, d, h, mi, 0).unwrap().timestamp_millis();
        let w = |s: &str| parse_when("begin", s, now).unwrap();
        assert_eq!(w("now"), now.timestamp_millis());
        assert_eq!(w("now+60"), now.timestamp_millis() + 60_000);
        assert_eq!(w("now+2hours"), now.timestamp_millis() + 7_200_000);
        assert_eq!(w("16:00"), at(2026, 3, 10, 16, 0));
        assert_eq!(w("10:00"), at(2026, 3, 11, 10, 0), "a past hour is tomorrow's");
        assert_eq!(w("noon"), at(2026, 3, 11, 12, 0));
        assert_eq!(w("teatime"), at(2026, 3, 10, 16, 0));
        assert_eq!(w("midnight"), at(2026, 3, 11, 0, 0));
        assert_eq!(w("tomorrow"), at(2026, 3, 11, 0, 0));
        assert_eq!(w("2026-04-01T08:15"), at(2026, 4, 1, 8, 15));
        assert_eq!(w("0401"), at(2026, 4, 1, 0, 0));
        assert_eq!(w("040127"), at(2027, 4, 1, 0, 0));
        assert_eq!(w("04/01/27T09:00"), at(2027, 4, 1, 9, 0));
        for bad in ["later", "now+5fortnights", "13/45", "25:00", "2026-02-30"] {
            assert!(parse_when("begin", bad, now).unwrap_err().starts_with("--begin: "), "{bad}");
        }
    }
}
