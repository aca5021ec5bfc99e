//! The command line.

use clap::Parser;
use spur_client::conn;
use std::path::PathBuf;

/// The full-screen Spur admin console.
#[derive(Debug, Clone, Parser)]
#[command(name = "spur-console", version)]
pub struct Cli {
    /// Controller URL [default: $SPUR_CONTROLLER_ADDR, else http://127.0.0.1:6817]
    #[arg(long, value_name = "URL")]
    pub controller: Option<String>,
    /// Start an in-process demo controller with seeded QOS and accounts, in a temp dir.
    #[arg(long, conflicts_with = "controller")]
    pub demo: bool,
    // The doc is clap's --help text, where `[[contexts]]` is a table, not a link.
    #[allow(rustdoc::broken_intra_doc_links)]
    /// Start on this context of console.toml's [[contexts]] [default: its default_context]
    #[arg(long, value_name = "NAME", conflicts_with_all = ["controller", "demo"])]
    pub context: Option<String>,
    /// Refuse every write (edit, delete) in this session.
    #[arg(long)]
    pub read_only: bool,
    /// Enable the mouse: click selects a row, the wheel scrolls.
    #[arg(long)]
    pub mouse: bool,
    // The doc is clap's --help text, where `[keys]` and `[theme]` are tables, not links.
    #[allow(rustdoc::broken_intra_doc_links)]
    /// console.toml with [keys] and [theme] [default: $SPUR_CONSOLE_CONFIG, else ~/.config/spur/console.toml]
    #[arg(long, value_name = "PATH")]
    pub config: Option<PathBuf>,
}

impl Cli {
    /// `--controller`, else `SPUR_CONTROLLER_ADDR`, else `http://127.0.0.1:6817`
    /// (the rule every Spur client shares).
    pub fn controller_url(&self) -> String {
        conn::resolve_controller(self.controller.as_deref())
    }
}

/// NO_COLOR set to anything non-empty turns colours off (no-color.org).
pub fn no_color() -> bool {
    std::env::var_os("NO_COLOR").is_some_and(|v| !v.is_empty())
}
