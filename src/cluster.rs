//! Everything that talks to a real API server: reflector caches (the webhooks' view), the certificate
//! Secret, CA bundle publishing and leader election.

pub mod ca_bundle;
mod caches;
mod cert_secret;
mod leader;
mod reflector;
pub mod status_writes;

pub use ca_bundle::CaBundlePublisher;
pub use caches::{ClusterCache, ReadError};
pub use cert_secret::{CertSecret, SecretError};
pub use leader::LeaderElector;
