use serde_json::{Value, json};

use super::*;

fn node(ready: &str, deleting: bool) -> Node {
    let mut n = json!({"metadata": {"name": "n1"},
        "status": {"conditions": [{"type": "Ready", "status": ready}]}});
    if deleting {
        n["metadata"]["deletionTimestamp"] = json!("2026-01-01T00:00:00Z");
    }
    serde_json::from_value(n).unwrap()
}

fn marker(name: &str, probes: Value) -> PodProbeMarker {
    serde_json::from_value(
        json!({"apiVersion": "apps.kruise.io/v1alpha1", "kind": "PodProbeMarker",
        "metadata": {"name": name, "namespace": "shop"},
        "spec": {"selector": {"matchLabels": {"app": "web"}}, "probes": probes}}),
    )
    .unwrap()
}

fn web_marker() -> PodProbeMarker {
    marker(
        "m",
        json!([{"name": "ready", "containerName": "main", "probe": {"exec": {"command": ["true"]}},
            "podConditionType": "example.com/ready",
            "markerPolicy": [
                {"state": "Succeeded", "labels": {"serving": "true"}, "annotations": {"probed": "ok"}},
                {"state": "Failed", "labels": {"serving": "false", "drain": "yes"}}]}]),
    )
}

fn pod(labels: Value, conditions: Value) -> PodRecord {
    serde_json::from_value(
        json!({"metadata": {"name": "a", "namespace": "shop", "uid": "u1", "labels": labels},
        "spec": {"nodeName": "n1", "containers": [{"name": "main"}]},
        "status": {"phase": "Running", "conditions": conditions}}),
    )
    .unwrap()
}

fn status(state: &str, message: &str) -> PodProbeStatus {
    serde_json::from_value(
        json!({"name": "a", "namespace": "shop", "uid": "u1", "probeStates": [
        {"name": "m#ready", "state": state, "lastProbeTime": "2026-01-01T00:00:05Z",
         "lastTransitionTime": "2026-01-01T00:00:01Z", "message": message}]}),
    )
    .unwrap()
}

fn npp(entries: Value, statuses: Vec<PodProbeStatus>) -> NodePodProbe {
    let mut n: NodePodProbe = serde_json::from_value(json!({"apiVersion": "apps.kruise.io/v1alpha1",
        "kind": "NodePodProbe", "metadata": {"name": "n1"}, "spec": {"podProbes": entries}}))
    .unwrap();
    n.status = Some(kruise_api::apps_v1alpha1::NodePodProbeStatus {
        pod_probe_statuses: statuses,
    });
    n
}

/// The pod after the marks, as JSON (labels, annotations, conditions).
fn marked(p: &PodRecord, m: &Marks) -> (Value, Value, Value, bool) {
    let mut labels = p.metadata.labels.to_btree_map().unwrap_or_default();
    let mut annotations = p.metadata.annotations.to_btree_map().unwrap_or_default();
    let mut conditions = conditions_of(p);
    let changed = m.apply(&mut labels, &mut annotations, &mut conditions);
    (
        serde_json::to_value(labels).unwrap(),
        serde_json::to_value(annotations).unwrap(),
        serde_json::to_value(conditions).unwrap(),
        changed,
    )
}

#[test]
fn only_ready_live_nodes_want_a_node_pod_probe() {
    assert!(wants_node_pod_probe(&node("True", false)));
    assert!(!wants_node_pod_probe(&node("False", false)));
    assert!(!wants_node_pod_probe(&node("True", true)));
}

#[test]
fn succeeded_sets_the_condition_true_and_the_succeeded_policy() {
    let m = web_marker();
    let p = pod(
        json!({"app": "web", "serving": "false", "drain": "yes"}),
        json!([]),
    );
    let marks = super::marks("shop", &status("Succeeded", ""), |_, n| (n == "m").then_some(&m));
    let (labels, annotations, conditions, changed) = marked(&p, &marks);
    assert!(changed);
    assert_eq!(labels, json!({"app": "web", "serving": "true"}));
    assert_eq!(annotations, json!({"probed": "ok"}));
    assert_eq!(
        conditions,
        json!([{"type": "example.com/ready", "status": "True", "lastProbeTime": "2026-01-01T00:00:05Z",
            "lastTransitionTime": "2026-01-01T00:00:01Z"}])
    );
}

