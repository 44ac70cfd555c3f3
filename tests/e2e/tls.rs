//! The webhook server over real TLS on 127.0.0.1: verification by name and IP, protocol versions,
//! limits and bad input, probes and metrics.

use crate::common;

use std::time::Duration;

use reqwest::StatusCode;
use serde_json::Value;
use tokio::io::{AsyncReadExt, AsyncWriteExt};

const SERVICE: &str = "kruise-webhook-service.kruise-system.svc";

async fn post(client: &reqwest::Client, url: &str, body: Vec<u8>) -> reqwest::Response {
    client
        .post(url)
        .header("content-type", "application/json")
        .body(body)
        .send()
        .await
        .unwrap()
}

#[tokio::test]
async fn verified_handshake_by_service_name_localhost_and_ip() {
    let dir = tempfile::tempdir().unwrap();
    let server = common::start(dir.path()).await;
    let ca = std::fs::read_to_string(dir.path().join("ca.crt")).unwrap();
    let client = common::client(&ca, server.webhook_addr);
    let port = server.webhook_addr.port();
    for host in [SERVICE, "localhost", "127.0.0.1"] {
        let url = format!("https://{host}:{port}/validate-namespace?timeout=10s");
        let response = post(&client, &url, common::review("delete-namespace-shop.json")).await;
        assert_eq!(response.status(), StatusCode::OK, "{host}");
        let body: Value = response.json().await.unwrap();
        assert_eq!(body["apiVersion"], "admission.k8s.io/v1");
        assert_eq!(body["kind"], "AdmissionReview");
        assert_eq!(body["response"]["uid"], "7f0b2c4e-1d3a-4b8e-9c61-2f5d8a7e3b10");
        assert_eq!(body["response"]["allowed"], false);
        assert_eq!(body["response"]["status"]["code"], 403);
    }
    // A name that is not in the certificate is refused by the client.
    let other = reqwest::Client::builder()
        .use_preconfigured_tls(common::client_tls(&ca))
        .resolve("evil.example.com", server.webhook_addr)
        .build()
        .unwrap();
    let url = format!("https://evil.example.com:{port}/validate-namespace");
    assert!(other.post(url).send().await.is_err());
    // And a client that does not trust our CA cannot connect either.
    let other_ca = kruise_certs::generate(
        &kruise_certs::CertConfig::for_service("x", "y"),
        time::OffsetDateTime::now_utc(),
    )
    .unwrap()
    .ca_bundle_pem();
    let stranger = common::client(&other_ca, server.webhook_addr);
    assert!(
        stranger
            .post(format!("https://localhost:{port}/validate-namespace"))
            .send()
            .await
            .is_err()
    );
}

/// A TLS 1.1 ClientHello (no extensions, one CBC suite).
fn tls11_client_hello() -> Vec<u8> {
    let mut hello = vec![0x03, 0x02]; // client_version TLS 1.1
    hello.extend([7u8; 32]); // random
    hello.push(0); // session id
    hello.extend([0x00, 0x02, 0x00, 0x2f]); // cipher suites: TLS_RSA_WITH_AES_128_CBC_SHA
    hello.extend([0x01, 0x00]); // compression: null
    let mut handshake = vec![0x01, 0x00, 0x00, hello.len() as u8];
    handshake.extend(hello);
    let mut record = vec![0x16, 0x03, 0x01, 0x00, handshake.len() as u8];
    record.extend(handshake);
    record
}

#[tokio::test]
async fn tls_1_1_and_plain_http_are_refused_and_the_server_keeps_serving() {
    let dir = tempfile::tempdir().unwrap();
    let server = common::start(dir.path()).await;
    let ca = std::fs::read_to_string(dir.path().join("ca.crt")).unwrap();

    let mut tcp = tokio::net::TcpStream::connect(server.webhook_addr).await.unwrap();
    tcp.write_all(&tls11_client_hello()).await.unwrap();
    let mut reply = Vec::new();
    let _ = tokio::time::timeout(Duration::from_secs(5), tcp.read_to_end(&mut reply)).await;
    // A fatal alert record (content type 21, level 2; rustls answers handshake_failure) or a closed
    // connection, never a ServerHello (content type 22).
    assert!(
        reply.is_empty() || (reply.len() == 7 && reply[0] == 21 && reply[5] == 2),
        "{reply:?}"
    );

    let mut tcp = tokio::net::TcpStream::connect(server.webhook_addr).await.unwrap();
    tcp.write_all(b"POST /validate-namespace HTTP/1.1\r\nHost: x\r\nContent-Length: 2\r\n\r\n{}")
        .await
        .unwrap();
    let mut reply = Vec::new();
    let _ = tokio::time::timeout(Duration::from_secs(5), tcp.read_to_end(&mut reply)).await;
    assert!(!String::from_utf8_lossy(&reply).contains("HTTP/1.1 200"));

    // TLS 1.2 only clients are served.
    let mut roots = rustls::RootCertStore::empty();
    use rustls::pki_types::pem::PemObject as _;
    for cert in rustls::pki_types::CertificateDer::pem_slice_iter(ca.as_bytes()) {
        roots.add(cert.unwrap()).unwrap();
    }
    let tls12 = rustls::ClientConfig::builder_with_provider(std::sync::Arc::new(
        rustls::crypto::ring::default_provider(),
    ))
    .with_protocol_versions(&[&rustls::version::TLS12])
    .unwrap()
    .with_root_certificates(roots)
    .with_no_client_auth();
    let client = reqwest::Client::builder()
        .use_preconfigured_tls(tls12)
        .build()
        .unwrap();
    let url = format!(
        "https://localhost:{}/validate-namespace",
        server.webhook_addr.port()
    );
    let response = post(&client, &url, common::review("delete-namespace-shop.json")).await;
    assert_eq!(response.status(), StatusCode::OK);
}

