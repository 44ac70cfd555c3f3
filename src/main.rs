//! `kruise`: OpenKruise-compatible admission webhooks and controllers.

use clap::Parser;
use kruise_rs::{
    admit,
    cli::{Cli, Command},
    logging, server,
};

/// mimalloc: admission work is allocation-heavy (JSON trees); glibc's malloc was half of the profile.
#[global_allocator]
static GLOBAL: mimalloc::MiMalloc = mimalloc::MiMalloc;

#[tokio::main]
async fn main() -> std::process::ExitCode {
    // One crypto provider, chosen explicitly; an error only means it was already installed.
    let _ = rustls::crypto::ring::default_provider().install_default();
    let cli = Cli::parse();
    logging::init(cli.log_format);
    let result = match cli.command {
        Command::Serve(serve) => server::run(serve.args, serve.limits).await,
        Command::Admit(args) => return admit::run(&args).await,
        Command::Playground(args) => kruise_rs::playground::run(&args).await,
        Command::Crds => {
            print!("{}", kruise_api::crds_yaml());
            Ok(())
        }
    };
    match result {
        Ok(()) => std::process::ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("error: {e:#}");
            std::process::ExitCode::FAILURE
        }
    }
}
