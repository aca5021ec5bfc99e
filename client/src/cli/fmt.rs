//! Values and records as Slurm's tools print them, shared by every command:
//! a controller's refusal as one line, `(null)` for an empty field, the
//! `Key=value` record layout of `scontrol show`, and Slurm's hostname order.
//! Nothing here knows a command; commands import it, never each other.

use std::cmp::Ordering;

/// A gRPC error as one line: the controller's message, else the code's description.
pub fn status(s: tonic::Status) -> String {
    if s.message().is_empty() { s.code().description().to_string() } else { s.message().to_string() }
}

/// An empty field as Slurm prints it.
pub fn null(s: &str) -> &str {
    if s.is_empty() { "(null)" } else { s }
}

/// Lines of a record: `\n   `-indented, or one line with `-o`; records end
/// with a blank line unless one-line, as Slurm prints them.
pub fn record(lines: &[String], oneliner: bool) -> String {
    let sep = if oneliner { " " } else { "\n   " };
    lines.join(sep) + if oneliner { "\n" } else { "\n\n" }
}

/// Slurm's hostname order: at the first difference, digit runs compare as
/// numbers, so `n9` sorts before `n10`.
pub fn natural(a: &str, b: &str) -> Ordering {
    let (x, y) = (a.as_bytes(), b.as_bytes());
    let i = x.iter().zip(y).take_while(|(p, q)| p == q).count();
    if i < x.len() && i < y.len() && x[i].is_ascii_digit() && y[i].is_ascii_digit() {
        // Compared as digit strings without leading zeros, so no length overflows.
        let run = |s: &[u8]| -> Vec<u8> {
            let d = s[i..].iter().take_while(|c| c.is_ascii_digit());
            d.skip_while(|c| **c == b'0').copied().collect()
        };
        let (p, q) = (run(x), run(y));
        return p.len().cmp(&q.len()).then(p.cmp(&q)).then(a.cmp(b));
    }
    a.cmp(b)
}

/// Key-value pairs as a JSON object, in order (annotations, facts, a spec).
pub fn json_pairs(kvs: &[spur_proto::v1::KeyValue]) -> serde_json::Value {
    serde_json::Value::Object(kvs.iter().map(|kv| (kv.key.clone(), kv.value.clone().into())).collect())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn records_indent_or_join_on_one_line() {
        let lines = ["A=1".to_string(), "B=2".to_string()];
        assert_eq!(record(&lines, false), "A=1\n   B=2\n\n");
        assert_eq!(record(&lines, true), "A=1 B=2\n");
    }

    #[test]
    fn status_falls_back_to_the_code() {
        assert_eq!(status(tonic::Status::not_found("job 7 not found")), "job 7 not found");
        assert_eq!(status(tonic::Status::unavailable("")), tonic::Code::Unavailable.description());
        assert_eq!(null(""), "(null)");
    }
}
