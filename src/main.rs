//! `kruise`: OpenKruise-compatible admission webhooks and controllers.

use clap::Parser;
use kruise_rs::{
    admit,
    cli::{Cli, Command},
    daemon, logging, server,
};

/// mimalloc: admission work is allocation-heavy (JSON trees); glibc's malloc was half of the profile.
/// (Feature `system-allocator`: none, for heap profilers.)
#[cfg(not(feature = "system-allocator"))]
#[global_allocator]
static GLOBAL: mimalloc::MiMalloc = mimalloc::MiMalloc;

fn main() -> std::process::ExitCode {
    let cli = Cli::parse();
    let mut runtime = if matches!(cli.command, Command::Daemon(_)) {
        daemon::runtime()
    } else {
        let mut runtime = tokio::runtime::Builder::new_multi_thread();
        runtime.enable_all();
        runtime
    };
    match runtime.build() {
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
