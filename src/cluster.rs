//! Everything that talks to a real API server: reflector caches (the webhooks' view), the certificate
//! Secret, CA bundle publishing and leader election.

pub mod ca_bundle;
mod caches;
mod cert_secret;
mod leader;
mod owner_index;
mod reflector;
pub mod status_writes;

pub use ca_bundle::CaBundlePublisher;
pub use caches::{ClusterCache, ReadError};
pub use cert_secret::{CertSecret, SecretError};
pub use leader::LeaderElector;
pub use reflector::{Change, Reflector};

/// The API server refused a request for its own load (API Priority and Fairness: 429, or 503): the
/// caller may retry later. One rule for admission's writes and reads and the controllers' writes.
pub fn overloaded(error: &kube::Error) -> bool {
    matches!(error, kube::Error::Api(s) if s.code == 429 || s.code == 503)
}