#[tokio::test]
async fn bad_requests_get_json_errors_and_never_break_the_server() {
    let dir = tempfile::tempdir().unwrap();
    let server = common::start(dir.path()).await;
    let ca = std::fs::read_to_string(dir.path().join("ca.crt")).unwrap();
    let client = common::client(&ca, server.webhook_addr);
    let base = format!("https://localhost:{}", server.webhook_addr.port());

    // 10 MiB → 413.
    let huge = vec![b' '; 10 * 1024 * 1024];
    let response = post(&client, &format!("{base}/validate-namespace"), huge).await;
    assert_eq!(response.status(), StatusCode::PAYLOAD_TOO_LARGE);
    let body: Value = response.json().await.unwrap();
    assert!(body["message"].as_str().unwrap().contains("larger than"));

    // Malformed JSON → 400 with a JSON Status.
    let response = post(
        &client,
        &format!("{base}/validate-namespace"),
        b"{\"apiVersion\": ".to_vec(),
    )
    .await;
    assert_eq!(response.status(), StatusCode::BAD_REQUEST);
    let body: Value = response.json().await.unwrap();
    assert_eq!(body["kind"], "Status");
    assert!(
        body["message"]
            .as_str()
            .unwrap()
            .contains("not a valid AdmissionReview")
    );

    // Wrong content type → 415; unknown path → 404; GET → 405.
    let response = client
        .post(format!("{base}/validate-namespace"))
        .header("content-type", "application/yaml")
        .body("a: b")
        .send()
        .await
        .unwrap();
    assert_eq!(response.status(), StatusCode::UNSUPPORTED_MEDIA_TYPE);
    // A compressed body is refused, never decompressed (no gzip bomb can be expanded here).
    let response = client
        .post(format!("{base}/validate-namespace"))
        .header("content-type", "application/json")
        .header("content-encoding", "gzip")
        .body(vec![0x1f, 0x8b, 0x08, 0x00])
        .send()
        .await
        .unwrap();
    assert_eq!(response.status(), StatusCode::UNSUPPORTED_MEDIA_TYPE);
    assert_eq!(response.json::<Value>().await.unwrap()["kind"], "Status");
    let response = post(&client, &format!("{base}/mutate-everything"), b"{}".to_vec()).await;
    assert_eq!(response.status(), StatusCode::NOT_FOUND);
    assert_eq!(response.json::<Value>().await.unwrap()["reason"], "NotFound");
    let response = client
        .get(format!("{base}/validate-namespace"))
        .send()
        .await
        .unwrap();
    assert_eq!(response.status(), StatusCode::METHOD_NOT_ALLOWED);

    // Still serving.
    let response = post(
        &client,
        &format!("{base}/validate-namespace"),
        common::review("delete-namespace-shop.json"),
    )
    .await;
    assert_eq!(response.status(), StatusCode::OK);
}

