//! CloneSet end to end in the playground: the simulated API server (with its scheduler and kubelet)
//! calls kruise-rs's webhooks for every pod, and kruise-rs's CloneSet controller drives the pods.
//! A pod watch records every state the API server went through, so bounds like "never more than
//! maxUnavailable not ready" are checked on each intermediate state, not on samples.

use crate::common;

use std::{collections::BTreeMap, time::Duration};

use common::playground_cloneset::{
    INSTANCE_ID, NS, REVISION_HASH, STATE, clone_set, container, image_of, name, restarts, start_with,
};
use k8s_openapi::api::apps::v1::ControllerRevision;
use kube::{
    Api,
    api::{ListParams, Patch, PatchParams},
};
use serde_json::{Value, json};
#[tokio::test]
async fn five_pods_then_a_partitioned_in_place_update_then_the_rest() {
    let cs = clone_set(
        5,
        json!([container("main", "nginx:1.0")]),
        json!({"podUpdatePolicy": "InPlaceIfPossible", "maxUnavailable": 2}),
    );
    let env = start_with(Duration::from_millis(300), cs).await;
    env.settle(5).await;
    let revision = env.status().await["updateRevision"].as_str().unwrap().to_string();
    let revisions: Api<ControllerRevision> = Api::namespaced(env.pg.client.clone(), NS);
    revisions.get(&revision).await.expect("the revision is stored");
    let uid = env.cloneset().await["metadata"]["uid"].clone();
    let mut ids = std::collections::BTreeSet::new();
    for pod in env.pods().await {
        let id = pod["metadata"]["labels"][INSTANCE_ID].as_str().unwrap();
        assert_eq!(name(&pod), format!("web-{id}"));
        assert_eq!(id.len(), 5, "{id}");
        assert!(
            id.chars().all(|c| c.is_ascii_lowercase() || c.is_ascii_digit()),
            "{id}"
        );
        ids.insert(id.to_string());
        assert_eq!(pod["metadata"]["ownerReferences"][0]["uid"], uid);
        assert_eq!(pod["metadata"]["labels"][REVISION_HASH], revision.as_str());
        assert_eq!(pod["metadata"]["ownerReferences"][0]["kind"], "CloneSet");
        // The controller's gate, and the webhook's for pods of Kruise workloads.
        assert_eq!(
            pod["spec"]["readinessGates"],
            json!([{"conditionType": "InPlaceUpdateReady"}, {"conditionType": "KruisePodReady"}])
        );
        assert!(!pod["spec"]["nodeName"].as_str().unwrap_or_default().is_empty());
    }
    assert_eq!(ids.len(), 5, "instance ids are unique");
    let s = env.status().await;
    assert_eq!(
        (&s["expectedUpdatedReplicas"], &s["updatedAvailableReplicas"]),
        (&json!(5), &json!(5))
    );
    let before = env.identities().await;

    env.edit(
        json!({"template": {"spec": {"containers": [container("main", "nginx:2.0")]}},
        "updateStrategy": {"rollingUpdate": {"partition": 3}}}),
    )
    .await;
    env.wait("2 pods updated in place", 60, async || {
        let s = env.status().await;
        s["updatedReplicas"] == 2 && s["updatedReadyReplicas"] == 2 && s["readyReplicas"] == 5
    })
    .await;
    // Let any stray third update show before counting.
    tokio::time::sleep(Duration::from_millis(100)).await;
    let s = env.status().await;
    assert_eq!(
        (s["replicas"].clone(), s["expectedUpdatedReplicas"].clone()),
        (json!(5), json!(2))
    );
    assert_ne!(s["updateRevision"], s["currentRevision"]);
    assert_eq!(env.identities().await, before, "in place: same names and uids");
    let pods = env.pods().await;
    let updated: Vec<&Value> = pods
        .iter()
        .filter(|p| image_of(p, "main") == "nginx:2.0")
        .collect();
    assert_eq!(updated.len(), 2);
    for pod in &updated {
        assert_eq!(restarts(pod, "main"), 1);
        let state: Value =
            serde_json::from_str(pod["metadata"]["annotations"][STATE].as_str().unwrap()).unwrap();
        assert_eq!(state["revision"], s["updateRevision"], "{state}");
        assert!(
            state["lastContainerStatuses"]["main"]["imageID"].is_string(),
            "{state}"
        );
    }
    assert!(
        pods.iter()
            .filter(|p| image_of(p, "main") == "nginx:1.0")
            .all(|p| restarts(p, "main") == 0)
    );

    env.reset_extremes().await;
    env.edit(json!({"updateStrategy": {"rollingUpdate": {"partition": 0}}}))
        .await;
    env.wait("all pods updated", 60, async || {
        env.rolled_out(5, "nginx:2.0").await
    })
    .await;
    let worst = env.extremes();
    assert!(worst.not_ready <= 2, "{worst:?} with maxUnavailable 2");
    assert_eq!(worst.pods, 5, "in place: no pod created");
    assert_eq!(env.identities().await, before);
    assert!(env.pods().await.iter().all(|p| restarts(p, "main") == 1));
    let reasons = env.event_reasons().await;
    assert!(reasons.iter().any(|r| r == "SuccessfulCreate"), "{reasons:?}");
    assert!(
        reasons.iter().any(|r| r == "SuccessfulUpdatePodInPlace"),
        "{reasons:?}"
    );
}

