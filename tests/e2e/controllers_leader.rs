//! Controllers run only while this replica leads.

use crate::common;

use std::{sync::Arc, time::Duration};

use common::cluster::{self, Cluster, PODS};
use kruise_rs::controllers::{self, Context};
use kruise_webhooks::MemoryView;
use serde_json::json;

async fn gated_pod(cluster: &Cluster, name: &str) -> String {
    cluster
        .create(
            PODS,
            json!({"apiVersion": "v1", "kind": "Pod", "metadata": {"name": name, "namespace": "ns"},
                "spec": {"containers": [{"name": "main", "image": "nginx"}],
                    "readinessGates": [{"conditionType": "KruisePodReady"}]}}),
        )
        .await;
    name.to_string()
}

fn initialised(cluster: &Cluster, name: &str) -> bool {
    cluster.get(PODS, "ns", name).unwrap()["status"]["conditions"]
        .as_array()
        .is_some_and(|c| c.iter().any(|c| c["type"] == "KruisePodReady"))
}

#[tokio::test]
async fn controllers_start_on_leadership_and_stop_when_it_is_lost() {
    let cluster = cluster::start().await;
    cluster.namespace("ns").await;
    let (leading, receiver) = tokio::sync::watch::channel(false);
    let supervisor = controllers::spawn(
        Context {
            client: cluster.client.clone(),
            view: Arc::new(MemoryView::default()),
            uninjected_pods: Default::default(),
            pass_durations: kruise_rs::server::metrics::pass_durations(),
            settings: Default::default(),
            clock: Default::default(),
            tuning: Default::default(),
        },
        receiver,
    );
    let first = gated_pod(&cluster, "first").await;
    tokio::time::sleep(Duration::from_millis(400)).await;
    assert!(!initialised(&cluster, &first), "a follower writes nothing");

    leading.send_replace(true);
    cluster::eventually("the leader to initialise the condition", 5, || {
        initialised(&cluster, &first).then_some(())
    })
    .await;

    leading.send_replace(false);
    tokio::time::sleep(Duration::from_millis(200)).await;
    let second = gated_pod(&cluster, "second").await;
    tokio::time::sleep(Duration::from_millis(500)).await;
    assert!(
        !initialised(&cluster, &second),
        "controllers stopped with the lease"
    );

    leading.send_replace(true);
    cluster::eventually("the new leader term to catch up", 5, || {
        initialised(&cluster, &second).then_some(())
    })
    .await;

    // The elector is gone (process shutting down): the supervisor stops the controllers and ends.
    drop(leading);
    tokio::time::timeout(Duration::from_secs(2), supervisor)
        .await
        .expect("supervisor ends")
        .unwrap();
}
