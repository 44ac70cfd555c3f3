//! Shared helpers of the end-to-end tests: a standalone server on 127.0.0.1:0 and verified TLS clients.
#![allow(dead_code)]

pub mod admit;
pub mod agents;
pub mod cluster;
pub mod containerd;
pub mod kubectl;
pub mod plain_http;
pub mod playground_cloneset;
pub mod playground_sidecarset;
pub mod registry;
pub mod replicas;
pub mod repo_script;
pub mod reported;

use std::{net::SocketAddr, path::PathBuf, sync::Arc};

use kruise_rs::{
    cli::{CertMode, ServeArgs},
    server::{self, Running},
};

/// The repository root.
pub fn repo() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
}

/// Polls `done` every 100 ms until it holds; panics after `seconds`, naming `what`.
pub async fn poll_until(what: &str, seconds: u64, mut done: impl AsyncFnMut() -> bool) {
    let started = std::time::Instant::now();
    while !done().await {
        assert!(
            started.elapsed() < std::time::Duration::from_secs(seconds),
            "timed out after {seconds} s waiting for {what}"
        );
        tokio::time::sleep(std::time::Duration::from_millis(100)).await;
    }
}

/// Installs ring as the process crypto provider (once).
pub fn init() {
    let _ = rustls::crypto::ring::default_provider().install_default();
}

/// Arguments of a standalone server on free ports with certificates in `cert_dir`.
pub fn args(cert_dir: &std::path::Path) -> ServeArgs {
    ServeArgs {
        port: 0,
        bind_address: "127.0.0.1".parse().unwrap(),
        metrics_addr: "127.0.0.1:0".parse().unwrap(),
        objects: vec![repo().join("examples/cluster")],
        cert_dir: cert_dir.to_path_buf(),
        cert_mode: CertMode::SelfSigned,
        ca_validity_days: 3650,
        cert_validity_days: 365,
        ca_rotation_dwell_seconds: 120,
        namespace: "kruise-system".into(),
        service_name: "kruise-webhook-service".into(),
        secret_name: "kruise-webhook-certs".into(),
        disable_deletion_protection: false,
        enable_crd_cascading_protection: false,
        feature_gates: None,
        nodeimage_creation_delay: std::time::Duration::from_secs(30),
        daemon_config_namespace: "kruise-daemon".into(),
    }
}

/// A standalone server serving `examples/cluster`.
pub async fn start(cert_dir: &std::path::Path) -> Running {
    init();
    server::start(args(cert_dir)).await.expect("server starts")
}

/// A rustls client configuration trusting only `ca_pem`.
pub fn client_tls(ca_pem: &str) -> rustls::ClientConfig {
    let mut roots = rustls::RootCertStore::empty();
    use rustls::pki_types::pem::PemObject as _;
    for cert in rustls::pki_types::CertificateDer::pem_slice_iter(ca_pem.as_bytes()) {
        roots.add(cert.unwrap()).unwrap();
    }
    rustls::ClientConfig::builder_with_provider(Arc::new(rustls::crypto::ring::default_provider()))
        .with_safe_default_protocol_versions()
        .unwrap()
        .with_root_certificates(roots)
        .with_no_client_auth()
}

/// An HTTPS client trusting `ca_pem` that resolves the webhook Service name to `addr`.
pub fn client(ca_pem: &str, addr: SocketAddr) -> reqwest::Client {
    reqwest::Client::builder()
        .use_preconfigured_tls(client_tls(ca_pem))
        .resolve("kruise-webhook-service.kruise-system.svc", addr)
        .build()
        .unwrap()
}

/// A review body from `examples/reviews/`.
pub fn review(name: &str) -> Vec<u8> {
    std::fs::read(repo().join("examples/reviews").join(name)).unwrap()
}
