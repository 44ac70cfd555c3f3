//! `kubectl-kruise`: found by kubectl on PATH as `kubectl kruise`.

use clap::Parser as _;
use kubectl_kruise::cli::Cli;

#[tokio::main]
async fn main() -> std::process::ExitCode {
    // One crypto provider, chosen explicitly; an error only means it was already installed.
    let _ = rustls::crypto::ring::default_provider().install_default();
    let cli = match Cli::try_parse() {
        Ok(cli) => cli,
        Err(e) if !e.use_stderr() => {
            // --help, --version
            let _ = e.print();
            return std::process::ExitCode::SUCCESS;
        }
        Err(e) => {
            // kubectl's usage errors: `error: <message>` and exit 1.
            let text = e.render().to_string();
            let first = text.lines().next().unwrap_or_default();
            let message = first.strip_prefix("error: ").unwrap_or(first);
            eprintln!("error: {message}");
            eprintln!("See 'kubectl kruise --help' for usage.");
            return std::process::ExitCode::FAILURE;
        }
    };
    match kubectl_kruise::run::run(cli).await {
        Ok(code) => std::process::ExitCode::from(code),
        Err(e) => {
            eprintln!("{}", e.printed());
            std::process::ExitCode::FAILURE
        }
    }
}
