//! `kruise`: OpenKruise-compatible admission webhooks and controllers.

use clap::Parser;
use kruise_rs::{
    admit,
    cli::{Cli, Command},
    daemon, logging, server,
};

/// mimalloc: admission work is allocation-heavy (JSON trees); glibc's malloc was half of the profile.
#[global_allocator]
static GLOBAL: mimalloc::MiMalloc = mimalloc::MiMalloc;

/// The node agent's tokio workers, whatever the node's core count: it waits on the API server and the
/// runtime, and each worker thread costs memory (its stack and its allocator heap) on every node.
const AGENT_WORKER_THREADS: usize = 2;

fn main() -> std::process::ExitCode {
    let cli = Cli::parse();
    let mut runtime = tokio::runtime::Builder::new_multi_thread();
    if matches!(cli.command, Command::Daemon(_)) {
        runtime.worker_threads(AGENT_WORKER_THREADS);
    }
    match runtime.enable_all().build() {
        Ok(runtime) => runtime.block_on(run(cli)),
        Err(e) => {
            eprintln!("error: cannot start the async runtime: {e}");
            std::process::ExitCode::FAILURE
        }
    }
}

async fn run(cli: Cli) -> std::process::ExitCode {
    // One crypto provider, chosen explicitly; an error only means it was already installed.
    let _ = rustls::crypto::ring::default_provider().install_default();
    logging::init(cli.log_format);
    let result = match cli.command {
        Command::Serve(serve) => {
            let serve = *serve;
            server::run(serve.args, serve.limits).await
        }
        Command::Admit(args) => return admit::run(&args).await,
        Command::Playground(args) => kruise_rs::playground::run(&args).await,
        Command::Daemon(args) => daemon::run(args).await,
        Command::Completion { shell } => {
            let mut command = <Cli as clap::CommandFactory>::command();
            // Into a buffer: clap_complete panics when its writer fails (a closed pipe).
            let mut script = Vec::new();
            clap_complete::generate(shell, &mut command, "kruise", &mut script);
            std::io::Write::write_all(&mut std::io::stdout(), &script).map_err(anyhow::Error::from)
        }
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
