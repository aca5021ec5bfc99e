//! License requests (`-L flat:2,qpu:1[mode=fast,shots=1000]`) and what a job
//! was charged (`LicensesAlloc`, `power(rack1*2000,row1*2000):1000`), parsed
//! and printed in one place so sbatch, the controller and the console agree.

use std::fmt;

/// One `NAME[:COUNT][[ARGS]]` item of a request.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct LicenseReq {
    /// The license name.
    pub name: String,
    /// How many.
    pub count: u32,
    /// Plugin arguments, in the order given; only hierarchical resources take them.
    pub args: Vec<(String, String)>,
}

fn valid_name(n: &str) -> bool {
    !n.is_empty() && n.chars().all(|c| c.is_ascii_alphanumeric() || matches!(c, '_' | '-' | '.'))
}

/// Splits on commas outside brackets.
fn items(s: &str) -> Result<Vec<&str>, String> {
    let (mut out, mut depth, mut from) = (vec![], 0i32, 0);
    for (i, c) in s.char_indices() {
        match c {
            '[' => depth += 1,
            ']' => depth -= 1,
            ',' if depth == 0 => {
                out.push(&s[from..i]);
                from = i + 1;
            }
            _ => {}
        }
        if !(0..=1).contains(&depth) {
            return Err(format!("'{s}' has unbalanced brackets"));
        }
    }
    if depth != 0 {
        return Err(format!("'{s}' has an unclosed '['"));
    }
    out.push(&s[from..]);
    Ok(out)
}

fn parse_args(item: &str, raw: &str) -> Result<Vec<(String, String)>, String> {
    let mut args: Vec<(String, String)> = vec![];
    // A set, not a scan of `args`: a request is as long as a message, and
    // a scan per argument would cost the square of it.
    let mut seen = std::collections::HashSet::new();
    for pair in raw.split(',') {
        let Some((k, v)) = pair.split_once('=') else {
            return Err(format!("'{item}': plugin argument '{pair}' is not name=value"));
        };
        if !valid_name(k) || v.is_empty() || v.contains('=') {
            return Err(format!("'{item}': plugin argument '{pair}' is not name=value"));
        }
        if !seen.insert(k) {
            return Err(format!("'{item}': plugin argument '{k}' is given twice"));
        }
        args.push((k.to_string(), v.to_string()));
    }
    Ok(args)
}

/// Parses a `-L` value. Errors are one line naming the offending item.
pub fn parse_request(s: &str) -> Result<Vec<LicenseReq>, String> {
    if s.trim().is_empty() {
        return Ok(vec![]);
    }
    if s.chars().any(char::is_whitespace) {
        return Err(format!("'{s}' contains whitespace"));
    }
    if s.contains('|') {
        return Err(format!("'{s}': the NAME|NAME form is not supported"));
    }
    let mut out: Vec<LicenseReq> = vec![];
    // As for arguments: 40,000 names took 1.5 s when each was compared with every other.
    let mut seen = std::collections::HashSet::new();
    for item in items(s)? {
        let (head, args) = match item.find('[') {
            Some(i) if item.ends_with(']') => (&item[..i], parse_args(item, &item[i + 1..item.len() - 1])?),
            Some(_) => return Err(format!("'{item}': text after ']'")),
            None => (item, vec![]),
        };
        let (name, count) = match head.split_once(':') {
            Some((n, c)) => match c.parse::<u32>() {
                Ok(c) if c > 0 => (n, c),
                _ => return Err(format!("'{item}': count '{c}' is not a whole number above 0")),
            },
            None => (head, 1),
        };
        if !valid_name(name) {
            return Err(format!("'{item}' is not NAME[:COUNT][[name=value,...]]"));
        }
        if !seen.insert(name) {
            return Err(format!("license '{name}' is requested twice"));
        }
        out.push(LicenseReq { name: name.to_string(), count, args });
    }
    Ok(out)
}

impl fmt::Display for LicenseReq {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}:{}", self.name, self.count)?;
        if !self.args.is_empty() {
            let a: Vec<String> = self.args.iter().map(|(k, v)| format!("{k}={v}")).collect();
            write!(f, "[{}]", a.join(","))?;
        }
        Ok(())
    }
}

/// What one license or resource of a running job took, and exactly where:
/// released as recorded, whatever the layers look like by then.
#[derive(Debug, Clone, PartialEq, Eq, Default, serde::Serialize, serde::Deserialize)]
pub struct LicenseAlloc {
    /// The license name.
    pub name: String,
    /// How many were taken.
    pub count: u32,
    /// (layer, amount charged on it); empty for a plain license.
    pub layers: Vec<(String, u64)>,
}

impl fmt::Display for LicenseAlloc {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.name)?;
        if !self.layers.is_empty() {
            let l: Vec<String> = self.layers.iter().map(|(n, a)| format!("{n}*{a}")).collect();
            write!(f, "({})", l.join(","))?;
        }
        write!(f, ":{}", self.count)
    }
}

/// `LicensesAlloc` of `scontrol show job`: comma-joined, `(null)` when empty.
pub fn format_allocs(allocs: &[LicenseAlloc]) -> String {
    allocs.iter().map(ToString::to_string).collect::<Vec<_>>().join(",")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn requests_parse_with_counts_and_args() {
        let r = parse_request("flat:2,natural,qpu:1[mode=fast,shots=1000]").unwrap();
        assert_eq!(r.len(), 3);
        assert_eq!((r[0].name.as_str(), r[0].count), ("flat", 2));
        assert_eq!(r[1].count, 1);
        assert_eq!(r[2].args, vec![("mode".into(), "fast".into()), ("shots".into(), "1000".into())]);
        assert_eq!(r[2].to_string(), "qpu:1[mode=fast,shots=1000]");
    }

    #[test]
    fn long_requests_cost_their_length() {
        // 100,000 names: ten billion comparisons when each was checked against every other.
        let names: Vec<String> = (0..100_000).map(|i| format!("l{i}")).collect();
        assert_eq!(parse_request(&names.join(",")).unwrap().len(), 100_000);
        let args: Vec<String> = (0..100_000).map(|i| format!("a{i}=1")).collect();
        assert_eq!(parse_request(&format!("q[{}]", args.join(","))).unwrap()[0].args.len(), 100_000);
        assert!(
            parse_request(&format!("q[{},a7=2]", args.join(",")))
                .unwrap_err()
                .contains("'a7' is given twice")
        );
    }

    #[test]
    fn bad_requests_name_the_item() {
        for (bad, says) in [
            ("flat:0", "'flat:0'"),
            ("flat:x", "count 'x'"),
            ("qpu:1[mode=fast,mode=slow]", "'mode' is given twice"),
            ("qpu:1[mode]", "'mode' is not name=value"),
            ("qpu:1[mode=a b]", "whitespace"),
            ("qpu:1[mode=a", "unclosed"),
            ("a|b", "NAME|NAME"),
            ("flat,flat:2", "twice"),
            (":2", "is not NAME"),
        ] {
            let e = parse_request(bad).unwrap_err();
            assert!(e.contains(says), "{bad}: {e}");
        }
    }

    #[test]
    fn allocs_print_as_slurm() {
        let a = LicenseAlloc {
            name: "power".into(),
            count: 1000,
            layers: vec![("rack1".into(), 2000), ("row1".into(), 2000)],
        };
        assert_eq!(a.to_string(), "power(rack1*2000,row1*2000):1000");
        let m = LicenseAlloc { name: "matlab".into(), count: 2, layers: vec![] };
        assert_eq!(format_allocs(&[m, a]), "matlab:2,power(rack1*2000,row1*2000):1000");
    }
}
