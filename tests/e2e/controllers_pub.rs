//! The PodUnavailableBudget status controller against the playground, reading pods and workloads
//! through the same cluster cache the webhooks use.

use crate::common;

use std::{sync::Arc, time::Duration};

use common::cluster::{self, Cluster, DEPLOYMENTS, PODS, PUBS, REPLICASETS};
use k8s_openapi::jiff::{SignedDuration, Timestamp};
use kruise_playground::{api::UpdateMode, faults::Target};
use kruise_rs::{
    cluster::ClusterCache,
    controllers::{self, Context, Tuning},
};
use serde_json::{Value, json};

fn ago(seconds: i64) -> String {
    (Timestamp::now() - SignedDuration::from_secs(seconds))
        .strftime("%Y-%m-%dT%H:%M:%SZ")
        .to_string()
}

/// A cluster with a ReplicaSet of 3 with three running, ready pods.
pub(crate) async fn workload() -> Cluster {
    let cluster = cluster::start().await;
    cluster.namespace("ns").await;
    cluster.seed(
        json!({"apiVersion": "apps/v1", "kind": "ReplicaSet",
            "metadata": {"name": "web", "namespace": "ns", "uid": "rs-uid"},
            "spec": {"replicas": 3, "selector": {"matchLabels": {"app": "web"}},
                "template": {"metadata": {"labels": {"app": "web"}}, "spec": {"containers": [{"name": "main"}]}}}}),
    );
    for name in ["web-a", "web-b", "web-c"] {
        cluster.seed(json!({"apiVersion": "v1", "kind": "Pod",
                "metadata": {"name": name, "namespace": "ns", "labels": {"app": "web"},
                    "ownerReferences": [{"apiVersion": "apps/v1", "kind": "ReplicaSet", "name": "web",
                        "uid": "rs-uid", "controller": true}]},
                "spec": {"containers": [{"name": "main", "image": "nginx:1.25"}]},
                "status": {"phase": "Running", "conditions": [{"type": "Ready", "status": "True"}],
                    "containerStatuses": [{"name": "main", "image": "nginx:1.25", "ready": true,
                        "imageID": "docker-pullable://nginx@sha256:1", "restartCount": 0}]}}));
    }
    cluster
}

pub(crate) fn budget(status: Value) -> Value {
    json!({"apiVersion": "policy.kruise.io/v1beta1", "kind": "PodUnavailableBudget",
        "metadata": {"name": "web-pub", "namespace": "ns", "generation": 1},
        "spec": {"selector": {"matchLabels": {"app": "web"}}, "maxUnavailable": 1},
        "status": status})
}

async fn start(cluster: &Cluster) -> tokio::task::JoinHandle<()> {
    start_tuned(cluster, Default::default()).await
}

/// The PUB status controller against `cluster`, its caches synced, with `tuning`.
pub(crate) async fn start_tuned(cluster: &Cluster, tuning: Tuning) -> tokio::task::JoinHandle<()> {
    let client = cluster.client.clone();
    let cache = ClusterCache::start(&client, "kruise-system");
    tokio::time::timeout(Duration::from_secs(5), cache.wait_until_ready())
        .await
        .expect("caches synced")
        .unwrap();
    tokio::spawn(controllers::pub_status::run(Context {
        client,
        view: Arc::new(cache),
        uninjected_pods: Default::default(),
        pass_durations: kruise_rs::server::metrics::pass_durations(),
        settings: Default::default(),
        clock: Default::default(),
        tuning,
    }))
}

