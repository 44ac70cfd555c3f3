//! Creation order, reserved ordinals, the start ordinal.

use serde_json::json;

use crate::env::{REVISION_HASH, name, start_with, stateful_set};

#[tokio::test]
async fn ordered_ready_creates_pods_in_order_each_ready_before_the_next() {
    let env = start_with(stateful_set(5, json!({}))).await;
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
    // Scale down goes from the top.
    env.edit(json!({"replicas": 2})).await;
    env.settle(&[0, 1]).await;
}

#[tokio::test]
async fn parallel_creates_without_waiting() {
    let env = start_with(stateful_set(5, json!({"podManagementPolicy": "Parallel"}))).await;
    env.settle(&[0, 1, 2, 3, 4]).await;
    // Whether a pod appears before a lower one is ready depends on the kubelet's timing here; the
    // planner's table tests pin that Parallel creates every missing pod in one pass.
    assert_eq!(env.seen().created.len(), 5);
}

#[tokio::test]
async fn reserved_ordinals_are_skipped_and_the_start_ordinal_moves_the_range() {
    let env = start_with(stateful_set(
        3,
        json!({"podManagementPolicy": "Parallel", "reserveOrdinals": [1]}),
    ))
    .await;
    env.settle(&[0, 2, 3]).await;
    env.edit(json!({"reserveOrdinals": null, "ordinals": {"start": 10}}))
        .await;
    env.settle(&[10, 11, 12]).await;
}
