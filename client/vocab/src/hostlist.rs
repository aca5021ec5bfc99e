//! Slurm hostlist expressions, both ways: `node[01-08,10],gpu3` expands to
//! names, and names compress back to the shortest such expression.

/// The most names any expansion yields, so that no expression (from a
/// config file or a command line) can exhaust memory.
pub const MAX_HOSTS: usize = 1 << 20;

/// The longest host name a hostlist may build unless its caller knows
/// better (a controller passes its longest node name): Slurm's node names
/// are short, and this bounds what each of [`MAX_HOSTS`] names can weigh.
pub const MAX_NAME_LEN: usize = 256;

/// Expands a hostlist (at most [`MAX_HOSTS`] names, none shorter than
/// [`MAX_NAME_LEN`] bytes long at its shortest). Errors say what is wrong and where.
pub fn expand(expr: &str) -> Result<Vec<String>, String> {
    expand_bounded(expr, MAX_HOSTS, MAX_NAME_LEN)
}

/// Expands a hostlist that may name at most `max` hosts, repeats counted,
/// none of them longer than `max_name` bytes; a larger one is refused
/// before any name is built. A controller passes its node count and its
/// longest node name: a list naming more hosts than the cluster has, or a
/// name longer than any of its nodes', cannot be valid, so no client can
/// make it allocate more than the cluster's names.
///
/// A part is refused when even its shortest name (its literal text, and the
/// fewest digits each bracket gives) is too long: a part some of whose names
/// could be nodes expands as before, each name then at most 20 digits a
/// bracket longer than `max_name`.
pub fn expand_bounded(expr: &str, max: usize, max_name: usize) -> Result<Vec<String>, String> {
    let mut out = expand_in_order(expr, max, max_name)?;
    let mut seen = std::collections::HashSet::new();
    out.retain(|n| seen.insert(n.clone()));
    Ok(out)
}

/// [`expand_bounded`] keeping repeats, in order (`n2,n1,n2` is three names):
/// srun's `-m arbitrary`, a node per task.
pub fn expand_in_order(expr: &str, max: usize, max_name: usize) -> Result<Vec<String>, String> {
    let parts = parse(expr)?;
    if count_parts(&parts) > max as u64 {
        return Err(format!("hostlist '{}' names more than {max} hosts", shown(expr)));
    }
    if let Some(len) = parts.iter().map(|p| shortest(p)).find(|n| *n > max_name as u64) {
        return Err(format!(
            "hostlist '{}' names hosts of {len} bytes or more, longer than the {max_name} a host name has here",
            shown(expr)
        ));
    }
    let mut out = Vec::new();
    let mut name = String::new();
    for segs in &parts {
        emit(segs, &mut name, &mut out);
    }
    Ok(out)
}

/// The length of the shortest name a part builds: its text, and for each
/// bracket the fewest digits any of its numbers is written with.
fn shortest(segs: &[Seg<'_>]) -> u64 {
    let digits = |n: u64| u64::from(n.checked_ilog10().unwrap_or(0)) + 1;
    segs.iter()
        .map(|s| match s {
            Seg::Text(t) => t.len() as u64,
            Seg::Ranges(rs) => rs.iter().map(|r| digits(r.lo).max(r.width as u64)).min().unwrap_or(0),
        })
        .sum()
}

/// Checks a hostlist and counts the names it gives (repeats counted),
/// without building them: for clients that only validate what they send.
pub fn count(expr: &str) -> Result<u64, String> {
    Ok(count_parts(&parse(expr)?))
}

/// An expression as quoted in an error: long ones are cut, since an error
/// travels back in a gRPC header and into the audit log (array
/// expressions are quoted the same way): at most 64 characters, then `…`.
pub(crate) fn shown(expr: &str) -> String {
    const MAX: usize = 64;
    match expr.char_indices().nth(MAX) {
        Some((i, _)) => format!("{}…", &expr[..i]),
        None => expr.to_string(),
    }
}

/// One piece of a name: literal text, or a bracket group of ranges.
enum Seg<'a> {
    Text(&'a str),
    Ranges(Vec<Range>),
}

struct Range {
    lo: u64,
    hi: u64,
    /// Zero-padding width (`01-08` is 2); 0 for none.
    width: usize,
}

fn parse(expr: &str) -> Result<Vec<Vec<Seg<'_>>>, String> {
    let trimmed = expr.trim();
    split_top(trimmed, expr)?
        .into_iter()
        .map(|part| {
            if part.is_empty() {
                return Err(format!("'{}' has an empty host name", shown(expr)));
            }
            parse_one(part, expr)
        })
        .collect()
}

