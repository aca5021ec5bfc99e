//! Conditions and policies in expr-lang (the `expr-lang` crate, Go-compatible
//! semantics): compiled once at load, evaluated against a node's facts or a
//! job's request. The spec's Go-style calls `modalias.match(p)` and
//! `time.Now()` are spelled as functions the crate can call
//! (`modalias_match`, `time_Now`); the rewrite keeps every position, so a
//! compile error points into the text as written.

use crate::model::{HostFacts, NUMERIC_FACTS};
use expr::{Context, Environment, Program, Value};
use std::sync::LazyLock;

/// Hidden context keys the functions read.
const HOSTNAME: &str = "__hostname";
const MODALIASES: &str = "__modaliases";
const NOW: &str = "__now";

/// A compiled expression and its source, as written.
#[derive(Debug)]
pub struct Compiled {
    pub source: String,
    program: Program,
    /// Reads `definition.*`: its value depends on the pools, not only on the job.
    pub reads_definition: bool,
    /// Reads the clock: never cached across passes.
    pub reads_clock: bool,
}

impl PartialEq for Compiled {
    fn eq(&self, other: &Self) -> bool {
        self.source == other.source
    }
}

static ENV: LazyLock<Environment<'static>> = LazyLock::new(|| {
    let mut env = Environment::new();
    env.add_function("hostname", |c| match c.ctx.get(HOSTNAME) {
        Some(v) if c.args.is_empty() => Ok(v.clone()),
        Some(_) => Err("hostname() takes no arguments".to_string().into()),
        None => Err("hostname() is only known in a condition".to_string().into()),
    });
    env.add_function("modalias_match", |c| {
        let [Value::String(pattern)] = c.args.as_slice() else {
            return Err("modalias.match takes one pattern (a string)".to_string().into());
        };
        let Some(Value::Array(list)) = c.ctx.get(MODALIASES) else {
            return Err("modalias.match is only known in a condition".to_string().into());
        };
        Ok(Value::Bool(list.iter().any(|m| m.as_string().is_some_and(|m| glob(pattern, m)))))
    });
    env.add_function("time_Now", |c| match c.ctx.get(NOW) {
        Some(v) if c.args.is_empty() => Ok(v.clone()),
        _ => Err("time.Now() takes no arguments".to_string().into()),
    });
    env
});

/// Same-length respellings of the spec's Go-style calls.
fn respell(source: &str) -> String {
    source.replace("modalias.match(", "modalias_match(").replace("time.Now(", "time_Now(")
}

impl Compiled {
    pub fn new(source: &str) -> Result<Compiled, String> {
        let program = expr::compile(&respell(source)).map_err(|e| compile_error(&e.to_string()))?;
        Ok(Compiled {
            source: source.to_string(),
            program,
            reads_definition: source.contains("definition"),
            reads_clock: source.contains("time.Now") || source.contains("now("),
        })
    }

    /// Evaluates to a boolean; anything else is an error naming what it gave.
    pub fn truth(&self, ctx: &Context) -> Result<bool, String> {
        match self.value(ctx)? {
            Value::Bool(b) => Ok(b),
            other => Err(format!("gave {other} where true or false was expected")),
        }
    }

    pub fn value(&self, ctx: &Context) -> Result<Value, String> {
        ENV.run(&self.program, ctx).map_err(|e| one_line(&e.to_string()))
    }
}

/// pest's multi-line report as one line: "at line L, column C: expected ...".
fn compile_error(report: &str) -> String {
    let at = report.lines().find_map(|l| l.trim().strip_prefix("--> ")).and_then(|lc| {
        let (l, c) = lc.split_once(':')?;
        Some(format!("does not compile at line {l}, column {c}"))
    });
    let what = report.lines().find_map(|l| l.trim().strip_prefix("= ")).unwrap_or("").to_string();
    match at {
        Some(at) if what.is_empty() => at,
        Some(at) => format!("{at}: {what}"),
        None => format!("does not compile: {}", one_line(report)),
    }
}

fn one_line(s: &str) -> String {
    s.split_whitespace().collect::<Vec<_>>().join(" ")
}

/// Shell-style glob (`*`, `?`), as modalias patterns are written.
pub fn glob(pattern: &str, text: &str) -> bool {
    let (p, t) = (pattern.as_bytes(), text.as_bytes());
    let (mut pi, mut ti, mut star, mut mark) = (0, 0, None, 0);
    while ti < t.len() {
        if pi < p.len() && (p[pi] == b'?' || p[pi] == t[ti]) {
            pi += 1;
            ti += 1;
        } else if pi < p.len() && p[pi] == b'*' {
            star = Some(pi);
            mark = ti;
            pi += 1;
        } else if let Some(s) = star {
            pi = s + 1;
            mark += 1;
            ti = mark;
        } else {
            return false;
        }
    }
    p[pi..].iter().all(|c| *c == b'*')
}

pub(super) fn value_map(pairs: impl IntoIterator<Item = (String, Value)>) -> Value {
    Value::Map(pairs.into_iter().collect())
}

/// A condition's environment: `uname.*`, `osrelease.*`, `cpuinfo.*` (the
/// numeric cpuinfo keys as integers), `hostname()` and `uname.nodename` the
/// node's name, `modalias.match`.
pub fn facts_context(node: &str, facts: &HostFacts) -> Context {
    let mut groups: std::collections::BTreeMap<&str, Vec<(String, Value)>> = Default::default();
    for g in ["uname", "osrelease", "cpuinfo"] {
        groups.insert(g, vec![]);
    }
    for (k, v) in &facts.values {
        let Some((group, key)) = k.split_once('.') else { continue };
        let value = match NUMERIC_FACTS.contains(&k.as_str()) {
            true => v.trim().parse::<i64>().map(Value::Integer).unwrap_or_else(|_| Value::String(v.clone())),
            false => Value::String(v.clone()),
        };
        if let Some(list) = groups.get_mut(group) {
            list.push((key.to_string(), value));
        }
    }
    let mut ctx = Context::default();
    for (g, mut list) in groups {
        if g == "uname" {
            list.retain(|(k, _)| k != "nodename");
            list.push(("nodename".into(), Value::String(node.into())));
        }
        ctx.insert(g, value_map(list));
    }
    ctx.insert(HOSTNAME, Value::String(node.into()));
    ctx.insert(MODALIASES, Value::Array(facts.modaliases.iter().map(|m| Value::String(m.clone())).collect()));
    ctx
}

/// Adds the clock a policy's `time.Now()` reads: the pass's `now` in the
/// controller's offset from UTC (Go's time.Now is local time).
pub fn with_now(ctx: &mut Context, now_ms: i64, offset_secs: i32) {
    let offset =
        chrono::FixedOffset::east_opt(offset_secs).unwrap_or(chrono::FixedOffset::east_opt(0).expect("0"));
    if let Some(t) = chrono::DateTime::from_timestamp_millis(now_ms) {
        ctx.insert(NOW, Value::DateTime(expr::DateTimeValue::fixed(t.with_timezone(&offset))));
    }
}
