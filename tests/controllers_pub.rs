//! The PodUnavailableBudget status controller against the in-memory API, reading pods and workloads
//! through the same cluster cache the webhooks use.

#[path = "support/fake_api.rs"]
mod fake_api;

use std::{sync::Arc, time::Duration};

use fake_api::FakeApi;
use k8s_openapi::jiff::{SignedDuration, Timestamp};
use kruise_rs::{
    cluster::ClusterCache,
    controllers::{self, Context},
};
use serde_json::{Value, json};

const PODS: &str = "/api/v1/namespaces/ns/pods";
const PUB: &str = "/apis/policy.kruise.io/v1beta1/namespaces/ns/podunavailablebudgets/web-pub";

fn ago(seconds: i64) -> String {
    (Timestamp::now() - SignedDuration::from_secs(seconds))
        .strftime("%Y-%m-%dT%H:%M:%SZ")
        .to_string()
}

/// A ReplicaSet of 3 with three running, ready pods.
fn workload(api: &FakeApi) {
    api.put(
        "/apis/apps/v1/namespaces/ns/replicasets/web",
        json!({"apiVersion": "apps/v1", "kind": "ReplicaSet",
            "metadata": {"name": "web", "namespace": "ns", "uid": "rs-uid"},
            "spec": {"replicas": 3, "selector": {"matchLabels": {"app": "web"}},
                "template": {"metadata": {"labels": {"app": "web"}}, "spec": {"containers": [{"name": "main"}]}}}}),
    );
    for name in ["web-a", "web-b", "web-c"] {
        api.put(
            &format!("{PODS}/{name}"),
            json!({"apiVersion": "v1", "kind": "Pod",
                "metadata": {"name": name, "namespace": "ns", "labels": {"app": "web"},
                    "ownerReferences": [{"apiVersion": "apps/v1", "kind": "ReplicaSet", "name": "web",
                        "uid": "rs-uid", "controller": true}]},
                "spec": {"containers": [{"name": "main", "image": "nginx:1.25"}]},
                "status": {"phase": "Running", "conditions": [{"type": "Ready", "status": "True"}],
                    "containerStatuses": [{"name": "main", "image": "nginx:1.25", "ready": true,
                        "imageID": "docker-pullable://nginx@sha256:1", "restartCount": 0}]}}),
        );
    }
}

fn budget(status: Value) -> Value {
    json!({"apiVersion": "policy.kruise.io/v1beta1", "kind": "PodUnavailableBudget",
        "metadata": {"name": "web-pub", "namespace": "ns", "generation": 1},
        "spec": {"selector": {"matchLabels": {"app": "web"}}, "maxUnavailable": 1},
        "status": status})
}

async fn start(api: &FakeApi) -> tokio::task::JoinHandle<()> {
    let client = api.client();
    let cache = ClusterCache::start(&client, "kruise-system");
    tokio::time::timeout(Duration::from_secs(5), cache.wait_until_ready())
        .await
        .expect("caches synced")
        .unwrap();
    tokio::spawn(controllers::pub_status::run(Context {
        client,
        view: Arc::new(cache),
    }))
}

