//! Step 6 of `/mutate-pod`: a StatefulSet pod recreated under a recorded name gets its recorded node
//! topology back (node selector for required keys, preferred node affinity for preferred terms),
//! through the whole pipeline, with the patch applied to the pod as the apiserver sent it.

use crate::common;

use common::pod_mutate::{create_request, patched, run, view_of};
use serde_json::{Value, json};

const ZONE: &str = "topology.kubernetes.io/zone";
const HOST: &str = "kubernetes.io/hostname";

fn pps(target_api_version: &str, status_pod: &str) -> Value {
    json!({"apiVersion": "apps.kruise.io/v1beta1", "kind": "PersistentPodState",
        "metadata": {"name": "web-state", "namespace": "prod"},
        "spec": {"targetRef": {"apiVersion": target_api_version, "kind": "StatefulSet", "name": "web"},
            "requiredPersistentTopology": {"keys": [ZONE, "missing-key"]},
            "preferredPersistentTopology": [
                {"weight": 100, "preference": {"keys": [HOST]}},
                {"weight": 10, "preference": {"keys": ["missing-key"]}}]},
        "status": {"observedGeneration": 1, "podStates": {status_pod: {"nodeName": "node-b",
            "nodeTopologyLabels": {ZONE: "zone-b", HOST: "node-b"}}}}})
}

fn pod(name: &str, owner_api_version: &str, spec_extra: Value) -> Value {
    let mut spec = json!({"containers": [{"name": "nginx", "image": "nginx:1.25"}]});
    if let (Value::Object(spec), Value::Object(extra)) = (&mut spec, spec_extra) {
        spec.extend(extra);
    }
    json!({"apiVersion": "v1", "kind": "Pod",
        "metadata": {"name": name, "namespace": "prod", "labels": {"app": "web"},
            "ownerReferences": [{"apiVersion": owner_api_version, "kind": "StatefulSet", "name": "web",
                "uid": "u1", "controller": true, "blockOwnerDeletion": true}]},
        "spec": spec})
}

fn mutate(view_objects: &[Value], pod: &Value) -> Value {
    let view = view_of(view_objects);
    let request = create_request(pod, "prod");
    let decision = run(&request, &view);
    assert!(decision.allowed(), "{:?}", decision.denial);
    patched(&request, &decision)
}

#[test]
fn a_recreated_pod_gets_its_zone_required_and_its_node_preferred() {
    let out = mutate(&[pps("apps/v1", "web-1")], &pod("web-1", "apps/v1", json!({})));
    assert_eq!(out["spec"]["nodeSelector"], json!({ZONE: "zone-b"}));
    assert_eq!(
        out["spec"]["affinity"],
        json!({"nodeAffinity": {"preferredDuringSchedulingIgnoredDuringExecution": [
            {"weight": 100, "preference": {"matchExpressions": [{"key": HOST, "operator": "In", "values": ["node-b"]}]}},
            {"weight": 10, "preference": {}}]}})
    );
    assert_eq!(
        out["metadata"]["annotations"]["kruise.io/injected-persistent-pod-state"],
        "web-state"
    );
    // A second run over the injected pod adds nothing.
    let again = mutate(&[pps("apps/v1", "web-1")], &out);
    assert_eq!(again, out);
}

#[test]
fn existing_selectors_and_affinity_are_kept_and_appended_to() {
    let existing = json!({
        "nodeSelector": {"disk": "ssd", ZONE: "zone-a"},
        "affinity": {
            "nodeAffinity": {
                "requiredDuringSchedulingIgnoredDuringExecution": {"nodeSelectorTerms": [
                    {"matchExpressions": [{"key": "arch", "operator": "In", "values": ["amd64"]}]}]},
                "preferredDuringSchedulingIgnoredDuringExecution": [
                    {"weight": 5, "preference": {"matchExpressions": [{"key": "gpu", "operator": "Exists"}]}}]},
            "podAntiAffinity": {"preferredDuringSchedulingIgnoredDuringExecution": []}}});
    let out = mutate(
        &[pps("apps.kruise.io/v1beta1", "web-0")],
        &pod("web-0", "apps.kruise.io/v1beta1", existing.clone()),
    );
    // The same key is overwritten, other entries kept.
    assert_eq!(
        out["spec"]["nodeSelector"],
        json!({"disk": "ssd", ZONE: "zone-b"})
    );
    let na = &out["spec"]["affinity"]["nodeAffinity"];
    assert_eq!(
        na["requiredDuringSchedulingIgnoredDuringExecution"],
        existing["affinity"]["nodeAffinity"]["requiredDuringSchedulingIgnoredDuringExecution"]
    );
    let preferred = na["preferredDuringSchedulingIgnoredDuringExecution"]
        .as_array()
        .unwrap();
    let weights: Vec<i64> = preferred.iter().map(|t| t["weight"].as_i64().unwrap()).collect();
    assert_eq!(weights, [5, 100, 10]);
    assert_eq!(
        out["spec"]["affinity"]["podAntiAffinity"],
        existing["affinity"]["podAntiAffinity"]
    );
}

#[test]
fn pods_without_a_recorded_state_or_of_other_owners_are_untouched() {
    let view = [pps("apps/v1", "web-1")];
    let cases = [
        ("no state for this name", pod("web-2", "apps/v1", json!({}))),
        ("another kind of owner", {
            let mut p = pod("web-1", "apps/v1", json!({}));
            p["metadata"]["ownerReferences"][0]["kind"] = json!("ReplicaSet");
            p
        }),
        ("another group", pod("web-1", "example.com/v1", json!({}))),
        ("no owner", {
            let mut p = pod("web-1", "apps/v1", json!({}));
            p["metadata"].as_object_mut().unwrap().remove("ownerReferences");
            p
        }),
    ];
    for (name, p) in cases {
        let out = mutate(&view, &p);
        assert_eq!(out, p, "{name}");
    }
    // A PersistentPodState being deleted, or whose state has no topology, injects nothing.
    let mut deleting = pps("apps/v1", "web-1");
    deleting["metadata"]["deletionTimestamp"] = json!("2026-01-01T00:00:00Z");
    deleting["metadata"]["finalizers"] = json!(["x"]);
    let p = pod("web-1", "apps/v1", json!({}));
    assert_eq!(mutate(&[deleting], &p), p);
    let mut empty = pps("apps/v1", "web-1");
    empty["status"]["podStates"]["web-1"]["nodeTopologyLabels"] = json!({});
    assert_eq!(mutate(&[empty], &p), p);
}
