//! Group commit (docs/pod-admission.md#group-commit): concurrent reviews that spend one
//! PodUnavailableBudget or book one WorkloadSpread are recorded in a few status writes, not one each,
//! and never over-admitted. Writes are counted by the playground (`Api::requests`), which checks each
//! write's resourceVersion precondition as etcd does.

use crate::common;

use std::{sync::Arc, time::Duration};

use common::cluster::{self, Cluster, WORKLOADSPREADS};
use kruise_rs::admission::Admission;
use kruise_webhooks::Webhook;

use crate::cluster_pub_race::{assert_budget_records_exactly, budget, eviction, replica};
use serde_json::{Value, json};

/// The AdmissionReview of creating `pod` in `shop`.
fn create(uid: String, pod: Value) -> Vec<u8> {
    serde_json::to_vec(&json!({
        "apiVersion": "admission.k8s.io/v1", "kind": "AdmissionReview",
        "request": {"uid": uid, "kind": {"group": "", "version": "v1", "kind": "Pod"},
            "resource": {"group": "", "version": "v1", "resource": "pods"},
            "name": pod["metadata"]["name"], "namespace": "shop",
            "operation": "CREATE", "userInfo": {"username": "test"}, "object": pod, "dryRun": false}
    }))
    .unwrap()
}

/// The webhook's answers to `reviews`, all sent at once.
async fn answer_all(admission: &Arc<Admission>, webhook: Webhook, reviews: Vec<Vec<u8>>) -> Vec<Value> {
    let tasks: Vec<_> = reviews
        .into_iter()
        .map(|body| {
            let admission = admission.clone();
            tokio::spawn(async move {
                let answer = admission.answer(webhook, &body).await.unwrap();
                serde_json::to_value(&answer.review.response).unwrap()
            })
        })
        .collect();
    let mut answers = Vec::new();
    for task in tasks {
        answers.push(task.await.unwrap());
    }
    answers
}

fn status_writes(cluster: &Cluster, before: &Counts, group: &str, plural: &str) -> u64 {
    cluster
        .api()
        .requests
        .writes_since(before, group, plural, Some("status"))
}

/// The playground's request counts at one moment.
type Counts = std::collections::BTreeMap<kruise_playground::request_counts::RequestKind, u64>;

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn a_hundred_concurrent_evictions_spend_a_budget_of_ten_exactly_in_few_writes() {
    let cluster = cluster::start().await;
    budget(&cluster, 100, 10).await;
    let admission = replica(&cluster).await;
    let before = cluster.api().requests.snapshot();
    let evictions = (0..100).map(eviction).collect();
    let answers = answer_all(&admission, Webhook::ValidatePod, evictions).await;
    let writes = status_writes(&cluster, &before, "policy.kruise.io", "podunavailablebudgets");
    let allowed: Vec<String> = (0..100)
        .filter(|&i| answers[i]["allowed"] == true)
        .map(|i| format!("web-{i}"))
        .collect();
    for answer in answers.iter().filter(|a| a["allowed"] != true) {
        assert_eq!(answer["status"]["code"], 429, "{answer}");
    }
    println!(
        "100 evictions, budget 10: {} allowed, {writes} PUB status writes",
        allowed.len()
    );
    assert_eq!(allowed.len(), 10, "allowed: {allowed:?}");
    assert!(writes <= 15, "{writes} PUB status writes");
    assert_budget_records_exactly(&cluster, allowed);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn two_hundred_concurrent_creates_book_a_workload_spread_in_few_writes_within_its_limits() {
    let cluster = cluster::start().await;
    cluster.namespace("shop").await;
    cluster.seed(json!({"apiVersion": "apps.kruise.io/v1beta1", "kind": "CloneSet",
        "metadata": {"name": "web", "namespace": "shop", "uid": "cs-uid"},
        "spec": {"replicas": 200, "selector": {"matchLabels": {"app": "web"}},
            "template": {"metadata": {"labels": {"app": "web"}},
                "spec": {"containers": [{"name": "web", "image": "nginx:1.27"}]}}}}));
    cluster.seed(
        json!({"apiVersion": "apps.kruise.io/v1beta1", "kind": "WorkloadSpread",
        "metadata": {"name": "zones", "namespace": "shop"},
        "spec": {"targetRef": {"apiVersion": "apps.kruise.io/v1alpha1", "kind": "CloneSet", "name": "web"},
            "subsets": [{"name": "a", "maxReplicas": 120}, {"name": "b", "maxReplicas": 120}]}}),
    );
    let admission = replica(&cluster).await;
    let before = cluster.api().requests.snapshot();
    let creates = (0..200)
        .map(|i| {
            let pod = json!({"apiVersion": "v1", "kind": "Pod",
                "metadata": {"name": format!("web-{i}"), "namespace": "shop", "labels": {"app": "web"},
                    "ownerReferences": [{"apiVersion": "apps.kruise.io/v1alpha1", "kind": "CloneSet",
                        "name": "web", "uid": "cs-uid", "controller": true}]},
                "spec": {"containers": [{"name": "web", "image": "nginx:1.27"}]}});
            create(format!("create-{i}"), pod)
        })
        .collect();
    let started = std::time::Instant::now();
    let answers = answer_all(&admission, Webhook::MutatePod, creates).await;
    let elapsed = started.elapsed();
    let writes = status_writes(&cluster, &before, "apps.kruise.io", "workloadspreads");
    println!("200 creates under a WorkloadSpread booking every pod: {writes} status writes in {elapsed:?}");
    for answer in &answers {
        assert_eq!(answer["allowed"], true, "{answer}");
    }
    assert!(writes <= 25, "{writes} WorkloadSpread status writes");
    assert!(elapsed < Duration::from_secs(10), "{elapsed:?}");
    let status = cluster.get(WORKLOADSPREADS, "shop", "zones").unwrap()["status"].clone();
    let subsets = status["versionedSubsetStatuses"]["versionIgnored"]
        .as_array()
        .unwrap()
        .clone();
    let booked = |i: usize| subsets[i]["creatingPods"].as_object().map_or(0, |m| m.len());
    assert_eq!((booked(0), booked(1)), (120, 80), "{status}");
    assert_eq!(subsets[0]["missingReplicas"], 0);
    assert_eq!(subsets[1]["missingReplicas"], 40);
}
