//! rustls configuration of the webhook port: ring provider, TLS 1.2 and 1.3 only, HTTP/1.1 and h2.

use std::sync::Arc;

use rustls::{
    ServerConfig,
    pki_types::{CertificateDer, PrivateKeyDer, pem::PemObject},
};

/// Why a certificate/key pair cannot be served.
#[derive(Debug, thiserror::Error)]
pub enum TlsError {
    #[error("serving certificate is not valid PEM: {0}")]
    Certificate(String),
    #[error("serving key is not valid PEM: {0}")]
    Key(String),
    #[error("serving certificate and key are not usable together: {0}")]
    Rustls(#[from] rustls::Error),
}

/// A rustls server configuration for a PEM certificate chain and key.
pub fn server_config(cert_pem: &str, key_pem: &str) -> Result<Arc<ServerConfig>, TlsError> {
    let certs = CertificateDer::pem_slice_iter(cert_pem.as_bytes())
        .collect::<Result<Vec<_>, _>>()
        .map_err(|e| TlsError::Certificate(e.to_string()))?;
    if certs.is_empty() {
        return Err(TlsError::Certificate("no CERTIFICATE block".into()));
    }
    let key = PrivateKeyDer::from_pem_slice(key_pem.as_bytes()).map_err(|e| TlsError::Key(e.to_string()))?;
    let provider = Arc::new(rustls::crypto::ring::default_provider());
    let mut config = ServerConfig::builder_with_provider(provider)
        .with_protocol_versions(&[&rustls::version::TLS13, &rustls::version::TLS12])?
        .with_no_client_auth()
        .with_single_cert(certs, key)?;
    config.alpn_protocols = vec![b"h2".to_vec(), b"http/1.1".to_vec()];
    Ok(Arc::new(config))
}
