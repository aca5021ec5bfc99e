//! spur.conf: accepted, or refused in one line that names the file, no
//! longer than twice the text and a sentence (as `config/props.rs` asserts).
#![no_main]

use libfuzzer_sys::fuzz_target;
use spur_daemon::config::Config;
use std::path::PathBuf;

fuzz_target!(|text: &str| {
    if let Err(e) = Config::parse(text, "spur.conf", PathBuf::from("/etc/spur")) {
        let e = e.to_string();
        assert!(e.starts_with("spur.conf: "), "{e}");
        assert!(!e.contains('\n'), "{e}");
        assert!(e.len() <= 2 * text.len() + 1024, "{} bytes: {e}", e.len());
    }
});
