//! Creation order, reserved ordinals, the start ordinal.

use serde_json::json;

use crate::playground_statefulset::env::{Env, REVISION_HASH, Version, name, start_with, stateful_set};

/// Five pods `web-0`…`web-4` appear in order, each ready before the next, with their identity.
pub async fn created_in_order(env: &Env) {
    env.settle(&[0, 1, 2, 3, 4]).await;
    let seen = env.seen();
    assert_eq!(seen.created, ["web-0", "web-1", "web-2", "web-3", "web-4"]);
    assert!(seen.out_of_order.is_empty(), "{seen:?}");
    let revision = env.status().await["updateRevision"].clone();
    for pod in env.pods().await {
        let labels = &pod["metadata"]["labels"];
        assert_eq!(labels["statefulset.kubernetes.io/pod-name"], name(&pod).as_str());
        assert_eq!(
            labels["apps.kubernetes.io/pod-index"],
            name(&pod).trim_start_matches("web-")
        );
        assert_eq!(labels[REVISION_HASH], revision);
        assert_eq!(pod["spec"]["hostname"], name(&pod).as_str());
        assert_eq!(pod["spec"]["subdomain"], "web");
        assert_eq!(pod["metadata"]["ownerReferences"][0]["kind"], "StatefulSet");
    }
}

/// Scaling 5 pods down to 2 removes the top ordinals.
pub async fn scaled_down_from_the_top(env: &Env) {
    env.edit(json!({"replicas": 2})).await;
    env.settle(&[0, 1]).await;
}

/// A Parallel set of 5 settles with every pod created once.
pub async fn created_in_parallel(env: &Env) {
    env.settle(&[0, 1, 2, 3, 4]).await;
    // Whether a pod appears before a lower one is ready depends on the kubelet's timing here; the
    // planner's table tests pin that Parallel creates every missing pod in one pass.
    assert_eq!(env.seen().created.len(), 5);
}

#[tokio::test]
async fn ordered_ready_creates_pods_in_order_each_ready_before_the_next() {
    let env = start_with(stateful_set(Version::V1beta1, 5, json!({}))).await;
    created_in_order(&env).await;
    scaled_down_from_the_top(&env).await;
}

#[tokio::test]
async fn parallel_creates_without_waiting() {
    let env = start_with(stateful_set(
        Version::V1beta1,
        5,
        json!({"podManagementPolicy": "Parallel"}),
    ))
    .await;
    created_in_parallel(&env).await;
}

/// v1beta1 only: `reserveOrdinals` and `ordinals` do not exist in v1alpha1 (conversion keeps them in an
/// annotation, which a v1alpha1 user does not write).
#[tokio::test]
async fn reserved_ordinals_are_skipped_and_the_start_ordinal_moves_the_range() {
    let env = start_with(stateful_set(
        Version::V1beta1,
        3,
        json!({"podManagementPolicy": "Parallel", "reserveOrdinals": [1]}),
    ))
    .await;
    env.settle(&[0, 2, 3]).await;
    env.edit(json!({"reserveOrdinals": null, "ordinals": {"start": 10}}))
        .await;
    env.settle(&[10, 11, 12]).await;
}