#[test]
fn failed_and_unknown_set_the_condition_false_and_remove_the_other_policy() {
    let m = web_marker();
    let p = pod(
        json!({"app": "web", "serving": "true"}),
        json!([{"type": "example.com/ready", "status": "True"}]),
    );
    let marks = super::marks("shop", &status("Failed", "exit 1"), |_, n| {
        (n == "m").then_some(&m)
    });
    let (labels, annotations, conditions, _) = marked(&p, &marks);
    assert_eq!(labels, json!({"app": "web", "serving": "false", "drain": "yes"}));
    assert_eq!(annotations, json!({}));
    assert_eq!(conditions[0]["status"], "False");
    assert_eq!(conditions[0]["message"], "exit 1");
    // Unknown: no policy matches; the last listed one (Failed) is removed.
    let p = pod(
        json!({"app": "web", "serving": "false", "drain": "yes"}),
        json!([]),
    );
    let marks = super::marks("shop", &status("Unknown", ""), |_, n| (n == "m").then_some(&m));
    let (labels, _, conditions, _) = marked(&p, &marks);
    assert_eq!(labels, json!({"app": "web"}));
    assert_eq!(conditions[0]["status"], "False");
}

#[test]
fn an_unchanged_pod_is_not_written_and_a_changed_message_is() {
    let m = web_marker();
    let p = pod(
        json!({"app": "web", "serving": "true"}),
        json!([{"type": "example.com/ready", "status": "True", "message": "ok"}]),
    );
    let p = {
        let mut p = p;
        p.metadata.annotations =
            kruise_api::pod::InternedMap::from(Some([("probed".to_string(), "ok".to_string())].into()));
        p
    };
    let same = super::marks("shop", &status("Succeeded", "ok"), |_, n| {
        (n == "m").then_some(&m)
    });
    assert!(!changes(&same, &p));
    let other = super::marks("shop", &status("Succeeded", "still ok"), |_, n| {
        (n == "m").then_some(&m)
    });
    assert!(changes(&other, &p));
}

#[test]
fn results_of_gone_markers_or_removed_probes_are_ignored() {
    let gone = super::marks("shop", &status("Succeeded", ""), |_, _| None);
    assert_eq!(gone, Marks::default());
    let other_probe = marker(
        "m",
        json!([{"name": "else", "containerName": "main", "probe": {}, "podConditionType": "x"}]),
    );
    let removed = super::marks("shop", &status("Succeeded", ""), |_, n| {
        (n == "m").then_some(&other_probe)
    });
    assert_eq!(removed, Marks::default());
}

#[test]
fn a_node_pod_probe_without_its_node_is_deleted() {
    let n = npp(json!([]), vec![]);
    let got = plan(&Input {
        npp: &n,
        node: None,
        pod: |_, _| None,
        marker: |_, _| None,
    });
    assert!(got.delete);
    let deleting = node("True", true);
    let got = plan(&Input {
        npp: &n,
        node: Some(&deleting),
        pod: |_, _| None,
        marker: |_, _| None,
    });
    assert!(got.delete);
}

#[test]
fn gone_and_replaced_pods_are_pruned_and_live_ones_marked() {
    let m = web_marker();
    let p = pod(json!({"app": "web"}), json!([]));
    let n = npp(
        json!([
            {"name": "a", "namespace": "shop", "uid": "u1", "IP": "1.1.1.1"},
            {"name": "a", "namespace": "shop", "uid": "old-uid", "IP": "1.1.1.1"},
            {"name": "gone", "namespace": "shop", "uid": "u9", "IP": "1.1.1.9"}
        ]),
        vec![status("Succeeded", "")],
    );
    let ready = node("True", false);
    let got = plan(&Input {
        npp: &n,
        node: Some(&ready),
        pod: |ns, name| (ns == "shop" && name == "a").then_some(&p),
        marker: |_, name| (name == "m").then_some(&m),
    });
    assert!(!got.delete);
    let spec = serde_json::to_value(got.spec.unwrap()).unwrap();
    assert_eq!(
        spec,
        json!({"podProbes": [{"name": "a", "namespace": "shop", "uid": "u1", "IP": "1.1.1.1"}]})
    );
    assert_eq!(got.pods.len(), 1);
    assert_eq!((got.pods[0].0.as_str(), got.pods[0].1.as_str()), ("shop", "a"));
    let (labels, ..) = marked(&p, &got.pods[0].3);
    assert_eq!(labels, json!({"app": "web", "serving": "true"}));
}
