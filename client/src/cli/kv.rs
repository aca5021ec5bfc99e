//! Slurm-style argument parsing shared by `sinfo` and `scontrol` (and, later,
//! `squeue`): getopt-like flags (bundled short flags, attached values, unique
//! long-flag prefixes, flags anywhere), `Key=value` pairs with case-insensitive
//! keys, Slurm's abbreviated keywords (`scontrol sho part`), and the
//! `%[.][width]X` format strings of `-o`.

/// One flag a command accepts.
#[derive(Debug, Clone, Copy)]
struct Opt {
    short: Option<char>,
    long: &'static str,
    takes_value: bool,
}

/// Reads a flag spec written like getopt's: `"a/all n/nodes= -/json"` is `-a`
/// or `--all`; `-n LIST` or `--nodes=LIST`; `--json` with no short form.
fn spec(spec: &'static str) -> Vec<Opt> {
    spec.split_whitespace()
        .filter_map(|w| {
            let (short, long) = w.split_once('/')?;
            let (long, takes_value) = long.strip_suffix('=').map_or((long, false), |l| (l, true));
            Some(Opt { short: short.chars().next().filter(|c| *c != '-'), long, takes_value })
        })
        .collect()
}

/// A parsed command-line item, in order.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Arg {
    /// A flag by its long name, with its value when it takes one.
    Flag(&'static str, Option<String>),
    Word(String),
}

/// Parses `args` like GNU getopt_long with permutation: flags may come
/// anywhere, `--` ends them. Unknown or malformed flags are named.
pub fn getopt(args: &[String], flags: &'static str) -> Result<Vec<Arg>, String> {
    let opts = spec(flags);
    let mut out = vec![];
    let mut it = args.iter();
    while let Some(tok) = it.next() {
        if tok == "--" {
            out.extend(it.by_ref().map(|w| Arg::Word(w.clone())));
            break;
        }
        if let Some(body) = tok.strip_prefix("--") {
            let (name, inline) = match body.split_once('=') {
                Some((n, v)) => (n, Some(v.to_string())),
                None => (body, None),
            };
            let o = long(name, &opts).map_err(|e| format!("{e} '--{name}'"))?;
            let value = match (o.takes_value, inline) {
                (true, Some(v)) => Some(v),
                (true, None) => {
                    Some(it.next().cloned().ok_or_else(|| format!("'--{}' needs a value", o.long))?)
                }
                (false, Some(_)) => return Err(format!("'--{}' takes no value", o.long)),
                (false, None) => None,
            };
            out.push(Arg::Flag(o.long, value));
        } else if tok.len() > 1 && tok.starts_with('-') {
            // Bundled short flags (`-Nh`); a flag with a value takes the rest (`-pdebug`).
            let body = &tok[1..];
            for (i, c) in body.char_indices() {
                let o = opts.iter().find(|o| o.short == Some(c)).ok_or_else(|| {
                    if body.len() > 1 {
                        format!("unrecognised flag '-{c}' in '{tok}'")
                    } else {
                        format!("unrecognised flag '{tok}'")
                    }
                })?;
                if o.takes_value {
                    let rest = &body[i + c.len_utf8()..];
                    let v = if rest.is_empty() {
                        it.next().cloned().ok_or_else(|| format!("'-{c}' needs a value"))?
                    } else {
                        rest.to_string()
                    };
                    out.push(Arg::Flag(o.long, Some(v)));
                    break;
                }
                out.push(Arg::Flag(o.long, None));
            }
        } else {
            out.push(Arg::Word(tok.clone()));
        }
    }
    Ok(out)
}

/// An exact long name, else a unique prefix of one (as getopt_long allows).
fn long<'a>(name: &str, opts: &'a [Opt]) -> Result<&'a Opt, &'static str> {
    if let Some(o) = opts.iter().find(|o| o.long == name) {
        return Ok(o);
    }
    let mut hits = opts.iter().filter(|o| !name.is_empty() && o.long.starts_with(name));
    match (hits.next(), hits.next()) {
        (Some(o), None) => Ok(o),
        (Some(_), Some(_)) => Err("ambiguous flag"),
        _ => Err("unrecognised flag"),
    }
}

/// A `Key=value` argument. The key keeps its spelling for messages.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Pair {
    pub key: String,
    pub value: String,
}

impl Pair {
    pub fn is(&self, name: &str) -> bool {
        self.key.eq_ignore_ascii_case(name)
    }
}

