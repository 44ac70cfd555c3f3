//! Rolling updates: in place with a partition, maxUnavailable, rollback.

use serde_json::json;

use crate::env::{image_of, name, ordinal, restarts, start_with, stateful_set};

#[tokio::test]
async fn in_place_update_with_a_partition_updates_exactly_the_ordinals_above_it() {
    let env = start_with(stateful_set(
        5,
        json!({"podManagementPolicy": "Parallel",
            "template": {"spec": {"readinessGates": [{"conditionType": "InPlaceUpdateReady"}]}},
            "updateStrategy": {"rollingUpdate": {"podUpdatePolicy": "InPlaceIfPossible", "maxUnavailable": 2}}}),
    ))
    .await;
    env.settle(&[0, 1, 2, 3, 4]).await;
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
        s["updatedReplicas"] == 2 && s["updatedReadyReplicas"] == 2 && s["readyReplicas"] == 5
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
    assert!(seen.not_ready <= 2, "{seen:?} with maxUnavailable 2");
}

#[tokio::test]
async fn a_recreate_rollout_never_has_more_than_max_unavailable_not_ready_and_rolls_back() {
    let env = start_with(stateful_set(
        5,
        json!({"podManagementPolicy": "Parallel",
            "updateStrategy": {"rollingUpdate": {"maxUnavailable": 2}}}),
    ))
    .await;
    env.settle(&[0, 1, 2, 3, 4]).await;
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
