//! Table tests of the NodeImage planner.

use std::collections::BTreeSet;
use std::time::Duration;

use k8s_openapi::api::core::v1::Node;
use k8s_openapi::jiff::Timestamp;
use kruise_api::apps_v1beta1::{ImagePullPhase, NodeImage};
use serde_json::{Value, json};

use super::*;

fn now() -> Timestamp {
    "2026-01-01T12:00:00Z".parse().unwrap()
}

fn node(ready: &str, labels: Value) -> Node {
    serde_json::from_value(json!({"metadata": {"name": "n1", "labels": labels},
        "status": {"conditions": [{"type": "Ready", "status": ready}]}}))
    .unwrap()
}

fn image(spec: Value, status: Value) -> NodeImage {
    serde_json::from_value(
        json!({"apiVersion": "apps.kruise.io/v1beta1", "kind": "NodeImage",
        "metadata": {"name": "n1", "labels": {"zone": "a"}}, "spec": spec, "status": status}),
    )
    .unwrap()
}

fn owner(uid: &str) -> Value {
    json!({"apiVersion": "apps.kruise.io/v1beta1", "kind": "ImagePullJob", "name": "j", "namespace": "d", "uid": uid})
}

fn run(node: Option<&Node>, ni: Option<&NodeImage>, live: &[&str]) -> Plan {
    let live: BTreeSet<String> = live.iter().map(|s| (*s).to_owned()).collect();
    plan(&Input {
        name: "n1",
        node,
        node_image: ni,
        live_jobs: &live,
        now: now(),
    })
}

#[test]
fn created_for_a_ready_node_with_its_labels_and_deleted_with_it() {
    let ready = node("True", json!({"zone": "a"}));
    let created = run(Some(&ready), None, &[]).create.expect("created");
    assert_eq!(created.metadata.name.as_deref(), Some("n1"));
    assert_eq!(created.metadata.labels.unwrap()["zone"], "a");
    assert!(run(Some(&node("False", json!({}))), None, &[]).create.is_none());
    assert!(
        run(Some(&node("True", json!({"type": "virtual-kubelet"}))), None, &[])
            .create
            .is_none()
    );
    let existing = image(json!({}), json!({}));
    assert!(run(None, Some(&existing), &[]).delete);
    let fake = {
        let mut f = existing.clone();
        f.metadata
            .labels
            .as_mut()
            .unwrap()
            .insert("apps.kruise.io/fake-nodeimage".into(), "true".into());
        f
    };
    assert!(!run(None, Some(&fake), &[]).delete);
}

#[test]
fn labels_follow_the_node_and_orphaned_or_expired_tags_leave() {
    let ni = image(
        json!({"images": {"demo": {"tags": [
            {"tag": "gone", "createdAt": "2026-01-01T11:00:00Z", "ownerReferences": [owner("dead")]},
            {"tag": "kept", "createdAt": "2026-01-01T11:00:00Z", "ownerReferences": [owner("dead"), owner("live")]},
            {"tag": "nodate", "ownerReferences": [owner("live")]},
            {"tag": "old", "createdAt": "2026-01-01T11:00:00Z", "version": 1,
             "pullPolicy": {"ttlSecondsAfterFinished": 60}},
        ]}, "other": {"tags": [{"tag": "x", "createdAt": "2026-01-01T11:00:00Z", "ownerReferences": [owner("dead")]}]}}}),
        json!({"desired": 4, "succeeded": 1, "failed": 0, "pulling": 0, "waiting": 0, "imageStatuses": {"demo": {"tags": [
            {"tag": "kept", "phase": "Pulling", "startTime": "2026-01-01T11:00:00Z"},
            {"tag": "old", "phase": "Succeeded", "version": 1, "completionTime": "2026-01-01T11:58:00Z"},
        ]}}}),
    );
    let plan = run(Some(&node("True", json!({"zone": "b"}))), Some(&ni), &["live"]);
    let updated = plan.update.expect("spec update");
    assert_eq!(updated.metadata.labels.unwrap()["zone"], "b");
    let tags: Vec<_> = updated.spec.images["demo"]
        .tags
        .iter()
        .map(|t| t.tag.as_str())
        .collect();
    assert_eq!(tags, ["kept"]);
    assert_eq!(updated.spec.images["demo"].tags[0].owner_references.len(), 1);
    assert!(!updated.spec.images.contains_key("other"));
    // "kept" has a status at its version without a deadline: nothing to fail; counts unchanged.
    assert!(plan.status.is_none());
}

#[test]
fn a_silent_node_fails_the_tag_after_the_response_timeout() {
    let spec = |created: &str| json!({"images": {"demo": {"tags": [{"tag": "v2", "createdAt": created, "version": 2}]}}});
    let empty = json!({"desired": 1, "succeeded": 0, "failed": 0, "pulling": 0, "waiting": 1});
    let recent = image(spec("2026-01-01T11:55:00Z"), empty.clone());
    let plan = run(Some(&node("True", json!({"zone": "a"}))), Some(&recent), &[]);
    assert!(plan.status.is_none());
    assert_eq!(plan.requeue_after, Some(Duration::from_secs(300)));
    let stale = image(spec("2026-01-01T11:45:00Z"), empty);
    let status = run(Some(&node("True", json!({"zone": "a"}))), Some(&stale), &[])
        .status
        .expect("status");
    let tag = &status.image_statuses["demo"].tags[0];
    assert_eq!(tag.phase, ImagePullPhase::Failed);
    assert_eq!(tag.version, 2);
    assert_eq!(tag.message, "node has not responded for a long time");
    assert_eq!((status.desired, status.failed, status.waiting), (1, 1, 0));
}

#[test]
fn a_pull_past_its_deadline_is_failed() {
    let ni = image(
        json!({"images": {"demo": {"tags": [{"tag": "v2", "createdAt": "2026-01-01T11:00:00Z",
            "pullPolicy": {"activeDeadlineSeconds": 600}}]}}}),
        json!({"desired": 1, "succeeded": 0, "failed": 0, "pulling": 1, "waiting": 0,
            "imageStatuses": {"demo": {"tags": [{"tag": "v2", "phase": "Pulling"}]}}}),
    );
    let status = run(Some(&node("True", json!({"zone": "a"}))), Some(&ni), &[])
        .status
        .expect("status");
    assert_eq!(
        status.image_statuses["demo"].tags[0].message,
        "pulling exceeds the activeDeadlineSeconds"
    );
    assert_eq!((status.failed, status.pulling), (1, 0));
}