#[tokio::test]
async fn recreate_with_max_surge_never_exceeds_replicas_plus_one() {
    let cs = clone_set(
        5,
        json!([container("main", "nginx:1.0")]),
        // maxUnavailable 0 is refused in v1beta1 even with a surge, as OpenKruise's webhook does.
        json!({"podUpdatePolicy": "ReCreate", "maxSurge": 1, "maxUnavailable": 1}),
    );
    let env = start_with(Duration::from_millis(100), cs).await;
    env.settle(5).await;
    let before = env.identities().await;
    env.reset_extremes().await;
    env.edit(json!({"template": {"spec": {"containers": [container("main", "nginx:2.0")]}}}))
        .await;
    env.wait("all pods recreated", 90, async || {
        env.rolled_out(5, "nginx:2.0").await
    })
    .await;
    let most = env.extremes();
    assert!(most.pods <= 6, "{most:?} with replicas 5 and maxSurge 1");
    assert!(most.pods == 6, "the surge pod was used: {most:?}");
    let after = env.identities().await;
    assert!(
        after.keys().all(|n| !before.contains_key(n)),
        "every pod recreated"
    );
}

#[tokio::test]
async fn pods_to_delete_replaces_the_named_pod() {
    let cs = clone_set(
        3,
        json!([container("main", "nginx:1.0")]),
        json!({"podUpdatePolicy": "InPlaceIfPossible"}),
    );
    let env = start_with(Duration::from_millis(50), cs).await;
    env.settle(3).await;
    let victim = name(&env.pods().await[0]);
    env.edit(json!({"scaleStrategy": {"podsToDelete": [victim]}}))
        .await;
    env.wait("the named pod replaced", 60, async || {
        env.settled(3).await && !env.identities().await.contains_key(&victim)
    })
    .await;
    env.wait("podsToDelete emptied", 10, async || {
        env.cloneset().await["spec"]["scaleStrategy"]["podsToDelete"]
            .as_array()
            .is_none_or(Vec::is_empty)
    })
    .await;
}

#[tokio::test]
async fn scales_five_to_ten_to_two_through_the_scale_subresource() {
    let cs = clone_set(
        5,
        json!([container("main", "nginx:1.0")]),
        json!({"podUpdatePolicy": "InPlaceIfPossible"}),
    );
    let env = start_with(Duration::from_millis(50), cs).await;
    env.settle(5).await;
    let scale = |n: i32| json!({"spec": {"replicas": n}});
    env.sets
        .patch_scale("web", &PatchParams::default(), &Patch::Merge(scale(10)))
        .await
        .unwrap();
    env.settle(10).await;
    let read = env.sets.get_scale("web").await.unwrap();
    assert_eq!(read.status.as_ref().map(|s| s.replicas), Some(10));
    assert_eq!(
        read.status.and_then(|s| s.selector).as_deref(),
        Some("app=web"),
        "the scale subresource's selector comes from status.labelSelector"
    );
    let ten = env.identities().await;
    let requests = &env.pg.playground.api().requests;
    let before = requests.snapshot();
    env.sets
        .patch_scale("web", &PatchParams::default(), &Patch::Merge(scale(2)))
        .await
        .unwrap();
    env.settle(2).await;
    let deletes: u64 = requests
        .snapshot()
        .iter()
        .filter(|(k, _)| k.method == "DELETE" && k.group.is_empty() && k.resource == "pods")
        .map(|(k, n)| n - before.get(k).copied().unwrap_or(0))
        .sum();
    assert_eq!(deletes, 8, "exactly the pods above 2 are deleted");
    let two = env.identities().await;
    assert!(
        two.iter().all(|(n, uid)| ten.get(n) == Some(uid)),
        "scale-down keeps survivors"
    );
}

