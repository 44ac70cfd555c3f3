//! The `kruise` binary's library: CLI, HTTPS server, certificates, cluster access and `kruise admit`.
//! The admission rules themselves live in the `kruise-webhooks` crate.

pub mod admission;
pub mod admit;
pub mod certificates;
pub mod cli;
pub mod clock;
pub mod cluster;
pub mod controllers;
pub mod daemon;
pub mod logging;
pub mod objects;
pub mod playground;
pub mod registrations;
pub mod server;
