//! An owner not yet in the cache (docs/pod-admission.md#owners-not-yet-in-the-cache): a pod whose
//! ReplicaSet the watch has not delivered yet is matched to the WorkloadSpread over the ReplicaSet's
//! Deployment after one GET of the ReplicaSet, and booked in its subset; an owner that does not exist
//! is refused as OpenKruise refuses it (500, not found), after one GET too.
//!
//! The playground's ReplicaSet watch is made silent (`Refusal::Silence`) before the caches start, so
//! a ReplicaSet created afterwards never reaches the cache: the pod arrives "before the watch".

use crate::common;

use std::{sync::Arc, time::Duration};

use common::cluster::{self, Cluster, REPLICASETS, WORKLOADSPREADS};
use kruise_core::ClusterView as _;
use kruise_playground::refusals::{Refusal, Requests};
use kruise_rs::admission::{Admission, StateSource};
use kruise_webhooks::Webhook;
use serde_json::{Value, json};

use crate::cluster_pub_race::replica;

/// The playground's request counts at one moment.
type Counts = std::collections::BTreeMap<kruise_playground::request_counts::RequestKind, u64>;

/// The AdmissionReview of creating pod `name` of ReplicaSet `owner` in `shop`.
fn pod_create(name: &str, owner: &str) -> Vec<u8> {
    let pod = json!({"apiVersion": "v1", "kind": "Pod",
        "metadata": {"name": name, "namespace": "shop",
            "labels": {"app": "web", "pod-template-hash": "5d8f"},
            "ownerReferences": [{"apiVersion": "apps/v1", "kind": "ReplicaSet", "name": owner,
                "uid": format!("{owner}-uid"), "controller": true}]},
        "spec": {"containers": [{"name": "web", "image": "nginx:1.27"}]}});
    serde_json::to_vec(&json!({
        "apiVersion": "admission.k8s.io/v1", "kind": "AdmissionReview",
        "request": {"uid": format!("create-{name}"), "kind": {"group": "", "version": "v1", "kind": "Pod"},
            "resource": {"group": "", "version": "v1", "resource": "pods"},
            "name": name, "namespace": "shop",
            "operation": "CREATE", "userInfo": {"username": "replicaset-controller"}, "object": pod,
            "dryRun": false}
    }))
    .unwrap()
}

/// A Deployment `web`, a WorkloadSpread over it (subset `a` holds one pod, `b` two), and a replica of
/// kruise-rs's admission whose ReplicaSet watch hears nothing after its first list.
async fn setup() -> (Cluster, Arc<Admission>) {
    let cluster = cluster::start().await;
    cluster.namespace("shop").await;
    cluster.seed(json!({"apiVersion": "apps/v1", "kind": "Deployment",
        "metadata": {"name": "web", "namespace": "shop", "uid": "web-uid"},
        "spec": {"replicas": 0, "selector": {"matchLabels": {"app": "web"}},
            "template": {"metadata": {"labels": {"app": "web"}},
                "spec": {"containers": [{"name": "web", "image": "nginx:1.27"}]}}}}));
    cluster.seed(
        json!({"apiVersion": "apps.kruise.io/v1beta1", "kind": "WorkloadSpread",
        "metadata": {"name": "zones", "namespace": "shop"},
        "spec": {"targetRef": {"apiVersion": "apps/v1", "kind": "Deployment", "name": "web"},
            "subsets": [{"name": "a", "maxReplicas": 1}, {"name": "b", "maxReplicas": 2}]}}),
    );
    let watches = Requests::on("apps", "replicasets").watches();
    cluster
        .api()
        .refusals
        .arm(watches.clone(), Refusal::Silence, None);
    let admission = replica(&cluster).await;
    cluster::eventually("the ReplicaSet watch silenced", 10, || {
        (cluster.api().refusals.refused(&watches) >= 1).then_some(())
    })
    .await;
    (cluster, admission)
}

/// GETs of ReplicaSets (the silent watch made its one GET before `before`).
fn replicaset_gets(cluster: &Cluster, before: &Counts) -> u64 {
    cluster::requests_between(before, &cluster.requests(), "GET", REPLICASETS, None)
}