fn count_parts(parts: &[Vec<Seg<'_>>]) -> u64 {
    let one = |segs: &[Seg<'_>]| {
        segs.iter().fold(1u64, |n, s| match s {
            Seg::Text(_) => n,
            Seg::Ranges(rs) => {
                // `[0-18446744073709551615]` holds 2^64 numbers: one more than u64 counts.
                let size = |r: &Range| (r.hi - r.lo).saturating_add(1);
                n.saturating_mul(rs.iter().fold(0u64, |m, r| m.saturating_add(size(r))))
            }
        })
    };
    parts.iter().fold(0u64, |n, segs| n.saturating_add(one(segs)))
}

/// Splits on commas outside brackets.
fn split_top<'a>(expr: &'a str, whole: &str) -> Result<Vec<&'a str>, String> {
    let (mut parts, mut start, mut depth) = (vec![], 0, 0i32);
    for (i, c) in expr.char_indices() {
        match c {
            '[' => depth += 1,
            ']' => depth -= 1,
            ',' if depth == 0 => {
                parts.push(&expr[start..i]);
                start = i + 1;
                continue;
            }
            c if c.is_whitespace() => return Err(format!("'{}' contains whitespace", shown(whole))),
            _ => {}
        }
        if !(0..=1).contains(&depth) {
            return Err(format!("'{}' has unbalanced or nested brackets", shown(whole)));
        }
    }
    if depth != 0 {
        return Err(format!("'{}' has an unclosed '['", shown(whole)));
    }
    parts.push(&expr[start..]);
    Ok(parts)
}

/// Parses one name with zero or more bracket groups (`rack[1-2]-n[01-02]`).
fn parse_one<'a>(mut name: &'a str, whole: &str) -> Result<Vec<Seg<'a>>, String> {
    let mut segs = vec![];
    while let Some(open) = name.find('[') {
        let close =
            open + name[open..].find(']').ok_or_else(|| format!("'{}' has an unclosed '['", shown(whole)))?;
        text(&name[..open], whole, &mut segs)?;
        segs.push(Seg::Ranges(ranges(&name[open + 1..close], whole)?));
        name = &name[close + 1..];
    }
    text(name, whole, &mut segs)?;
    Ok(segs)
}

fn text<'a>(t: &'a str, whole: &str, segs: &mut Vec<Seg<'a>>) -> Result<(), String> {
    if t.contains(']') {
        return Err(format!("'{}' has a ']' without '['", shown(whole)));
    }
    if !t.is_empty() {
        segs.push(Seg::Text(t));
    }
    Ok(())
}

fn ranges(body: &str, whole: &str) -> Result<Vec<Range>, String> {
    if body.is_empty() {
        return Err(format!("'{}' has an empty range '[]'", shown(whole)));
    }
    body.split(',')
        .map(|item| {
            let (lo, hi) = item.split_once('-').unwrap_or((item, item));
            let num = |s: &str| -> Result<u64, String> {
                if s.is_empty() || !s.bytes().all(|b| b.is_ascii_digit()) {
                    return Err(format!(
                        "'{}': '{}' is not a number or a range like 01-08",
                        shown(whole),
                        shown(item)
                    ));
                }
                s.parse().map_err(|_| format!("'{}': '{}' is too large", shown(whole), shown(s)))
            };
            let (a, b) = (num(lo)?, num(hi)?);
            if a > b {
                return Err(format!("'{}': range '{item}' runs backwards", shown(whole)));
            }
            let width = if lo.len() > 1 && lo.starts_with('0') { lo.len() } else { 0 };
            Ok(Range { lo: a, hi: b, width })
        })
        .collect()
}

