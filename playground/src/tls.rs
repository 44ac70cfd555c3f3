//! The serving certificate: a fresh self-signed CA and leaf from `kruise-certs` for `localhost`
//! and `127.0.0.1`, served by rustls with the ring provider (TLS 1.2 and 1.3, h2 and HTTP/1.1).

use std::net::{IpAddr, Ipv4Addr};
use std::sync::Arc;

use kruise_certs::CertConfig;
use rustls::{
    ServerConfig,
    pki_types::{CertificateDer, PrivateKeyDer, pem::PemObject},
};

use crate::error::StartError;

/// A new CA (PEM) and the rustls configuration serving a leaf it signed.
pub fn self_signed() -> Result<(String, Arc<ServerConfig>), StartError> {
    let mut cfg = CertConfig::for_service("playground", "default");
    cfg.dns_names = vec!["localhost".into()];
    cfg.ip_addresses = vec![IpAddr::V4(Ipv4Addr::LOCALHOST)];
    let material = kruise_certs::generate(&cfg, time::OffsetDateTime::now_utc())?;
    let certs = CertificateDer::pem_slice_iter(material.leaf.cert_pem.as_bytes())
        .collect::<Result<Vec<_>, _>>()
        .map_err(|e| StartError::Pem(e.to_string()))?;
    let key = PrivateKeyDer::from_pem_slice(material.leaf.key_pem.as_bytes())
        .map_err(|e| StartError::Pem(e.to_string()))?;
    let provider = Arc::new(rustls::crypto::ring::default_provider());
    let mut config = ServerConfig::builder_with_provider(provider)
        .with_protocol_versions(&[&rustls::version::TLS13, &rustls::version::TLS12])?
        .with_no_client_auth()
        .with_single_cert(certs, key)?;
    config.alpn_protocols = vec![b"h2".to_vec(), b"http/1.1".to_vec()];
    Ok((material.ca.cert_pem.clone(), Arc::new(config)))
}
