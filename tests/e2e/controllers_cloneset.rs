//! The CloneSet controller alone against the playground (one simulated node with its kubelet),
//! through the webhooks' cluster cache: how it copes with a lost status-write race, failed creates
//! and an orphan pod. Its rollouts, scaling, partitions and write bounds are proven end to end, with
//! kruise-rs's webhooks, in `playground_cloneset.rs`.

use crate::common;

use std::{sync::Arc, time::Duration};

use common::cluster::{self, CLONESETS, Cluster, EVENTS, PODS, Setup};
use kruise_playground::{api::UpdateMode, faults::Target};
use kruise_rs::{
    cluster::ClusterCache,
    controllers::{self, Context},
};
use serde_json::{Value, json};
use tokio::task::JoinHandle;

struct Env {
    cluster: Cluster,
    controller: JoinHandle<()>,
}

impl Drop for Env {
    fn drop(&mut self) {
        self.controller.abort();
    }
}

/// A CloneSet `web` of `replicas` running nginx:1.0, updated in place.
fn clone_set(replicas: i32) -> Value {
    json!({"apiVersion": "apps.kruise.io/v1beta1", "kind": "CloneSet",
        "metadata": {"name": "web", "namespace": "ns"},
        "spec": {"replicas": replicas, "selector": {"matchLabels": {"app": "web"}},
            "revisionHistoryLimit": 10, "scaleStrategy": {},
            "template": {"metadata": {"labels": {"app": "web"}},
                "spec": {"containers": [{"name": "main", "image": "nginx:1.0"}]}},
            "updateStrategy": {"type": "RollingUpdate",
                "rollingUpdate": {"podUpdatePolicy": "InPlaceIfPossible"}}}})
}

/// A cluster with the CloneSet `web` of `replicas`; `arm` runs before the controller starts.
async fn start(replicas: i32, arm: impl FnOnce(&Cluster)) -> Env {
    let cluster = cluster::start_with(Setup {
        nodes: 1,
        kubelet_delay: Duration::ZERO,
    })
    .await;
    cluster.namespace("ns").await;
    arm(&cluster);
    cluster.create(CLONESETS, clone_set(replicas)).await;
    let cache = ClusterCache::start(&cluster.client, "kruise-system");
    tokio::time::timeout(Duration::from_secs(5), cache.wait_until_ready())
        .await
        .unwrap()
        .unwrap();
    let controller = tokio::spawn(controllers::cloneset::run(Context {
        client: cluster.client.clone(),
        view: Arc::new(cache),
        uninjected_pods: Default::default(),
        pass_durations: kruise_rs::server::metrics::pass_durations(),
        settings: Default::default(),
        clock: Default::default(),
        tuning: Default::default(),
    }));
    Env { cluster, controller }
}

fn cloneset(cluster: &Cluster) -> Value {
    cluster.get(CLONESETS, "ns", "web").unwrap()
}

fn ready(pod: &Value) -> bool {
    pod["status"]["conditions"]
        .as_array()
        .is_some_and(|cs| cs.iter().any(|c| c["type"] == "Ready" && c["status"] == "True"))
}

/// All `replicas` pods exist, are Ready and the status says so (updated, ready and available).
fn settled(cluster: &Cluster, replicas: i64) -> bool {
    let cs = cloneset(cluster);
    let s = &cs["status"];
    let pods = cluster.list(PODS, "ns");
    pods.len() as i64 == replicas
        && pods.iter().all(ready)
        && s["replicas"] == replicas
        && s["readyReplicas"] == replicas
        && s["availableReplicas"] == replicas
        && s["updatedReplicas"] == replicas
        && s["updatedReadyReplicas"] == replicas
        && s["observedGeneration"] == cs["metadata"]["generation"]
        && s["updateRevision"] == s["currentRevision"]
}

async fn settle(cluster: &Cluster, replicas: i64) {
    cluster::eventually(&format!("{replicas} ready pods"), 30, || {
        settled(cluster, replicas).then_some(())
    })
    .await;
}

