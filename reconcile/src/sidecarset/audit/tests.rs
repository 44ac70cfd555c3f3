//! The injection audit through the planner.

use kruise_api::PodRecord;
use serde_json::json;

use super::super::tests::{pod_json, run, set, with};
use super::*;
use crate::sidecarset::InFlight;

/// A pod the SidecarSet selects but did not inject: no injected list, no sidecar; owned by `owner`.
fn uninjected_pod(i: usize, owner: Option<&str>) -> PodRecord {
    let mut v = with(pod_json(i, i as u32), &["metadata", "annotations"], json!({}));
    v = with(
        v,
        &["spec", "containers"],
        json!([{"name": "app", "image": "app:v1"}]),
    );
    if let Some(kind) = owner {
        v = with(
            v,
            &["metadata", "ownerReferences"],
            json!([{"apiVersion": "apps.kruise.io/v1alpha1", "kind": kind, "name": "web", "uid": "cs", "controller": true}]),
        );
    }
    serde_json::from_value(v).unwrap()
}

fn opted_in(mut s: kruise_api::apps_v1beta1::SidecarSet) -> kruise_api::apps_v1beta1::SidecarSet {
    s.metadata
        .annotations
        .get_or_insert_with(Default::default)
        .insert(REPLACE_UNINJECTED_PODS.into(), "true".into());
    s
}

#[test]
fn uninjected_pods_are_counted_named_and_replaced_only_when_asked_within_max_unavailable() {
    let other: PodRecord = serde_json::from_value(with(
        pod_json(9, 9),
        &["metadata", "labels"],
        json!({"app": "other"}),
    ))
    .unwrap();
    let pods = vec![
        serde_json::from_value(pod_json(0, 0)).unwrap(),
        uninjected_pod(1, None),
        uninjected_pod(2, Some("CloneSet")),
        uninjected_pod(3, Some("CloneSet")),
        uninjected_pod(4, Some("ReplicaSet")),
        other,
    ];
    let plan = run(&set(json!({})), &pods, &InFlight::default());
    assert_eq!((plan.status.matched_pods, plan.status.uninjected_pods), (1, 4));
    let event = plan.events.iter().find(|e| e.reason == "UninjectedPods").unwrap();
    assert!(event.warning);
    assert!(
        event.message.starts_with("4 pod(s)")
            && event
                .message
                .contains("default/p1, default/p2, default/p3, default/p4"),
        "{}",
        event.message
    );
    assert!(plan.replacements.is_empty(), "not opted in");

    // Opted in, maxUnavailable 1: one CloneSet pod at a time; the ReplicaSet's and the bare pod are left.
    let plan = run(&opted_in(set(json!({}))), &pods, &InFlight::default());
    assert_eq!(plan.replacements.len(), 1);
    let (target, patch) = &plan.replacements[0];
    assert_eq!(target.name, "p2");
    assert_eq!(patch["metadata"]["labels"][SPECIFIED_DELETE], "true");
    assert_eq!(patch["metadata"]["resourceVersion"], "102");
    // While p2 waits for its CloneSet, nothing more is labelled.
    let mut labelled = pods.clone();
    labelled[2]
        .metadata
        .labels
        .insert(SPECIFIED_DELETE.into(), "true".into());
    let plan = run(&opted_in(set(json!({}))), &labelled, &InFlight::default());
    assert!(plan.replacements.is_empty());
    // With maxUnavailable 2 the second CloneSet pod follows.
    let plan = run(
        &opted_in(set(json!({"maxUnavailable": 2}))),
        &labelled,
        &InFlight::default(),
    );
    let names: Vec<&str> = plan.replacements.iter().map(|(p, _)| p.name.as_str()).collect();
    assert_eq!(names, ["p3"]);
    // p2 is gone and its replacement (injected, matched) is not ready yet: it holds the room as p2 did.
    let mut replacing = pods.clone();
    replacing[2] = serde_json::from_value(with(
        pod_json(5, 5),
        &["status", "conditions"],
        json!([{"type": "Ready", "status": "False"}]),
    ))
    .unwrap();
    let plan = run(&opted_in(set(json!({}))), &replacing, &InFlight::default());
    assert!(plan.replacements.is_empty(), "the replacement is not ready");
    let plan = run(
        &opted_in(set(json!({"maxUnavailable": 2}))),
        &replacing,
        &InFlight::default(),
    );
    let names: Vec<&str> = plan.replacements.iter().map(|(p, _)| p.name.as_str()).collect();
    assert_eq!(names, ["p3"]);
    // An uninjected pod that is not ready holds the room too; it is replaced at once, the ready one waits.
    let mut sick = pods.clone();
    sick[3] = serde_json::from_value(with(
        serde_json::to_value(&sick[3]).unwrap(),
        &["status", "conditions"],
        json!([{"type": "Ready", "status": "False"}]),
    ))
    .unwrap();
    let plan = run(&opted_in(set(json!({}))), &sick, &InFlight::default());
    let names: Vec<&str> = plan.replacements.iter().map(|(p, _)| p.name.as_str()).collect();
    assert_eq!(names, ["p3"]);
    // The stored count is what was found: no second event.
    let mut stored = set(json!({}));
    stored.status = Some(kruise_api::apps_v1beta1::SidecarSetStatus {
        uninjected_pods: 4,
        ..Default::default()
    });
    let plan = run(&stored, &pods, &InFlight::default());
    assert!(plan.events.iter().all(|e| e.reason != "UninjectedPods"));
}