/// Appends every name `segs` gives after `name`, first group outermost.
fn emit(segs: &[Seg<'_>], name: &mut String, out: &mut Vec<String>) {
    let Some((first, rest)) = segs.split_first() else {
        out.push(name.clone());
        return;
    };
    let len = name.len();
    match first {
        Seg::Text(t) => {
            name.push_str(t);
            emit(rest, name, out);
        }
        Seg::Ranges(rs) => {
            for r in rs {
                for n in r.lo..=r.hi {
                    use std::fmt::Write;
                    let _ = write!(name, "{n:0w$}", w = r.width);
                    emit(rest, name, out);
                    name.truncate(len);
                }
            }
        }
    }
    name.truncate(len);
}

/// Splits `node07` into (`node`, 7, width 2); names without a trailing number give None.
fn split_num(name: &str) -> Option<(&str, u64, usize)> {
    let digits = name.bytes().rev().take_while(u8::is_ascii_digit).count();
    if digits == 0 {
        return None;
    }
    let (prefix, num) = name.split_at(name.len() - digits);
    Some((prefix, num.parse().ok()?, digits))
}

/// A numbered name's number, digit count, and whether it was zero-padded.
type Entry = (u64, usize, bool);

/// Compresses names into a hostlist: plain names first, then one bracket
/// group per prefix (and zero-padding width).
pub fn compress<S: AsRef<str>>(names: &[S]) -> String {
    let mut plain: Vec<String> = vec![];
    let mut by_prefix: Vec<(String, Vec<Entry>)> = vec![];
    for n in names {
        let n = n.as_ref();
        match split_num(n) {
            Some((prefix, num, digits)) => {
                let padded = digits > 1 && n[prefix.len()..].starts_with('0');
                match by_prefix.iter_mut().find(|(p, _)| p == prefix) {
                    Some((_, v)) => v.push((num, digits, padded)),
                    None => by_prefix.push((prefix.to_string(), vec![(num, digits, padded)])),
                }
            }
            None => {
                if !plain.iter().any(|p| p == n) {
                    plain.push(n.to_string())
                }
            }
        }
    }
    let mut parts = plain;
    for (prefix, entries) in by_prefix {
        // One group per padded width (`n01` and `n001` are two names), then
        // the unpadded; an unpadded number at least as long as a width
        // renders the same padded to it, so it joins the widest such group.
        let mut widths: Vec<usize> = entries.iter().filter(|e| e.2).map(|e| e.1).collect();
        widths.sort_unstable();
        widths.dedup();
        let mut groups: Vec<(usize, Vec<u64>)> = widths.iter().map(|w| (*w, vec![])).collect();
        groups.push((0, vec![]));
        for &(num, digits, padded) in &entries {
            let w = if padded {
                digits
            } else {
                widths.iter().rev().find(|w| **w <= digits).copied().unwrap_or(0)
            };
            if let Some((_, nums)) = groups.iter_mut().find(|(gw, _)| *gw == w) {
                nums.push(num);
            }
        }
        for (w, nums) in groups {
            if !nums.is_empty() {
                parts.push(group(&prefix, nums, w));
            }
        }
    }
    parts.join(",")
}

fn group(prefix: &str, mut nums: Vec<u64>, width: usize) -> String {
    nums.sort_unstable();
    nums.dedup();
    if nums.len() == 1 {
        return format!("{prefix}{:0width$}", nums[0]);
    }
    let mut ranges = vec![];
    let (mut start, mut prev) = (nums[0], nums[0]);
    for &n in &nums[1..] {
        if n != prev + 1 {
            ranges.push((start, prev));
            start = n;
        }
        prev = n;
    }
    ranges.push((start, prev));
    let body: Vec<String> = ranges
        .iter()
        .map(|&(a, b)| if a == b { format!("{a:0width$}") } else { format!("{a:0width$}-{b:0width$}") })
        .collect();
    format!("{prefix}[{}]", body.join(","))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn expands_ranges_lists_and_padding() {
        assert_eq!(expand("node[01-03,10]").unwrap(), ["node01", "node02", "node03", "node10"]);
        assert_eq!(expand("a1,b[8-10]").unwrap(), ["a1", "b8", "b9", "b10"]);
        assert_eq!(expand("r[1-2]-n[1-2]").unwrap(), ["r1-n1", "r1-n2", "r2-n1", "r2-n2"]);
        assert_eq!(expand("sim[0001-1000]").unwrap().len(), 1000);
        assert_eq!(expand("n1,n1").unwrap(), ["n1"]);
    }

    #[test]
    fn errors_say_what_is_wrong() {
        assert!(expand("node[01-03").unwrap_err().contains("unclosed"));
        assert!(expand("node[3-1]").unwrap_err().contains("backwards"));
        assert!(expand("node[a-b]").unwrap_err().contains("'a-b'"));
        assert!(expand("node[]").unwrap_err().contains("empty range"));
        assert!(expand("a,,b").unwrap_err().contains("empty host"));
        assert!(expand("no de").unwrap_err().contains("whitespace"));
        assert!(expand("node]1").unwrap_err().contains("unbalanced"));
    }

    #[test]
    fn bounded_expansion_refuses_before_building_names() {
        assert_eq!(expand_bounded("n[1-4]", 4, 2).unwrap().len(), 4);
        let e = expand_bounded("x[0-9999]y[0-9999]", 4, 256).unwrap_err();
        assert_eq!(e, "hostlist 'x[0-9999]y[0-9999]' names more than 4 hosts");
        assert_eq!(count("x[0-9999]y[0-9999],z").unwrap(), 100_000_001);
        assert!(expand("x[0-9999]y[0-9999]").unwrap_err().contains("more than 1048576"));
        let huge = format!("a[{}]", vec!["1"; 100].join(",")).repeat(10);
        assert_eq!(count(&huge).unwrap(), u64::MAX, "saturates instead of overflowing");
        assert_eq!(expand_bounded("n[1-4]", 4, 2).unwrap().len(), 4);
        // The whole u64 range: its size wrapped to 0 in a release build, which then built names forever.
        let e = expand_bounded("n[0-18446744073709551615]", 4, 256).unwrap_err();
        assert!(e.ends_with("names more than 4 hosts"), "{e}");
        assert_eq!(count("[0-18446744073709551615]").unwrap(), u64::MAX);
        let long = format!("n[1-{}]", "9".repeat(200));
        assert!(expand(&long).unwrap_err().chars().count() < 200, "a long expression is cut in errors");
    }

    #[test]
    fn long_literal_text_is_refused_before_any_name_is_built() {
        // 3 MB of letters before [1-1000]: a thousand 3 MB names, once.
        let huge = format!("{}[1-1000]", "a".repeat(3 << 20));
        let e = expand_bounded(&huge, 1000, 6).unwrap_err();
        assert!(
            e.ends_with("names hosts of 3145729 bytes or more, longer than the 6 a host name has here"),
            "{e}"
        );
        assert!(e.chars().count() < 200, "{e}");
        assert!(expand(&huge).unwrap_err().contains("longer than the 256"));
        // Brackets count by their fewest digits: a thousand `[1]` make 1000-digit names.
        let digits = format!("n{}", "[1]".repeat(1000));
        assert!(expand(&digits).unwrap_err().contains("1001 bytes or more"));
        // One name of 200,000 brackets: its expansion recursed once per bracket, past any stack.
        let deep = format!("n{}", "[1]".repeat(200_000));
        assert!(expand_bounded(&deep, 4, 6).unwrap_err().contains("200001 bytes or more"));
        // A part whose shortest name fits still expands whole; only a cluster's lookup refuses the rest.
        assert_eq!(expand_bounded("node[1-10]", 10, 5).unwrap().len(), 10);
        assert!(expand_bounded("node[01-10]", 10, 5).unwrap_err().contains("of 6 bytes or more"));
        assert!(expand_bounded("node001,n1", 10, 5).unwrap_err().contains("of 7 bytes"));
        assert_eq!(expand(&"n".repeat(256)).unwrap().len(), 1);
    }

    #[test]
    fn compresses_back() {
        let names = expand("node[01-08,10]").unwrap();
        assert_eq!(compress(&names), "node[01-08,10]");
        assert_eq!(compress(&["gpu1", "gpu2", "gpu3", "login"]), "login,gpu[1-3]");
        assert_eq!(compress(&["n9", "n10", "n11"]), "n[9-11]");
        assert_eq!(compress(&["x05"]), "x05");
        assert_eq!(compress::<&str>(&[]), "");
        // Found by the property test: two padded widths under one prefix were written at the wider.
        assert_eq!(compress(&["n01", "n001", "n10", "n100"]), "n[01,10],n[001,100]");
        let digits = expand("0[1-1000]").unwrap();
        assert_eq!(expand(&compress(&digits)).unwrap(), digits);
    }

    #[test]
    fn round_trips() {
        for e in ["node[001-512]", "a[1-3,7],b[01-02]", "c5"] {
            assert_eq!(expand(&compress(&expand(e).unwrap())).unwrap(), expand(e).unwrap(), "{e}");
        }
    }
}
