//! Tracing setup: `RUST_LOG` (default `info`), text or JSON, noisy transport crates silenced.

use tracing_subscriber::{EnvFilter, fmt};

use crate::cli::LogFormat;

/// Installs the global subscriber (logs go to stderr, so `kruise admit` output stays clean).
pub fn init(format: LogFormat) {
    let filter = EnvFilter::try_from_default_env()
        .unwrap_or_else(|_| EnvFilter::new("info"))
        .add_directive("hyper=off".parse().expect("static directive"))
        .add_directive("h2=off".parse().expect("static directive"))
        .add_directive("rustls=warn".parse().expect("static directive"));
    let builder = fmt().with_env_filter(filter).with_writer(std::io::stderr);
    let _ = match format {
        LogFormat::Json => builder
            .json()
            .flatten_event(true)
            .with_current_span(true)
            .try_init(),
        LogFormat::Text => builder.try_init(),
    };
}
