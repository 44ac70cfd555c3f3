//! Admission webhooks as kube-apiserver calls them: selection, order and reinvocation, the
//! AdmissionReview sent, denials, failurePolicy and timeouts, caBundle verification.

use crate::common;

use std::time::Duration;

use common::webhooks::{paths, pod, pod_rules, register, start, webhook, webhook_server};
use k8s_openapi::api::core::v1::{ConfigMap, Namespace, Pod};
use kruise_certs::CertConfig;
use kube::api::{Api, DeleteParams, DynamicObject, EvictParams, PostParams};
use serde_json::{Value, json};

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
