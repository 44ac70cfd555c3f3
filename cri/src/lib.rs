//! The Container Runtime Interface as the node agent (`kruise daemon`) uses it: CRI v1 clients over a
//! unix socket ([`Runtime::connect`]), image pulls ([`Runtime::pull_image`]), pod sandboxes and containers
//! ([`Runtime::run_pod_sandbox`], [`Runtime::create_container`], [`Runtime::exec_sync`]…), the names kubelet
//! labels them with ([`kubelet`]) and the search for the runtime's socket ([`discover`]), as
//! docs/node-agent.md describes.

mod connect;
mod discover;
mod images;
pub mod kubelet;
mod runtime;

pub use connect::{ConnectError, Runtime};
pub use discover::{CANDIDATES, DiscoverError, Discovered, candidates, discover};
pub use images::ImageError;
pub use runtime::{CALL_TIMEOUT, ExecOutput, RuntimeError};

/// The generated CRI v1 messages and clients (`runtime.v1`).
#[allow(missing_docs, clippy::all, clippy::pedantic)]
pub mod v1 {
    tonic::include_proto!("runtime.v1");
}
