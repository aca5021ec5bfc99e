//! Rendering rows: a human table (comfy-table), `|`-delimited (`-p`/`-P`), or JSON.

use super::args::{Flags, Parsable};
use comfy_table::{CellAlignment, Table};
use std::io::Write;

/// Slurm's look: a header, a dashed rule, no borders, and no truncation.
const SLURM_PRESET: &str = "     -             ";

pub fn render(headers: &[&str], rows: &[Vec<String>], flags: &Flags) -> String {
    match flags.parsable {
        Parsable::No => human(headers, rows, flags.noheader),
        p => delimited(headers, rows, flags.noheader, p == Parsable::Trailing),
    }
}

fn human(headers: &[&str], rows: &[Vec<String>], noheader: bool) -> String {
    let mut t = Table::new();
    t.load_preset(SLURM_PRESET);
    if !noheader {
        t.set_header(headers.iter().map(|h| h.to_string()));
    }
    for r in rows {
        t.add_row(r.clone());
    }
    for col in t.column_iter_mut() {
        col.set_cell_alignment(CellAlignment::Left);
        col.set_padding((0, 2));
    }
    let mut out: String =
        t.to_string().lines().map(str::trim_end).filter(|l| !l.is_empty()).collect::<Vec<_>>().join("\n");
    out.push('\n');
    out
}

/// Delimited output never truncates and keeps empty fields, so every row has
/// the same field count.
fn delimited(headers: &[&str], rows: &[Vec<String>], noheader: bool, trailing: bool) -> String {
    let mut out = String::new();
    let mut line = |fields: &mut dyn Iterator<Item = &str>| {
        let joined = fields.collect::<Vec<_>>().join("|");
        out.push_str(&joined);
        if trailing {
            out.push('|');
        }
        out.push('\n');
    };
    if !noheader {
        line(&mut headers.iter().copied());
    }
    for r in rows {
        line(&mut r.iter().map(String::as_str));
    }
    out
}

/// A JSON array of objects keyed by column name.
pub fn json(names: &[&str], rows: &[Vec<String>]) -> String {
    let arr: Vec<serde_json::Value> = rows
        .iter()
        .map(|r| {
            let obj: serde_json::Map<String, serde_json::Value> = names
                .iter()
                .zip(r)
                .map(|(n, v)| (n.to_string(), serde_json::Value::String(v.clone())))
                .collect();
            serde_json::Value::Object(obj)
        })
        .collect();
    serde_json::to_string_pretty(&arr).unwrap_or_else(|_| "[]".into()) + "\n"
}

/// A command's `--json` or `--yaml` document: the same value, pretty JSON
/// or YAML (Slurm's `--yaml` is its `--json` document in YAML).
pub fn document(v: &serde_json::Value, yaml: bool) -> String {
    if yaml {
        return serde_yaml_ng::to_string(v).unwrap_or_default();
    }
    serde_json::to_string_pretty(v).unwrap_or_default() + "\n"
}

/// `-V/--version`: Spur's version, in the place of Slurm's `slurm 25.05.x`.
pub fn version() -> String {
    format!("spur {}\n", env!("CARGO_PKG_VERSION"))
}

/// The exit status of a command whose reader went away before it finished
/// writing (`spur prio | head -1`): 128 + SIGPIPE, the status a shell reports
/// for Slurm's tools, which die of that signal there. Nothing is printed.
pub const EXIT_CLOSED_PIPE: i32 = 141;

/// Writes `text` to stdout and flushes it; returns the exit code. A closed
/// pipe is the quiet [`EXIT_CLOSED_PIPE`]; any other write failure (a full
/// disk) is one line on stderr and exit 1. `print!` would panic on either.
pub fn emit(name: &str, text: &str) -> i32 {
    let mut out = std::io::stdout().lock();
    match out.write_all(text.as_bytes()).and_then(|()| out.flush()) {
        Ok(()) => 0,
        Err(e) if e.kind() == std::io::ErrorKind::BrokenPipe => EXIT_CLOSED_PIPE,
        Err(e) => {
            complain(&format!("{name}: error: cannot write to standard output: {e}"));
            1
        }
    }
}

/// One line on stderr. A stderr that cannot be written leaves nowhere to say
/// so, and must not turn a clean exit into a panic, so failures are dropped.
pub fn complain(line: &str) {
    let mut err = std::io::stderr().lock();
    let _ = err.write_all(line.as_bytes()).and_then(|()| err.write_all(b"\n"));
}

/// The end of a command: its output on stdout and exit 0, or
/// `NAME: error: ...` on stderr and exit 1.
pub fn finish(name: &str, result: Result<String, String>) -> i32 {
    match result {
        Ok(out) => emit(name, &out),
        Err(e) => {
            complain(&format!("{name}: error: {e}"));
            1
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn flags(p: Parsable, noheader: bool) -> Flags {
        Flags { parsable: p, noheader, ..Flags::default() }
    }

    #[test]
    fn delimited_keeps_empty_fields() {
        let rows = vec![vec!["a".to_string(), String::new(), String::new()]];
        assert_eq!(render(&["X", "Y", "Z"], &rows, &flags(Parsable::NoTrailing, true)), "a||\n");
        assert_eq!(render(&["X", "Y", "Z"], &rows, &flags(Parsable::Trailing, true)), "a|||\n");
        assert_eq!(render(&["X", "Y", "Z"], &rows, &flags(Parsable::NoTrailing, false)), "X|Y|Z\na||\n");
    }

    #[test]
    fn human_has_header_rule_and_no_truncation() {
        let long = "x".repeat(300);
        let out = render(&["Name", "Descr"], &[vec!["n".into(), long.clone()]], &flags(Parsable::No, false));
        let lines: Vec<&str> = out.lines().collect();
        assert!(lines[0].starts_with("Name"), "{out}");
        assert!(lines[1].starts_with("----"), "{out}");
        assert!(out.contains(&long));
        let out = render(&["Name"], &[vec!["n".into()]], &flags(Parsable::No, true));
        assert_eq!(out.trim(), "n");
    }
}
