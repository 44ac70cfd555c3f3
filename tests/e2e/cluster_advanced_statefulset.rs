//! In a cluster, Advanced StatefulSets (`apps.kruise.io/v1beta1` `statefulsets`, the targets of some
//! WorkloadSpreads) are a registered kind with kruise-rs's CRD: watched, decoded into the typed struct,
//! and answered by the webhooks' view like the built-in workloads.

use crate::common;

use std::time::Duration;

use common::cluster::{self, ADVANCED_STATEFULSETS};
use kruise_api::apps_v1beta1::StatefulSet as AdvancedStatefulSet;
use kruise_core::view;
use kruise_rs::cluster::ClusterCache;
use serde_json::json;

fn advanced_stateful_set(replicas: i64) -> serde_json::Value {
    json!({"apiVersion": "apps.kruise.io/v1beta1", "kind": "StatefulSet",
        "metadata": {"name": "web", "namespace": "shop"},
        "spec": {"replicas": replicas, "selector": {"matchLabels": {"app": "web"}},
            "template": {"metadata": {"labels": {"app": "web"}},
                "spec": {"containers": [{"name": "web", "image": "nginx:1.27"}]}}}})
}

async fn replicas_seen(cache: &ClusterCache) -> Option<i64> {
    view::get::<AdvancedStatefulSet>(cache, "shop", "web").and_then(|set| set.spec.replicas.map(i64::from))
}

async fn eventually(cache: &ClusterCache, want: i64) {
    let deadline = tokio::time::Instant::now() + Duration::from_secs(10);
    while replicas_seen(cache).await != Some(want) {
        assert!(
            tokio::time::Instant::now() < deadline,
            "the cache never showed replicas {want}"
        );
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn advanced_stateful_sets_are_watched_and_answered() {
    let cluster = cluster::start().await;
    cluster.namespace("shop").await;
    cluster
        .create(ADVANCED_STATEFULSETS, advanced_stateful_set(3))
        .await;
    let cache = ClusterCache::start(&cluster.client, "kruise-system");
    eventually(&cache, 3).await;
    cluster
        .modify(ADVANCED_STATEFULSETS, "shop", "web", |set| {
            set["spec"]["replicas"] = json!(5)
        })
        .await;
    eventually(&cache, 5).await;
    assert!(view::get::<AdvancedStatefulSet>(&cache, "shop", "other").is_none());
}