/// Polls the budget's status until `check` holds, for up to `seconds`.
async fn status_when(api: &FakeApi, seconds: u64, check: impl Fn(&Value) -> bool) -> Value {
    for _ in 0..seconds * 20 {
        let status = api.get(PUB).unwrap()["status"].clone();
        if check(&status) {
            return status;
        }
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    panic!("status never matched: {}", api.get(PUB).unwrap()["status"]);
}

#[tokio::test]
async fn status_is_computed_and_stale_disruptions_are_pruned_on_time() {
    let api = FakeApi::default();
    workload(&api);
    let stale = ago(30);
    let recent = ago(18); // expires in about 2s
    api.put(
        PUB,
        budget(
            json!({"unavailableAllowed": 0, "currentAvailable": 0, "desiredAvailable": 0,
            "totalReplicas": 0, "disruptedPods": {"web-a": stale, "web-b": recent, "deleted-pod": ago(1)}}),
        ),
    );
    let task = start(&api).await;

    let status = status_when(&api, 5, |s| s["totalReplicas"] == 3).await;
    assert_eq!(
        status,
        json!({"observedGeneration": 1, "disruptedPods": {"web-b": recent},
            "unavailableAllowed": 0, "currentAvailable": 2, "desiredAvailable": 2, "totalReplicas": 3}),
        "web-a's 30s-old record and the record of a pod that no longer exists are pruned; web-b is still disrupted"
    );
    // Pods created before the budget are annotated with it.
    let pod = api.get(&format!("{PODS}/web-a")).unwrap();
    assert_eq!(
        pod["metadata"]["annotations"]["pub.kruise.io/related-pub"],
        "web-pub"
    );
    assert_eq!(pod["metadata"]["annotations"]["kruise.io/related-pub"], "web-pub");

    // The controller comes back when web-b's record expires (20s after it was made), with no other event.
    let status = status_when(&api, 6, |s| s["disruptedPods"].is_null()).await;
    assert_eq!(
        (&status["currentAvailable"], &status["unavailableAllowed"]),
        (&json!(3), &json!(1))
    );

    // A pod turning unready is counted at once.
    api.modify(&format!("{PODS}/web-c"), |pod| {
        pod["status"]["conditions"][0]["status"] = json!("False");
    });
    let status = status_when(&api, 5, |s| s["currentAvailable"] == 2).await;
    assert_eq!(status["unavailableAllowed"], 0);
    task.abort();
}

#[tokio::test]
async fn a_concurrent_webhook_write_is_never_overwritten() {
    let api = FakeApi::default();
    workload(&api);
    api.put(
        PUB,
        budget(json!({"unavailableAllowed": 0, "currentAvailable": 0, "desiredAvailable": 0, "totalReplicas": 0})),
    );
    // The first status write loses the race: just before it lands, the webhook admits the eviction of
    // web-c (records it and spends the budget).
    api.conflict_once.lock().unwrap().insert(format!("{PUB}/status"));
    let evicted_at = ago(0);
    let at = evicted_at.clone();
    *api.before_conflict.lock().unwrap() = Some(Box::new(move |api: &FakeApi| {
        api.modify(PUB, |b| {
            b["status"] = json!({"observedGeneration": 1, "disruptedPods": {"web-c": at},
                "unavailableAllowed": 0, "currentAvailable": 3, "desiredAvailable": 2, "totalReplicas": 3});
        });
    }));
    let task = start(&api).await;
    let status = status_when(&api, 5, |s| s["currentAvailable"] == 2).await;
    assert_eq!(
        status,
        json!({"observedGeneration": 1, "disruptedPods": {"web-c": evicted_at},
            "unavailableAllowed": 0, "currentAvailable": 2, "desiredAvailable": 2, "totalReplicas": 3}),
        "the webhook's record survives and web-c is not counted available"
    );
    assert!(
        api.conflict_once.lock().unwrap().is_empty(),
        "the conflict happened"
    );
    task.abort();
}

#[tokio::test]
async fn a_target_ref_budget_counts_the_deployment_pods_through_its_replica_sets() {
    let api = FakeApi::default();
    workload(&api);
    api.modify("/apis/apps/v1/namespaces/ns/replicasets/web", |rs| {
        rs["metadata"]["ownerReferences"] = json!([{"apiVersion": "apps/v1", "kind": "Deployment",
            "name": "web", "uid": "deploy-uid", "controller": true}]);
    });
    api.put(
        "/apis/apps/v1/namespaces/ns/deployments/web",
        json!({"apiVersion": "apps/v1", "kind": "Deployment",
            "metadata": {"name": "web", "namespace": "ns", "uid": "deploy-uid"},
            "spec": {"replicas": 4, "selector": {"matchLabels": {"app": "web"}},
                "template": {"metadata": {"labels": {"app": "web"}}, "spec": {"containers": [{"name": "main"}]}}}}),
    );
    let mut pub_object = budget(Value::Null);
    pub_object["spec"] = json!({"targetRef": {"apiVersion": "apps/v1", "kind": "Deployment", "name": "web"},
        "minAvailable": "50%"});
    api.put(PUB, pub_object);
    let task = start(&api).await;
    let status = status_when(&api, 5, |s| !s.is_null()).await;
    assert_eq!(
        status,
        json!({"observedGeneration": 1, "unavailableAllowed": 1, "currentAvailable": 3,
            "desiredAvailable": 2, "totalReplicas": 4})
    );
    // Scaling the Deployment re-counts (triggered by the Deployment watch).
    api.modify("/apis/apps/v1/namespaces/ns/deployments/web", |d| {
        d["spec"]["replicas"] = json!(6)
    });
    let status = status_when(&api, 5, |s| s["totalReplicas"] == 6).await;
    assert_eq!(
        (&status["desiredAvailable"], &status["unavailableAllowed"]),
        (&json!(3), &json!(0))
    );
    task.abort();
}