/// Uninjected pods the audit reports, by name.
fn reported(plan: &crate::sidecarset::Plan) -> (i32, Vec<&str>) {
    let replaced = plan.replacements.iter().map(|(p, _)| p.name.as_str()).collect();
    (plan.status.uninjected_pods, replaced)
}

#[test]
fn a_pod_whose_own_label_opts_it_out_of_the_selector_is_not_uninjected() {
    // The selector leaves out pods labelled `sidecar/opt-out` (OpenKruise has no opt-out of its own: a pod
    // is injected exactly when the selectors select it).
    let mut s = opted_in(set(json!({"maxUnavailable": 3})));
    s.spec.selector = Some(
        serde_json::from_value(json!({"matchLabels": {"app": "demo"},
            "matchExpressions": [{"key": "sidecar/opt-out", "operator": "DoesNotExist"}]}))
        .unwrap(),
    );
    let mut opted_out = uninjected_pod(1, Some("CloneSet"));
    opted_out
        .metadata
        .labels
        .insert("sidecar/opt-out".into(), "true".into());
    let pods = vec![
        serde_json::from_value(pod_json(0, 0)).unwrap(),
        opted_out,
        uninjected_pod(2, Some("CloneSet")),
    ];
    let plan = run(&s, &pods, &InFlight::default());
    assert_eq!(plan.status.matched_pods, 1);
    assert_eq!(reported(&plan), (1, vec!["p2"]));
    let event = plan.events.iter().find(|e| e.reason == "UninjectedPods").unwrap();
    assert!(
        event.message.starts_with("1 pod(s)") && !event.message.contains("p1"),
        "{}",
        event.message
    );
}

#[test]
fn pods_left_out_while_injection_is_paused_are_not_uninjected() {
    let pods = vec![
        serde_json::from_value(pod_json(0, 0)).unwrap(),
        uninjected_pod(1, Some("CloneSet")),
    ];
    let mut s = opted_in(set(json!({})));
    assert_eq!(reported(&run(&s, &pods, &InFlight::default())), (1, vec!["p1"]));
    // `injectionStrategy.paused`: new pods get no sidecars on purpose, and a replacement would get none.
    s.spec.injection_strategy.paused = true;
    let plan = run(&s, &pods, &InFlight::default());
    assert_eq!(reported(&plan), (0, vec![]));
    assert!(plan.events.iter().all(|e| e.reason != "UninjectedPods"));
    assert_eq!(
        plan.status.matched_pods, 1,
        "injected pods are still matched and upgraded"
    );
}

#[test]
fn pods_of_namespaces_the_pod_webhook_never_sees_are_not_uninjected() {
    let mut system = uninjected_pod(1, Some("CloneSet"));
    system.metadata.namespace = Some("kube-system".into());
    let pods = vec![system, uninjected_pod(2, Some("CloneSet"))];
    let plan = run(
        &opted_in(set(json!({"maxUnavailable": 2}))),
        &pods,
        &InFlight::default(),
    );
    assert_eq!(reported(&plan), (1, vec!["p2"]));
}
