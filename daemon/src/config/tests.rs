//! spur.conf as a whole: loading, defaults and the errors that name a key.

use super::*;

fn parse(text: &str) -> Result<Config, String> {
    Config::parse(text, "spur.conf", PathBuf::from("/etc/spur")).map_err(|e| e.to_string())
}

/// Found by daemon/fuzz's spur_conf: a line of control characters made a
/// refusal six times its length, since the cap came before the escaping.
#[test]
fn a_line_of_control_characters_is_refused_in_a_capped_line() {
    let text = format!("gre{}", "\u{18}".repeat(300));
    let e = parse(&text).unwrap_err();
    assert!(e.len() <= 2 * text.len() + 1024 && !e.contains('\n'), "{} bytes: {e}", e.len());
}

#[test]
fn defaults_match_the_spec() {
    let c = parse("").unwrap();
    assert_eq!(c.controller.listen_addr, "[::]:6817");
    assert_eq!(c.accounting.fairshare_refresh_secs, 300);
    assert_eq!(c.accounting.grp_wall_window_days, 14);
    assert!(c.accounting.database_url.is_empty());
}

#[test]
fn unknown_key_names_key_and_file() {
    let e = parse("[accounting]\ndatabse_url = \"x\"\n").unwrap_err();
    assert!(e.starts_with("spur.conf:"), "{e}");
    assert!(e.contains("databse_url"), "{e}");
}

#[test]
fn wrong_type_names_the_key() {
    let e = parse("[accounting]\nrequire_qos = \"yes\"\n").unwrap_err();
    assert!(e.contains("accounting.require_qos"), "{e}");
}

#[test]
fn auth_keys_are_exclusive_and_key_file_drops_one_newline() {
    let e = parse("[auth]\nplugin = \"jwt\"\njwt_key = \"a\"\njwt_key_file = \"b\"\n").unwrap_err();
    assert!(e.contains("both set"), "{e}");
    assert!(parse("[auth]\nplugin = \"jwt\"\n").unwrap_err().contains("auth.plugin"));
    assert!(parse("[auth]\nplugin = \"kerberos\"\n").unwrap_err().contains("auth.plugin"));
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join("k"), "a-secret-key-of-at-least-32-bytes\n\n").unwrap();
    let c = Config::parse("[auth]\nplugin = \"jwt\"\njwt_key_file = \"k\"\n", "f", dir.path().to_path_buf())
        .unwrap();
    assert_eq!(c.jwt_secret().unwrap().unwrap(), b"a-secret-key-of-at-least-32-bytes\n");
}

#[test]
fn a_short_jwt_key_is_an_error_naming_the_key() {
    let e = parse("[auth]\nplugin = \"jwt\"\njwt_key = \"\"\nmode = \"required\"\n").unwrap_err();
    assert_eq!(e, "spur.conf: key 'auth.jwt_key': the HS256 key must be at least 32 bytes (got 0)");
    let e = parse("[auth]\nplugin = \"jwt\"\njwt_key = \"short\"\n").unwrap_err();
    assert!(e.ends_with("(got 5)"), "{e}");
    assert!(parse(&format!("[auth]\nplugin = \"jwt\"\njwt_key = \"{}\"\n", "k".repeat(32))).is_ok());
    assert!(parse("[auth]\njwt_key = \"\"\n").is_ok(), "no key is used under plugin none");
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join("k"), "sixteen-byte-key\n").unwrap();
    let conf = dir.path().join("spur.conf");
    std::fs::write(&conf, "[auth]\nplugin = \"jwt\"\njwt_key_file = \"k\"\n").unwrap();
    let e = Config::load(&conf).unwrap_err().to_string();
    assert!(e.starts_with(&format!("{}: key 'auth.jwt_key_file' (", conf.display())), "{e}");
    assert!(e.ends_with("the HS256 key must be at least 32 bytes (got 16)"), "{e}");
}

#[test]
fn cluster_errors_name_the_key() {
    let e = parse("[[nodes]]\nname = \"n[1-\"\n").unwrap_err();
    assert!(e.contains("nodes[0].name"), "{e}");
    let e = parse("[[nodes]]\nname = \"n[1-2]\"\n[[nodes]]\nname = \"n2\"\n").unwrap_err();
    assert!(e.contains("defined twice"), "{e}");
    let e =
        parse("[[nodes]]\nname = \"n1\"\n[[partitions]]\nname = \"p\"\nnodes = \"n[1-2]\"\n").unwrap_err();
    assert!(e.contains("partitions[0].nodes") && e.contains("'n2'"), "{e}");
    let e = parse("[[nodes]]\nname = \"n1\"\ncpus = \"eight\"\n").unwrap_err();
    assert!(e.contains("nodes[0].cpus"), "{e}");
    let e = parse("[[partitions]]\nname = \"p\"\nnodes = \"ALL\"\nmax_time = \"soon\"\n").unwrap_err();
    assert!(e.contains("partitions[0].max_time"), "{e}");
    let ok = parse(
        "[[nodes]]\nname = \"n[1-2]\"\ngres = \"gpu:2\"\n[[partitions]]\nname = \"p\"\nnodes = \"ALL\"\nmax_time = \"1-00:00:00\"\ndefault_time = 60\n",
    );
    assert!(ok.is_ok(), "{ok:?}");
}

#[test]
fn relative_sqlite_resolves_beside_the_file() {
    let c = parse("[accounting]\ndatabase_url = \"sqlite://spur.db\"\n").unwrap();
    assert_eq!(c.database_url(), "sqlite:///etc/spur/spur.db");
    assert!(parse("[accounting]\ndatabase_url = \"mysql://x\"\n").is_err());
    assert!(parse("[accounting]\ndatabase_url = \"sqlite:spur.db\"\n").is_err());
    assert!(parse("[accounting]\ndatabase_url = \"postgresx://h/db\"\n").is_err());
}