#[tokio::test]
async fn ordered_containers_update_in_place_higher_priority_first() {
    // `Ordered`: the webhook gives the first container the highest launch priority and a barrier.
    let mut cs = clone_set(
        1,
        json!([container("sidecar", "envoy:1.0"), container("main", "nginx:1.0")]),
        json!({"podUpdatePolicy": "InPlaceIfPossible"}),
    );
    cs["spec"]["template"]["metadata"]["annotations"] =
        json!({"apps.kruise.io/container-launch-priority": "Ordered"});
    let env = start_with(Duration::from_millis(300), cs).await;
    env.settle(1).await;
    let mut sidecar_alone = false;
    env.edit(json!({"template": {"spec": {"containers": [
        container("sidecar", "envoy:2.0"), container("main", "nginx:2.0")]}}}))
        .await;
    env.wait("both containers updated", 60, async || {
        let pods = env.pods().await;
        let pod = &pods[0];
        sidecar_alone |= image_of(pod, "sidecar") == "envoy:2.0" && image_of(pod, "main") == "nginx:1.0";
        env.settled(1).await
            && image_of(pod, "main") == "nginx:2.0"
            && image_of(pod, "sidecar") == "envoy:2.0"
    })
    .await;
    assert!(
        sidecar_alone,
        "the sidecar (higher priority) was updated first, alone"
    );
    let pod = &env.pods().await[0];
    let state: Value = serde_json::from_str(pod["metadata"]["annotations"][STATE].as_str().unwrap()).unwrap();
    let batches: Vec<Value> = state["containerBatchesRecord"]
        .as_array()
        .unwrap()
        .iter()
        .map(|b| b["containers"].clone())
        .collect();
    assert_eq!(batches, vec![json!(["sidecar"]), json!(["main"])], "{state}");
    assert_eq!((restarts(pod, "sidecar"), restarts(pod, "main")), (1, 1));
}

#[tokio::test]
async fn rollback_reuses_the_old_revision_and_leaves_its_pods_alone() {
    let cs = clone_set(
        5,
        json!([container("main", "nginx:1.0")]),
        json!({"podUpdatePolicy": "InPlaceIfPossible"}),
    );
    let env = start_with(Duration::from_millis(50), cs).await;
    env.settle(5).await;
    let old_revision = env.status().await["updateRevision"].as_str().unwrap().to_string();
    env.edit(
        json!({"template": {"spec": {"containers": [container("main", "nginx:2.0")]}},
        "updateStrategy": {"rollingUpdate": {"partition": 3}}}),
    )
    .await;
    env.wait("2 pods on the new revision", 60, async || {
        let s = env.status().await;
        s["updatedReplicas"] == 2 && s["updatedReadyReplicas"] == 2 && s["readyReplicas"] == 5
    })
    .await;
    let old_pods: BTreeMap<String, Value> = env
        .pods()
        .await
        .into_iter()
        .filter(|p| p["metadata"]["labels"][REVISION_HASH] == old_revision.as_str())
        .map(|p| (name(&p), p))
        .collect();
    assert_eq!(old_pods.len(), 3);
    let revisions: Api<ControllerRevision> = Api::namespaced(env.pg.client.clone(), NS);
    let count = async || revisions.list(&ListParams::default()).await.unwrap().items.len();
    let revisions_before = count().await;

    env.edit(
        json!({"template": {"spec": {"containers": [container("main", "nginx:1.0")]}},
        "updateStrategy": {"rollingUpdate": {"partition": 0}}}),
    )
    .await;
    env.wait("rolled back", 60, async || {
        env.settled(5).await && env.status().await["updateRevision"] == old_revision.as_str()
    })
    .await;
    assert!(
        env.pods()
            .await
            .iter()
            .all(|p| image_of(p, "main") == "nginx:1.0")
    );
    assert_eq!(
        count().await,
        revisions_before,
        "the old revision is reused, no new one"
    );
    for pod in env.pods().await {
        if let Some(old) = old_pods.get(&name(&pod)) {
            assert_eq!(
                pod["metadata"]["resourceVersion"],
                old["metadata"]["resourceVersion"],
                "{} was on the old revision and must not be touched",
                name(&pod)
            );
        }
    }
}

#[tokio::test]
async fn in_place_rollout_of_100_pods_writes_at_most_two_pod_objects_per_pod() {
    let cs = clone_set(
        100,
        json!([container("main", "nginx:1.0")]),
        json!({"podUpdatePolicy": "InPlaceIfPossible", "maxUnavailable": "50%"}),
    );
    let env = start_with(Duration::from_millis(20), cs).await;
    let clock = std::time::Instant::now();
    env.wait("100 ready pods", 180, async || env.settled(100).await)
        .await;
    let created = clock.elapsed();
    let requests = &env.pg.playground.api().requests;
    let before = requests.snapshot();
    env.edit(json!({"template": {"spec": {"containers": [container("main", "nginx:2.0")]}}}))
        .await;
    env.wait("100 pods updated", 180, async || {
        env.rolled_out(100, "nginx:2.0").await
    })
    .await;
    println!(
        "100 pods created in {created:?}, updated in {:?}",
        clock.elapsed() - created
    );
    let pod_writes = requests.writes_since(&before, "", "pods", None);
    let pod_status_writes = requests.writes_since(&before, "", "pods", Some("status"));
    let cloneset_writes = requests.writes_since(&before, "apps.kruise.io", "clonesets", None);
    let status_writes = requests.writes_since(&before, "apps.kruise.io", "clonesets", Some("status"));
    println!(
        "100-pod in-place rollout in the playground: {pod_writes} pod writes, {pod_status_writes} \
         pods/status writes, {status_writes} CloneSet status writes, {cloneset_writes} CloneSet writes \
         (the test's own edit included)"
    );
    assert!(pod_writes <= 200, "{pod_writes} pod writes for 100 pods");
    assert!(pod_status_writes <= 200, "{pod_status_writes} pods/status writes");
    assert_eq!(cloneset_writes, 1, "only the test's edit");
    assert!(env.pods().await.iter().all(|p| restarts(p, "main") == 1));
}

