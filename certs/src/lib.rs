//! Webhook certificates for kruise-rs: a self-signed ECDSA P-256 CA, a serving certificate for
//! the webhook Service, and the decisions of when to renew them — including a CA rotation that
//! overlaps old and new CA in the caBundle so no admission review fails while it happens.
//!
//! Pure logic plus a small directory store; no async, no Kubernetes client. The caller (the
//! binary's cert controller) reads the Secret, calls [`plan`], writes the result, and publishes
//! [`CertMaterial::ca_bundle_pem`]. See `README.md` for the rotation protocol.

mod config;
pub mod dir;
mod error;
mod generate;
mod inspect;
mod keys;
mod material;
mod pem;
mod plan;

pub use config::{
    CertConfig, DEFAULT_CA_VALIDITY, DEFAULT_LEAF_VALIDITY, DEFAULT_ROTATION_DWELL, MAX_VALIDITY,
    NOT_BEFORE_BACKDATE,
};
pub use dir::ServingFiles;
pub use error::CertError;
pub use generate::generate;
pub use inspect::{CertInfo, bundle_trusts, inspect, inspect_all};
pub use keys::check_pair;
pub use material::{
    ACTIVE_CA_CERT, CA_BUNDLE, CA_KEY, CertMaterial, KNOWN_KEYS, NEXT_CA_CERT, NEXT_CA_KEY, PHASE_SINCE,
    PREVIOUS_CA_CERT, PemPair, SERVING_KEYS, TLS_CERT, TLS_KEY,
};
pub use plan::{Plan, RotationReason, plan};
