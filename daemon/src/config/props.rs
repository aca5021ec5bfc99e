//! spur.conf fed random TOML-ish text, and a config setting every key with
//! one key's value replaced by a random one (or the key dropped, repeated or
//! misspelt): `Config::parse` accepts or refuses without panicking, and a
//! refusal is one line naming the file and, for a valid file, the key.

use super::Config;
use proptest::prelude::*;
use std::path::PathBuf;

/// Every key spur.conf knows, in a valid file: `(table, key, value)`; the
/// table `""` is the top level, `[[...]]` an array of tables.
const TEMPLATE: &[(&str, &str, &str)] = &[
    ("", "cluster_name", "\"c\""),
    ("", "resources_file", "\"resources.yaml\""),
    ("[controller]", "listen_addr", "\"127.0.0.1:6817\""),
    ("[controller]", "heartbeat_interval_secs", "5"),
    ("[controller]", "node_timeout_secs", "30"),
    ("[controller]", "provisioners_file", "\"provisioners.yaml\""),
    ("[controller]", "leader_lease_secs", "10"),
    ("[controller]", "advertise_addr", "\"ctl1:6817\""),
    ("[accounting]", "database_url", "\"sqlite://spur.db\""),
    ("[accounting]", "default_qos", "\"normal\""),
    ("[accounting]", "require_qos", "false"),
    ("[accounting]", "require_association", "false"),
    ("[accounting]", "fairshare_refresh_secs", "300"),
    ("[accounting]", "grp_wall_window_days", "14"),
    ("[accounting]", "txn_retention_days", "365"),
    ("[auth]", "plugin", "\"munge\""),
    ("[auth]", "jwt_key", "\"kkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkk\""),
    ("[auth]", "mode", "\"permissive\""),
    ("[auth]", "munge_socket", "\"/run/munge/munge.socket.2\""),
    ("[auth]", "agent_uid", "0"),
    ("[admission]", "mode", "\"open\""),
    ("[logging]", "audit_rpcs", "false"),
    ("[metrics]", "listen_addr", "\"127.0.0.1:6818\""),
    ("[mail]", "program", "\"/usr/sbin/sendmail\""),
    ("[scheduler]", "interval", "2"),
    ("[scheduler]", "backfill_enabled", "true"),
    ("[scheduler]", "queue_depth", "64"),
    ("[scheduler]", "fairshare_halflife_days", "7.0"),
    ("[scheduler]", "preemption_enabled", "false"),
    ("[scheduler]", "preempt_type", "\"none\""),
    ("[scheduler]", "preempt_exempt_time", "0"),
    ("[scheduler]", "preemption_threshold", "0.5"),
    ("[scheduler]", "preemption_gap", "0.1"),
    ("[scheduler]", "min_preemption_runtime", "60"),
    ("[scheduler]", "preemption_multi_victim_enabled", "false"),
    ("[scheduler]", "max_evictions_per_tick", "8"),
    ("[scheduler]", "preemption_drain_timeout", "30"),
    ("[scheduler]", "kill_wait_secs", "30"),
    ("[scheduler]", "min_job_age_secs", "300"),
    ("[scheduler]", "max_job_count", "10000"),
    ("[scheduler]", "max_array_size", "1001"),
    ("[scheduler]", "idle_fill_enabled", "false"),
    ("[scheduler]", "idle_fill_exempt_secs", "60"),
    ("[scheduler]", "idle_fill_max_borrow_factor", "1.0"),
    ("[scheduler]", "idle_fill_max_cluster_fraction", "0.5"),
    ("[hres]", "callback_timeout_ms", "5000"),
    ("[hres]", "prolog_timeout_secs", "60"),
    ("[hres]", "epilog_timeout_secs", "60"),
    ("[licenses]", "matlab", "20"),
    ("[[nodes]]", "name", "\"n[1-4]\""),
    ("[[nodes]]", "cpus", "16"),
    ("[[nodes]]", "memory_mb", "65536"),
    ("[[nodes]]", "gres", "\"gpu:2\""),
    ("[[nodes]]", "features", "[\"ib\"]"),
    ("[[nodes]]", "weight", "1"),
    ("[[partitions]]", "name", "\"batch\""),
    ("[[partitions]]", "nodes", "\"n[1-4]\""),
    ("[[partitions]]", "default", "true"),
    ("[[partitions]]", "max_time", "\"1-00:00:00\""),
    ("[[partitions]]", "default_time", "60"),
    ("[[partitions]]", "priority_tier", "1"),
    ("[[partitions]]", "preempt_mode", "\"off\""),
    ("[[partitions]]", "preempt_exempt_time", "0"),
    ("[[partitions]]", "state", "\"up\""),
];

