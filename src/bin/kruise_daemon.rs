//! `kruise-daemon`: the node agent alone (`kruise daemon` in a binary of its own). The linker keeps only
//! the agent's code, so a node maps a fraction of `kruise`'s pages (benches/README.md, "node agent's
//! idle memory"); the flags are `kruise daemon`'s.

use clap::Parser;
use kruise_rs::{
    cli::{DaemonArgs, LogFormat},
    daemon, logging,
};

/// The same allocator as `kruise`.
#[global_allocator]
static GLOBAL: mimalloc::MiMalloc = mimalloc::MiMalloc;

/// The kruise-rs node agent (`kruise daemon` alone): one per node, next to the container runtime.
#[derive(Debug, Parser)]
#[command(name = "kruise-daemon", version)]
struct DaemonCli {
    /// Log format.
    #[arg(long, value_enum, default_value_t = LogFormat::Text, env = "KRUISE_LOG_FORMAT")]
    log_format: LogFormat,
    #[command(flatten)]
    args: DaemonArgs,
}

fn main() -> std::process::ExitCode {
    let cli = DaemonCli::parse();
    match daemon::runtime().build() {
        Ok(runtime) => runtime.block_on(async {
            // One crypto provider, chosen explicitly; an error only means it was already installed.
            let _ = rustls::crypto::ring::default_provider().install_default();
            logging::init(cli.log_format);
            match daemon::run(cli.args).await {
                Ok(()) => std::process::ExitCode::SUCCESS,
                Err(e) => {
                    eprintln!("error: {e:#}");
                    std::process::ExitCode::FAILURE
                }
            }
        }),
        Err(e) => {
            eprintln!("error: cannot start the async runtime: {e}");
            std::process::ExitCode::FAILURE
        }
    }
}
