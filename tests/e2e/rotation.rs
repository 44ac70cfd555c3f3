//! Certificate rotation under load: the leaf and the CA are renewed (on a simulated clock, many times)
//! while a client keeps sending reviews. The client trusts the CA bundle kruise-rs published one step
//! *earlier* (kube-apiserver picks up a new caBundle with a lag), so a leaf served before its CA was
//! published would fail. Not a single review may fail.

use crate::common;

use std::{
    collections::BTreeSet,
    sync::{
        Arc,
        atomic::{AtomicBool, AtomicI64, AtomicU64, Ordering},
    },
    time::Duration,
};

use rustls::{
    DigitallySignedStruct, SignatureScheme,
    client::{
        WebPkiServerVerifier,
        danger::{HandshakeSignatureValid, ServerCertVerified, ServerCertVerifier},
    },
    pki_types::{CertificateDer, ServerName, UnixTime, pem::PemObject as _},
};
use time::OffsetDateTime;

/// Full WebPKI verification, at the simulated time instead of the wall clock.
#[derive(Debug)]
struct AtSimulatedTime {
    inner: Arc<WebPkiServerVerifier>,
    now: Arc<AtomicI64>,
}

impl ServerCertVerifier for AtSimulatedTime {
    fn verify_server_cert(
        &self,
        end_entity: &CertificateDer<'_>,
        intermediates: &[CertificateDer<'_>],
        server_name: &ServerName<'_>,
        ocsp_response: &[u8],
        _now: UnixTime,
    ) -> Result<ServerCertVerified, rustls::Error> {
        let now = UnixTime::since_unix_epoch(Duration::from_secs(self.now.load(Ordering::SeqCst) as u64));
        self.inner
            .verify_server_cert(end_entity, intermediates, server_name, ocsp_response, now)
    }

    fn verify_tls12_signature(
        &self,
        message: &[u8],
        cert: &CertificateDer<'_>,
        dss: &DigitallySignedStruct,
    ) -> Result<HandshakeSignatureValid, rustls::Error> {
        self.inner.verify_tls12_signature(message, cert, dss)
    }

    fn verify_tls13_signature(
        &self,
        message: &[u8],
        cert: &CertificateDer<'_>,
        dss: &DigitallySignedStruct,
    ) -> Result<HandshakeSignatureValid, rustls::Error> {
        self.inner.verify_tls13_signature(message, cert, dss)
    }

    fn supported_verify_schemes(&self) -> Vec<SignatureScheme> {
        self.inner.supported_verify_schemes()
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn leaf_and_ca_rotate_while_reviews_flow_without_a_single_failure() {
    common::init();
    let dir = tempfile::tempdir().unwrap();
    let mut args = common::args(dir.path());
    args.ca_validity_days = 30;
    args.cert_validity_days = 9;
    let server = kruise_rs::server::start(args).await.unwrap();
    let url = format!(
        "https://kruise-webhook-service.kruise-system.svc:{}/validate-namespace",
        server.webhook_addr.port()
    );

    let start = OffsetDateTime::now_utc();
    let now = Arc::new(AtomicI64::new(start.unix_timestamp()));
    let (ok, failed, stop) = (
        Arc::new(AtomicU64::new(0)),
        Arc::new(AtomicU64::new(0)),
        Arc::new(AtomicBool::new(false)),
    );
    let trusted = Arc::new(std::sync::Mutex::new(
        std::fs::read_to_string(dir.path().join("ca.crt")).unwrap(),
    ));
    let client_task = {
        let (ok, failed, stop, now) = (ok.clone(), failed.clone(), stop.clone(), now.clone());
        let (trusted, addr) = (trusted.clone(), server.webhook_addr);
        tokio::spawn(async move {
            let mut bundles = BTreeSet::new();
            let mut errors = Vec::new();
            while !stop.load(Ordering::SeqCst) {
                let bundle = trusted.lock().unwrap().clone();
                bundles.insert(bundle.clone());
                // Resolve the Service name to the server, as the cluster DNS would.
                let client = reqwest::Client::builder()
                    .use_preconfigured_tls(client_config_of(&bundle, now.clone()))
                    .resolve("kruise-webhook-service.kruise-system.svc", addr)
                    .pool_max_idle_per_host(0)
                    .build()
                    .unwrap();
                let sent = client
                    .post(&url)
                    .header("content-type", "application/json")
                    .body(common::review("delete-namespace-default.json"))
                    .send()
                    .await;
                match sent {
                    Ok(r) if r.status() == 200 => ok.fetch_add(1, Ordering::SeqCst),
                    Ok(r) => {
                        errors.push(format!("HTTP {}", r.status()));
                        failed.fetch_add(1, Ordering::SeqCst)
                    }
                    Err(e) => {
                        errors.push(format!("{e:?}"));
                        failed.fetch_add(1, Ordering::SeqCst)
                    }
                };
            }
            (bundles, errors)
        })
    };

    // 120 simulated days in steps of one day: the leaf (9 days) renews every ~6 days, the CA (30 days)
    // rotates through its three phases about every 20 days.
    let mut served = BTreeSet::new();
    for day in 1..=120 {
        let before = ok.load(Ordering::SeqCst) + failed.load(Ordering::SeqCst);
        let at = start + time::Duration::days(day);
        // What was published at the end of the previous step is what the client trusts now.
        *trusted.lock().unwrap() = std::fs::read_to_string(dir.path().join("ca.crt")).unwrap();
        now.store(at.unix_timestamp(), Ordering::SeqCst);
        server.certs.sync(at).await.unwrap();
        served.insert(std::fs::read_to_string(dir.path().join("tls.crt")).unwrap());
        // Let a few reviews through at this step before moving on.
        while ok.load(Ordering::SeqCst) + failed.load(Ordering::SeqCst) < before + 3 {
            tokio::time::sleep(Duration::from_millis(2)).await;
        }
    }
    stop.store(true, Ordering::SeqCst);
    let (bundles, errors) = client_task.await.unwrap();

    assert_eq!(failed.load(Ordering::SeqCst), 0, "failed reviews: {errors:?}");
    assert!(ok.load(Ordering::SeqCst) >= 360);
    assert!(
        served.len() >= 15,
        "the leaf was renewed only {} times",
        served.len()
    );
    let cas: BTreeSet<String> = bundles
        .iter()
        .flat_map(|b| CertificateDer::pem_slice_iter(b.as_bytes()).map(|c| format!("{:?}", c.unwrap())))
        .collect();
    assert!(cas.len() >= 4, "the CA rotated only {} times", cas.len() - 1);
    assert!(
        bundles
            .iter()
            .any(|b| b.matches("BEGIN CERTIFICATE").count() == 2),
        "no overlap bundle published"
    );
}

fn client_config_of(bundle_pem: &str, now: Arc<AtomicI64>) -> rustls::ClientConfig {
    let provider = Arc::new(rustls::crypto::ring::default_provider());
    let mut roots = rustls::RootCertStore::empty();
    for cert in CertificateDer::pem_slice_iter(bundle_pem.as_bytes()) {
        roots.add(cert.unwrap()).unwrap();
    }
    let inner = WebPkiServerVerifier::builder_with_provider(Arc::new(roots), provider.clone())
        .build()
        .unwrap();
    rustls::ClientConfig::builder_with_provider(provider)
        .with_safe_default_protocol_versions()
        .unwrap()
        .dangerous()
        .with_custom_certificate_verifier(Arc::new(AtSimulatedTime { inner, now }))
        .with_no_client_auth()
}

/// Sends one HTTP/1.1 request on an open TLS stream and returns the status line.
async fn request_on<S: tokio::io::AsyncRead + tokio::io::AsyncWrite + Unpin>(
    stream: &mut S,
    body: &[u8],
) -> String {
    use tokio::io::{AsyncReadExt, AsyncWriteExt};
    let head = format!(
        "POST /validate-namespace HTTP/1.1\r\nHost: localhost\r\nContent-Type: application/json\r\nContent-Length: {}\r\n\r\n",
        body.len()
    );
    stream.write_all(head.as_bytes()).await.unwrap();
    stream.write_all(body).await.unwrap();
    // Read the head, then exactly Content-Length bytes of body.
    let mut buf = Vec::new();
    let mut byte = [0u8; 1];
    while !buf.ends_with(b"\r\n\r\n") {
        stream.read_exact(&mut byte).await.unwrap();
        buf.push(byte[0]);
    }
    let head = String::from_utf8(buf).unwrap();
    let length: usize = head
        .lines()
        .find_map(|l| {
            l.to_ascii_lowercase()
                .strip_prefix("content-length: ")
                .map(|v| v.trim().parse().unwrap())
        })
        .unwrap();
    let mut body = vec![0u8; length];
    stream.read_exact(&mut body).await.unwrap();
    head.lines().next().unwrap().to_string()
}

#[tokio::test]
async fn open_connections_survive_a_certificate_reload() {
    common::init();
    let dir = tempfile::tempdir().unwrap();
    let server = kruise_rs::server::start(common::args(dir.path())).await.unwrap();
    let ca = std::fs::read_to_string(dir.path().join("ca.crt")).unwrap();
    let connector = tokio_rustls::TlsConnector::from(Arc::new(common::client_tls(&ca)));
    let tcp = tokio::net::TcpStream::connect(server.webhook_addr).await.unwrap();
    let mut stream = connector
        .connect(ServerName::try_from("localhost").unwrap(), tcp)
        .await
        .unwrap();
    let first_leaf = stream.get_ref().1.peer_certificates().unwrap()[0].clone();
    let review = common::review("delete-namespace-default.json");
    assert_eq!(request_on(&mut stream, &review).await, "HTTP/1.1 200 OK");

    // 300 days on, the leaf is renewed and reloaded.
    let later = OffsetDateTime::now_utc() + time::Duration::days(300);
    server.certs.sync(later).await.unwrap();
    let renewed = std::fs::read_to_string(dir.path().join("tls.crt")).unwrap();
    let renewed = CertificateDer::from_pem_slice(renewed.as_bytes()).unwrap();
    assert_ne!(renewed, first_leaf, "the leaf was renewed");

    // The open connection keeps working; a new one (verifying at the simulated time, when the new leaf is
    // valid) gets the new certificate.
    assert_eq!(request_on(&mut stream, &review).await, "HTTP/1.1 200 OK");
    let at_later = Arc::new(AtomicI64::new(later.unix_timestamp()));
    let ca = std::fs::read_to_string(dir.path().join("ca.crt")).unwrap();
    let connector = tokio_rustls::TlsConnector::from(Arc::new(client_config_of(&ca, at_later)));
    let tcp = tokio::net::TcpStream::connect(server.webhook_addr).await.unwrap();
    let fresh = connector
        .connect(ServerName::try_from("localhost").unwrap(), tcp)
        .await
        .unwrap();
    assert_eq!(fresh.get_ref().1.peer_certificates().unwrap()[0], renewed);
}
