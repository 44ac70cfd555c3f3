//! `/mutate-pod` (a pod joins a subset) and `/validate-pod` (a pod leaves one) read a WorkloadSpread's
//! target replicas the same way — OpenKruise's `getWorkloadReplicas`, once in
//! `kruise_core::owner::workload_replicas` — so both initialise the same subset statuses.

use crate::common;

use common::pod_mutate::{create_request, patched, run, view_of};
use k8s_openapi::jiff::Timestamp;
use kruise_webhooks::{AdmissionRequest, Decision, MemoryView, Settings, pod_validate};
use serde_json::{Value, json};

/// A CloneSet of 4 replicas, served as `api_version`.
fn cloneset(api_version: &str) -> Value {
    json!({"apiVersion": api_version, "kind": "CloneSet",
        "metadata": {"name": "web", "namespace": "shop", "uid": "cs-uid"},
        "spec": {"replicas": 4, "selector": {"matchLabels": {"app": "web"}},
            "template": {"metadata": {"labels": {"app": "web"}},
                "spec": {"containers": [{"name": "app", "image": "nginx"}]}}}})
}

/// A WorkloadSpread over the CloneSet (targeted as `api_version`): zone-a takes half of its replicas,
/// zone-b the rest, without limit.
fn spread(api_version: &str, replicas_paths: Option<&[&str]>) -> Value {
    let mut spec = json!({
        "targetRef": {"apiVersion": api_version, "kind": "CloneSet", "name": "web"},
        "subsets": [{"name": "zone-a", "maxReplicas": "50%"}, {"name": "zone-b"}],
    });
    if let Some(paths) = replicas_paths {
        spec["targetFilter"] =
            json!({"selector": {"matchLabels": {"app": "web"}}, "replicasPathList": paths});
    }
    json!({"apiVersion": "apps.kruise.io/v1beta1", "kind": "WorkloadSpread",
        "metadata": {"name": "web-ws", "namespace": "shop", "resourceVersion": "20"}, "spec": spec})
}

/// A running pod of the CloneSet, owned as `api_version`, in `subset` (or none).
fn pod(api_version: &str, subset: Option<&str>) -> Value {
    let mut pod = json!({"apiVersion": "v1", "kind": "Pod",
        "metadata": {"name": "web-1", "namespace": "shop", "labels": {"app": "web"},
            "ownerReferences": [{"apiVersion": api_version, "kind": "CloneSet", "name": "web",
                "uid": "cs-uid", "controller": true}]},
        "spec": {"containers": [{"name": "app", "image": "nginx"}]},
        "status": {"phase": "Running"}});
    if let Some(subset) = subset {
        pod["metadata"]["annotations"] = json!({"apps.kruise.io/matched-workloadspread":
            json!({"name": "web-ws", "subset": subset}).to_string()});
    }
    pod
}

fn delete(view: &MemoryView, pod: &Value) -> Decision {
    let request: AdmissionRequest = serde_json::from_value(json!({"uid": "u",
        "kind": {"group": "", "version": "v1", "kind": "Pod"},
        "resource": {"group": "", "version": "v1", "resource": "pods"},
        "name": "web-1", "namespace": "shop", "operation": "DELETE", "oldObject": pod,
        "options": {"kind": "DeleteOptions", "apiVersion": "meta.k8s.io/v1"}}))
    .unwrap();
    let now: Timestamp = "2024-05-01T10:00:00Z".parse().unwrap();
    pod_validate::validate_at(&request, view, &Settings::default(), now)
}

/// The subset a created pod was put in, read from the patched pod.
fn joined_subset(view: &MemoryView, pod: &Value) -> String {
    let request = create_request(pod, "shop");
    let decision = run(&request, view);
    assert!(decision.denial.is_none(), "{:?}", decision.denial);
    let out = patched(&request, &decision);
    let matched = out["metadata"]["annotations"]["apps.kruise.io/matched-workloadspread"]
        .as_str()
        .expect("the pod joined a subset");
    serde_json::from_str::<Value>(matched).unwrap()["subset"]
        .as_str()
        .unwrap()
        .to_string()
}

/// zone-a's `missingReplicas` in the status a deletion from zone-a writes.
fn zone_a_after_deletion(view: &MemoryView, pod: &Value) -> i64 {
    let decision = delete(view, pod);
    assert!(decision.denial.is_none(), "{:?}", decision.denial);
    let [write] = decision.writes.as_slice() else {
        panic!("one status write expected: {:?}", decision.writes);
    };
    let status = write.new_status(view).unwrap();
    let statuses = &status["versionedSubsetStatuses"]["versionIgnored"];
    let zone_a = statuses
        .as_array()
        .unwrap()
        .iter()
        .find(|s| s["name"] == "zone-a")
        .unwrap();
    zone_a["missingReplicas"].as_i64().unwrap()
}

/// Both served CloneSet versions count their replicas (OpenKruise has only v1alpha1; kruise-rs stores
/// v1beta1 and kubectl writes it, so a target naming it is not a custom workload counting 0).
#[test]
fn a_cloneset_target_counts_its_replicas_on_both_paths_in_either_version() {
    for version in ["apps.kruise.io/v1alpha1", "apps.kruise.io/v1beta1"] {
        let view = view_of(&[cloneset(version), spread(version, None)]);
        assert_eq!(joined_subset(&view, &pod(version, None)), "zone-a", "{version}");
        let leaving = pod(version, Some("zone-a"));
        assert_eq!(
            zone_a_after_deletion(&view, &leaving),
            3,
            "{version}: 50% of 4, one more missing"
        );
    }
}

#[test]
fn a_replicas_path_that_does_not_exist_is_refused_on_both_paths() {
    let view = view_of(&[
        cloneset("apps.kruise.io/v1alpha1"),
        spread("apps.kruise.io/v1alpha1", Some(&["spec.shards"])),
    ]);
    let created = run(
        &create_request(&pod("apps.kruise.io/v1alpha1", None), "shop"),
        &view,
    );
    let deleted = delete(&view, &pod("apps.kruise.io/v1alpha1", Some("zone-a")));
    for (path, decision) in [("create", created), ("delete", deleted)] {
        let denial = decision.denial.unwrap_or_else(|| panic!("{path}: allowed"));
        assert_eq!(denial.message, "path \"shards\" not exists");
        assert!(decision.writes.is_empty());
    }
}
