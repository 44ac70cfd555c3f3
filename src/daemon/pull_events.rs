//! The agent's pull events (source `kruise-daemon-imagepuller`, instance = the node), as OpenKruise's
//! puller words them, recorded once per finished pull — when the status saying so has been written:
//! Normal `PullImageSucceed` on the NodeImage (`Image <name>:<tag>, ecalpsedTime <duration>`, sic),
//! Warning `PullImageFailed` on each owner of the tag, then on the NodeImage (`Image <name>:<tag>
//! <error>`).

use k8s_openapi::api::core::v1::ObjectReference;
use k8s_openapi::apimachinery::pkg::apis::meta::v1::Time;
use kruise_api::apps_v1beta1::{ImagePullPhase, ImageTagStatus, NodeImage, NodeImageStatus};
use kube::runtime::events::{Event, EventType, Recorder, Reporter};

/// One event to record.
#[derive(Debug, Clone, PartialEq)]
pub struct PullEvent {
    /// Where it is recorded.
    pub regarding: ObjectReference,
    /// Normal or Warning.
    pub warning: bool,
    /// `PullImageSucceed` or `PullImageFailed`.
    pub reason: &'static str,
    /// The message.
    pub note: String,
}

/// The events of the pulls that finished between `old` and `new` (a tag whose status at its version
/// already said so in `old` is not announced again).
pub fn finished(node_image: &NodeImage, old: &NodeImageStatus, new: &NodeImageStatus) -> Vec<PullEvent> {
    let node_ref = ObjectReference {
        api_version: Some("apps.kruise.io/v1beta1".into()),
        kind: Some("NodeImage".into()),
        name: node_image.metadata.name.clone(),
        uid: node_image.metadata.uid.clone(),
        ..ObjectReference::default()
    };
    let mut events = Vec::new();
    for (name, image) in &new.image_statuses {
        for tag in &image.tags {
            if tag.completion_time.is_none()
                || !matches!(tag.phase, ImagePullPhase::Succeeded | ImagePullPhase::Failed)
            {
                continue;
            }
            let known = old
                .image_statuses
                .get(name)
                .and_then(|i| i.tags.iter().find(|t| t.tag == tag.tag))
                .is_some_and(|t| {
                    t.version == tag.version
                        && t.phase == tag.phase
                        && t.completion_time == tag.completion_time
                });
            if known {
                continue;
            }
            let image = format!("{name}:{}", tag.tag);
            if tag.phase == ImagePullPhase::Succeeded {
                events.push(PullEvent {
                    regarding: node_ref.clone(),
                    warning: false,
                    reason: "PullImageSucceed",
                    note: format!("Image {image}, ecalpsedTime {}", elapsed(tag)),
                });
                continue;
            }
            let note = format!("Image {image} {}", tag.message);
            let owners = node_image
                .spec
                .images
                .get(name)
                .and_then(|i| i.tags.iter().find(|t| t.tag == tag.tag))
                .map(|t| t.owner_references.clone())
                .unwrap_or_default();
            for regarding in owners.into_iter().chain([node_ref.clone()]) {
                events.push(PullEvent {
                    regarding,
                    warning: true,
                    reason: "PullImageFailed",
                    note: note.clone(),
                });
            }
        }
    }
    events
}

/// The pull's duration as Go prints a `time.Duration` of whole seconds (`0s`, `42s`, `1m5s`, `2h0m0s`).
fn elapsed(tag: &ImageTagStatus) -> String {
    let seconds = match (&tag.start_time, &tag.completion_time) {
        (Some(Time(start)), Some(Time(done))) => done.duration_since(*start).as_secs().max(0),
        _ => 0,
    };
    let (h, m, s) = (seconds / 3600, seconds / 60 % 60, seconds % 60);
    if h > 0 {
        format!("{h}h{m}m{s}s")
    } else if m > 0 {
        format!("{m}m{s}s")
    } else {
        format!("{s}s")
    }
}

/// The agent's event recorder.
pub fn recorder(client: kube::Client, node: &str) -> Recorder {
    Recorder::new(
        client,
        Reporter {
            controller: "kruise-daemon-imagepuller".into(),
            instance: Some(node.to_owned()),
        },
    )
}