/// An edit of key `TEMPLATE[i]`.
#[derive(Debug, Clone)]
enum Edit {
    Value(String),
    Drop,
    Twice,
    Misspelt,
}

/// The template with `edit` applied to key `at`.
fn render(at: usize, edit: &Edit) -> String {
    let mut out = String::new();
    let mut table = "";
    for (i, (t, k, v)) in TEMPLATE.iter().enumerate() {
        if *t != table {
            out.push_str(&format!("{t}\n"));
            table = t;
        }
        match (i == at, edit) {
            (true, Edit::Value(x)) => out.push_str(&format!("{k} = {x}\n")),
            (true, Edit::Drop) => {}
            (true, Edit::Twice) => out.push_str(&format!("{k} = {v}\n{k} = {v}\n")),
            (true, Edit::Misspelt) => out.push_str(&format!("{k}x = {v}\n")),
            (false, _) => out.push_str(&format!("{k} = {v}\n")),
        }
    }
    out
}

/// TOML values of every type, in and out of each key's range.
fn toml_value() -> impl Strategy<Value = String> {
    let word = prop::collection::vec(any::<char>(), 0..12).prop_map(|v| v.into_iter().collect::<String>());
    prop_oneof![
        prop::sample::select(
            &[
                "0",
                "1",
                "-1",
                "4294967296",
                "9223372036854775807",
                "-9223372036854775808",
                "0.0",
                "-1.5",
                "nan",
                "inf",
                "-inf",
                "1e308",
                "true",
                "false",
                "[]",
                "[1, 2]",
                "[\"a\", 1]",
                "{}",
                "{ a = 1 }",
                "1979-05-27T07:32:00Z",
                "\"\"",
                "\" \"",
                "\"none\"",
                "\"jwt\"",
                "\"munge\"",
                "\"required\"",
                "\"ALL\"",
                "\"n[1-\"",
                "\"gpu:99999999999\"",
                "\"UNLIMITED\"",
                "\"30s\"",
                "\"-5\"",
                "\"postgresql://h/db\"",
                "\"mysql://x\"",
                "\"qos_priority\"",
                "\"requeue\"",
                "\"down\"",
            ][..]
        )
        .prop_map(str::to_string),
        any::<i64>().prop_map(|n| n.to_string()),
        any::<f64>().prop_map(|f| toml::Value::Float(f).to_string()),
        word.clone().prop_map(|s| toml::Value::String(s).to_string()),
        (word, 1..5000usize).prop_map(|(s, n)| toml::Value::String(s.repeat(n)).to_string()),
    ]
}

fn edit() -> impl Strategy<Value = Edit> {
    prop_oneof![
        12 => toml_value().prop_map(Edit::Value),
        1 => Just(Edit::Drop),
        1 => Just(Edit::Twice),
        1 => Just(Edit::Misspelt),
    ]
}

/// Pieces of TOML and of spur.conf for the free-form text.
const TOKENS: &[&str] = &[
    "\n",
    " ",
    "=",
    "\"",
    "'",
    "[",
    "]",
    "[[",
    "]]",
    "{",
    "}",
    ",",
    ".",
    "#",
    "\\",
    "\"\"\"",
    "nodes",
    "partitions",
    "scheduler",
    "auth",
    "accounting",
    "controller",
    "hres",
    "licenses",
    "cluster_name",
    "name",
    "cpus",
    "plugin",
    "jwt_key",
    "interval",
    "max_time",
    "1",
    "-1",
    "1e999",
    "true",
    "n[1-2]",
];

