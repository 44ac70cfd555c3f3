//! Controllers run only while this replica leads.

#[path = "support/fake_api.rs"]
mod fake_api;

use std::{sync::Arc, time::Duration};

use fake_api::FakeApi;
use kruise_rs::controllers::{self, Context};
use kruise_webhooks::MemoryView;
use serde_json::json;

fn gated_pod(api: &FakeApi, name: &str) -> String {
    let path = format!("/api/v1/namespaces/ns/pods/{name}");
    api.put(
        &path,
        json!({"apiVersion": "v1", "kind": "Pod", "metadata": {"name": name, "namespace": "ns"},
            "spec": {"containers": [{"name": "main"}], "readinessGates": [{"conditionType": "KruisePodReady"}]}}),
    );
    path
}

fn initialised(api: &FakeApi, path: &str) -> bool {
    api.get(path).unwrap()["status"]["conditions"]
        .as_array()
        .is_some_and(|c| c.iter().any(|c| c["type"] == "KruisePodReady"))
}

async fn wait_for(what: &str, check: impl Fn() -> bool) {
    for _ in 0..100 {
        if check() {
            return;
        }
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    panic!("timed out waiting for {what}");
}

#[tokio::test]
async fn controllers_start_on_leadership_and_stop_when_it_is_lost() {
    let api = FakeApi::default();
    let (leading, receiver) = tokio::sync::watch::channel(false);
    let supervisor = controllers::spawn(
        Context {
            client: api.client(),
            view: Arc::new(MemoryView::default()),
        },
        receiver,
    );
    let first = gated_pod(&api, "first");
    tokio::time::sleep(Duration::from_millis(400)).await;
    assert!(!initialised(&api, &first), "a follower writes nothing");

    leading.send_replace(true);
    wait_for("the leader to initialise the condition", || {
        initialised(&api, &first)
    })
    .await;

    leading.send_replace(false);
    tokio::time::sleep(Duration::from_millis(200)).await;
    let second = gated_pod(&api, "second");
    tokio::time::sleep(Duration::from_millis(500)).await;
    assert!(!initialised(&api, &second), "controllers stopped with the lease");

    leading.send_replace(true);
    wait_for("the new leader term to catch up", || initialised(&api, &second)).await;

    // The elector is gone (process shutting down): the supervisor stops the controllers and ends.
    drop(leading);
    tokio::time::timeout(Duration::from_secs(2), supervisor)
        .await
        .expect("supervisor ends")
        .unwrap();
}
