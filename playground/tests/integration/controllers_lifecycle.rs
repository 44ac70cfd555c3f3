//! What happens to claims and pods when their owners or nodes go: a StatefulSet's
//! `persistentVolumeClaimRetentionPolicy` (`pkg/controller/statefulset/stateful_set_utils.go`,
//! `claimOwnerMatchesSetAndPod`) and the `NoExecute` taint eviction of pods on a NotReady node
//! (`pkg/controller/tainteviction`, with the tolerations of the `DefaultTolerationSeconds` admission
//! plugin), driven with kube-rs clients.

use crate::common;

use k8s_openapi::api::apps::v1::StatefulSet;
use k8s_openapi::api::core::v1::{Node, PersistentVolumeClaim, Pod};
use kube::api::{Api, DeleteParams, Patch, PatchParams, PostParams};
use serde_json::{Value, json};

use common::{start_nodes as start, value};

#[tokio::test]
async fn claims_of_scaled_away_pods_go_with_them_when_scaled_is_delete() {
    let pg = start(2).await;
    let client = pg.client().await.unwrap();
    let sets: Api<StatefulSet> = Api::default_namespaced(client.clone());
    let claims: Api<PersistentVolumeClaim> = Api::default_namespaced(client.clone());
    let set: StatefulSet = serde_json::from_value(json!({
        "metadata": {"name": "db"},
        "spec": {"replicas": 2, "serviceName": "db", "podManagementPolicy": "Parallel",
                 "persistentVolumeClaimRetentionPolicy": {"whenScaled": "Delete", "whenDeleted": "Retain"},
                 "selector": {"matchLabels": {"app": "db"}},
                 "template": {"metadata": {"labels": {"app": "db"}},
                              "spec": {"containers": [{"name": "db", "image": "postgres:16"}]}},
                 "volumeClaimTemplates": [{"metadata": {"name": "data"},
                     "spec": {"accessModes": ["ReadWriteOnce"], "resources": {"requests": {"storage": "1Gi"}}}}]}
    }))
    .unwrap();
    sets.create(&PostParams::default(), &set).await.unwrap();
    common::eventually("2 ready", || async {
        let s = value(&sets.get("db").await.unwrap());
        (s["status"]["readyReplicas"] == 2).then_some(())
    })
    .await;
    let owners = |c: &Value| c["metadata"]["ownerReferences"].clone();
    assert_eq!(
        owners(&value(&claims.get("data-db-1").await.unwrap())),
        Value::Null
    );
    sets.patch(
        "db",
        &PatchParams::default(),
        &Patch::Merge(json!({"spec": {"replicas": 1}})),
    )
    .await
    .unwrap();
    common::eventually("data-db-1 deleted with db-1", || async {
        claims.get_opt("data-db-1").await.unwrap().is_none().then_some(())
    })
    .await;
    // whenDeleted: Retain — the set's deletion leaves the remaining claim.
    sets.delete("db", &DeleteParams::default()).await.unwrap();
    let pods: Api<Pod> = Api::default_namespaced(client.clone());
    common::eventually("db-0 gone", || async {
        pods.get_opt("db-0").await.unwrap().is_none().then_some(())
    })
    .await;
    let kept = value(&claims.get("data-db-0").await.unwrap());
    assert_eq!(owners(&kept), Value::Null);
}

#[tokio::test]
async fn pods_are_evicted_from_not_ready_nodes_per_their_tolerations() {
    let pg = start(2).await;
    let client = pg.client().await.unwrap();
    let pods: Api<Pod> = Api::default_namespaced(client.clone());
    let nodes: Api<Node> = Api::all(client.clone());
    common::eventually("2 nodes", || async {
        nodes.get_opt("playground-node-2").await.unwrap().map(|_| ())
    })
    .await;
    let pod = |name: &str, tolerations: Value| -> Pod {
        serde_json::from_value(json!({"metadata": {"name": name},
            "spec": {"nodeName": "playground-node-2", "tolerations": tolerations,
                     "containers": [{"name": "c", "image": "nginx:1.27"}]}}))
        .unwrap()
    };
    let not_ready = |seconds: Value| {
        json!([{"key": "node.kubernetes.io/not-ready", "operator": "Exists",
        "effect": "NoExecute", "tolerationSeconds": seconds}])
    };
    let pp = PostParams::default();
    pods.create(&pp, &pod("plain", json!([]))).await.unwrap();
    pods.create(&pp, &pod("brief", not_ready(json!(1))))
        .await
        .unwrap();
    pods.create(&pp, &pod("forever", not_ready(Value::Null)))
        .await
        .unwrap();
    // The admission plugin's defaults: 300 s for both taints, unless already tolerated.
    let plain = value(&pods.get("plain").await.unwrap());
    assert_eq!(
        plain["spec"]["tolerations"],
        json!([
            {"key": "node.kubernetes.io/not-ready", "operator": "Exists", "effect": "NoExecute", "tolerationSeconds": 300},
            {"key": "node.kubernetes.io/unreachable", "operator": "Exists", "effect": "NoExecute", "tolerationSeconds": 300}])
    );
    let forever = value(&pods.get("forever").await.unwrap());
    assert_eq!(forever["spec"]["tolerations"].as_array().unwrap().len(), 2);

    let not_ready_status = json!({"status": {"conditions": [{"type": "Ready", "status": "False", "reason": "KubeletNotReady"}]}});
    nodes
        .patch_status(
            "playground-node-2",
            &PatchParams::default(),
            &Patch::Merge(not_ready_status),
        )
        .await
        .unwrap();
    common::eventually("brief evicted after its second", || async {
        pods.get_opt("brief").await.unwrap().is_none().then_some(())
    })
    .await;
    assert!(pods.get_opt("plain").await.unwrap().is_some(), "300 s not over");
    assert!(pods.get_opt("forever").await.unwrap().is_some());
    // A taint nobody tolerates evicts at once; a toleration without seconds does not help.
    let taints = json!({"spec": {"taints": [{"key": "dedicated", "value": "x", "effect": "NoExecute"}]}});
    nodes
        .patch(
            "playground-node-2",
            &PatchParams::default(),
            &Patch::Merge(taints),
        )
        .await
        .unwrap();
    common::eventually("plain and forever evicted", || async {
        let left = (
            pods.get_opt("plain").await.unwrap(),
            pods.get_opt("forever").await.unwrap(),
        );
        matches!(left, (None, None)).then_some(())
    })
    .await;
}
