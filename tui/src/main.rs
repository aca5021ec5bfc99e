use clap::Parser;
use std::process::ExitCode;

fn main() -> ExitCode {
    // The demo's jobs run under this program as their supervisor.
    #[cfg(feature = "demo")]
    {
        let argv: Vec<String> = std::env::args().skip(1).collect();
        if let Some(code) = spur_daemon::agent::stepd::dispatch(&argv) {
            return ExitCode::from(u8::try_from(code).unwrap_or(1));
        }
    }
    console()
}

#[tokio::main]
async fn console() -> ExitCode {
    let cli = spur_console::Cli::parse();
    match spur_console::run(cli).await {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("spur-console: {e:#}");
            ExitCode::FAILURE
        }
    }
}
