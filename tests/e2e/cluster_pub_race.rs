//! "Never over-admitted", across replicas: two kruise-rs replicas (each with its own watch caches and
//! admission loop) share one API server and race 24 evictions against a budget of 3. Each replica decides
//! from its cache, writes the PUB status with the resourceVersion it decided from, and on 409 re-reads and
//! decides again — exactly 3 evictions may be allowed, and the stored status must record exactly those 3.
//! The API server is the playground, whose store checks the resourceVersion precondition of every
//! write as etcd's compare-and-swap does.

use crate::common;

use std::{sync::Arc, time::Duration};

use common::cluster::{self, Cluster, PUBS};
use kruise_rs::{
    admission::{Admission, StateSource},
    cluster::ClusterCache,
};
use kruise_webhooks::{Settings, Webhook};
use serde_json::json;

const REPLICAS: usize = 24;

/// 24 running, ready pods and their budget of 3, stored as the webhook and the controllers left them.
async fn budget_of_three(cluster: &Cluster) {
    budget(cluster, REPLICAS, 3).await;
}

/// `pods` running, ready pods `web-N` of namespace `shop` and their PodUnavailableBudget `web` with
/// `max_unavailable` units left.
pub async fn budget(cluster: &Cluster, pods: usize, max_unavailable: usize) {
    cluster.namespace("shop").await;
    for i in 0..pods {
        let name = format!("web-{i}");
        cluster.seed(json!({"apiVersion": "v1", "kind": "Pod",
                "metadata": {"name": name, "namespace": "shop", "labels": {"app": "web"},
                    "annotations": {"pub.kruise.io/related-pub": "web"}},
                "spec": {"containers": [{"name": "web", "image": "nginx:1.27"}]},
                "status": {"phase": "Running", "conditions": [{"type": "Ready", "status": "True"}],
                    "containerStatuses": [{"name": "web", "image": "nginx:1.27", "ready": true,
                        "imageID": "docker-pullable://nginx@sha256:1", "restartCount": 0}]}}));
    }
    cluster.seed(
        json!({"apiVersion": "policy.kruise.io/v1beta1", "kind": "PodUnavailableBudget",
            "metadata": {"name": "web", "namespace": "shop", "generation": 1},
            "spec": {"selector": {"matchLabels": {"app": "web"}}, "maxUnavailable": max_unavailable},
            "status": {"observedGeneration": 1, "unavailableAllowed": max_unavailable,
                "desiredAvailable": pods - max_unavailable, "currentAvailable": pods, "totalReplicas": pods}}),
    );
}

/// The AdmissionReview of evicting pod `web-i` of `shop`.
pub fn eviction(i: usize) -> Vec<u8> {
    serde_json::to_vec(&json!({
        "apiVersion": "admission.k8s.io/v1", "kind": "AdmissionReview",
        "request": {"uid": format!("evict-{i}"),
            "kind": {"group": "policy", "version": "v1", "kind": "Eviction"},
            "resource": {"group": "", "version": "v1", "resource": "pods"},
            "subResource": "eviction", "name": format!("web-{i}"), "namespace": "shop",
            "operation": "CREATE", "userInfo": {"username": "drain"},
            "object": {"apiVersion": "policy/v1", "kind": "Eviction",
                "metadata": {"name": format!("web-{i}"), "namespace": "shop"}},
            "dryRun": false, "options": {"apiVersion": "meta.k8s.io/v1", "kind": "CreateOptions"}}
    }))
    .unwrap()
}

