//! The WorkloadSpread controller against the playground, through the webhooks' cluster cache.

use crate::common;

use std::{sync::Arc, time::Duration};

use common::cluster::{self, Cluster, PODS, WORKLOADSPREADS};
use k8s_openapi::jiff::{SignedDuration, Timestamp};
use kruise_rs::{
    cluster::ClusterCache,
    controllers::{self, Context},
};
use serde_json::{Value, json};

fn ago(seconds: i64) -> String {
    (Timestamp::now() - SignedDuration::from_secs(seconds))
        .strftime("%Y-%m-%dT%H:%M:%SZ")
        .to_string()
}

async fn status_when(cluster: &Cluster, check: impl Fn(&Value) -> bool) -> Value {
    let status = || cluster.get(WORKLOADSPREADS, "ns", "ws").unwrap()["status"].clone();
    for _ in 0..200 {
        let status = status();
        if check(&status) {
            return status;
        }
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    panic!("status never matched: {}", status());
}

async fn started() -> Cluster {
    let cluster = cluster::start().await;
    cluster.namespace("ns").await;
    cluster
}

/// Starts the controller once the cache has synced.
async fn run_controller(cluster: &Cluster) -> tokio::task::JoinHandle<()> {
    let client = cluster.client.clone();
    let cache = ClusterCache::start(&client, "kruise-system");
    tokio::time::timeout(Duration::from_secs(5), cache.wait_until_ready())
        .await
        .unwrap()
        .unwrap();
    tokio::spawn(controllers::workload_spread::run(Context {
        client,
        view: Arc::new(cache),
        uninjected_pods: Default::default(),
        pass_durations: kruise_rs::server::metrics::pass_durations(),
        settings: Default::default(),
        clock: Default::default(),
        tuning: Default::default(),
    }))
}

fn pod(cluster: &Cluster, name: &str) -> Option<Value> {
    cluster.get(PODS, "ns", name)
}

#[tokio::test]
async fn subset_status_and_deletion_cost_of_a_clone_set() {
    let cluster = started().await;
    cluster.seed(
        json!({"apiVersion": "apps.kruise.io/v1beta1", "kind": "CloneSet",
            "metadata": {"name": "web", "namespace": "ns", "uid": "cs-uid"},
            "spec": {"replicas": 3, "selector": {"matchLabels": {"app": "web"}},
                "template": {"metadata": {"labels": {"app": "web"}}, "spec": {"containers": [{"name": "main"}]}}}}),
    );
    for (name, subset) in [("web-a", "zone-a"), ("web-b", "zone-a"), ("web-c", "zone-b")] {
        cluster.seed(json!({"apiVersion": "v1", "kind": "Pod",
                "metadata": {"name": name, "namespace": "ns", "labels": {"app": "web"},
                    "annotations": {"apps.kruise.io/matched-workloadspread":
                        json!({"name": "ws", "subset": subset}).to_string()},
                    "ownerReferences": [{"apiVersion": "apps.kruise.io/v1beta1", "kind": "CloneSet",
                        "name": "web", "uid": "cs-uid", "controller": true}]},
                "spec": {"nodeName": "n", "containers": [{"name": "main"}]},
                "status": {"phase": "Running", "conditions": [{"type": "Ready", "status": "True"}]}}));
    }
    let fresh = ago(25); // the webhook booked a pod that never came; expires in about 5s
    cluster.seed(
        json!({"apiVersion": "apps.kruise.io/v1beta1", "kind": "WorkloadSpread",
            "metadata": {"name": "ws", "namespace": "ns", "generation": 1},
            "spec": {"targetRef": {"apiVersion": "apps.kruise.io/v1beta1", "kind": "CloneSet", "name": "web"},
                "subsets": [{"name": "zone-a", "maxReplicas": 2}, {"name": "zone-b"}]},
            "status": {"subsetStatuses": [
                {"name": "zone-a", "replicas": 2, "missingReplicas": 0, "creatingPods": {"web-x": fresh}},
                {"name": "zone-b", "replicas": 1, "missingReplicas": -1}]}}),
    );
    let task = run_controller(&cluster).await;

    let status = status_when(&cluster, |s| s["observedGeneration"] == 1).await;
    assert_eq!(
        status["subsetStatuses"],
        json!([{"name": "zone-a", "replicas": 2, "missingReplicas": 0, "creatingPods": {"web-x": fresh}},
            {"name": "zone-b", "replicas": 1, "missingReplicas": -1}])
    );
    assert_eq!(
        status["versionedSubsetStatuses"]["versionIgnored"][0]["replicas"],
        2
    );
    for (name, cost) in [("web-a", "200"), ("web-b", "200"), ("web-c", "100")] {
        let annotations = &pod(&cluster, name).unwrap()["metadata"]["annotations"];
        assert_eq!(
            annotations["controller.kubernetes.io/pod-deletion-cost"], cost,
            "{name}"
        );
    }
    // The booking expires 30s after it was made, without any other event.
    let status = status_when(&cluster, |s| s["subsetStatuses"][0]["creatingPods"].is_null()).await;
    assert_eq!(status["subsetStatuses"][0]["missingReplicas"], 0);
    task.abort();
}

#[tokio::test]
async fn adaptive_rescheduling_deletes_pods_stuck_in_a_subset_and_marks_it_unschedulable() {
    let cluster = started().await;
    cluster.seed(
        json!({"apiVersion": "apps.kruise.io/v1beta1", "kind": "CloneSet",
            "metadata": {"name": "web", "namespace": "ns", "uid": "cs-uid"},
            "spec": {"replicas": 2, "selector": {"matchLabels": {"app": "web"}},
                "template": {"metadata": {"labels": {"app": "web"}}, "spec": {"containers": [{"name": "main"}]}}}}),
    );
    // web-a has waited 2 minutes for a node of zone-a; web-b waits in the last subset, which is never
    // rescheduled.
    for (name, subset) in [("web-a", "zone-a"), ("web-b", "zone-b")] {
        cluster.seed(json!({"apiVersion": "v1", "kind": "Pod",
                "metadata": {"name": name, "namespace": "ns", "labels": {"app": "web"},
                    "creationTimestamp": ago(120),
                    "annotations": {"apps.kruise.io/matched-workloadspread":
                        json!({"name": "ws", "subset": subset}).to_string()},
                    "ownerReferences": [{"apiVersion": "apps.kruise.io/v1beta1", "kind": "CloneSet",
                        "name": "web", "uid": "cs-uid", "controller": true}]},
                "spec": {"containers": [{"name": "main"}]},
                "status": {"phase": "Pending", "conditions": [
                    {"type": "PodScheduled", "status": "False", "reason": "Unschedulable"}]}}));
    }
    cluster.seed(
        json!({"apiVersion": "apps.kruise.io/v1beta1", "kind": "WorkloadSpread",
            "metadata": {"name": "ws", "namespace": "ns", "generation": 1},
            "spec": {"targetRef": {"apiVersion": "apps.kruise.io/v1beta1", "kind": "CloneSet", "name": "web"},
                "scheduleStrategy": {"type": "Adaptive", "adaptive": {"rescheduleCriticalSeconds": 60}},
                "subsets": [{"name": "zone-a", "maxReplicas": 1}, {"name": "zone-b"}]}}),
    );
    let task = run_controller(&cluster).await;

    let status = status_when(&cluster, |s| s["observedGeneration"] == 1).await;
    let conditions = |i: usize| {
        let c = &status["subsetStatuses"][i]["conditions"][0];
        (c["type"].clone(), c["status"].clone(), c["reason"].clone())
    };
    assert_eq!(
        conditions(0),
        (json!("Schedulable"), json!("False"), json!("PodUnschedulable"))
    );
    assert_eq!(
        conditions(1),
        (json!("Schedulable"), json!("True"), json!("Sufficient"))
    );
    for _ in 0..100 {
        if pod(&cluster, "web-a").is_none() {
            break;
        }
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    assert!(
        pod(&cluster, "web-a").is_none(),
        "the stuck pod of zone-a is deleted"
    );
    assert!(pod(&cluster, "web-b").is_some(), "the last subset keeps its pods");
    task.abort();
}

#[tokio::test]
async fn pods_created_before_the_workload_spread_are_adopted_by_their_node() {
    let cluster = started().await;
    cluster.seed(
        json!({"apiVersion": "v1", "kind": "Node", "metadata": {"name": "n-a", "labels": {"zone": "a"}}}),
    );
    cluster.seed(
        json!({"apiVersion": "apps.kruise.io/v1beta1", "kind": "CloneSet",
            "metadata": {"name": "web", "namespace": "ns", "uid": "cs-uid"},
            "spec": {"replicas": 1, "selector": {"matchLabels": {"app": "web"}},
                "template": {"metadata": {"labels": {"app": "web"}}, "spec": {"containers": [{"name": "main"}]}}}}),
    );
    cluster.seed(json!({"apiVersion": "v1", "kind": "Pod",
            "metadata": {"name": "web-old", "namespace": "ns", "labels": {"app": "web"},
                "ownerReferences": [{"apiVersion": "apps.kruise.io/v1beta1", "kind": "CloneSet",
                    "name": "web", "uid": "cs-uid", "controller": true}]},
            "spec": {"nodeName": "n-a", "containers": [{"name": "main"}]},
            "status": {"phase": "Running", "conditions": [{"type": "Ready", "status": "True"}]}}));
    cluster.seed(
        json!({"apiVersion": "apps.kruise.io/v1beta1", "kind": "WorkloadSpread",
            "metadata": {"name": "ws", "namespace": "ns", "generation": 1},
            "spec": {"targetRef": {"apiVersion": "apps.kruise.io/v1beta1", "kind": "CloneSet", "name": "web"},
                "subsets": [
                    {"name": "zone-b", "requiredNodeSelector": {"matchExpressions": [
                        {"key": "zone", "operator": "In", "values": ["b"]}]}},
                    {"name": "zone-a", "requiredNodeSelector": {"matchExpressions": [
                        {"key": "zone", "operator": "In", "values": ["a"]}]},
                        "patch": {"metadata": {"labels": {"spread": "zone-a"}}}}]}}),
    );
    let task = run_controller(&cluster).await;

    let status = status_when(&cluster, |s| s["subsetStatuses"][1]["replicas"] == 1).await;
    assert_eq!(status["subsetStatuses"][0]["replicas"], 0);
    let pod = pod(&cluster, "web-old").unwrap();
    assert_eq!(
        pod["metadata"]["annotations"]["apps.kruise.io/matched-workloadspread"],
        json!({"name": "ws", "subset": "zone-a"}).to_string()
    );
    assert_eq!(
        pod["metadata"]["labels"]["spread"], "zone-a",
        "the subset patch's metadata"
    );
    assert_eq!(
        pod["metadata"]["annotations"]["controller.kubernetes.io/pod-deletion-cost"],
        "100"
    );
    task.abort();
}
