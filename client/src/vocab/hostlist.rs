//! Slurm hostlist expressions, both ways: `node[01-08,10],gpu3` expands to
//! names, and names compress back to the shortest such expression.

/// Expands a hostlist. Errors say what is wrong and where.
pub fn expand(expr: &str) -> Result<Vec<String>, String> {
    let mut out = Vec::new();
    for part in split_top(expr)? {
        if part.is_empty() {
            return Err(format!("'{expr}' has an empty host name"));
        }
        expand_one(&part, expr, &mut out)?;
    }
    let mut seen = std::collections::HashSet::new();
    out.retain(|n| seen.insert(n.clone()));
    Ok(out)
}

/// Splits on commas outside brackets.
fn split_top(expr: &str) -> Result<Vec<String>, String> {
    let (mut parts, mut cur, mut depth) = (vec![], String::new(), 0i32);
    for c in expr.trim().chars() {
        match c {
            '[' => depth += 1,
            ']' => depth -= 1,
            ',' if depth == 0 => {
                parts.push(std::mem::take(&mut cur));
                continue;
            }
            c if c.is_whitespace() => return Err(format!("'{expr}' contains whitespace")),
            _ => {}
        }
        if !(0..=1).contains(&depth) {
            return Err(format!("'{expr}' has unbalanced or nested brackets"));
        }
        cur.push(c);
    }
    if depth != 0 {
        return Err(format!("'{expr}' has an unclosed '['"));
    }
    parts.push(cur);
    Ok(parts)
}

/// Expands one name with zero or more bracket groups (`rack[1-2]-n[01-02]`).
fn expand_one(name: &str, whole: &str, out: &mut Vec<String>) -> Result<(), String> {
    let Some(open) = name.find('[') else {
        if name.contains(']') {
            return Err(format!("'{whole}' has a ']' without '['"));
        }
        out.push(name.to_string());
        return Ok(());
    };
    let close = open + name[open..].find(']').ok_or_else(|| format!("'{whole}' has an unclosed '['"))?;
    let (prefix, body, rest) = (&name[..open], &name[open + 1..close], &name[close + 1..]);
    if body.is_empty() {
        return Err(format!("'{whole}' has an empty range '[]'"));
    }
    for item in body.split(',') {
        let (lo, hi) = item.split_once('-').unwrap_or((item, item));
        let num = |s: &str| -> Result<u64, String> {
            if s.is_empty() || !s.bytes().all(|b| b.is_ascii_digit()) {
                return Err(format!("'{whole}': '{item}' is not a number or a range like 01-08"));
            }
            s.parse().map_err(|_| format!("'{whole}': '{s}' is too large"))
        };
        let (a, b) = (num(lo)?, num(hi)?);
        if a > b {
            return Err(format!("'{whole}': range '{item}' runs backwards"));
        }
        if b - a >= 1_000_000 {
            return Err(format!("'{whole}': range '{item}' is too large"));
        }
        let width = if lo.len() > 1 && lo.starts_with('0') { lo.len() } else { 0 };
        for n in a..=b {
            expand_one(&format!("{prefix}{n:0width$}{rest}"), whole, out)?;
        }
    }
    Ok(())
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
        let width = entries.iter().filter(|e| e.2).map(|e| e.1).max().unwrap_or(0);
        // Unpadded numbers at least `width` long render the same padded.
        let (wide, narrow): (Vec<&Entry>, Vec<_>) =
            entries.iter().partition(|e| e.2 || (width > 0 && e.1 >= width));
        for (nums, w) in [(wide, width), (narrow, 0)] {
            let nums: Vec<u64> = nums.iter().map(|e| e.0).collect();
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
    fn compresses_back() {
        let names = expand("node[01-08,10]").unwrap();
        assert_eq!(compress(&names), "node[01-08,10]");
        assert_eq!(compress(&["gpu1", "gpu2", "gpu3", "login"]), "login,gpu[1-3]");
        assert_eq!(compress(&["n9", "n10", "n11"]), "n[9-11]");
        assert_eq!(compress(&["x05"]), "x05");
        assert_eq!(compress::<&str>(&[]), "");
    }

    #[test]
    fn round_trips() {
        for e in ["node[001-512]", "a[1-3,7],b[01-02]", "c5"] {
            assert_eq!(expand(&compress(&expand(e).unwrap())).unwrap(), expand(e).unwrap(), "{e}");
        }
    }
}
