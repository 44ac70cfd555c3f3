//! Rolling updates: in place with a partition, maxUnavailable, rollback.

use serde_json::{Value, json};

use crate::playground_statefulset::env::{
    Env, Version, image_of, name, ordinal, restarts, start_with, stateful_set,
};

/// The strategy of the in-place flow (fields both versions have). `maxUnavailable` above 1 needs
/// `Parallel`.
pub fn in_place_strategy(max_unavailable: usize) -> Value {
    let mut spec = json!({"template": {"spec": {"readinessGates": [{"conditionType": "InPlaceUpdateReady"}]}},
        "updateStrategy": {"rollingUpdate": {"podUpdatePolicy": "InPlaceIfPossible", "maxUnavailable": max_unavailable}}});
    if max_unavailable > 1 {
        spec["podManagementPolicy"] = json!("Parallel");
    }
    spec
}

/// From 5 settled pods on `nginx:1.0` with [`in_place_strategy`]: a new image with partition 3 updates
/// exactly ordinals 3 and 4 in place; partition 0 then updates the rest, never more than
/// `max_unavailable` not ready.
pub async fn updated_in_place_above_the_partition(env: &Env, max_unavailable: usize) {
    let before = env.identities().await;
    let requests = &env.pg.playground.api().requests;
    let counted = requests.snapshot();
    env.edit(
        json!({"template": {"spec": {"containers": [{"name": "main", "image": "nginx:2.0"}]}},
        "updateStrategy": {"rollingUpdate": {"partition": 3}}}),
    )
    .await;
    env.wait("ordinals 3 and 4 updated", 60, async || {
        let s = env.status().await;
        s["updatedReplicas"] == 2
            && s["readyReplicas"] == 5
            && env.full_status().await["updatedReadyReplicas"] == 2
    })
    .await;
    let pods = env.pods().await;
    let updated: Vec<i64> = pods
        .iter()
        .filter(|p| image_of(p, "main") == "nginx:2.0")
        .map(|p| ordinal(&name(p)))
        .collect();
    assert_eq!(updated, [3, 4]);
    for p in &pods {
        let want = if ordinal(&name(p)) >= 3 { 1 } else { 0 };
        assert_eq!(restarts(p, "main"), want, "{}", name(p));
    }
    assert_eq!(env.identities().await, before, "in place: same names and uids");
    let pod_writes = requests.writes_since(&counted, "", "pods", None)
        + requests.writes_since(&counted, "", "pods", Some("status"));
    // Kubelet status writes are the playground's own; count the controller's pod patches.
    let patches = requests.writes_since(&counted, "", "pods", None);
    println!("in-place update of 2 pods: {patches} pod writes, {pod_writes} with pods/status");
    assert!(patches <= 2 * 2, "{patches} pod writes for 2 pods in place");

    env.reset_seen().await;
    env.edit(json!({"updateStrategy": {"rollingUpdate": {"partition": 0}}}))
        .await;
    env.wait("all pods on nginx:2.0", 60, async || {
        env.settled(&[0, 1, 2, 3, 4]).await
            && env
                .pods()
                .await
                .iter()
                .all(|p| image_of(p, "main") == "nginx:2.0")
    })
    .await;
    assert_eq!(env.identities().await, before);
    let seen = env.seen();
    assert!(
        seen.not_ready <= max_unavailable,
        "{seen:?} with maxUnavailable {max_unavailable}"
    );
}

/// The strategy of the recreate flow.
pub fn recreate_strategy() -> Value {
    json!({"podManagementPolicy": "Parallel", "updateStrategy": {"rollingUpdate": {"maxUnavailable": 2}}})
}

/// From 5 settled pods on `nginx:1.0` with [`recreate_strategy`]: a new image recreates every pod,
/// never more than 2 not ready; the old image back reuses the first revision.
pub async fn recreated_then_rolled_back(env: &Env) {
    let first = env.status().await["updateRevision"].clone();
    env.reset_seen().await;
    env.edit(json!({"template": {"spec": {"containers": [{"name": "main", "image": "nginx:2.0"}]}}}))
        .await;
    env.wait("all pods recreated on nginx:2.0", 60, async || {
        env.settled(&[0, 1, 2, 3, 4]).await
            && env
                .pods()
                .await
                .iter()
                .all(|p| image_of(p, "main") == "nginx:2.0")
    })
    .await;
    let seen = env.seen();
    assert!(seen.not_ready <= 2, "{seen:?} with maxUnavailable 2");
    // Rollback: the first revision is reused.
    env.edit(json!({"template": {"spec": {"containers": [{"name": "main", "image": "nginx:1.0"}]}}}))
        .await;
    env.wait("rolled back", 60, async || {
        env.settled(&[0, 1, 2, 3, 4]).await && env.status().await["updateRevision"] == first
    })
    .await;
}

#[tokio::test]
async fn in_place_update_with_a_partition_updates_exactly_the_ordinals_above_it() {
    let env = start_with(stateful_set(Version::V1beta1, 5, in_place_strategy(2))).await;
    env.settle(&[0, 1, 2, 3, 4]).await;
    updated_in_place_above_the_partition(&env, 2).await;
}

#[tokio::test]
async fn a_recreate_rollout_never_has_more_than_max_unavailable_not_ready_and_rolls_back() {
    let env = start_with(stateful_set(Version::V1beta1, 5, recreate_strategy())).await;
    env.settle(&[0, 1, 2, 3, 4]).await;
    recreated_then_rolled_back(&env).await;
}