async fn answer(admission: &Admission, body: &[u8]) -> Value {
    let answer = admission.answer(Webhook::MutatePod, body).await.unwrap();
    serde_json::to_value(&answer.review.response).unwrap()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_replicaset_not_yet_in_the_cache_is_read_once_and_its_pod_booked_in_a_subset() {
    let (cluster, admission) = setup().await;
    cluster.seed(json!({"apiVersion": "apps/v1", "kind": "ReplicaSet",
        "metadata": {"name": "web-5d8f", "namespace": "shop", "uid": "web-5d8f-uid",
            "labels": {"app": "web", "pod-template-hash": "5d8f"},
            "ownerReferences": [{"apiVersion": "apps/v1", "kind": "Deployment", "name": "web",
                "uid": "web-uid", "controller": true}]},
        "spec": {"replicas": 0, "selector": {"matchLabels": {"app": "web"}},
            "template": {"metadata": {"labels": {"app": "web", "pod-template-hash": "5d8f"}},
                "spec": {"containers": [{"name": "web", "image": "nginx:1.27"}]}}}}));
    tokio::time::sleep(Duration::from_millis(300)).await;
    let StateSource::Cluster(cache) = &admission.state else {
        unreachable!("a replica runs on the cluster caches")
    };
    assert!(
        cache.replica_set("shop", "web-5d8f").is_none(),
        "the watch delivered the ReplicaSet: the test would not test anything"
    );

    let before = cluster.requests();
    let response = answer(&admission, &pod_create("web-5d8f-x1", "web-5d8f")).await;
    assert_eq!(response["allowed"], true, "{response}");
    assert_eq!(
        replicaset_gets(&cluster, &before),
        1,
        "one GET of the missing owner"
    );
    let patch: Value =
        serde_json::from_slice(&base64_decode(response["patch"].as_str().expect("a patch"))).unwrap();
    let matched = patch
        .as_array()
        .unwrap()
        .iter()
        .find_map(|op| {
            let value = &op["value"];
            value.get("apps.kruise.io/matched-workloadspread").or_else(|| {
                op["path"]
                    .as_str()?
                    .ends_with("matched-workloadspread")
                    .then_some(value)
            })
        })
        .and_then(Value::as_str)
        .map(|raw| serde_json::from_str::<Value>(raw).unwrap())
        .unwrap_or_else(|| panic!("no matched-workloadspread annotation in {patch}"));
    assert_eq!(matched, json!({"name": "zones", "subset": "a"}));
    let status = cluster.get(WORKLOADSPREADS, "shop", "zones").unwrap()["status"].clone();
    let subsets = status["versionedSubsetStatuses"]["5d8f"]
        .as_array()
        .cloned()
        .unwrap_or_default();
    let booked: Vec<&Value> = subsets
        .iter()
        .filter(|s| s["creatingPods"].get("web-5d8f-x1").is_some())
        .map(|s| &s["name"])
        .collect();
    assert_eq!(booked, [&json!("a")], "{status}");

    // The copy read was used for that decision only: the cache still does not have it, and the next
    // pod of the ReplicaSet reads it once again (and goes to `b`, `a` being full).
    assert!(cache.replica_set("shop", "web-5d8f").is_none());
    let before = cluster.requests();
    let response = answer(&admission, &pod_create("web-5d8f-x2", "web-5d8f")).await;
    assert_eq!(response["allowed"], true, "{response}");
    assert_eq!(replicaset_gets(&cluster, &before), 1);
    let status = cluster.get(WORKLOADSPREADS, "shop", "zones").unwrap()["status"].clone();
    assert!(
        status["versionedSubsetStatuses"]["5d8f"][1]["creatingPods"]
            .get("web-5d8f-x2")
            .is_some(),
        "{status}"
    );
    assert!(cluster.get(REPLICASETS, "shop", "web-5d8f").is_some());
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_owner_that_does_not_exist_is_read_once_and_the_pod_refused_as_openkruise_does() {
    let (cluster, admission) = setup().await;
    let before = cluster.requests();
    let response = answer(&admission, &pod_create("gone-x1", "gone")).await;
    assert_eq!(response["allowed"], false, "{response}");
    assert_eq!(response["status"]["code"], 500, "{response}");
    assert_eq!(
        response["status"]["message"], "replicasets.apps \"gone\" not found",
        "{response}"
    );
    assert_eq!(replicaset_gets(&cluster, &before), 1, "one GET, no retry");
}

/// Standard base64 (the AdmissionResponse's patch).
fn base64_decode(text: &str) -> Vec<u8> {
    use base64::Engine as _;
    base64::engine::general_purpose::STANDARD
        .decode(text)
        .expect("base64 patch")
}
