//! The one error type of the crate.

use std::path::PathBuf;

/// Everything that can go wrong while generating, parsing, checking or storing certificates.
///
/// `what` names the file or data key involved (for example `tls.crt`) so that a log line says
/// which input is broken. Messages never contain key material.
#[derive(Debug, thiserror::Error)]
pub enum CertError {
    /// The input holds no PEM block at all (empty, garbage, or only whitespace).
    #[error("{what}: no PEM block found")]
    NoPem { what: String },
    /// A PEM block is present but cannot be decoded (truncated, bad base64, wrong label).
    #[error("{what}: invalid PEM: {reason}")]
    BadPem { what: String, reason: String },
    /// The DER inside a `CERTIFICATE` block is not a valid X.509 certificate, or lacks what we need.
    #[error("{what}: invalid certificate: {reason}")]
    BadCert { what: String, reason: String },
    /// The private key cannot be parsed or is of an unsupported type.
    #[error("{what}: invalid private key: {reason}")]
    BadKey { what: String, reason: String },
    /// The private key is valid but does not belong to the certificate.
    #[error("{what}: private key does not match the certificate's public key")]
    KeyMismatch { what: String },
    /// A required data key (or file) is absent.
    #[error("missing {0}")]
    Missing(String),
    /// A data key holds something that is not what it should be (not UTF-8, bad timestamp, ...).
    #[error("{what}: {reason}")]
    Invalid { what: String, reason: String },
    /// The [`crate::CertConfig`] cannot produce a usable certificate.
    #[error("invalid certificate configuration: {0}")]
    Config(String),
    /// rcgen or ring failed to generate or sign.
    #[error("certificate generation failed: {0}")]
    Generate(String),
    /// The certificate is expired or not yet valid.
    #[error("{what} is not valid at {now}: valid from {not_before} until {not_after}")]
    NotValidNow {
        what: String,
        now: time::OffsetDateTime,
        not_before: time::OffsetDateTime,
        not_after: time::OffsetDateTime,
    },
    /// Reading or writing the certificate directory failed.
    #[error("{op} {}: {source}", path.display())]
    Io {
        op: &'static str,
        path: PathBuf,
        #[source]
        source: std::io::Error,
    },
}

impl From<rcgen::Error> for CertError {
    fn from(e: rcgen::Error) -> Self {
        CertError::Generate(e.to_string())
    }
}

impl CertError {
    pub(crate) fn bad_cert(what: &str, reason: impl std::fmt::Display) -> Self {
        CertError::BadCert {
            what: what.to_string(),
            reason: reason.to_string(),
        }
    }

    pub(crate) fn bad_key(what: &str, reason: impl std::fmt::Display) -> Self {
        CertError::BadKey {
            what: what.to_string(),
            reason: reason.to_string(),
        }
    }

    pub(crate) fn invalid(what: &str, reason: impl std::fmt::Display) -> Self {
        CertError::Invalid {
            what: what.to_string(),
            reason: reason.to_string(),
        }
    }
}