#[tokio::test]
async fn probes_and_metrics() {
    let dir = tempfile::tempdir().unwrap();
    let server = common::start(dir.path()).await;
    let ca = std::fs::read_to_string(dir.path().join("ca.crt")).unwrap();
    let client = common::client(&ca, server.webhook_addr);
    let url = format!(
        "https://localhost:{}/validate-namespace",
        server.webhook_addr.port()
    );
    post(&client, &url, common::review("delete-namespace-shop.json")).await;
    // The example budget allows one eviction: the second is refused and counted as OpenKruise counts it.
    let evict = format!("https://localhost:{}/validate-pod", server.webhook_addr.port());
    for review in ["evict-web-7x2kq.json", "evict-web-9fj3c.json"] {
        post(&client, &evict, common::review(review)).await;
    }

    let plain = reqwest::Client::new();
    let metrics_base = format!("http://{}", server.metrics_addr);
    for probe in ["healthz", "readyz"] {
        let response = plain.get(format!("{metrics_base}/{probe}")).send().await.unwrap();
        assert_eq!(response.status(), StatusCode::OK, "{probe}");
    }
    let text = plain
        .get(format!("{metrics_base}/metrics"))
        .send()
        .await
        .unwrap()
        .text()
        .await
        .unwrap();
    assert!(
        text.contains(
            r#"kruise_admission_reviews_total{webhook="validate-namespace",operation="DELETE",outcome="Denied"} 1"#
        ),
        "{text}"
    );
    assert!(
        text.contains(r#"kruise_admission_review_duration_seconds_count{webhook="validate-namespace"} 1"#)
    );
    // The example pods have no controller: OpenKruise's label is then `unknown_<namespace>_<pod>`.
    assert!(
        text.contains(
            r#"kruise_pod_unavailable_budget_total{kind_namespace_name="unknown_shop_web-9fj3c",username="system:serviceaccount:kube-system:node-drainer"} 1"#
        ),
        "{text}"
    );
    let expiry_line = text
        .lines()
        .find(|l| {
            l.starts_with(r#"kruise_webhook_certificate_expiry_timestamp_seconds{certificate="serving"}"#)
        })
        .expect("serving certificate expiry exported");
    let expiry: i64 = expiry_line.rsplit(' ').next().unwrap().parse().unwrap();
    let in_a_year = time::OffsetDateTime::now_utc().unix_timestamp() + 365 * 86400;
    assert!((expiry - in_a_year).abs() < 86400, "{expiry_line}");
}

#[tokio::test]
async fn every_path_in_the_webhook_configurations_is_served() {
    let dir = tempfile::tempdir().unwrap();
    let server = common::start(dir.path()).await;
    let ca = std::fs::read_to_string(dir.path().join("ca.crt")).unwrap();
    let client = common::client(&ca, server.webhook_addr);
    let manifest = std::fs::read_to_string(common::repo().join("manifests/webhooks.yaml")).unwrap();
    let docs: Vec<Value> = serde_saphyr::from_multiple(&manifest).unwrap();
    let mut paths = Vec::new();
    for doc in docs.iter().filter(|d| !d.is_null()) {
        for webhook in doc["webhooks"].as_array().unwrap() {
            paths.push(
                webhook["clientConfig"]["service"]["path"]
                    .as_str()
                    .unwrap()
                    .to_string(),
            );
        }
    }
    assert!(paths.len() >= 10, "{paths:?}");
    for path in paths {
        let url = format!("https://localhost:{}{path}", server.webhook_addr.port());
        let review = serde_json::json!({"apiVersion": "admission.k8s.io/v1", "kind": "AdmissionReview",
            "request": {"uid": "probe", "operation": "CONNECT"}});
        let response = post(&client, &url, serde_json::to_vec(&review).unwrap()).await;
        assert_eq!(response.status(), StatusCode::OK, "{path}");
        let body: Value = response.json().await.unwrap();
        assert_eq!(body["response"]["uid"], "probe", "{path}");
    }
}

#[tokio::test]
async fn crd_conversion_over_https() {
    let dir = tempfile::tempdir().unwrap();
    let server = common::start(dir.path()).await;
    let ca = std::fs::read_to_string(dir.path().join("ca.crt")).unwrap();
    let client = common::client(&ca, server.webhook_addr);
    let review = serde_json::json!({
        "apiVersion": "apiextensions.k8s.io/v1", "kind": "ConversionReview",
        "request": {"uid": "conv-1", "desiredAPIVersion": "apps.kruise.io/v1beta1", "objects": [{
            "apiVersion": "apps.kruise.io/v1alpha1", "kind": "CloneSet",
            "metadata": {"name": "web", "namespace": "shop"},
            "spec": {"replicas": 3, "selector": {"matchLabels": {"app": "web"}},
                     "template": {"metadata": {"labels": {"app": "web"}},
                                  "spec": {"containers": [{"name": "web", "image": "nginx"}]}},
                     "updateStrategy": {"type": "InPlaceIfPossible", "partition": 1}}}]}
    });
    let url = format!("https://localhost:{}/convert", server.webhook_addr.port());
    let response = post(&client, &url, serde_json::to_vec(&review).unwrap()).await;
    assert_eq!(response.status(), StatusCode::OK);
    let body: Value = response.json().await.unwrap();
    assert_eq!(body["kind"], "ConversionReview");
    assert_eq!(body["response"]["uid"], "conv-1");
    assert_eq!(body["response"]["result"]["status"], "Success");
    let converted = &body["response"]["convertedObjects"][0];
    assert_eq!(converted["apiVersion"], "apps.kruise.io/v1beta1");
    assert_eq!(converted["spec"]["replicas"], 3);
}

#[tokio::test]
async fn a_seven_mib_review_is_answered() {
    let dir = tempfile::tempdir().unwrap();
    let server = common::start(dir.path()).await;
    let ca = std::fs::read_to_string(dir.path().join("ca.crt")).unwrap();
    let client = common::client(&ca, server.webhook_addr);
    let mut review: Value = serde_json::from_slice(&common::review("delete-namespace-shop.json")).unwrap();
    review["request"]["oldObject"]["metadata"]["annotations"] =
        serde_json::json!({"big": "x".repeat(7 << 20)});
    let body = serde_json::to_vec(&review).unwrap();
    assert!(body.len() > 7 << 20 && body.len() < 8 << 20);
    let url = format!(
        "https://localhost:{}/validate-namespace",
        server.webhook_addr.port()
    );
    let response = post(&client, &url, body).await;
    assert_eq!(response.status(), StatusCode::OK);
    assert_eq!(
        response.json::<Value>().await.unwrap()["response"]["allowed"],
        false
    );
}