#[tokio::test]
async fn a_status_conflict_is_planned_again_never_overwritten() {
    let env = start(5, |_| {}).await;
    let cluster = &env.cluster;
    settle(cluster, 5).await;
    // Another writer scales to 3 just before our next status write lands: it must be refused, and the
    // controller must plan again from the new spec.
    let other = cluster.interleaved(CLONESETS, "ns", "web", UpdateMode::Main, |cs| {
        cs["spec"]["replicas"] = json!(3)
    });
    let status_write = Target::writes("apps.kruise.io", "clonesets")
        .object("ns", "web")
        .subresource("status");
    cluster.faults.conflict_once(status_write, Some(other));
    cluster
        .modify(CLONESETS, "ns", "web", |cs| cs["spec"]["replicas"] = json!(4))
        .await;
    settle(cluster, 3).await;
    assert_eq!(cluster.faults.armed(), 0, "the conflict was injected");
    assert_eq!(cloneset(cluster)["spec"]["replicas"], 3);
}

#[tokio::test]
async fn failed_creates_are_forgotten_and_retried() {
    let creates = Target::writes("", "pods").creates();
    let env = start(3, |cluster| cluster.faults.fail(creates.clone())).await;
    let cluster = &env.cluster;
    cluster::eventually("a FailedCreate event", 10, || {
        cluster
            .list(EVENTS, "ns")
            .iter()
            .any(|e| e["reason"] == "FailedCreate")
            .then_some(())
    })
    .await;
    assert!(cluster.list(PODS, "ns").is_empty());
    cluster.faults.clear(&creates);
    settle(cluster, 3).await;
}

#[tokio::test]
async fn adopts_an_orphan_that_matches_the_selector() {
    let env = start(3, |_| {}).await;
    let cluster = &env.cluster;
    settle(cluster, 3).await;
    let uid = cloneset(cluster)["metadata"]["uid"].clone();
    cluster
        .create(
            PODS,
            json!({"apiVersion": "v1", "kind": "Pod",
                "metadata": {"name": "stray", "namespace": "ns", "labels": {"app": "web"}},
                "spec": {"containers": [{"name": "main", "image": "nginx:1.0"}]}}),
        )
        .await;
    // Adopted; then, being one pod too many and on no revision of the CloneSet, scaled away.
    let adopted = || {
        cluster.history(PODS).iter().any(|e| {
            e.object["metadata"]["name"] == "stray"
                && e.object["metadata"]["ownerReferences"][0]["uid"] == uid
        })
    };
    cluster::eventually("the orphan adopted", 30, || adopted().then_some(())).await;
    settle(cluster, 3).await;
    if let Some(pod) = cluster.get(PODS, "ns", "stray") {
        assert_eq!(pod["metadata"]["ownerReferences"][0]["uid"], uid);
    }
}

#[tokio::test]
async fn a_storm_of_conflicts_mid_rollout_delays_it_and_breaks_nothing() {
    let env = start(5, |_| {}).await;
    let cluster = &env.cluster;
    settle(cluster, 5).await;
    let uids: Vec<Value> = cluster
        .list(PODS, "ns")
        .iter()
        .map(|p| p["metadata"]["uid"].clone())
        .collect();
    // Ten 409s in a row on the CloneSet's status and ten on pod updates (the in-place updates and
    // their readiness bookkeeping), as when many writers contend.
    let status_writes = Target::writes("apps.kruise.io", "clonesets")
        .object("ns", "web")
        .subresource("status");
    let pod_updates = Target {
        operation: Some(kruise_playground::api::admission::Operation::Update),
        ..Target::writes("", "pods")
    };
    for _ in 0..10 {
        cluster.faults.conflict_once(status_writes.clone(), None);
        cluster.faults.conflict_once(pod_updates.clone(), None);
    }
    cluster
        .modify(CLONESETS, "ns", "web", |cs| {
            cs["spec"]["template"]["spec"]["containers"][0]["image"] = json!("nginx:2.0")
        })
        .await;
    cluster::eventually("the rollout through the conflicts", 60, || {
        let done = settled(cluster, 5)
            && cluster
                .list(PODS, "ns")
                .iter()
                .all(|p| p["spec"]["containers"][0]["image"] == "nginx:2.0");
        done.then_some(())
    })
    .await;
    assert_eq!(cluster.faults.armed(), 0, "every conflict was met");
    let after: Vec<Value> = cluster
        .list(PODS, "ns")
        .iter()
        .map(|p| p["metadata"]["uid"].clone())
        .collect();
    assert_eq!(after, uids, "updated in place: the same 5 pods");
}

