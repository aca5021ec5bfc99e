//! Slurm's print_fields layout, which `sacct` and `sshare` print in: fixed
//! widths (positive right-justified, negative left), a dashed rule, a space
//! after every field and `+` marking a cut value; or `-p`/`-P` delimited.
//! Also their `-o name[%width],...` lists and `--helpformat`.

use super::args::Parsable;

/// Slurm's print_fields: `(header, width)` columns, then rows of cells.
/// Table cells are cut to the width with `+` as the last character (headers
/// are cut plainly) and every field is followed by one space; delimited
/// output is never cut.
pub fn print_fields(
    cols: &[(&str, i32)],
    rows: &[Vec<String>],
    p: Parsable,
    delim: &str,
    header: bool,
) -> String {
    let widths: Vec<i32> = cols.iter().map(|c| c.1).collect();
    let mut out = String::new();
    if header {
        let heads: Vec<String> = cols.iter().map(|c| c.0.to_string()).collect();
        fields_line(&mut out, &heads, &widths, p, delim, false);
        if p == Parsable::No {
            let rule: Vec<String> = widths.iter().map(|w| "-".repeat(w.unsigned_abs() as usize)).collect();
            fields_line(&mut out, &rule, &widths, p, delim, false);
        }
    }
    for r in rows {
        fields_line(&mut out, r, &widths, p, delim, true);
    }
    out
}

/// One line: padded and cut to the widths (`plus`: a cut value ends in `+`),
/// or joined by the delimiter.
fn fields_line(out: &mut String, cells: &[String], widths: &[i32], p: Parsable, delim: &str, plus: bool) {
    for (i, (v, w)) in cells.iter().zip(widths).enumerate() {
        let abs = w.unsigned_abs() as usize;
        if p != Parsable::No {
            out.push_str(v);
            if p == Parsable::Trailing || i + 1 < cells.len() {
                out.push_str(delim);
            }
            continue;
        }
        let mut v: String = v.chars().take(abs).collect();
        if plus && abs > 0 && cells[i].chars().count() > abs {
            v.pop();
            v.push('+');
        }
        out.push_str(&if *w < 0 { format!("{v:<abs$} ") } else { format!("{v:>abs$} ") });
    }
    out.push('\n');
}

/// `--helpformat`: the names, four to a line, as Slurm prints them.
pub fn help_format(names: &[&str], width: usize) -> String {
    let mut out = String::new();
    for (i, n) in names.iter().enumerate() {
        if i % 4 != 0 {
            out.push(' ');
        } else if i > 0 {
            out.push('\n');
        }
        out += &format!("{n:<width$}");
    }
    out + "\n"
}

/// Splits a `name[%width]` list into names and widths (Slurm's `atoi` after
/// `%`: positive right-justifies, negative left-justifies); `pick` finds a name.
pub fn parse_columns<T>(
    spec: &str,
    pick: impl Fn(&str) -> Option<T>,
    cmd: &str,
) -> Result<Vec<(T, Option<i32>)>, String> {
    let mut out = vec![];
    for tok in spec.split(',').map(str::trim).filter(|t| !t.is_empty()) {
        let (name, width) = match tok.split_once('%') {
            None => (tok, None),
            Some((n, w)) => match w.parse::<i32>() {
                Ok(w) if w != 0 => (n, Some(w.clamp(-4096, 4096))),
                _ => return Err(format!("invalid field width in '{tok}' (use name%N or name%-N)")),
            },
        };
        let field = pick(name.trim())
            .ok_or_else(|| format!("Invalid field requested: \"{name}\" (see {cmd} --helpformat)"))?;
        out.push((field, width));
    }
    Ok(out)
}

/// Prefix match in table order, case-insensitive, as Slurm's `strncasecmp` loop.
pub fn prefix<'a, T>(all: &'a [T], name: impl Fn(&T) -> &str, want: &str) -> Option<&'a T> {
    let w = want.to_ascii_lowercase();
    if w.is_empty() {
        return None;
    }
    all.iter().find(|t| name(t).to_ascii_lowercase().starts_with(&w))
}