#[tokio::test]
async fn each_pod_gets_its_own_claim_which_a_replacement_reuses_and_a_scale_down_deletes() {
    let mut cs = clone_set(
        2,
        json!([{"name": "main", "image": "nginx:1.0",
            "volumeMounts": [{"name": "data", "mountPath": "/data"}]}]),
        json!({"podUpdatePolicy": "InPlaceIfPossible"}),
    );
    // v1beta1 reuses the claims of pods deleted by someone else only when asked (OpenKruise's default
    // is false; v1alpha1's `disablePVCReuse` defaults to reuse).
    cs["spec"]["scaleStrategy"] = json!({"enablePVCReuse": true});
    cs["spec"]["volumeClaimTemplates"] = json!([{"metadata": {"name": "data"},
        "spec": {"accessModes": ["ReadWriteOnce"], "resources": {"requests": {"storage": "1Gi"}}}}]);
    let env = start_with(Duration::from_millis(50), cs).await;
    env.settle(2).await;
    let claims: Api<k8s_openapi::api::core::v1::PersistentVolumeClaim> =
        Api::namespaced(env.pg.client.clone(), NS);
    let claim_names = async || {
        let mut names: Vec<String> = claims
            .list(&ListParams::default())
            .await
            .unwrap()
            .items
            .into_iter()
            .filter(|c| c.metadata.deletion_timestamp.is_none())
            .filter_map(|c| c.metadata.name)
            .collect();
        names.sort();
        names
    };
    let mut expected = Vec::new();
    for pod in env.pods().await {
        let id = pod["metadata"]["labels"][INSTANCE_ID]
            .as_str()
            .unwrap()
            .to_string();
        let claim = format!("data-web-{id}");
        let volume = pod["spec"]["volumes"]
            .as_array()
            .unwrap()
            .iter()
            .find(|v| v["name"] == "data")
            .cloned()
            .unwrap();
        assert_eq!(volume["persistentVolumeClaim"]["claimName"], claim.as_str());
        let stored = claims.get(&claim).await.unwrap();
        assert_eq!(stored.metadata.labels.unwrap()[INSTANCE_ID], id);
        expected.push(claim);
    }
    expected.sort();
    assert_eq!(claim_names().await, expected);

    // A pod deleted by someone else is replaced under the same id, on the same claim.
    let victim = name(&env.pods().await[0]);
    let victim_uid = env.identities().await[&victim].clone();
    env.pods.delete(&victim, &Default::default()).await.unwrap();
    env.wait("the pod replaced under its id", 60, async || {
        env.settled(2).await
            && env
                .identities()
                .await
                .get(&victim)
                .is_some_and(|uid| *uid != victim_uid)
    })
    .await;
    assert_eq!(claim_names().await, expected, "the claim was reused, no new one");

    // A scale-down deletes the pod and its claim.
    env.edit(json!({"replicas": 1})).await;
    env.settle(1).await;
    let survivor = env.pods().await[0]["metadata"]["labels"][INSTANCE_ID]
        .as_str()
        .unwrap()
        .to_string();
    env.wait("the removed pod's claim deleted", 30, async || {
        claim_names().await == vec![format!("data-web-{survivor}")]
    })
    .await;

    // Without reuse, a pod deleted by someone else takes its claim along; the replacement gets a new id.
    env.edit(json!({"scaleStrategy": {"enablePVCReuse": false}}))
        .await;
    env.pods
        .delete(&format!("web-{survivor}"), &Default::default())
        .await
        .unwrap();
    env.wait("a replacement with a new id and claim", 60, async || {
        let pods = env.pods().await;
        let ids: Vec<String> = pods
            .iter()
            .filter_map(|p| p["metadata"]["labels"][INSTANCE_ID].as_str().map(str::to_string))
            .collect();
        env.settled(1).await
            && ids.len() == 1
            && ids[0] != survivor
            && claim_names().await == vec![format!("data-web-{}", ids[0])]
    })
    .await;
}
