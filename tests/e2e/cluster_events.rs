//! Events a decision asks for (OpenKruise's `PubPreventPodDeletion`) reach the API server as
//! `events.k8s.io/v1` Events about the pod, without holding up the answer.

use crate::common;

use common::cluster::{self, EVENTS};
use kruise_rs::server::events::EventSink;
use kruise_webhooks::{AdmissionEvent, Regarding};

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_budget_refusal_is_recorded_as_a_warning_event_on_the_pod() {
    let cluster = cluster::start().await;
    cluster.namespace("shop").await;
    let sink = EventSink::cluster(cluster.client.clone(), "kruise-rs-0".into());
    sink.record(&[AdmissionEvent {
        regarding: Regarding {
            api_version: "v1".into(),
            kind: "Pod".into(),
            namespace: "shop".into(),
            name: "web-2".into(),
            uid: Some("uid-web-2".into()),
        },
        warning: true,
        reason: "PubPreventPodDeletion",
        message: "openkruise pub prevents pod deletion".into(),
    }]);
    let event = cluster::eventually("a published event", 10, || {
        cluster.list(EVENTS, "shop").into_iter().next()
    })
    .await;
    assert_eq!(event["type"], "Warning");
    assert_eq!(event["reason"], "PubPreventPodDeletion");
    assert_eq!(event["note"], "openkruise pub prevents pod deletion");
    assert_eq!(event["regarding"]["kind"], "Pod");
    assert_eq!(event["regarding"]["name"], "web-2");
    assert_eq!(event["regarding"]["uid"], "uid-web-2");
    assert_eq!(event["reportingController"], "kruise-rs-webhook");
    assert_eq!(event["reportingInstance"], "kruise-rs-0");
}
