//! API machinery with a kube client: one storage for both Event APIs, custom resources stored in
//! the storage version (`strategy: None`), schema defaults and pruning, `fieldValidation`, and the
//! PodDisruptionBudget status the eviction check reads. Expected shapes and messages come from
//! kube-apiserver (`pkg/apis/events/v1/conversion.go`, apiextensions-apiserver's
//! `pkg/apiserver/schema`, the schema-coercing decoder's strict errors, `pkg/controller/disruption`).

use crate::common;

use serde_json::{Value, json};

const JSON: &str = "application/json";

#[tokio::test]
async fn events_are_one_storage_served_in_both_shapes() {
    let pg = common::start().await;
    let client = pg.client().await.unwrap();
    let event = json!({"apiVersion": "events.k8s.io/v1", "kind": "Event",
        "metadata": {"name": "web.1", "namespace": "default"},
        "eventTime": "2026-01-01T00:00:00.000000Z", "reportingController": "kruise-manager",
        "reportingInstance": "kruise-manager-1", "action": "Create", "reason": "SuccessfulCreate",
        "regarding": {"kind": "CloneSet", "name": "web", "namespace": "default"},
        "note": "succeed to create pod web-abcde", "type": "Normal"});
    let (code, _) = common::raw(
        &client,
        "POST",
        "/apis/events.k8s.io/v1/namespaces/default/events",
        JSON,
        &event.to_string(),
    )
    .await;
    assert_eq!(code, 201);
    // core/v1 (what `kubectl get events` and `kubectl describe` read).
    let (code, core) = common::raw(&client, "GET", "/api/v1/namespaces/default/events/web.1", "", "").await;
    assert_eq!(code, 200);
    assert_eq!(core["apiVersion"], "v1");
    assert_eq!(core["involvedObject"]["name"], "web");
    assert_eq!(core["message"], "succeed to create pod web-abcde");
    assert_eq!(core["reportingComponent"], "kruise-manager");
    let (_, selected) = common::raw(
        &client,
        "GET",
        "/api/v1/namespaces/default/events?fieldSelector=involvedObject.name%3Dweb",
        "",
        "",
    )
    .await;
    assert_eq!(selected["items"].as_array().map(Vec::len), Some(1));
    // And back in the events.k8s.io shape.
    let (_, v1) = common::raw(
        &client,
        "GET",
        "/apis/events.k8s.io/v1/namespaces/default/events/web.1",
        "",
        "",
    )
    .await;
    assert_eq!(v1["regarding"]["name"], "web");
    assert_eq!(v1["note"], "succeed to create pod web-abcde");
    pg.shutdown().await;
}

fn crd() -> Value {
    let schema = json!({"openAPIV3Schema": {"type": "object", "properties": {
        "spec": {"type": "object", "properties": {
            "size": {"type": "integer", "default": 1, "minimum": 1},
            "mode": {"type": "string", "enum": ["Fast", "Safe"]}}}}}});
    json!({"apiVersion": "apiextensions.k8s.io/v1", "kind": "CustomResourceDefinition",
        "metadata": {"name": "widgets.example.io"},
        "spec": {"group": "example.io", "scope": "Namespaced",
            "names": {"plural": "widgets", "singular": "widget", "kind": "Widget", "listKind": "WidgetList"},
            "conversion": {"strategy": "None"},
            "versions": [
                {"name": "v1alpha1", "served": true, "storage": false, "schema": schema},
                {"name": "v1", "served": true, "storage": true, "schema": schema}]}})
}

