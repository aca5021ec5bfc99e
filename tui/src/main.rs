use clap::Parser;
use std::process::ExitCode;

#[tokio::main]
async fn main() -> ExitCode {
    let cli = spur_console::Cli::parse();
    match spur_console::run(cli).await {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("spur-console: {e:#}");
            ExitCode::FAILURE
        }
    }
}