/// Records the events (a failure is logged, never retried).
pub async fn publish(recorder: &Recorder, events: &[PullEvent]) {
    for e in events {
        let event = Event {
            type_: if e.warning {
                EventType::Warning
            } else {
                EventType::Normal
            },
            reason: e.reason.into(),
            note: Some(e.note.clone()),
            action: "PullImage".into(),
            secondary: None,
        };
        if let Err(err) = recorder.publish(&event, &e.regarding).await {
            tracing::debug!(error = %err, reason = e.reason, "pull event not published");
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::{Value, json};

    fn node_image() -> NodeImage {
        serde_json::from_value(json!({"metadata": {"name": "node-a", "uid": "ni-uid"},
            "spec": {"images": {"demo": {"tags": [
                {"tag": "v1", "version": 0},
                {"tag": "v2", "version": 1, "ownerReferences": [
                    {"apiVersion": "apps.kruise.io/v1beta1", "kind": "ImagePullJob", "namespace": "shop",
                     "name": "warm", "uid": "j1"}]}]}}}}))
        .unwrap()
    }

    fn status(tags: Value) -> NodeImageStatus {
        serde_json::from_value(json!({"imageStatuses": {"demo": {"tags": tags}}})).unwrap()
    }

    #[test]
    fn each_finished_pull_is_announced_once() {
        let pulling = status(json!([
            {"tag": "v1", "phase": "Pulling", "startTime": "2026-01-01T00:00:00Z"},
            {"tag": "v2", "phase": "Pulling", "version": 1, "startTime": "2026-01-01T00:00:00Z"}]));
        let done = status(json!([
            {"tag": "v1", "phase": "Succeeded", "startTime": "2026-01-01T00:00:00Z",
             "completionTime": "2026-01-01T00:01:05Z"},
            {"tag": "v2", "phase": "Failed", "version": 1, "startTime": "2026-01-01T00:00:00Z",
             "completionTime": "2026-01-01T00:00:03Z", "message": "Failed to pull image reference \"demo:v2\": not found"}]));
        let ni = node_image();
        assert!(finished(&ni, &NodeImageStatus::default(), &pulling).is_empty());
        let events = finished(&ni, &pulling, &done);
        let summary: Vec<(&str, Option<&str>, bool, &str)> = events
            .iter()
            .map(|e| (e.reason, e.regarding.kind.as_deref(), e.warning, e.note.as_str()))
            .collect();
        assert_eq!(
            summary,
            [
                (
                    "PullImageSucceed",
                    Some("NodeImage"),
                    false,
                    "Image demo:v1, ecalpsedTime 1m5s"
                ),
                (
                    "PullImageFailed",
                    Some("ImagePullJob"),
                    true,
                    "Image demo:v2 Failed to pull image reference \"demo:v2\": not found"
                ),
                (
                    "PullImageFailed",
                    Some("NodeImage"),
                    true,
                    "Image demo:v2 Failed to pull image reference \"demo:v2\": not found"
                ),
            ]
        );
        assert_eq!(events[1].regarding.uid.as_deref(), Some("j1"));
        assert_eq!(events[2].regarding.name.as_deref(), Some("node-a"));
        // Written again (or seen again after a restart): nothing new.
        assert!(finished(&ni, &done, &done).is_empty());
        // A new version of a finished tag finishing again is announced again.
        let mut again = done.clone();
        again.image_statuses.get_mut("demo").unwrap().tags[0].version = 1;
        assert_eq!(finished(&ni, &done, &again).len(), 1);
    }

    #[test]
    fn durations_read_as_go_prints_them() {
        let tag = |start: &str, done: &str| -> ImageTagStatus {
            serde_json::from_value(json!({"tag": "v", "startTime": start, "completionTime": done})).unwrap()
        };
        assert_eq!(
            elapsed(&tag("2026-01-01T00:00:00Z", "2026-01-01T00:00:00Z")),
            "0s"
        );
        assert_eq!(
            elapsed(&tag("2026-01-01T00:00:00Z", "2026-01-01T00:00:42Z")),
            "42s"
        );
        assert_eq!(
            elapsed(&tag("2026-01-01T00:00:00Z", "2026-01-01T02:00:00Z")),
            "2h0m0s"
        );
    }
}
