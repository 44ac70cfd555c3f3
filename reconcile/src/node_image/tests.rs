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
        creation_delay: DEFAULT_CREATION_DELAY,
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
    let mut stale = image(spec("2026-01-01T11:45:00Z"), empty);
    stale.spec.images.get_mut("demo").unwrap().tags[0].owner_references =
        vec![serde_json::from_value(owner("j1")).unwrap()];
    let plan = run(Some(&node("True", json!({"zone": "a"}))), Some(&stale), &["j1"]);
    let status = plan.status.clone().expect("status");
    let tag = &status.image_statuses["demo"].tags[0];
    assert_eq!(tag.phase, ImagePullPhase::Failed);
    assert_eq!(tag.version, 2);
    assert_eq!(tag.message, "node has not responded for a long time");
    assert_eq!((status.desired, status.failed, status.waiting), (1, 1, 0));
    // The failure is announced once, on its owner and the NodeImage, when this status is written.
    assert_eq!(plan.failed.len(), 1);
    assert_eq!(plan.failed[0].owners[0].uid.as_deref(), Some("j1"));
    assert_eq!(
        plan.failed[0].note("n1"),
        "Failed to pull image demo:v2 on node n1 for node has not responded for a long time"
    );
    let mut written = stale.clone();
    written.status = Some(status);
    let again = run(Some(&node("True", json!({"zone": "a"}))), Some(&written), &["j1"]);
    assert!(again.status.is_none() && again.failed.is_empty());
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

#[test]
fn created_only_once_the_node_has_been_ready_for_the_delay() {
    let ready_since = |ago: i64, labels: Value| -> Node {
        let since = now().checked_sub(SignedDuration::from_secs(ago)).unwrap();
        serde_json::from_value(json!({"metadata": {"name": "n1", "labels": labels},
            "status": {"conditions": [{"type": "Ready", "status": "True",
                "lastTransitionTime": since.to_string()}]}}))
        .unwrap()
    };
    let pass = |node: &Node, delay: u64| {
        plan(&Input {
            name: "n1",
            node: Some(node),
            node_image: None,
            live_jobs: &BTreeSet::new(),
            creation_delay: Duration::from_secs(delay),
            now: now(),
        })
    };
    // (Ready for, delay) → created, requeue after.
    let table: [(i64, u64, bool, Option<Duration>); 6] = [
        (0, 30, false, Some(Duration::from_secs(30))),
        (12, 30, false, Some(Duration::from_secs(18))),
        (29, 30, false, Some(Duration::from_secs(1))),
        (30, 30, true, None),
        (3600, 30, true, None),
        (0, 0, true, None),
    ];
    for (ago, delay, created, requeue) in table {
        let p = pass(&ready_since(ago, json!({"zone": "a"})), delay);
        assert_eq!(p.create.is_some(), created, "ready {ago}s, delay {delay}s");
        assert_eq!(p.requeue_after, requeue, "ready {ago}s, delay {delay}s");
        assert!(!p.delete && p.update.is_none() && p.status.is_none());
    }
    // A virtual-kubelet node is never waited for; a node that is not Ready neither.
    let virtual_node = ready_since(0, json!({"type": "virtual-kubelet"}));
    assert_eq!(pass(&virtual_node, 30), Plan::default());
    assert_eq!(pass(&virtual_node.clone(), 0), Plan::default());
    assert_eq!(pass(&node("False", json!({})), 30), Plan::default());
    // A Ready condition without a transition time counts as Ready long ago (OpenKruise: the zero time).
    assert!(pass(&node("True", json!({})), 30).create.is_some());
}
