use kruise_core::view::MemoryView;
use serde_json::{Value, json};

use super::*;

fn pps(version: &str, name: &str, spec: Value) -> Value {
    json!({"apiVersion": format!("apps.kruise.io/{version}"), "kind": "PersistentPodState",
        "metadata": {"name": name, "namespace": "prod"}, "spec": spec})
}

fn zone(target: &str) -> Value {
    json!({"targetRef": {"apiVersion": "apps/v1", "kind": "StatefulSet", "name": target},
        "requiredPersistentTopology": {"keys": ["topology.kubernetes.io/zone"]}})
}

fn request(operation: &str, object: &Value, old: Option<&Value>) -> AdmissionRequest {
    let version = object["apiVersion"].as_str().unwrap().rsplit_once('/').unwrap().1;
    let mut review = json!({"uid": "1", "operation": operation, "name": object["metadata"]["name"], "namespace": "prod",
        "kind": {"group": "apps.kruise.io", "version": version, "kind": "PersistentPodState"},
        "resource": {"group": "apps.kruise.io", "version": version, "resource": "persistentpodstates"},
        "userInfo": {"username": "u"}, "object": object});
    if let Some(old) = old {
        review["oldObject"] = old.clone();
    }
    serde_json::from_value(review).unwrap()
}

fn check(view: &MemoryView, operation: &str, object: &Value, old: Option<&Value>) -> Result<(), String> {
    let d = validate(&request(operation, object, old), view);
    match d.denial {
        None => Ok(()),
        Some(denial) => {
            assert_eq!(denial.code, 422, "{denial:?}");
            Err(denial.message)
        }
    }
}

#[test]
fn statefulset_targets_with_a_topology_are_allowed_in_both_versions() {
    let view = MemoryView::default();
    let advanced = json!({"targetRef": {"apiVersion": "apps.kruise.io/v1beta1", "kind": "StatefulSet", "name": "db"},
        "preferredPersistentTopology": [{"weight": 100, "preference": {"keys": ["kubernetes.io/hostname"]}}]});
    check(&view, "CREATE", &pps("v1beta1", "web", zone("web")), None).unwrap();
    check(&view, "CREATE", &pps("v1beta1", "db", advanced), None).unwrap();
    let alpha = json!({"targetRef": {"apiVersion": "apps/v1", "kind": "StatefulSet", "name": "web"},
        "requiredPersistentTopology": {"nodeTopologyKeys": ["zone"]}});
    check(&view, "CREATE", &pps("v1alpha1", "web", alpha), None).unwrap();
}

#[test]
fn openkruise_rules_refuse_with_its_messages() {
    let view = MemoryView::default();
    let cases = [
        (
            json!({"targetRef": {"apiVersion": "apps/v1", "kind": "StatefulSet", "name": ""},
                "requiredPersistentTopology": {"keys": ["zone"]}}),
            "spec.targetRef: Invalid value: v1beta1.TargetReference{APIVersion:\"apps/v1\", Kind:\"StatefulSet\", Name:\"\"}: empty targetRef is not valid for PersistentPodState.",
        ),
        (
            json!({"targetRef": {"apiVersion": "apps/v1", "kind": "Deployment", "name": "web"},
                "requiredPersistentTopology": {"keys": ["zone"]}}),
            "targetRef.Kind must be StatefulSet or in PPS_Watch_Custom_Workload_WhiteList",
        ),
        (
            json!({"targetRef": {"apiVersion": "apps/v1", "kind": "StatefulSet", "name": "web"}}),
            "spec: Invalid value: v1beta1.PersistentPodStateSpec{…}: TopologyConstraint and TopologyPreference cannot be empty at the same time",
        ),
        (
            json!({"targetRef": {"apiVersion": "apps/v1", "kind": "StatefulSet", "name": "web"},
                "preferredPersistentTopology": [{"weight": 0, "preference": {"keys": ["zone"]}}]}),
            "spec.preferredPersistentTopology[0].weight: Invalid value: 0: must be in the range 1-100",
        ),
    ];
    for (spec, expected) in cases {
        let err = check(&view, "CREATE", &pps("v1beta1", "web", spec), None).unwrap_err();
        assert!(err.contains(expected), "{err}\nwanted: {expected}");
    }
}

#[test]
fn the_target_is_immutable_and_unique_per_workload() {
    let mut view = MemoryView::default();
    let old = pps("v1beta1", "web", zone("web"));
    let err = check(&view, "UPDATE", &pps("v1beta1", "web", zone("other")), Some(&old)).unwrap_err();
    assert_eq!(err, "spec.targetRef: Forbidden: targetRef is immutable");
    // The same object updated with its own target is fine; a second one on the same workload (any
    // version of its group) is not.
    view.add(old.clone()).unwrap();
    check(&view, "UPDATE", &old, Some(&old)).unwrap();
    let mut same_group = zone("web");
    same_group["targetRef"]["apiVersion"] = json!("apps/v1beta2");
    let err = check(&view, "CREATE", &pps("v1beta1", "web-2", same_group), None).unwrap_err();
    assert!(
        err.ends_with("targetRef is in conflict with other PersistentPodState web"),
        "{err}"
    );
    let mut advanced = zone("web");
    advanced["targetRef"]["apiVersion"] = json!("apps.kruise.io/v1beta1");
    check(&view, "CREATE", &pps("v1beta1", "web-3", advanced), None).unwrap();
}
