//! Events a decision asks for (OpenKruise's `PubPreventPodDeletion`) reach the API server as
//! `events.k8s.io/v1` Events about the pod, without holding up the answer.

#[path = "support/fake_api.rs"]
mod fake_api;

use std::time::Duration;

use fake_api::FakeApi;
use kruise_rs::server::events::EventSink;
use kruise_webhooks::{AdmissionEvent, Regarding};

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_budget_refusal_is_recorded_as_a_warning_event_on_the_pod() {
    let api = FakeApi::default();
    let sink = EventSink::cluster(api.client(), "kruise-rs-0".into());
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
    let deadline = tokio::time::Instant::now() + Duration::from_secs(10);
    let event = loop {
        let stored = api.objects.lock().unwrap().iter().find_map(|(path, object)| {
            path.starts_with("/apis/events.k8s.io/v1/namespaces/shop/events/")
                .then(|| object.clone())
        });
        if let Some(event) = stored {
            break event;
        }
        assert!(tokio::time::Instant::now() < deadline, "no event was published");
        tokio::time::sleep(Duration::from_millis(20)).await;
    };
    assert_eq!(event["type"], "Warning");
    assert_eq!(event["reason"], "PubPreventPodDeletion");
    assert_eq!(event["note"], "openkruise pub prevents pod deletion");
    assert_eq!(event["regarding"]["kind"], "Pod");
    assert_eq!(event["regarding"]["name"], "web-2");
    assert_eq!(event["regarding"]["uid"], "uid-web-2");
    assert_eq!(event["reportingController"], "kruise-rs-webhook");
    assert_eq!(event["reportingInstance"], "kruise-rs-0");
}
