//! `spur`: the multi-call client (`sacctmgr`, ... through argv[0]).

#[tokio::main(flavor = "current_thread")]
async fn main() {
    let code = spur_client::cli::main(std::env::args().collect()).await;
    std::process::exit(code);
}
