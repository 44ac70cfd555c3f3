//! The per-pod controllers against the in-memory API: KruisePodReady initialisation and the launch
//! priority barrier, driven by watch events as in a cluster.

#[path = "support/fake_api.rs"]
mod fake_api;

use std::{sync::Arc, time::Duration};

use fake_api::FakeApi;
use kruise_rs::controllers::{self, Context};
use kruise_webhooks::MemoryView;
use serde_json::{Value, json};

const NS: &str = "/api/v1/namespaces/ns";

fn context(api: &FakeApi) -> Context {
    Context {
        client: api.client(),
        view: Arc::new(MemoryView::default()),
    }
}

/// Polls `check` until it returns `Some`, for up to 5 seconds.
async fn eventually<T>(what: &str, mut check: impl FnMut() -> Option<T>) -> T {
    for _ in 0..100 {
        if let Some(found) = check() {
            return found;
        }
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    panic!("timed out waiting for {what}");
}

fn barrier_env(priority: i64) -> Value {
    json!([{"name": "KRUISE_CONTAINER_BARRIER", "valueFrom": {"configMapKeyRef":
        {"name": "web-1-barrier", "key": format!("p_{priority}")}}}])
}

#[tokio::test]
async fn a_pod_with_the_gate_gets_the_condition_and_others_are_left_alone() {
    let api = FakeApi::default();
    api.put(
        &format!("{NS}/pods/web-0"),
        json!({"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "web-0", "namespace": "ns"},
            "spec": {"containers": [{"name": "main", "image": "nginx"}],
                "readinessGates": [{"conditionType": "KruisePodReady"}]},
            "status": {"phase": "Pending", "conditions": [{"type": "PodScheduled", "status": "True"}]}}),
    );
    api.put(
        &format!("{NS}/pods/plain"),
        json!({"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "plain", "namespace": "ns"},
            "spec": {"containers": [{"name": "main", "image": "nginx"}]}}),
    );
    let task = tokio::spawn(controllers::pods::run(context(&api)));
    let conditions = eventually("the KruisePodReady condition", || {
        let pod = api.get(&format!("{NS}/pods/web-0"))?;
        let conditions = pod["status"]["conditions"].as_array()?.clone();
        conditions
            .iter()
            .any(|c| c["type"] == "KruisePodReady")
            .then_some(conditions)
    })
    .await;
    let ready = conditions.iter().find(|c| c["type"] == "KruisePodReady").unwrap();
    assert_eq!(ready["status"], "True");
    assert!(ready["lastTransitionTime"].is_string());
    assert!(
        conditions.iter().any(|c| c["type"] == "PodScheduled"),
        "other conditions kept: {conditions:?}"
    );
    // Written once, through pods/status.
    tokio::time::sleep(Duration::from_millis(300)).await;
    assert_eq!(api.writes_to(&format!("{NS}/pods/web-0/status")).len(), 1);
    assert!(api.writes_to(&format!("{NS}/pods/web-0")).is_empty());
    assert!(api.writes_to(&format!("{NS}/pods/plain/status")).is_empty());
    task.abort();
}

#[tokio::test]
async fn a_condition_set_false_by_another_writer_is_not_reset() {
    let api = FakeApi::default();
    api.put(
        &format!("{NS}/pods/web-0"),
        json!({"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "web-0", "namespace": "ns"},
            "spec": {"containers": [{"name": "main", "image": "nginx"}],
                "readinessGates": [{"conditionType": "KruisePodReady"}]},
            "status": {"conditions": [{"type": "KruisePodReady", "status": "False",
                "message": "[{\"userAgent\":\"Lifecycle\",\"key\":\"PreDelete\"}]"}]}}),
    );
    let task = tokio::spawn(controllers::pods::run(context(&api)));
    tokio::time::sleep(Duration::from_millis(500)).await;
    assert!(api.writes_to(&format!("{NS}/pods/web-0/status")).is_empty());
    task.abort();
}

#[tokio::test]
async fn the_barrier_gains_p_0_only_after_the_higher_priority_container_is_ready() {
    let api = FakeApi::default();
    let pod_path = format!("{NS}/pods/web-1");
    let barrier_path = format!("{NS}/configmaps/web-1-barrier");
    api.put(
        &pod_path,
        json!({"apiVersion": "v1", "kind": "Pod",
            "metadata": {"name": "web-1", "namespace": "ns", "uid": "pod-uid-1"},
            "spec": {"containers": [
                {"name": "a", "image": "app", "env": barrier_env(0)},
                {"name": "b", "image": "proxy", "env": barrier_env(10)}]},
            "status": {"phase": "Pending", "containerStatuses": [
                {"name": "a", "ready": false, "image": "app", "imageID": "", "restartCount": 0},
                {"name": "b", "ready": false, "image": "proxy", "imageID": "", "restartCount": 0}]}}),
    );
    let task = tokio::spawn(controllers::pods::run(context(&api)));
    let barrier = eventually("the barrier with p_10", || {
        let cm = api.get(&barrier_path)?;
        cm["data"]["p_10"].is_string().then_some(cm)
    })
    .await;
    assert_eq!(barrier["data"], json!({"p_10": "true"}));
    let owner = &barrier["metadata"]["ownerReferences"][0];
    assert_eq!(
        (
            &owner["apiVersion"],
            &owner["kind"],
            &owner["name"],
            &owner["uid"],
            &owner["controller"]
        ),
        (
            &json!("v1"),
            &json!("Pod"),
            &json!("web-1"),
            &json!("pod-uid-1"),
            &json!(true)
        )
    );
    // B is not ready yet: A stays behind the barrier.
    tokio::time::sleep(Duration::from_millis(500)).await;
    assert_eq!(api.get(&barrier_path).unwrap()["data"], json!({"p_10": "true"}));
    assert!(api.get(&pod_path).unwrap()["metadata"]["annotations"].is_null());

    // Kubelet reports B ready.
    api.modify(&pod_path, |pod| {
        pod["status"]["containerStatuses"][1]["ready"] = json!(true);
    });
    eventually("p_0 released", || {
        api.get(&barrier_path)?["data"]["p_0"].is_string().then_some(())
    })
    .await;
    let annotations = eventually("the completed annotation", || {
        let pod = api.get(&pod_path)?;
        pod["metadata"]["annotations"]["apps.kruise.io/container-launch-priority-completed"]
            .is_string()
            .then(|| pod["metadata"]["annotations"].clone())
    })
    .await;
    assert_eq!(
        annotations["apps.kruise.io/container-launch-priority-completed"],
        "true"
    );
    assert_eq!(
        api.get(&barrier_path).unwrap()["data"],
        json!({"p_10": "true", "p_0": "true"})
    );
    // Created once.
    assert_eq!(
        api.writes_to(&barrier_path)
            .iter()
            .filter(|m| **m == http::Method::POST)
            .count(),
        1
    );
    task.abort();
}
