//! A real HTTPS admission webhook server for the webhook fidelity tests, and helpers to
//! register configurations calling it.

use std::net::SocketAddr;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use axum::{Json, Router, extract::State, routing::post};
use base64::Engine as _;
use k8s_openapi::api::core::v1::Pod;
use kruise_certs::CertConfig;
use kruise_playground::PlaygroundOptions;
use kube::api::{Api, DynamicObject, PostParams};
use rustls::pki_types::{CertificateDer, PrivateKeyDer, pem::PemObject};
use serde_json::{Value, json};

/// Every request the server received: (path, AdmissionReview request).
pub type Log = Arc<Mutex<Vec<(String, Value)>>>;

/// Answers by path: `/record` allows, `/label-<k>` adds label k=v (JSONPatch), `/deny` denies,
/// `/slow` sleeps 3 s. Every request is logged with its path.
pub async fn hook(State(log): State<Log>, uri: axum::http::Uri, Json(review): Json<Value>) -> Json<Value> {
    let path = uri.path().to_string();
    log.lock()
        .unwrap()
        .push((path.clone(), review["request"].clone()));
    let uid = review["request"]["uid"].clone();
    let mut response = json!({"uid": uid, "allowed": true});
    if let Some(key) = path.strip_prefix("/label-") {
        let labels = &review["request"]["object"]["metadata"]["labels"];
        let patch = if labels.is_object() {
            json!([{"op": "add", "path": format!("/metadata/labels/{key}"), "value": "v"}])
        } else {
            json!([{"op": "add", "path": "/metadata/labels", "value": {key: "v"}}])
        };
        if labels[key] != "v" {
            let b64 = base64::engine::general_purpose::STANDARD.encode(patch.to_string());
            response["patch"] = json!(b64);
            response["patchType"] = json!("JSONPatch");
        }
    } else if path == "/deny" {
        response = json!({"uid": uid, "allowed": false,
                          "status": {"code": 403, "reason": "Forbidden", "message": "nope"}});
    } else if path == "/slow" {
        tokio::time::sleep(Duration::from_secs(3)).await;
    }
    Json(json!({"apiVersion": "admission.k8s.io/v1", "kind": "AdmissionReview", "response": response}))
}

/// A webhook server for `hooks.test.svc`; returns its address, CA (PEM) and log.
pub async fn webhook_server() -> (SocketAddr, String, Log) {
    let material = kruise_certs::generate(
        &CertConfig::for_service("hooks", "test"),
        time::OffsetDateTime::now_utc(),
    )
    .unwrap();
    let certs = CertificateDer::pem_slice_iter(material.leaf.cert_pem.as_bytes())
        .collect::<Result<Vec<_>, _>>()
        .unwrap();
    let key = PrivateKeyDer::from_pem_slice(material.leaf.key_pem.as_bytes()).unwrap();
    let provider = Arc::new(rustls::crypto::ring::default_provider());
    let mut config = rustls::ServerConfig::builder_with_provider(provider)
        .with_safe_default_protocol_versions()
        .unwrap()
        .with_no_client_auth()
        .with_single_cert(certs, key)
        .unwrap();
    config.alpn_protocols = vec![b"h2".to_vec(), b"http/1.1".to_vec()];
    let log: Log = Arc::default();
    let app = Router::new()
        .route("/{*path}", post(hook))
        .with_state(log.clone());
    let handle = axum_server::Handle::new();
    let tls = axum_server::tls_rustls::RustlsConfig::from_config(Arc::new(config));
    let server = axum_server::bind_rustls(SocketAddr::from(([127, 0, 0, 1], 0)), tls).handle(handle.clone());
    tokio::spawn(server.serve(app.into_make_service()));
    let addr = handle.listening().await.unwrap();
    (addr, material.ca.cert_pem.clone(), log)
}

/// A webhook calling `path` on `hooks.test.svc`, with extra fields.
pub fn webhook(name: &str, path: &str, ca: &str, rules: Value, extra: Value) -> Value {
    let mut w = json!({
        "name": name, "admissionReviewVersions": ["v1"], "sideEffects": "None",
        "clientConfig": {"service": {"name": "hooks", "namespace": "test", "path": path, "port": 443},
                         "caBundle": base64::engine::general_purpose::STANDARD.encode(ca)},
        "rules": rules,
    });
    for (k, v) in extra.as_object().into_iter().flatten() {
        w[k] = v.clone();
    }
    w
}

/// Rules for pods with these operations.
pub fn pod_rules(ops: &[&str]) -> Value {
    json!([{"apiGroups": [""], "apiVersions": ["v1"], "operations": ops, "resources": ["pods"]}])
}

/// Creates a webhook configuration of `kind`.
pub async fn register(client: &kube::Client, kind: &str, name: &str, webhooks: Vec<Value>) {
    let plural = format!("{}s", kind.to_lowercase());
    let ar = kube::discovery::ApiResource {
        group: "admissionregistration.k8s.io".into(),
        version: "v1".into(),
        api_version: "admissionregistration.k8s.io/v1".into(),
        kind: kind.into(),
        plural,
    };
    let obj: DynamicObject = serde_json::from_value(json!({
        "apiVersion": "admissionregistration.k8s.io/v1", "kind": kind,
        "metadata": {"name": name}, "webhooks": webhooks,
    }))
    .unwrap();
    Api::<DynamicObject>::all_with(client.clone(), &ar)
        .create(&PostParams::default(), &obj)
        .await
        .unwrap();
}

/// A one-container pod.
pub fn pod(name: &str) -> Pod {
    serde_json::from_value(json!({"metadata": {"name": name},
        "spec": {"containers": [{"name": "c", "image": "nginx:1.27"}]}}))
    .unwrap()
}

/// The paths called so far.
pub fn paths(log: &Log) -> Vec<String> {
    log.lock().unwrap().iter().map(|(p, _)| p.clone()).collect()
}

/// A playground resolving webhook services to `addr`.
pub async fn start(addr: SocketAddr) -> kruise_playground::Playground {
    super::start_with(PlaygroundOptions {
        webhook_address: Some(addr),
        ..PlaygroundOptions::default()
    })
    .await
}
