//! Writes the results to the NodePodProbe's status: woken by the workers, it waits [`BATCH`] so the
//! results of one round go out in one merge patch, writes only when something changed (or every ten
//! minutes, for fresh probe times), then records one event per state change on the pod
//! (`KruiseProbeSucceeded` / `KruiseProbeFailed`, both Normal, as OpenKruise).

use std::time::Duration;

use k8s_openapi::api::core::v1::ObjectReference;
use kruise_api::apps_v1alpha1::{NodePodProbe, NodePodProbeSpec, ProbeState};
use kruise_reconcile::node_pod_probe::agent::Transition;
use kube::api::{Api, Patch, PatchParams};
use kube::runtime::events::{Event, EventType, Recorder, Reporter};
use serde_json::json;
use tokio::sync::watch;
use tokio::time::Instant;

use super::Shared;

/// How long results gather before a write.
pub const BATCH: Duration = Duration::from_millis(500);
/// How often the writer looks whether a refresh is due.
const TICK: Duration = Duration::from_secs(60);
/// Back-off after a failed write.
const ERROR_BACKOFF: Duration = Duration::from_secs(2);

/// Runs until aborted.
pub async fn run(
    client: kube::Client,
    node: String,
    shared: Shared,
    spec: watch::Receiver<NodePodProbeSpec>,
) {
    let api: Api<NodePodProbe> = Api::all(client.clone());
    let recorder = Recorder::new(
        client,
        Reporter {
            controller: "kruise-daemon-podprobe".into(),
            instance: Some(node.clone()),
        },
    );
    let mut last_write = Instant::now();
    loop {
        tokio::select! {
            () = shared.changed.notified() => {}
            () = tokio::time::sleep(TICK) => {}
        }
        tokio::time::sleep(BATCH).await;
        let spec = spec.borrow().clone();
        let (status, transitions) = {
            let mut results = shared.results();
            results.retain(&spec);
            if !results.write_due(last_write.elapsed()) {
                continue;
            }
            (results.status(&spec), results.written())
        };
        let patch = json!({"status": {"podProbeStatuses": status.pod_probe_statuses}});
        match api
            .patch_status(&node, &PatchParams::default(), &Patch::Merge(&patch))
            .await
        {
            Ok(_) => {
                last_write = Instant::now();
                tracing::debug!(
                    pods = status.pod_probe_statuses.len(),
                    "NodePodProbe status written"
                );
                for t in &transitions {
                    announce(&recorder, &spec, t).await;
                }
            }
            Err(e) => {
                tracing::warn!(error = %e, "writing the NodePodProbe status");
                shared.results().restore(transitions);
                tokio::time::sleep(ERROR_BACKOFF).await;
                shared.changed.notify_one();
            }
        }
    }
}

async fn announce(recorder: &Recorder, spec: &NodePodProbeSpec, t: &Transition) {
    let Some(pod) = spec.pod_probes.iter().find(|p| p.uid == t.key.0) else {
        return;
    };
    let reason = match t.state {
        ProbeState::Succeeded => "KruiseProbeSucceeded",
        _ => "KruiseProbeFailed",
    };
    let reference = ObjectReference {
        api_version: Some("v1".into()),
        kind: Some("Pod".into()),
        namespace: Some(pod.namespace.clone()),
        name: Some(pod.name.clone()),
        uid: Some(pod.uid.clone()),
        ..ObjectReference::default()
    };
    let note = if t.message.is_empty() {
        format!("probe {} {}", t.key.1, t.state)
    } else {
        t.message.clone()
    };
    let event = Event {
        type_: EventType::Normal,
        reason: reason.into(),
        note: Some(note),
        action: "Probe".into(),
        secondary: None,
    };
    if let Err(e) = recorder.publish(&event, &reference).await {
        tracing::debug!(error = %e, "probe event not published");
    }
}
