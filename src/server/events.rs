//! Recording the Kubernetes Events a decision asks for (e.g. OpenKruise's `PubPreventPodDeletion`):
//! published with kube-runtime's `Recorder` in a cluster, logged in standalone mode. Publishing runs in
//! the background and never delays or changes an answer.

use k8s_openapi::api::core::v1::ObjectReference;
use kruise_webhooks::AdmissionEvent;
use kube::runtime::events::{Event, EventType, Recorder, Reporter};

/// Where a decision's events go.
pub enum EventSink {
    /// Log only (standalone mode).
    Log,
    /// Publish to the API server, deduplicated into series by the recorder.
    Cluster(Recorder),
}

impl EventSink {
    /// A sink publishing as `kruise-rs-webhook` from this replica.
    pub fn cluster(client: kube::Client, instance: String) -> Self {
        let reporter = Reporter {
            controller: "kruise-rs-webhook".into(),
            instance: Some(instance),
        };
        EventSink::Cluster(Recorder::new(client, reporter))
    }

    /// Logs every event and, in a cluster, publishes it in the background.
    pub fn record(&self, events: &[AdmissionEvent]) {
        for event in events {
            let r = &event.regarding;
            tracing::info!(
                reason = event.reason, message = %event.message, kind = %r.kind,
                namespace = %r.namespace, name = %r.name, "event"
            );
            let EventSink::Cluster(recorder) = self else {
                continue;
            };
            let recorder = recorder.clone();
            let (published, reference) = to_kube(event);
            tokio::spawn(async move {
                if let Err(e) = recorder.publish(&published, &reference).await {
                    tracing::warn!(error = %e, reason = %published.reason, "could not record an event");
                }
            });
        }
    }
}

fn to_kube(event: &AdmissionEvent) -> (Event, ObjectReference) {
    let r = &event.regarding;
    let reference = ObjectReference {
        api_version: Some(r.api_version.clone()),
        kind: Some(r.kind.clone()),
        namespace: Some(r.namespace.clone()).filter(|n| !n.is_empty()),
        name: Some(r.name.clone()),
        uid: r.uid.clone(),
        ..ObjectReference::default()
    };
    let published = Event {
        type_: if event.warning {
            EventType::Warning
        } else {
            EventType::Normal
        },
        reason: event.reason.into(),
        note: Some(event.message.clone()),
        action: "Admission".into(),
        secondary: None,
    };
    (published, reference)
}
