//! Shared helpers: a rustls (ring) client-side verifier built from a caBundle.
#![allow(dead_code)]

use std::sync::Arc;

use kruise_certs::CertConfig;
use rustls::RootCertStore;
use rustls::client::WebPkiServerVerifier;
use rustls::client::danger::ServerCertVerifier;
use rustls::pki_types::pem::PemObject;
use rustls::pki_types::{CertificateDer, ServerName, UnixTime};
use time::OffsetDateTime;

pub const SERVICE: &str = "kruise-webhook-service";
pub const NAMESPACE: &str = "kruise-system";
pub const SVC_NAME: &str = "kruise-webhook-service.kruise-system.svc";

pub fn cfg() -> CertConfig {
    CertConfig::for_service(SERVICE, NAMESPACE)
}

/// Does a client trusting exactly `bundle_pem` accept `leaf_pem` for `name` at `at`?
pub fn verify(bundle_pem: &str, leaf_pem: &str, name: &str, at: OffsetDateTime) -> Result<(), rustls::Error> {
    verify_chain(bundle_pem, leaf_pem, "", name, at)
}

/// [`verify`] with intermediates (PEM, possibly empty) sent after the leaf.
pub fn verify_chain(
    bundle_pem: &str,
    leaf_pem: &str,
    intermediates_pem: &str,
    name: &str,
    at: OffsetDateTime,
) -> Result<(), rustls::Error> {
    let mut roots = RootCertStore::empty();
    for cert in CertificateDer::pem_slice_iter(bundle_pem.as_bytes()) {
        roots.add(cert.expect("bundle PEM")).expect("bundle certificate");
    }
    let provider = Arc::new(rustls::crypto::ring::default_provider());
    let verifier = WebPkiServerVerifier::builder_with_provider(Arc::new(roots), provider)
        .build()
        .expect("verifier");
    let leaf = CertificateDer::from_pem_slice(leaf_pem.as_bytes()).expect("leaf PEM");
    let name = ServerName::try_from(name.to_string()).expect("server name");
    let secs = u64::try_from(at.unix_timestamp()).expect("after 1970");
    let now = UnixTime::since_unix_epoch(std::time::Duration::from_secs(secs));
    let intermediates: Vec<_> = CertificateDer::pem_slice_iter(intermediates_pem.as_bytes())
        .map(|c| c.expect("intermediate PEM"))
        .collect();
    verifier
        .verify_server_cert(&leaf, &intermediates, &name, &[], now)
        .map(|_| ())
}
