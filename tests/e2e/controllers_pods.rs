//! The per-pod controllers against the playground: KruisePodReady initialisation and the launch
//! priority barrier, driven by watch events as in a cluster.

use crate::common;

use std::{sync::Arc, time::Duration};

use common::cluster::{self, CONFIGMAPS, Cluster, PODS, requests_between};
use kruise_rs::cluster::ClusterCache;
use kruise_rs::controllers::{self, Context};
use serde_json::{Value, json};

/// The controllers' context as in a cluster: pods come from the shared cache's watch.
fn context(cluster: &Cluster) -> Context {
    Context {
        client: cluster.client.clone(),
        view: Arc::new(ClusterCache::start(&cluster.client, "kruise-system")),
        uninjected_pods: Default::default(),
        pass_durations: kruise_rs::server::metrics::pass_durations(),
        settings: Default::default(),
        clock: Default::default(),
        tuning: Default::default(),
    }
}

async fn started() -> Cluster {
    let cluster = cluster::start().await;
    cluster.namespace("ns").await;
    cluster
}

/// Polls `check` until it returns `Some`, for up to 5 seconds.
async fn eventually<T>(what: &str, check: impl FnMut() -> Option<T>) -> T {
    cluster::eventually(what, 5, check).await
}

fn barrier_env(priority: i64) -> Value {
    json!([{"name": "KRUISE_CONTAINER_BARRIER", "valueFrom": {"configMapKeyRef":
        {"name": "web-1-barrier", "key": format!("p_{priority}")}}}])
}

#[tokio::test]
async fn a_pod_with_the_gate_gets_the_condition_and_others_are_left_alone() {
    let cluster = started().await;
    cluster.seed(
        json!({"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "web-0", "namespace": "ns"},
            "spec": {"containers": [{"name": "main", "image": "nginx"}],
                "readinessGates": [{"conditionType": "KruisePodReady"}]},
            "status": {"phase": "Pending", "conditions": [{"type": "PodScheduled", "status": "True"}]}}),
    );
    cluster.seed(
        json!({"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "plain", "namespace": "ns"},
            "spec": {"containers": [{"name": "main", "image": "nginx"}]}}),
    );
    let before = cluster.requests();
    let task = tokio::spawn(controllers::pods::run(context(&cluster)));
    let conditions = eventually("the KruisePodReady condition", || {
        let pod = cluster.get(PODS, "ns", "web-0")?;
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
    // Written once, through pods/status (the one write is web-0's: it got the condition); the pod
    // without the gate is left alone.
    tokio::time::sleep(Duration::from_millis(300)).await;
    let after = cluster.requests();
    let writes = |method, sub| requests_between(&before, &after, method, PODS, sub);
    let status_writes = writes("PUT", Some("status")) + writes("PATCH", Some("status"));
    assert_eq!(status_writes, 1, "{after:?}");
    assert_eq!(writes("PUT", None) + writes("PATCH", None), 0, "{after:?}");
    let plain = cluster.get(PODS, "ns", "plain").unwrap();
    assert!(plain["status"]["conditions"].is_null(), "{plain}");
    task.abort();
}

#[tokio::test]
async fn a_condition_set_false_by_another_writer_is_not_reset() {
    let cluster = started().await;
    cluster.seed(
        json!({"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "web-0", "namespace": "ns"},
            "spec": {"containers": [{"name": "main", "image": "nginx"}],
                "readinessGates": [{"conditionType": "KruisePodReady"}]},
            "status": {"conditions": [{"type": "KruisePodReady", "status": "False",
                "message": "[{\"userAgent\":\"Lifecycle\",\"key\":\"PreDelete\"}]"}]}}),
    );
    let before = cluster.requests();
    let task = tokio::spawn(controllers::pods::run(context(&cluster)));
    tokio::time::sleep(Duration::from_millis(500)).await;
    let after = cluster.requests();
    let status_writes = requests_between(&before, &after, "PUT", PODS, Some("status"))
        + requests_between(&before, &after, "PATCH", PODS, Some("status"));
    assert_eq!(status_writes, 0, "{after:?}");
    assert_eq!(
        cluster.get(PODS, "ns", "web-0").unwrap()["status"]["conditions"][0]["status"],
        "False"
    );
    task.abort();
}

#[tokio::test]
async fn the_barrier_gains_p_0_only_after_the_higher_priority_container_is_ready() {
    let cluster = started().await;
    cluster.seed(json!({"apiVersion": "v1", "kind": "Pod",
            "metadata": {"name": "web-1", "namespace": "ns", "uid": "pod-uid-1"},
            "spec": {"containers": [
                {"name": "a", "image": "app", "env": barrier_env(0)},
                {"name": "b", "image": "proxy", "env": barrier_env(10)}]},
            "status": {"phase": "Pending", "containerStatuses": [
                {"name": "a", "ready": false, "image": "app", "imageID": "", "restartCount": 0},
                {"name": "b", "ready": false, "image": "proxy", "imageID": "", "restartCount": 0}]}}));
    let before = cluster.requests();
    let task = tokio::spawn(controllers::pods::run(context(&cluster)));
    let barrier_of = || cluster.get(CONFIGMAPS, "ns", "web-1-barrier");
    let pod = || cluster.get(PODS, "ns", "web-1").unwrap();
    let barrier = eventually("the barrier with p_10", || {
        let cm = barrier_of()?;
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
    assert_eq!(barrier_of().unwrap()["data"], json!({"p_10": "true"}));
    assert!(pod()["metadata"]["annotations"].is_null());

    // Kubelet reports B ready.
    cluster
        .modify_status(PODS, "ns", "web-1", |pod| {
            pod["status"]["containerStatuses"][1]["ready"] = json!(true);
        })
        .await;
    eventually("p_0 released", || {
        barrier_of()?["data"]["p_0"].is_string().then_some(())
    })
    .await;
    let annotations = eventually("the completed annotation", || {
        let pod = pod();
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
        barrier_of().unwrap()["data"],
        json!({"p_10": "true", "p_0": "true"})
    );
    // Created once.
    let creates = requests_between(&before, &cluster.requests(), "POST", CONFIGMAPS, None);
    assert_eq!(creates, 1);
    task.abort();
}
