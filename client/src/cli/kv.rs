//! The words after the flags, as Slurm's tools read them: `Key=value` pairs
//! with case-insensitive keys, Slurm's abbreviated keywords (`scontrol sho
//! part`), comma lists, the `%[.][width]X` format strings of `-o` and the
//! `name[:[.]width]` lists of `-O`, with the padding they print. Flags
//! themselves are `getopt`'s.

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

/// The keyword a typed word names in `table` (a subcommand, an entity, a
/// key): the vocabulary's one rule, any case and any unambiguous prefix
/// (`scontrol sho part`); `Ok(None)` when it names none, and an error
/// naming the candidates when it begins several.
pub fn keyword(word: &str, table: &[&'static str]) -> Result<Option<&'static str>, String> {
    crate::vocab::keyword::resolve(word, table).map_err(|e| e.to_string())
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

/// Parses a `-O` list (`JobID,Name:30,State:.10`, squeue's and sinfo's long
/// format): each field 20 wide unless given; text after the width is printed
/// after the field, as Slurm's suffix. `code` finds a name's field letter.
pub fn long_format(names: &str, code: impl Fn(&str) -> Option<char>, cmd: &str) -> Result<Vec<Item>, String> {
    let mut items = vec![];
    for tok in names.split(',').map(str::trim).filter(|t| !t.is_empty()) {
        let (name, size) = tok.split_once(':').unwrap_or((tok, ""));
        let code =
            code(name).ok_or_else(|| format!("--Format: unknown field '{name}' (see {cmd} --help)"))?;
        let right = size.starts_with('.');
        let digits: String = size.trim_start_matches('.').chars().take_while(char::is_ascii_digit).collect();
        let suffix = &size.trim_start_matches('.')[digits.len()..];
        let width = match digits.as_str() {
            "" if size.is_empty() => 20,
            "" => return Err(format!("--Format: '{tok}' needs a width after ':'")),
            d => d.parse::<usize>().map_err(|_| format!("--Format: bad width in '{tok}'"))?.min(4096),
        };
        items.push(Item::Field { code, width, right });
        if !suffix.is_empty() {
            items.push(Item::Text(suffix.to_string()));
        }
    }
    if items.is_empty() {
        return Err("--Format: no fields given".into());
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

    fn v(s: &[&str]) -> Vec<String> {
        s.iter().map(|s| s.to_string()).collect()
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
    fn long_formats_default_to_twenty_and_keep_suffixes() {
        let code = |n: &str| n.eq_ignore_ascii_case("nodelist").then_some('N');
        let items = long_format("NodeList,nodelist:.5|", code, "sinfo").unwrap();
        assert_eq!(items[0], Item::Field { code: 'N', width: 20, right: false });
        assert_eq!(items[1], Item::Field { code: 'N', width: 5, right: true });
        assert_eq!(items[2], Item::Text("|".into()));
        assert!(long_format("Nope", code, "sinfo").unwrap_err().contains("(see sinfo --help)"));
        assert!(long_format("NodeList:x", code, "sinfo").unwrap_err().contains("needs a width"));
        assert!(long_format(",", code, "sinfo").unwrap_err().contains("no fields"));
    }

    #[test]
    fn fit_pads_and_cuts_like_slurm() {
        assert_eq!(fit("debug", 9, false), "debug    ");
        assert_eq!(fit("up", 5, true), "   up");
        assert_eq!(fit("inactive", 5, true), "inact");
        assert_eq!(fit("long", 0, true), "long");
    }

    #[test]
    fn keywords_take_any_unambiguous_prefix() {
        let t = &["show", "partitions", "nodes", "hostlist", "hostlistsorted"];
        assert_eq!(keyword("SHO", t), Ok(Some("show")));
        assert_eq!(keyword("sh", t), Ok(Some("show")));
        assert_eq!(keyword("part", t), Ok(Some("partitions")));
        assert_eq!(keyword("node", t), Ok(Some("nodes")));
        assert_eq!(keyword("nodesx", t), Ok(None));
        assert_eq!(keyword("hostlist", t), Ok(Some("hostlist")));
        assert!(keyword("host", t).unwrap_err().contains("hostlist, hostlistsorted"));
    }
}
