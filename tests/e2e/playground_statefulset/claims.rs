//! Claims from volumeClaimTemplates, their retention, and the preDelete hook.
//!
//! v1beta1 only: `persistentVolumeClaimRetentionPolicy` and `lifecycle` do not exist in v1alpha1
//! (conversion keeps them in an annotation, which a v1alpha1 user does not write). Claims written as
//! v1alpha1 are covered by the kubectl flow.

use serde_json::json;

use crate::playground_statefulset::env::{Version, start_with, stateful_set};

fn with_claims(replicas: i32, extra: serde_json::Value) -> serde_json::Value {
    let mut spec = json!({"podManagementPolicy": "Parallel",
        "volumeClaimTemplates": [{"metadata": {"name": "data"},
            "spec": {"accessModes": ["ReadWriteOnce"], "resources": {"requests": {"storage": "1Gi"}}}}]});
    for (k, v) in extra.as_object().unwrap() {
        spec[k] = v.clone();
    }
    stateful_set(Version::V1beta1, replicas, spec)
}

fn claims(ordinals: &[i64]) -> Vec<String> {
    let mut names: Vec<String> = ordinals.iter().map(|o| format!("data-web-{o}")).collect();
    names.sort();
    names
}

#[tokio::test]
async fn when_scaled_delete_removes_the_claims_of_removed_ordinals_only() {
    let env = start_with(with_claims(
        5,
        json!({"persistentVolumeClaimRetentionPolicy": {"whenDeleted": "Retain", "whenScaled": "Delete"}}),
    ))
    .await;
    env.settle(&[0, 1, 2, 3, 4]).await;
    assert_eq!(env.claim_names().await, claims(&[0, 1, 2, 3, 4]));
    let pod = &env.pods().await[0];
    assert_eq!(
        pod["spec"]["volumes"]
            .as_array()
            .unwrap()
            .iter()
            .find(|v| v["name"] == "data")
            .unwrap()["persistentVolumeClaim"]["claimName"],
        "data-web-0"
    );
    env.edit(json!({"replicas": 2})).await;
    env.settle(&[0, 1]).await;
    env.wait("claims of 2, 3, 4 deleted", 30, async || {
        env.claim_names().await == claims(&[0, 1])
    })
    .await;
}

#[tokio::test]
async fn when_deleted_delete_removes_the_claims_with_the_set() {
    let env = start_with(with_claims(
        2,
        json!({"persistentVolumeClaimRetentionPolicy": {"whenDeleted": "Delete", "whenScaled": "Retain"}}),
    ))
    .await;
    env.settle(&[0, 1]).await;
    env.wait("claims owned by the set", 30, async || {
        let list = env.claims.list(&Default::default()).await.unwrap();
        list.items.len() == 2
            && list.items.iter().all(|c| {
                c.metadata
                    .owner_references
                    .iter()
                    .flatten()
                    .any(|o| o.kind == "StatefulSet")
            })
    })
    .await;
    env.delete_set().await;
    env.wait("claims deleted with the set", 30, async || {
        env.claim_names().await.is_empty()
    })
    .await;
}

#[tokio::test]
async fn a_pre_delete_hook_holds_a_pod_until_its_label_is_removed() {
    let mut set = stateful_set(
        Version::V1beta1,
        2,
        json!({"lifecycle": {"preDelete": {"labelsHandler": {"hold": "true"}}}}),
    );
    set["spec"]["template"]["metadata"]["labels"]["hold"] = json!("true");
    let env = start_with(set).await;
    env.settle(&[0, 1]).await;
    env.edit(json!({"replicas": 1})).await;
    env.wait("web-1 PreparingDelete", 30, async || {
        env.pods().await.iter().any(|p| {
            p["metadata"]["name"] == "web-1"
                && p["metadata"]["labels"]["lifecycle.apps.kruise.io/state"] == "PreparingDelete"
        })
    })
    .await;
    tokio::time::sleep(std::time::Duration::from_millis(500)).await;
    assert_eq!(env.ordinals().await, [0, 1], "held by the hook");
    env.pods
        .patch(
            "web-1",
            &Default::default(),
            &kube::api::Patch::Merge(json!({"metadata": {"labels": {"hold": null}}})),
        )
        .await
        .unwrap();
    env.wait("web-1 deleted", 30, async || env.ordinals().await == [0])
        .await;
}