#[tokio::test]
async fn custom_resources_are_stored_in_the_storage_version_pruned_and_defaulted() {
    let pg = common::start().await;
    let client = pg.client().await.unwrap();
    let (code, _) = common::raw(
        &client,
        "POST",
        "/apis/apiextensions.k8s.io/v1/customresourcedefinitions",
        JSON,
        &crd().to_string(),
    )
    .await;
    assert_eq!(code, 201);
    let path = "/apis/example.io/v1alpha1/namespaces/default/widgets";
    let widget = json!({"apiVersion": "example.io/v1alpha1", "kind": "Widget",
        "metadata": {"name": "w"}, "spec": {"mode": "Fast", "colour": "red"}});
    let (code, created) = common::raw(&client, "POST", path, JSON, &widget.to_string()).await;
    assert_eq!(code, 201, "{created}");
    // Answered in the request's version, pruned and defaulted by the schema.
    assert_eq!(created["apiVersion"], "example.io/v1alpha1");
    assert_eq!(created["spec"], json!({"mode": "Fast", "size": 1}));
    let stored = pg
        .api()
        .store
        .get(
            &kruise_playground::store::ResKey::new("example.io", "widgets"),
            "default",
            "w",
        )
        .unwrap();
    assert_eq!(
        stored["apiVersion"], "example.io/v1",
        "stored in the storage version"
    );
    let (_, v1) = common::raw(
        &client,
        "GET",
        "/apis/example.io/v1/namespaces/default/widgets/w",
        "",
        "",
    )
    .await;
    assert_eq!(v1["apiVersion"], "example.io/v1");
    // fieldValidation=Strict: the schema-coercing decoder's 400.
    let unknown = json!({"apiVersion": "example.io/v1alpha1", "kind": "Widget",
        "metadata": {"name": "x"}, "spec": {"colour": "red"}});
    let (code, status) = common::raw(
        &client,
        "POST",
        &format!("{path}?fieldValidation=Strict"),
        JSON,
        &unknown.to_string(),
    )
    .await;
    assert_eq!(code, 400);
    assert_eq!(
        status["message"],
        "Widget in version \"v1alpha1\" cannot be handled as a Widget: strict decoding error: unknown field \"spec.colour\""
    );
    // A schema violation: 422 with kube-openapi's wording, one cause per error.
    let bad = json!({"apiVersion": "example.io/v1alpha1", "kind": "Widget",
        "metadata": {"name": "y"}, "spec": {"size": 0, "mode": "Slow"}});
    let (code, status) = common::raw(&client, "POST", path, JSON, &bad.to_string()).await;
    assert_eq!(code, 422);
    assert_eq!(
        status["message"],
        "Widget.example.io \"y\" is invalid: [spec.mode: Unsupported value: \"Slow\": supported values: \"Fast\", \"Safe\", \
         spec.size: Invalid value: 0: spec.size in body should be greater than or equal to 1]"
    );
    pg.shutdown().await;
}

#[tokio::test]
async fn a_budget_gets_the_disruption_controllers_status() {
    let pg = common::start_with(kruise_playground::PlaygroundOptions {
        nodes: 1,
        kubelet_delay: std::time::Duration::from_millis(10),
        ..Default::default()
    })
    .await;
    // Without kube's retries of 429s: the refused eviction is the answer under test.
    let mut config = kruise_playground::kubeconfig::config(&pg.kubeconfig())
        .await
        .unwrap();
    config.default_retry = false;
    let client = kube::Client::try_from(config).unwrap();
    for name in ["a", "b"] {
        let pod = json!({"apiVersion": "v1", "kind": "Pod",
            "metadata": {"name": name, "labels": {"app": "web"}},
            "spec": {"containers": [{"name": "web", "image": "nginx"}]}});
        let (code, _) = common::raw(
            &client,
            "POST",
            "/api/v1/namespaces/default/pods",
            JSON,
            &pod.to_string(),
        )
        .await;
        assert_eq!(code, 201);
    }
    let pdb = json!({"apiVersion": "policy/v1", "kind": "PodDisruptionBudget", "metadata": {"name": "web"},
        "spec": {"minAvailable": 1, "selector": {"matchLabels": {"app": "web"}}}});
    let pdbs = "/apis/policy/v1/namespaces/default/poddisruptionbudgets";
    let (code, _) = common::raw(&client, "POST", pdbs, JSON, &pdb.to_string()).await;
    assert_eq!(code, 201);
    let status = common::eventually("the budget observed with 2 healthy pods", || {
        let client = client.clone();
        async move {
            let (_, pdb) = common::raw(&client, "GET", &format!("{pdbs}/web"), "", "").await;
            (pdb["status"]["currentHealthy"] == 2).then(|| pdb["status"].clone())
        }
    })
    .await;
    assert_eq!(status["desiredHealthy"], 1);
    assert_eq!(status["disruptionsAllowed"], 1);
    assert_eq!(status["expectedPods"], 2);
    assert_eq!(status["observedGeneration"], 1);
    // One eviction spends the budget; the second is kube-apiserver's 429 (an int minAvailable
    // counts the selected pods, as the disruption controller does: 1 left, 1 needed).
    let evict = |pod: &str| {
        format!(r#"{{"apiVersion":"policy/v1","kind":"Eviction","metadata":{{"name":"{pod}"}}}}"#)
    };
    let (code, _) = common::raw(
        &client,
        "POST",
        "/api/v1/namespaces/default/pods/a/eviction",
        JSON,
        &evict("a"),
    )
    .await;
    assert_eq!(code, 201);
    let (code, status) = common::raw(
        &client,
        "POST",
        "/api/v1/namespaces/default/pods/b/eviction",
        JSON,
        &evict("b"),
    )
    .await;
    assert_eq!(code, 429);
    assert_eq!(
        status["message"],
        "Cannot evict pod as it would violate the pod's disruption budget."
    );
    assert_eq!(status["details"]["causes"][0]["reason"], "DisruptionBudget");
    pg.shutdown().await;
}
