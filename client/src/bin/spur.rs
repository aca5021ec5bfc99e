//! `spur`: the multi-call client (`sacctmgr`, ... through `argv[0]`).

#[tokio::main(flavor = "current_thread")]
async fn main() {
    // Lossy, so an argument that is not UTF-8 is an error message, not a panic.
    let args = std::env::args_os().map(|a| a.to_string_lossy().into_owned()).collect();
    let code = spur_client::cli::main(args).await;
    std::process::exit(code);
}
