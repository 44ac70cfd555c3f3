//! The Advanced StatefulSet controller alone against the playground (one simulated node with its
//! kubelet), through the webhooks' cluster cache: how failed writes show in the status. Its scaling,
//! updates and claims are proven end to end, with kruise-rs's webhooks, in `playground_statefulset/`.

use crate::common;

use std::{sync::Arc, time::Duration};

use common::cluster::{self, ADVANCED_STATEFULSETS, Cluster, PODS, Setup};
use kruise_playground::faults::Target;
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

/// A Parallel Advanced StatefulSet `web` of 2 running nginx:1.0, as the defaulting webhook leaves it.
fn stateful_set() -> Value {
    json!({"apiVersion": "apps.kruise.io/v1beta1", "kind": "StatefulSet",
        "metadata": {"name": "web", "namespace": "ns"},
        "spec": {"replicas": 2, "serviceName": "web", "podManagementPolicy": "Parallel",
            "revisionHistoryLimit": 10, "selector": {"matchLabels": {"app": "web"}},
            "template": {"metadata": {"labels": {"app": "web"}},
                "spec": {"containers": [{"name": "main", "image": "nginx:1.0"}]}},
            "updateStrategy": {"type": "RollingUpdate", "rollingUpdate": {"partition": 0}}}})
}

/// A cluster with the set `web`; `arm` runs before the controller starts.
async fn start(arm: impl FnOnce(&Cluster)) -> Env {
    let cluster = cluster::start_with(Setup {
        nodes: 1,
        kubelet_delay: Duration::ZERO,
    })
    .await;
    cluster.namespace("ns").await;
    arm(&cluster);
    cluster.create(ADVANCED_STATEFULSETS, stateful_set()).await;
    let cache = ClusterCache::start(&cluster.client, "kruise-system");
    tokio::time::timeout(Duration::from_secs(5), cache.wait_until_ready())
        .await
        .unwrap()
        .unwrap();
    let controller = tokio::spawn(controllers::statefulset::run(Context {
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

fn status(cluster: &Cluster) -> Value {
    cluster.get(ADVANCED_STATEFULSETS, "ns", "web").unwrap()["status"].clone()
}

#[tokio::test]
async fn a_failed_pod_create_shows_as_failed_create_pod_until_pods_are_created() {
    let creates = Target::writes("", "pods").creates();
    let env = start(|cluster| cluster.faults.fail(creates.clone())).await;
    let cluster = &env.cluster;
    let condition = cluster::eventually("a FailedCreatePod condition", 10, || {
        status(cluster)["conditions"]
            .as_array()?
            .iter()
            .find(|c| c["type"] == "FailedCreatePod")
            .cloned()
    })
    .await;
    assert_eq!(condition["status"], "True");
    assert!(condition.get("reason").is_none(), "empty reason: {condition}");
    let message = condition["message"].as_str().unwrap();
    assert!(
        message.starts_with("StatefulPodControl failed to create Pod error: ")
            && message.contains("injected failure"),
        "{message}"
    );
    assert!(cluster.list(PODS, "ns").is_empty());
    // The status was written with the failure: the counters are there too.
    assert_eq!(status(cluster)["replicas"], 0);

    cluster.faults.clear(&creates);
    cluster::eventually("2 pods ready, the condition gone", 20, || {
        let s = status(cluster);
        (s["readyReplicas"] == 2 && s["conditions"].is_null()).then_some(())
    })
    .await;
}
