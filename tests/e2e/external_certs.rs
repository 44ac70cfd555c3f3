//! `--cert-mode external`: certificates written by someone else (cert-manager through a Secret volume,
//! which kubelet updates by swapping a `..data` symlink) are picked up; a broken pair is never loaded.

use crate::common;

use std::{path::Path, sync::Arc};

use kruise_certs::{CertConfig, generate};
use kruise_rs::cli::CertMode;
use rustls::pki_types::{CertificateDer, ServerName, pem::PemObject as _};
use time::OffsetDateTime;

/// Writes a Secret-volume layout: `<dir>/..data -> <version>/` and `tls.crt -> ..data/tls.crt` etc.
fn publish(dir: &Path, version: &str, files: &[(&str, &str)]) {
    let target = dir.join(version);
    std::fs::create_dir_all(&target).unwrap();
    for (name, content) in files {
        std::fs::write(target.join(name), content).unwrap();
    }
    let tmp = dir.join("..data_tmp");
    let _ = std::fs::remove_file(&tmp);
    std::os::unix::fs::symlink(version, &tmp).unwrap();
    std::fs::rename(&tmp, dir.join("..data")).unwrap();
    for (name, _) in files {
        let link = dir.join(name);
        if std::fs::symlink_metadata(&link).is_err() {
            std::os::unix::fs::symlink(Path::new("..data").join(name), &link).unwrap();
        }
    }
}

async fn served_leaf(addr: std::net::SocketAddr, ca: &str) -> CertificateDer<'static> {
    let connector = tokio_rustls::TlsConnector::from(Arc::new(common::client_tls(ca)));
    let tcp = tokio::net::TcpStream::connect(addr).await.unwrap();
    let stream = connector
        .connect(ServerName::try_from("localhost").unwrap(), tcp)
        .await
        .unwrap();
    stream.get_ref().1.peer_certificates().unwrap()[0]
        .clone()
        .into_owned()
}

#[tokio::test]
async fn symlink_swapped_certificates_are_served_and_broken_ones_are_not() {
    common::init();
    let dir = tempfile::tempdir().unwrap();
    let config = CertConfig::for_service("kruise-webhook-service", "kruise-system");
    let first = generate(&config, OffsetDateTime::now_utc()).unwrap();
    let second = generate(&config, OffsetDateTime::now_utc()).unwrap();
    publish(
        dir.path(),
        "v1",
        &[
            ("tls.crt", first.leaf.cert_pem.as_str()),
            ("tls.key", first.leaf.key_pem.as_str()),
            ("ca.crt", first.ca_bundle_pem().as_str()),
        ],
    );

    let mut args = common::args(dir.path());
    args.cert_mode = CertMode::External;
    let server = kruise_rs::server::start(args).await.unwrap();
    let first_leaf = CertificateDer::from_pem_slice(first.leaf.cert_pem.as_bytes()).unwrap();
    assert_eq!(
        served_leaf(server.webhook_addr, &first.ca_bundle_pem()).await,
        first_leaf
    );

    // A half-rotated volume (new certificate, old key) is refused; the old pair keeps serving.
    publish(
        dir.path(),
        "v2",
        &[
            ("tls.crt", second.leaf.cert_pem.as_str()),
            ("tls.key", first.leaf.key_pem.as_str()),
            ("ca.crt", second.ca_bundle_pem().as_str()),
        ],
    );
    assert!(server.certs.sync(OffsetDateTime::now_utc()).await.is_err());
    assert_eq!(
        served_leaf(server.webhook_addr, &first.ca_bundle_pem()).await,
        first_leaf
    );

    // An expired pair (and a not yet valid one) is refused too; the old pair keeps serving.
    let long_ago = OffsetDateTime::now_utc() - time::Duration::days(800);
    let expired = generate(&config, long_ago).unwrap();
    let future = generate(&config, OffsetDateTime::now_utc() + time::Duration::days(30)).unwrap();
    for (version, stale) in [("v2e", &expired), ("v2f", &future)] {
        publish(
            dir.path(),
            version,
            &[
                ("tls.crt", stale.leaf.cert_pem.as_str()),
                ("tls.key", stale.leaf.key_pem.as_str()),
                ("ca.crt", stale.ca_bundle_pem().as_str()),
            ],
        );
        let err = server.certs.sync(OffsetDateTime::now_utc()).await.unwrap_err();
        assert!(err.to_string().contains("is not valid at"), "{err}");
        assert_eq!(
            served_leaf(server.webhook_addr, &first.ca_bundle_pem()).await,
            first_leaf
        );
    }

    // The complete new pair is picked up by the next sync.
    publish(
        dir.path(),
        "v3",
        &[
            ("tls.crt", second.leaf.cert_pem.as_str()),
            ("tls.key", second.leaf.key_pem.as_str()),
            ("ca.crt", second.ca_bundle_pem().as_str()),
        ],
    );
    server.certs.sync(OffsetDateTime::now_utc()).await.unwrap();
    let second_leaf = CertificateDer::from_pem_slice(second.leaf.cert_pem.as_bytes()).unwrap();
    assert_eq!(
        served_leaf(server.webhook_addr, &second.ca_bundle_pem()).await,
        second_leaf
    );
}