fn toml_ish() -> impl Strategy<Value = String> {
    prop_oneof![
        8 => prop::collection::vec(prop::sample::select(TOKENS), 0..200).prop_map(|v| v.concat()),
        1 => prop::collection::vec(any::<char>(), 0..400).prop_map(|v| v.into_iter().collect()),
        1 => (0..TEMPLATE.len(), prop::collection::vec(prop::sample::select(TOKENS), 1..20))
            .prop_map(|(i, v)| { let t = render(usize::MAX, &Edit::Drop); let cut = t.len() * i / TEMPLATE.len(); format!("{}{}", &t[..cut], v.concat()) }),
    ]
}

/// The keys a check across keys may name instead of the one edited.
fn related(table: &str, key: &str) -> &'static [&'static str] {
    match (table, key) {
        ("[[nodes]]", "name") => &["partitions[0].nodes"],
        ("[controller]", "heartbeat_interval_secs") => &["node_timeout_secs"],
        ("[auth]", _) => &["auth."],
        _ => &[],
    }
}

fn parse(text: &str) -> Result<Config, String> {
    Config::parse(text, "spur.conf", PathBuf::from("/etc/spur")).map_err(|e| e.to_string())
}

/// A refusal: one line, naming the file, no longer than the text (a value
/// is quoted at most once, its control characters escaped) and a sentence.
fn check_refusal(e: &str, text: &str) -> Result<(), TestCaseError> {
    prop_assert!(e.starts_with("spur.conf: "), "{e}");
    prop_assert!(!e.contains('\n'), "{e}");
    prop_assert!(e.len() <= 2 * text.len() + 1024, "{} bytes: {}", e.len(), &e[..e.floor_char_boundary(300)]);
    Ok(())
}

#[test]
fn the_template_sets_every_key_validly() {
    let c = parse(&render(usize::MAX, &Edit::Drop)).unwrap();
    assert_eq!((c.nodes.len(), c.partitions.len(), c.scheduler_keys.len()), (1, 1, 21));
}

/// Found by the edited-key property below: a long value came back in the
/// error twice (toml's source excerpt, then escaped in its message), up to
/// 3.5 times its size.
#[test]
fn a_bad_value_is_quoted_at_most_once_and_capped() {
    let long = "\u{3347a}".repeat(5000);
    let e = parse(&format!("[controller]\nheartbeat_interval_secs = \"{long}\"\n")).unwrap_err();
    assert!(
        e.starts_with("spur.conf: key 'controller.heartbeat_interval_secs': TOML parse error at line 2"),
        "{e}"
    );
    assert!(e.len() < 700 && e.ends_with('…'), "{e}");
    let e = parse("[controller]\nheartbeat_interval_secs = \"x\"\n").unwrap_err();
    assert!(e.ends_with("invalid type: string \"x\", expected u32"), "{e}");
}

/// Found by the same property: a multi-line string's newline came back
/// raw in the error, which then spanned lines.
#[test]
fn a_value_is_quoted_with_its_control_characters_escaped() {
    let e =
        parse("[[partitions]]\nname = \"p\"\nnodes = \"ALL\"\nmax_time = \"\"\"\nsoon\\r\\u001b[2J\"\"\"\n")
            .unwrap_err();
    assert!(
        e.starts_with("spur.conf: key 'partitions[0].max_time': 'soon\\r\\u{1b}[2J' is not a time"),
        "{e}"
    );
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 512, ..ProptestConfig::default() })]

    #[test]
    fn toml_ish_text_is_accepted_or_refused_naming_the_file(text in toml_ish()) {
        if let Err(e) = parse(&text) {
            check_refusal(&e, &text)?;
        }
    }

    /// One key edited: accepted, or refused naming that key or a key
    /// checked against it.
    #[test]
    fn an_edited_key_is_accepted_or_refused_naming_it(at in 0..TEMPLATE.len(), edit in edit()) {
        let text = render(at, &edit);
        if let Err(e) = parse(&text) {
            check_refusal(&e, &text)?;
            let (table, key) = (TEMPLATE[at].0, TEMPLATE[at].1);
            let named = e.contains(key) || related(table, key).iter().any(|k| e.contains(k));
            prop_assert!(named, "editing {table} {key} with {edit:?}: {e}");
        }
    }
}