/// One replica's admission over its own caches of `cluster`.
pub async fn replica(cluster: &Cluster) -> Arc<Admission> {
    let cache = ClusterCache::start(&cluster.client, "kruise-system");
    tokio::time::timeout(Duration::from_secs(10), cache.wait_until_ready())
        .await
        .expect("caches synced")
        .unwrap();
    Arc::new(Admission::new(StateSource::Cluster(cache), Settings::default()))
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn two_replicas_racing_evictions_never_spend_a_budget_twice() {
    let cluster = cluster::start().await;
    budget_of_three(&cluster).await;
    let replicas = [replica(&cluster).await, replica(&cluster).await];
    let tasks: Vec<_> = (0..REPLICAS)
        .map(|i| {
            let admission = replicas[i % 2].clone();
            tokio::spawn(async move {
                let answer = admission
                    .answer(Webhook::ValidatePod, &eviction(i))
                    .await
                    .unwrap();
                (i, answer.review.response)
            })
        })
        .collect();
    let mut allowed = Vec::new();
    for task in tasks {
        let (i, response) = task.await.unwrap();
        if response.allowed {
            allowed.push(format!("web-{i}"));
        } else {
            let status = response.status.unwrap();
            assert_eq!(status.code, 429, "web-{i}: {}", status.message);
        }
    }
    assert_eq!(allowed.len(), 3, "allowed: {allowed:?}");
    assert_budget_records_exactly(&cluster, allowed);
}

/// The budget `shop/web` is spent out, and its status records exactly the `allowed` evictions.
pub fn assert_budget_records_exactly(cluster: &Cluster, mut allowed: Vec<String>) {
    let status = cluster.get(PUBS, "shop", "web").unwrap()["status"].clone();
    assert_eq!(status["unavailableAllowed"], 0);
    let mut recorded: Vec<String> = status["disruptedPods"]
        .as_object()
        .unwrap()
        .keys()
        .cloned()
        .collect();
    recorded.sort();
    allowed.sort();
    assert_eq!(
        recorded, allowed,
        "the status records exactly the allowed evictions"
    );
}

/// When the budget's status cannot be written (etcd down, a webhook blocking the update: the API server
/// answers 500), an eviction is refused, not allowed unrecorded, and the budget is untouched; once
/// writes work again the same eviction is allowed and recorded.
#[tokio::test]
async fn an_eviction_whose_budget_write_fails_is_refused_and_spends_nothing() {
    let cluster = cluster::start().await;
    budget_of_three(&cluster).await;
    let admission = replica(&cluster).await;
    let status_writes =
        kruise_playground::faults::Target::writes("policy.kruise.io", "podunavailablebudgets")
            .subresource("status");
    cluster.faults.fail(status_writes.clone());
    let answer = admission
        .answer(Webhook::ValidatePod, &eviction(0))
        .await
        .unwrap();
    let response = answer.review.response;
    assert!(!response.allowed, "allowed without a recorded disruption");
    let status = response.status.unwrap();
    assert!(status.code >= 500, "{} {}", status.code, status.message);
    let stored = cluster.get(PUBS, "shop", "web").unwrap()["status"].clone();
    assert_eq!(stored["unavailableAllowed"], 3);
    assert!(
        stored
            .get("disruptedPods")
            .is_none_or(|d| d.as_object().is_none_or(|m| m.is_empty()))
    );

    cluster.faults.clear(&status_writes);
    let answer = admission
        .answer(Webhook::ValidatePod, &eviction(0))
        .await
        .unwrap();
    assert!(answer.review.response.allowed);
    let stored = cluster.get(PUBS, "shop", "web").unwrap()["status"].clone();
    assert_eq!(stored["unavailableAllowed"], 2);
    assert!(stored["disruptedPods"]["web-0"].is_string());
}

/// §4.80: the API server throttles the budget's status write (429 with Retry-After, API Priority and
/// Fairness). The kube client retries after the server's delay; a write throttled once lands and the
/// eviction is allowed and recorded once. A write throttled for longer than
/// [`kruise_rs::admission::WRITE_DEADLINE`] is refused with a 429 (the caller retries), well inside
/// the webhook's 10 s timeout, and spends nothing.
#[tokio::test]
async fn an_eviction_whose_budget_write_is_throttled_is_retried_or_refused_in_time() {
    use kruise_playground::refusals::{Refusal, Requests};
    let cluster = cluster::start().await;
    budget_of_three(&cluster).await;
    let admission = replica(&cluster).await;
    let status_writes = Requests::on("policy.kruise.io", "podunavailablebudgets")
        .subresource(axum::http::Method::PUT, "status");
    let throttle = Refusal::TooManyRequests {
        retry_after_seconds: 1,
    };
    let refusals = &cluster.api().refusals;

    refusals.arm(status_writes.clone(), throttle, Some(1));
    let started = std::time::Instant::now();
    let answer = admission
        .answer(Webhook::ValidatePod, &eviction(0))
        .await
        .unwrap();
    assert!(
        answer.review.response.allowed,
        "{:?}",
        answer.review.response.status
    );
    assert!(
        started.elapsed() >= Duration::from_secs(1),
        "Retry-After not honoured"
    );
    assert_eq!(refusals.clear(&status_writes), 1);
    let stored = cluster.get(PUBS, "shop", "web").unwrap()["status"].clone();
    assert_eq!(stored["unavailableAllowed"], 2);

    refusals.arm(status_writes.clone(), throttle, None);
    let started = std::time::Instant::now();
    let answer = admission
        .answer(Webhook::ValidatePod, &eviction(1))
        .await
        .unwrap();
    let took = started.elapsed();
    let response = answer.review.response;
    assert!(!response.allowed, "allowed without a recorded disruption");
    let status = response.status.unwrap();
    assert_eq!(status.code, 429, "{}", status.message);
    assert!(
        took >= kruise_rs::admission::WRITE_DEADLINE && took < Duration::from_secs(8),
        "answered after {took:?}"
    );
    assert!(refusals.clear(&status_writes) >= 2, "the client retried");
    let stored = cluster.get(PUBS, "shop", "web").unwrap()["status"].clone();
    assert_eq!(stored["unavailableAllowed"], 2, "nothing more spent");
    assert!(stored["disruptedPods"].get("web-1").is_none());
}
