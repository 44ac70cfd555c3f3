//! Admission webhooks as kube-apiserver calls them: selection, order and reinvocation, the
//! AdmissionReview sent, denials, failurePolicy and timeouts, caBundle verification.

mod common;

use std::net::SocketAddr;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use axum::{Json, Router, extract::State, routing::post};
use base64::Engine as _;
use k8s_openapi::api::core::v1::{ConfigMap, Namespace, Pod};
use kruise_certs::CertConfig;
use kruise_playground::PlaygroundOptions;
use kube::api::{Api, DeleteParams, DynamicObject, EvictParams, PostParams};
use rustls::pki_types::{CertificateDer, PrivateKeyDer, pem::PemObject};
use serde_json::{Value, json};

type Log = Arc<Mutex<Vec<(String, Value)>>>;

/// Answers by path: `/record` allows, `/label-<k>` adds label k=v (JSONPatch), `/deny` denies,
/// `/slow` sleeps 3 s. Every request is logged with its path.
async fn hook(State(log): State<Log>, uri: axum::http::Uri, Json(review): Json<Value>) -> Json<Value> {
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
async fn webhook_server() -> (SocketAddr, String, Log) {
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

fn webhook(name: &str, path: &str, ca: &str, rules: Value, extra: Value) -> Value {
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

fn pod_rules(ops: &[&str]) -> Value {
    json!([{"apiGroups": [""], "apiVersions": ["v1"], "operations": ops, "resources": ["pods"]}])
}

async fn register(client: &kube::Client, kind: &str, name: &str, webhooks: Vec<Value>) {
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

fn pod(name: &str) -> Pod {
    serde_json::from_value(json!({"metadata": {"name": name},
        "spec": {"containers": [{"name": "c", "image": "nginx:1.27"}]}}))
    .unwrap()
}

fn paths(log: &Log) -> Vec<String> {
    log.lock().unwrap().iter().map(|(p, _)| p.clone()).collect()
}

async fn start(addr: SocketAddr) -> kruise_playground::Playground {
    common::start_with(PlaygroundOptions {
        webhook_address: Some(addr),
        ..PlaygroundOptions::default()
    })
    .await
}

#[tokio::test]
async fn mutating_in_order_with_reinvocation_then_validating() {
    let (addr, ca, log) = webhook_server().await;
    let pg = start(addr).await;
    let client = pg.client().await.unwrap();
    let if_needed = json!({"reinvocationPolicy": "IfNeeded"});
    // Sorted by configuration name: "a-config" runs before "b-config" whatever the creation order.
    register(
        &client,
        "MutatingWebhookConfiguration",
        "b-config",
        vec![webhook(
            "label.test.io",
            "/label-b",
            &ca,
            pod_rules(&["CREATE"]),
            json!({}),
        )],
    )
    .await;
    register(
        &client,
        "MutatingWebhookConfiguration",
        "a-config",
        vec![
            webhook(
                "record.test.io",
                "/record",
                &ca,
                pod_rules(&["CREATE"]),
                if_needed.clone(),
            ),
            webhook(
                "label-a.test.io",
                "/label-a",
                &ca,
                pod_rules(&["CREATE"]),
                json!({}),
            ),
        ],
    )
    .await;
    register(
        &client,
        "ValidatingWebhookConfiguration",
        "v",
        vec![webhook(
            "validate.test.io",
            "/validate",
            &ca,
            pod_rules(&["CREATE"]),
            json!({}),
        )],
    )
    .await;
    let pods: Api<Pod> = Api::default_namespaced(client.clone());
    let created = pods.create(&PostParams::default(), &pod("p")).await.unwrap();
    let labels = created.metadata.labels.unwrap();
    assert_eq!((labels["a"].as_str(), labels["b"].as_str()), ("v", "v"));
    // record (IfNeeded) ran before two mutations: it is reinvoked once; the others are not.
    assert_eq!(
        paths(&log),
        ["/record", "/label-a", "/label-b", "/record", "/validate"]
    );
    let entries = log.lock().unwrap().clone();
    let (_, validate) = &entries[4];
    assert_eq!(
        validate["object"]["metadata"]["labels"],
        json!({"a": "v", "b": "v"})
    );
    assert_eq!(validate["operation"], "CREATE");
    assert_eq!(
        validate["kind"],
        json!({"group": "", "version": "v1", "kind": "Pod"})
    );
    assert_eq!(
        validate["resource"],
        json!({"group": "", "version": "v1", "resource": "pods"})
    );
    assert_eq!(validate["requestKind"], validate["kind"]);
    assert_eq!(validate["namespace"], "default");
    assert_eq!(validate["name"], "p");
    assert_eq!(validate["options"]["kind"], "CreateOptions");
    assert_eq!(validate["oldObject"], Value::Null);
    assert_eq!(validate["dryRun"], false);
    assert!(validate["userInfo"]["username"].is_string());
    pg.shutdown().await;
}

#[tokio::test]
async fn denial_is_the_webhooks_status() {
    let (addr, ca, _log) = webhook_server().await;
    let pg = start(addr).await;
    let client = pg.client().await.unwrap();
    register(
        &client,
        "ValidatingWebhookConfiguration",
        "v",
        vec![webhook(
            "deny.test.io",
            "/deny",
            &ca,
            pod_rules(&["CREATE"]),
            json!({}),
        )],
    )
    .await;
    let err = Api::<Pod>::default_namespaced(client)
        .create(&PostParams::default(), &pod("p"))
        .await
        .unwrap_err();
    let kube::Error::Api(s) = err else {
        panic!("{err:?}")
    };
    assert_eq!((s.code, s.reason.as_str()), (403, "Forbidden"));
    assert_eq!(
        s.message,
        "admission webhook \"deny.test.io\" denied the request: nope"
    );
    pg.shutdown().await;
}

#[tokio::test]
async fn failure_policy_timeouts_and_ca_bundle() {
    let (addr, ca, log) = webhook_server().await;
    let pg = start(addr).await;
    let client = pg.client().await.unwrap();
    let slow = |name: &str, policy: &str, ops: &[&str]| {
        webhook(
            name,
            "/slow",
            &ca,
            pod_rules(ops),
            json!({"timeoutSeconds": 1, "failurePolicy": policy}),
        )
    };
    register(
        &client,
        "ValidatingWebhookConfiguration",
        "slow",
        vec![
            slow("slow-ignore.test.io", "Ignore", &["CREATE", "UPDATE"]),
            slow("slow-fail.test.io", "Fail", &["CREATE"]),
        ],
    )
    .await;
    let pods: Api<Pod> = Api::default_namespaced(client.clone());
    let started = std::time::Instant::now();
    let err = pods.create(&PostParams::default(), &pod("p")).await.unwrap_err();
    let kube::Error::Api(s) = err else {
        panic!("{err:?}")
    };
    assert!(
        started.elapsed() < Duration::from_secs(3),
        "timeoutSeconds is honoured"
    );
    assert_eq!((s.code, s.reason.as_str()), (500, "InternalError"));
    assert_eq!(
        s.message,
        "Internal error occurred: failed calling webhook \"slow-fail.test.io\": failed to call webhook: \
         Post \"https://hooks.test.svc:443/slow?timeout=1s\": context deadline exceeded"
    );
    assert_eq!(
        paths(&log),
        ["/slow", "/slow"],
        "Ignore failed open, then Fail failed closed"
    );

    // A caBundle that did not sign the webhook's certificate: the call fails (Fail → 500).
    let other = kruise_certs::generate(
        &CertConfig::for_service("hooks", "test"),
        time::OffsetDateTime::now_utc(),
    )
    .unwrap()
    .ca
    .cert_pem;
    let cms = json!([{"apiGroups": [""], "apiVersions": ["v1"], "operations": ["CREATE"], "resources": ["configmaps"]}]);
    register(
        &client,
        "MutatingWebhookConfiguration",
        "wrong-ca",
        vec![webhook(
            "wrong-ca.test.io",
            "/record",
            &other,
            cms,
            json!({"failurePolicy": "Fail"}),
        )],
    )
    .await;
    let cm: ConfigMap = serde_json::from_value(json!({"metadata": {"name": "c"}})).unwrap();
    let err = Api::<ConfigMap>::default_namespaced(client.clone())
        .create(&PostParams::default(), &cm)
        .await
        .unwrap_err();
    let kube::Error::Api(s) = err else {
        panic!("{err:?}")
    };
    assert_eq!(s.code, 500);
    assert!(
        s.message.starts_with(
            "Internal error occurred: failed calling webhook \"wrong-ca.test.io\": failed to call webhook: \
             Post \"https://hooks.test.svc:443/record?timeout=10s\": "
        ),
        "{}",
        s.message
    );
    assert_eq!(
        paths(&log).len(),
        2,
        "the server with the wrong certificate was never trusted"
    );
    pg.shutdown().await;
}

#[tokio::test]
async fn selectors_subresources_and_delete() {
    let (addr, ca, log) = webhook_server().await;
    let pg = start(addr).await;
    let client = pg.client().await.unwrap();
    let ns: Namespace =
        serde_json::from_value(json!({"metadata": {"name": "on", "labels": {"hooks": "on"}}})).unwrap();
    Api::<Namespace>::all(client.clone())
        .create(&PostParams::default(), &ns)
        .await
        .unwrap();
    let selected = json!({
        "namespaceSelector": {"matchExpressions": [{"key": "kubernetes.io/metadata.name", "operator": "In", "values": ["on"]}]},
        "objectSelector": {"matchLabels": {"app": "x"}},
    });
    let eviction = json!([{"apiGroups": [""], "apiVersions": ["v1"], "operations": ["CREATE"], "resources": ["pods/eviction"]}]);
    register(
        &client,
        "ValidatingWebhookConfiguration",
        "v",
        vec![
            webhook(
                "pods.test.io",
                "/pods",
                &ca,
                pod_rules(&["CREATE", "DELETE"]),
                selected,
            ),
            webhook("evict.test.io", "/evict", &ca, eviction, json!({})),
        ],
    )
    .await;
    let labelled = |name: &str| {
        let mut p = pod(name);
        p.metadata.labels = Some([("app".to_string(), "x".to_string())].into());
        p
    };
    let on: Api<Pod> = Api::namespaced(client.clone(), "on");
    let off: Api<Pod> = Api::default_namespaced(client.clone());
    off.create(&PostParams::default(), &labelled("p")).await.unwrap();
    on.create(&PostParams::default(), &pod("unlabelled"))
        .await
        .unwrap();
    assert!(
        paths(&log).is_empty(),
        "namespaceSelector and objectSelector filter"
    );
    on.create(&PostParams::default(), &labelled("p")).await.unwrap();
    on.delete("p", &DeleteParams::default()).await.unwrap();
    on.evict("unlabelled", &EvictParams::default()).await.unwrap();
    let entries = log.lock().unwrap().clone();
    assert_eq!(paths(&log), ["/pods", "/pods", "/evict"]);
    let delete = &entries[1].1;
    assert_eq!(delete["operation"], "DELETE");
    assert_eq!(delete["object"], Value::Null);
    assert_eq!(delete["oldObject"]["metadata"]["name"], "p");
    assert_eq!(delete["options"]["kind"], "DeleteOptions");
    let evict = &entries[2].1;
    assert_eq!(
        (evict["operation"].as_str(), evict["subResource"].as_str()),
        (Some("CREATE"), Some("eviction"))
    );
    assert_eq!(
        evict["kind"],
        json!({"group": "policy", "version": "v1", "kind": "Eviction"})
    );
    assert_eq!(evict["resource"]["resource"], "pods");
    assert_eq!(evict["object"]["kind"], "Eviction");
    assert_eq!(evict["name"], "unlabelled");
    pg.shutdown().await;
}

#[tokio::test]
async fn match_conditions_are_refused() {
    let (addr, ca, _log) = webhook_server().await;
    let pg = start(addr).await;
    let client = pg.client().await.unwrap();
    let ar = kube::discovery::ApiResource {
        group: "admissionregistration.k8s.io".into(),
        version: "v1".into(),
        api_version: "admissionregistration.k8s.io/v1".into(),
        kind: "ValidatingWebhookConfiguration".into(),
        plural: "validatingwebhookconfigurations".into(),
    };
    let w = webhook(
        "mc.test.io",
        "/record",
        &ca,
        pod_rules(&["CREATE"]),
        json!({"matchConditions": [{"name": "c", "expression": "true"}]}),
    );
    let obj: DynamicObject = serde_json::from_value(json!({
        "apiVersion": "admissionregistration.k8s.io/v1", "kind": "ValidatingWebhookConfiguration",
        "metadata": {"name": "mc"}, "webhooks": [w],
    }))
    .unwrap();
    let err = Api::<DynamicObject>::all_with(client, &ar)
        .create(&PostParams::default(), &obj)
        .await
        .unwrap_err();
    let kube::Error::Api(s) = err else {
        panic!("{err:?}")
    };
    assert_eq!(s.code, 422);
    assert!(
        s.message
            .contains("webhooks[0].matchConditions: Forbidden: matchConditions are not supported"),
        "{}",
        s.message
    );
    pg.shutdown().await;
}