/// Polls the budget's status until `check` holds, for up to `seconds`.
async fn status_when(cluster: &Cluster, seconds: u64, check: impl Fn(&Value) -> bool) -> Value {
    let status = || cluster.get(PUBS, "ns", "web-pub").unwrap()["status"].clone();
    for _ in 0..seconds * 20 {
        let status = status();
        if check(&status) {
            return status;
        }
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    panic!("status never matched: {}", status());
}

#[tokio::test]
async fn status_is_computed_and_stale_disruptions_are_pruned_on_time() {
    let cluster = workload().await;
    let stale = ago(30);
    let recent = ago(15); // expires in about 5s
    cluster.seed(budget(
        json!({"unavailableAllowed": 0, "currentAvailable": 0, "desiredAvailable": 0,
            "totalReplicas": 0, "disruptedPods": {"web-a": stale, "web-b": recent, "deleted-pod": ago(1)}}),
    ));
    let task = start(&cluster).await;

    let status = status_when(&cluster, 5, |s| s["totalReplicas"] == 3).await;
    assert_eq!(
        status,
        json!({"observedGeneration": 1, "disruptedPods": {"web-b": recent},
            "unavailableAllowed": 0, "currentAvailable": 2, "desiredAvailable": 2, "totalReplicas": 3}),
        "web-a's 30s-old record and the record of a pod that no longer exists are pruned; web-b is still disrupted"
    );
    // Pods created before the budget are annotated with it.
    let pod = cluster.get(PODS, "ns", "web-a").unwrap();
    assert_eq!(
        pod["metadata"]["annotations"]["pub.kruise.io/related-pub"],
        "web-pub"
    );
    assert_eq!(pod["metadata"]["annotations"]["kruise.io/related-pub"], "web-pub");

    // The controller comes back when web-b's record expires (20s after it was made), with no other event.
    let status = status_when(&cluster, 10, |s| s["disruptedPods"].is_null()).await;
    assert_eq!(
        (&status["currentAvailable"], &status["unavailableAllowed"]),
        (&json!(3), &json!(1))
    );

    // A pod turning unready is counted at once.
    cluster
        .modify_status(PODS, "ns", "web-c", |pod| {
            pod["status"]["conditions"][0]["status"] = json!("False");
        })
        .await;
    let status = status_when(&cluster, 5, |s| s["currentAvailable"] == 2).await;
    assert_eq!(status["unavailableAllowed"], 0);
    task.abort();
}

#[tokio::test]
async fn a_concurrent_webhook_write_is_never_overwritten() {
    let cluster = workload().await;
    cluster.seed(budget(
        json!({"unavailableAllowed": 0, "currentAvailable": 0, "desiredAvailable": 0, "totalReplicas": 0}),
    ));
    // The first status write loses the race: just before it lands, the webhook admits the eviction of
    // web-c (records it and spends the budget).
    let evicted_at = ago(0);
    let at = evicted_at.clone();
    let webhook = cluster.interleaved(PUBS, "ns", "web-pub", UpdateMode::Status, move |b| {
        b["status"] = json!({"observedGeneration": 1, "disruptedPods": {"web-c": at},
            "unavailableAllowed": 0, "currentAvailable": 3, "desiredAvailable": 2, "totalReplicas": 3});
    });
    let status_write = Target::writes("policy.kruise.io", "podunavailablebudgets")
        .object("ns", "web-pub")
        .subresource("status");
    cluster.faults.conflict_once(status_write, Some(webhook));
    let task = start(&cluster).await;
    let status = status_when(&cluster, 5, |s| s["currentAvailable"] == 2).await;
    assert_eq!(
        status,
        json!({"observedGeneration": 1, "disruptedPods": {"web-c": evicted_at},
            "unavailableAllowed": 0, "currentAvailable": 2, "desiredAvailable": 2, "totalReplicas": 3}),
        "the webhook's record survives and web-c is not counted available"
    );
    assert_eq!(cluster.faults.armed(), 0, "the conflict happened");
    task.abort();
}

#[tokio::test]
async fn a_target_ref_budget_counts_the_deployment_pods_through_its_replica_sets() {
    let cluster = workload().await;
    cluster.seed(
        json!({"apiVersion": "apps/v1", "kind": "Deployment",
            "metadata": {"name": "web", "namespace": "ns", "uid": "deploy-uid"},
            "spec": {"replicas": 4, "selector": {"matchLabels": {"app": "web"}},
                "template": {"metadata": {"labels": {"app": "web"}}, "spec": {"containers": [{"name": "main"}]}}}}),
    );
    cluster
        .modify(REPLICASETS, "ns", "web", |rs| {
            rs["metadata"]["ownerReferences"] = json!([{"apiVersion": "apps/v1", "kind": "Deployment",
                "name": "web", "uid": "deploy-uid", "controller": true}]);
        })
        .await;
    let mut pub_object = budget(Value::Null);
    pub_object["spec"] = json!({"targetRef": {"apiVersion": "apps/v1", "kind": "Deployment", "name": "web"},
        "minAvailable": "50%"});
    cluster.seed(pub_object);
    let task = start(&cluster).await;
    let status = status_when(&cluster, 5, |s| !s.is_null()).await;
    assert_eq!(
        status,
        json!({"observedGeneration": 1, "unavailableAllowed": 1, "currentAvailable": 3,
            "desiredAvailable": 2, "totalReplicas": 4})
    );
    // Scaling the Deployment re-counts (triggered by the Deployment watch).
    cluster
        .modify(DEPLOYMENTS, "ns", "web", |d| d["spec"]["replicas"] = json!(6))
        .await;
    let status = status_when(&cluster, 5, |s| s["totalReplicas"] == 6).await;
    assert_eq!(
        (&status["desiredAvailable"], &status["unavailableAllowed"]),
        (&json!(3), &json!(0))
    );
    task.abort();
}