#[tokio::test]
async fn watches_expired_mid_rollout_are_listed_again_and_nothing_is_missed() {
    let env = start(5, |_| {}).await;
    let cluster = &env.cluster;
    settle(cluster, 5).await;
    let store = &cluster.api().store;
    let refused_before = store.too_old_watches();
    cluster
        .modify(CLONESETS, "ns", "web", |cs| {
            cs["spec"]["template"]["spec"]["containers"][0]["image"] = json!("nginx:2.0")
        })
        .await;
    // As an apiserver restarting five times during the rollout: every watch ends, and one resumed from
    // before the restart is answered 410 and lists again.
    for _ in 0..5 {
        tokio::time::sleep(Duration::from_millis(200)).await;
        store.expire_watches();
    }
    // A change made right after the last restart is seen through the new list or watch.
    cluster
        .modify(CLONESETS, "ns", "web", |cs| cs["spec"]["replicas"] = json!(3))
        .await;
    cluster::eventually("the rollout and the scale-down", 60, || {
        let done = settled(cluster, 3)
            && cluster
                .list(PODS, "ns")
                .iter()
                .all(|p| p["spec"]["containers"][0]["image"] == "nginx:2.0");
        done.then_some(())
    })
    .await;
    assert!(
        store.too_old_watches() > refused_before,
        "no watch resumed from before a restart (the 410 path was not exercised)"
    );
}

/// §4.85: the namespace is terminating while the CloneSet is still there (the namespace controller has
/// not deleted it yet: here its delete keeps failing). The API server refuses every create there (403
/// `NamespaceTerminating`); the controller backs off (5 s doubling) instead of trying again on every
/// event, and keeps running.
#[tokio::test]
async fn creates_refused_in_a_terminating_namespace_back_off() {
    use kruise_playground::api::{admission::Operation, delete::DeleteOptions};
    let cloneset_deletes = Target {
        operation: Some(Operation::Delete),
        ..Target::writes("apps.kruise.io", "clonesets")
    };
    let env = start(0, |cluster| cluster.faults.fail(cloneset_deletes.clone())).await;
    let cluster = &env.cluster;
    let namespaces = cluster.api().registry.find("", "v1", "namespaces").unwrap();
    cluster
        .api()
        .delete(&namespaces, "", "ns", &DeleteOptions::default())
        .await
        .unwrap();
    let terminating = cluster.get(cluster::NAMESPACES, "", "ns").unwrap();
    assert_eq!(terminating["status"]["phase"], "Terminating");
    // What the controller creates in the namespace: its revisions (the namespace controller deletes
    // them) and its pods.
    let creates = || {
        cluster
            .requests()
            .iter()
            .filter(|(k, _)| {
                k.method == "POST" && ["pods", "controllerrevisions"].contains(&k.resource.as_str())
            })
            .map(|(_, n)| *n)
            .sum::<u64>()
    };
    let before = creates();
    cluster
        .modify(CLONESETS, "ns", "web", |cs| cs["spec"]["replicas"] = json!(3))
        .await;
    tokio::time::sleep(Duration::from_secs(20)).await;
    let attempts = creates() - before;
    // Failed passes at about 0, 5 and 15 s, each stopping at its first refused create: never a hot
    // loop on the events the passes cause.
    assert!((1..=6).contains(&attempts), "{attempts} creates in 20 s");
    assert!(cluster.list(PODS, "ns").is_empty());
    assert!(!env.controller.is_finished(), "the controller stopped");
    assert!(cluster.get(CLONESETS, "ns", "web").is_some());
}