/// Parses `Key=value` words. A value the shell left split (`reason="hw` `fault"`,
/// as after ssh) is joined back up to its closing quote, and one pair of
/// surrounding quotes is removed.
pub fn pairs(words: &[String]) -> Result<Vec<Pair>, String> {
    let mut out = vec![];
    let mut it = words.iter();
    while let Some(w) = it.next() {
        let Some((k, v)) = w.split_once('=') else {
            return Err(format!(
                "unrecognised argument '{w}' (expected Key=value; quote values with spaces: Reason=\"hw fault\")"
            ));
        };
        if k.is_empty() {
            return Err(format!("unrecognised argument '{w}' (no key before '=')"));
        }
        let mut value = v.to_string();
        if let Some(q) = value.chars().next().filter(|c| *c == '"' || *c == '\'') {
            while value.len() < 2 || !value.ends_with(q) {
                match it.next() {
                    Some(more) => {
                        value.push(' ');
                        value.push_str(more);
                    }
                    None => return Err(format!("unclosed {q} in '{k}={value}'")),
                }
            }
            value = value[1..value.len() - 1].to_string();
        }
        out.push(Pair { key: k.to_string(), value });
    }
    Ok(out)
}

/// Matches a typed word against `(keyword, shortest accepted prefix)`,
/// case-insensitively, the way scontrol accepts `sho` for `show`.
pub fn keyword(word: &str, table: &[(&'static str, usize)]) -> Option<&'static str> {
    let w = word.to_ascii_lowercase();
    table.iter().find(|(k, min)| w.len() >= *min && k.starts_with(w.as_str())).map(|(k, _)| *k)
}

/// A piece of a `-o` format: literal text, or a `%[.][width]X` field.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Item {
    Text(String),
    Field { code: char, width: usize, right: bool },
}

/// Parses a Slurm `-o` format; `known` says which field letters `cmd` has.
/// `%%` is a literal `%`.
pub fn parse_format(fmt: &str, known: impl Fn(char) -> bool, cmd: &str) -> Result<Vec<Item>, String> {
    let mut items = vec![];
    let mut text = String::new();
    let mut chars = fmt.chars().peekable();
    while let Some(c) = chars.next() {
        if c != '%' {
            text.push(c);
            continue;
        }
        if chars.next_if_eq(&'%').is_some() {
            text.push('%');
            continue;
        }
        let right = chars.next_if_eq(&'.').is_some();
        let mut width = 0usize;
        while let Some(d) = chars.next_if(char::is_ascii_digit) {
            // Capped: a huge width is a typo, not a reason to allocate gigabytes.
            width = (width * 10 + (d as usize - '0' as usize)).min(4096);
        }
        let code = chars.next().ok_or_else(|| format!("format '{fmt}' ends without a field letter"))?;
        if !known(code) {
            return Err(format!("format: unknown field '%{code}' in '{fmt}' (see {cmd} --help)"));
        }
        if !text.is_empty() {
            items.push(Item::Text(std::mem::take(&mut text)));
        }
        items.push(Item::Field { code, width, right });
    }
    if !text.is_empty() {
        items.push(Item::Text(text));
    }
    Ok(items)
}

/// Pads a value to `width` and cuts it there, as Slurm's `_print_str`
/// (`.` right-justifies); width 0 prints it as it is.
pub fn fit(v: &str, width: usize, right: bool) -> String {
    let mut out = String::new();
    fit_into(&mut out, v, width, right);
    out
}

/// [`fit`], appended to `out` without a String per cell.
pub fn fit_into(out: &mut String, v: &str, width: usize, right: bool) {
    if width == 0 {
        out.push_str(v);
        return;
    }
    // Nearly every cell is ASCII, where a char is a byte.
    let (cut, chars) = if v.is_ascii() {
        let n = v.len().min(width);
        (&v[..n], n)
    } else {
        match v.char_indices().nth(width) {
            Some((at, _)) => (&v[..at], width),
            None => (v, v.chars().count()),
        }
    };
    let pad = width - chars;
    if !right {
        out.push_str(cut);
    }
    const SPACES: &str = "                                                                ";
    let mut left = pad;
    while left > 0 {
        let n = left.min(SPACES.len());
        out.push_str(&SPACES[..n]);
        left -= n;
    }
    if right {
        out.push_str(cut);
    }
}

/// A comma list (`-u a,b`), with blanks dropped.
pub fn list(v: &str) -> Vec<String> {
    v.split(',').map(str::trim).filter(|s| !s.is_empty()).map(String::from).collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    const OPTS: &str = "h/noheader N/Node p/partition= -/json -/nodes= -/noconvert";

    fn v(s: &[&str]) -> Vec<String> {
        s.iter().map(|s| s.to_string()).collect()
    }

    #[test]
    fn getopt_bundles_attaches_and_permutes() {
        let got =
            getopt(&v(&["-Nh", "x", "-pdebug", "--partition=gpu", "--json", "-p", "a,b"]), OPTS).unwrap();
        assert_eq!(
            got,
            vec![
                Arg::Flag("Node", None),
                Arg::Flag("noheader", None),
                Arg::Word("x".into()),
                Arg::Flag("partition", Some("debug".into())),
                Arg::Flag("partition", Some("gpu".into())),
                Arg::Flag("json", None),
                Arg::Flag("partition", Some("a,b".into())),
            ]
        );
        assert_eq!(
            getopt(&v(&["--part", "p"]), OPTS).unwrap(),
            vec![Arg::Flag("partition", Some("p".into()))]
        );
        assert_eq!(getopt(&v(&["--", "-h"]), OPTS).unwrap(), vec![Arg::Word("-h".into())]);
    }

    #[test]
    fn getopt_names_bad_flags() {
        assert_eq!(getopt(&v(&["--bogus"]), OPTS).unwrap_err(), "unrecognised flag '--bogus'");
        assert_eq!(getopt(&v(&["-x"]), OPTS).unwrap_err(), "unrecognised flag '-x'");
        assert!(getopt(&v(&["-hx"]), OPTS).unwrap_err().contains("'-x' in '-hx'"));
        assert!(getopt(&v(&["--no"]), OPTS).unwrap_err().contains("ambiguous"));
        assert!(getopt(&v(&["-p"]), OPTS).unwrap_err().contains("needs a value"));
        assert!(getopt(&v(&["--json=1"]), OPTS).unwrap_err().contains("takes no value"));
    }

    #[test]
    fn pairs_keep_spaces_and_strip_quotes() {
        let p = pairs(&v(&["NodeName=n[1-2]", "reason=hw fault", "x=a=b"])).unwrap();
        assert_eq!(p[1], Pair { key: "reason".into(), value: "hw fault".into() });
        assert!(p[0].is("nodename") && p[2].value == "a=b");
        let p = pairs(&v(&["Reason=\"disk", "is", "bad\"", "State=drain"])).unwrap();
        assert_eq!(p[0].value, "disk is bad");
        assert_eq!(pairs(&v(&["r='x'"])).unwrap()[0].value, "x");
        assert!(pairs(&v(&["reason=\"open"])).unwrap_err().contains("unclosed"));
        assert!(pairs(&v(&["fault"])).unwrap_err().contains("'fault'"));
        assert!(pairs(&v(&["=x"])).is_err());
    }

    #[test]
    fn formats_parse_widths_and_text() {
        let known = |c: char| "PaN".contains(c);
        let items = parse_format("x%10P %.5a|%N%%", known, "sinfo").unwrap();
        assert_eq!(items[0], Item::Text("x".into()));
        assert_eq!(items[1], Item::Field { code: 'P', width: 10, right: false });
        assert_eq!(items[3], Item::Field { code: 'a', width: 5, right: true });
        assert_eq!(items[6], Item::Text("%".into()));
        assert!(parse_format("%Q", known, "sinfo").unwrap_err().contains("'%Q'"));
        assert!(parse_format("%10", known, "sinfo").unwrap_err().contains("ends without"));
        assert_eq!(parse_format("%99999999999999999999999P", known, "s").unwrap().len(), 1);
    }

    #[test]
    fn fit_pads_and_cuts_like_slurm() {
        assert_eq!(fit("debug", 9, false), "debug    ");
        assert_eq!(fit("up", 5, true), "   up");
        assert_eq!(fit("inactive", 5, true), "inact");
        assert_eq!(fit("long", 0, true), "long");
    }

    #[test]
    fn keywords_take_slurm_abbreviations() {
        let t = &[("show", 3), ("partitions", 2), ("nodes", 1)];
        assert_eq!(keyword("SHO", t), Some("show"));
        assert_eq!(keyword("sh", t), None);
        assert_eq!(keyword("part", t), Some("partitions"));
        assert_eq!(keyword("node", t), Some("nodes"));
        assert_eq!(keyword("nodesx", t), None);
    }
}
