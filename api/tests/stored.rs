//! Objects as Kubernetes stores them decode: every field Go's decoder would leave at its zero value
//! when absent decodes to a default here too (objects written by older OpenKruise versions, by other
//! writers, or before defaulting).

use kruise_api::{apps_v1alpha1, apps_v1beta1, decode, policy_v1alpha1, policy_v1beta1};
use serde_json::{Value, json};

/// Decodes `value` as the typed struct of its kind and version.
fn decodes(value: &Value) -> Result<(), String> {
    let kind = value["kind"].as_str().unwrap_or("");
    let beta = value["apiVersion"]
        .as_str()
        .is_some_and(|v| v.ends_with("/v1beta1"));
    let result = match (kind, beta) {
        ("CloneSet", true) => decode::<apps_v1beta1::CloneSet>(kind, value).map(drop),
        ("CloneSet", false) => decode::<apps_v1alpha1::CloneSet>(kind, value).map(drop),
        ("SidecarSet", true) => decode::<apps_v1beta1::SidecarSet>(kind, value).map(drop),
        ("SidecarSet", false) => decode::<apps_v1alpha1::SidecarSet>(kind, value).map(drop),
        ("WorkloadSpread", true) => decode::<apps_v1beta1::WorkloadSpread>(kind, value).map(drop),
        ("WorkloadSpread", false) => decode::<apps_v1alpha1::WorkloadSpread>(kind, value).map(drop),
        ("StatefulSet", true) => decode::<apps_v1beta1::StatefulSet>(kind, value).map(drop),
        ("StatefulSet", false) => decode::<apps_v1alpha1::StatefulSet>(kind, value).map(drop),
        ("DaemonSet", true) => decode::<apps_v1beta1::DaemonSet>(kind, value).map(drop),
        ("DaemonSet", false) => decode::<apps_v1alpha1::DaemonSet>(kind, value).map(drop),
        ("ResourceDistribution", true) => decode::<apps_v1beta1::ResourceDistribution>(kind, value).map(drop),
        ("ResourceDistribution", false) => {
            decode::<apps_v1alpha1::ResourceDistribution>(kind, value).map(drop)
        }
        ("UnitedDeployment", true) => decode::<apps_v1beta1::UnitedDeployment>(kind, value).map(drop),
        ("UnitedDeployment", false) => decode::<apps_v1alpha1::UnitedDeployment>(kind, value).map(drop),
        ("ContainerRecreateRequest", true) => {
            decode::<apps_v1beta1::ContainerRecreateRequest>(kind, value).map(drop)
        }
        ("ContainerRecreateRequest", false) => {
            decode::<apps_v1alpha1::ContainerRecreateRequest>(kind, value).map(drop)
        }
        ("PersistentPodState", true) => decode::<apps_v1beta1::PersistentPodState>(kind, value).map(drop),
        ("PersistentPodState", false) => decode::<apps_v1alpha1::PersistentPodState>(kind, value).map(drop),
        ("PodUnavailableBudget", true) => {
            decode::<policy_v1beta1::PodUnavailableBudget>(kind, value).map(drop)
        }
        ("PodUnavailableBudget", false) => {
            decode::<policy_v1alpha1::PodUnavailableBudget>(kind, value).map(drop)
        }
        ("BroadcastJob", false) => decode::<apps_v1alpha1::BroadcastJob>(kind, value).map(drop),
        ("AdvancedCronJob", false) => decode::<apps_v1alpha1::AdvancedCronJob>(kind, value).map(drop),
        ("EphemeralJob", false) => decode::<apps_v1alpha1::EphemeralJob>(kind, value).map(drop),
        ("PodProbeMarker", false) => decode::<apps_v1alpha1::PodProbeMarker>(kind, value).map(drop),
        ("NodePodProbe", false) => decode::<apps_v1alpha1::NodePodProbe>(kind, value).map(drop),
        _ => return Err(format!("unexpected kind {kind}")),
    };
    result.map_err(|e| e.to_string())
}

/// A stored object of each kind and version: only what identifies it, an empty spec and an empty
/// status. (An absent `spec` is filled in by `kruise-core`'s decoding, which the root types' derive
/// cannot default.)
fn minimal(api_version: &str, kind: &str) -> Value {
    json!({"apiVersion": api_version, "kind": kind, "metadata": {"name": "x", "namespace": "ns"},
        "spec": {}, "status": {}})
}

const KINDS: &[(&str, &str)] = &[
    ("apps.kruise.io", "CloneSet"),
    ("apps.kruise.io", "StatefulSet"),
    ("apps.kruise.io", "DaemonSet"),
    ("apps.kruise.io", "SidecarSet"),
    ("apps.kruise.io", "WorkloadSpread"),
    ("apps.kruise.io", "ResourceDistribution"),
    ("apps.kruise.io", "UnitedDeployment"),
    ("apps.kruise.io", "PersistentPodState"),
    ("apps.kruise.io", "ContainerRecreateRequest"),
    ("policy.kruise.io", "PodUnavailableBudget"),
];

/// Kinds served in `v1alpha1` only.
const ALPHA_ONLY: &[(&str, &str)] = &[
    ("apps.kruise.io", "BroadcastJob"),
    ("apps.kruise.io", "AdvancedCronJob"),
    ("apps.kruise.io", "EphemeralJob"),
    ("apps.kruise.io", "PodProbeMarker"),
    ("apps.kruise.io", "NodePodProbe"),
];

#[test]
fn a_minimal_stored_object_of_every_alpha_only_kind_decodes() {
    for (group, kind) in ALPHA_ONLY {
        let object = minimal(&format!("{group}/v1alpha1"), kind);
        assert_eq!(decodes(&object), Ok(()), "{kind}");
        let mut no_status = object.clone();
        no_status.as_object_mut().unwrap().remove("status");
        assert_eq!(decodes(&no_status), Ok(()), "{kind} without status");
    }
}

#[test]
fn a_minimal_stored_object_of_every_kind_and_version_decodes() {
    for (group, kind) in KINDS {
        for version in ["v1alpha1", "v1beta1"] {
            let object = minimal(&format!("{group}/{version}"), kind);
            assert_eq!(decodes(&object), Ok(()), "{kind} {version}");
            let mut no_status = object.clone();
            no_status.as_object_mut().unwrap().remove("status");
            assert_eq!(decodes(&no_status), Ok(()), "{kind} {version} without status");
        }
    }
}

#[test]
fn a_clone_set_status_from_before_available_replicas_decodes_to_zero() {
    let object = json!({"apiVersion": "apps.kruise.io/v1beta1", "kind": "CloneSet",
        "metadata": {"name": "web", "namespace": "shop"},
        "spec": {"replicas": 2, "selector": {"matchLabels": {"app": "web"}}},
        "status": {"observedGeneration": 1, "replicas": 2, "readyReplicas": 2, "updatedReplicas": 2,
            "updatedReadyReplicas": 2}});
    let set: apps_v1beta1::CloneSet = decode("CloneSet", &object).unwrap();
    let status = set.status.unwrap();
    assert_eq!((status.available_replicas, status.ready_replicas), (0, 2));
    assert!(
        set.spec.template.spec.is_none(),
        "a CloneSet without spec.template decodes"
    );
}

#[test]
fn a_budget_status_without_current_available_decodes_to_zero() {
    let object = json!({"apiVersion": "policy.kruise.io/v1alpha1", "kind": "PodUnavailableBudget",
        "metadata": {"name": "web", "namespace": "shop"}, "spec": {"maxUnavailable": 1},
        "status": {"unavailableAllowed": 1, "desiredAvailable": 2, "totalReplicas": 3}});
    let budget: policy_v1alpha1::PodUnavailableBudget = decode("PodUnavailableBudget", &object).unwrap();
    let status = budget.status.unwrap();
    assert_eq!((status.current_available, status.unavailable_allowed), (0, 1));
}

/// Every object key below `spec` and `status` of `value`, as JSON pointers.
fn keys(value: &Value, at: &str, out: &mut Vec<String>) {
    match value {
        Value::Object(map) => {
            for (k, v) in map {
                let here = format!("{at}/{k}");
                out.push(here.clone());
                keys(v, &here, out);
            }
        }
        Value::Array(items) => {
            for (i, v) in items.iter().enumerate() {
                keys(v, &format!("{at}/{i}"), out);
            }
        }
        _ => {}
    }
}

fn without(value: &Value, pointer: &str) -> Value {
    let mut out = value.clone();
    let (parent, key) = pointer.rsplit_once('/').unwrap();
    if let Some(map) = out.pointer_mut(parent).and_then(Value::as_object_mut) {
        map.remove(key);
    }
    out
}

/// Fields of Kubernetes' own types (k8s-openapi) are decoded as k8s-openapi does; only kruise's own
/// fields are checked here.
fn inside_kubernetes_type(pointer: &str) -> bool {
    [
        "/template/",
        "/volumeClaimTemplates/",
        "/containers/",
        "/initContainers/",
        "/volumes/",
        "/matchExpressions/",
        "/imagePullSecrets/",
        "/tolerations/",
        "/nodeSelectorTerms/",
        "/preferredNodeSelectorTerms/",
        "/requiredNodeSelectorTerm/",
        "/jobTemplate/",
        "/active/",
        "/probe/",
    ]
    .iter()
    .any(|segment| pointer.contains(segment))
}

#[test]
fn dropping_any_kruise_field_of_a_full_object_still_decodes() {
    let docs: Vec<Value> = [
        include_str!("../../examples/cluster/podunavailablebudget.yaml"),
        include_str!("../../examples/cluster/sidecarset.yaml"),
        include_str!("../../examples/cluster/workloadspread.yaml"),
        include_str!("../../examples/cluster/resourcedistribution.yaml"),
        include_str!("../../examples/cluster/uniteddeployment.yaml"),
        include_str!("../../examples/cluster/persistentpodstate.yaml"),
        include_str!("../../examples/cluster/containerrecreaterequest.yaml"),
        include_str!("../../examples/playground/cloneset.yaml"),
        include_str!("../../examples/openkruise-samples/v1beta1/statefulset.yaml"),
        include_str!("../../examples/playground/broadcastjob.yaml"),
        include_str!("../../examples/playground/advancedcronjob.yaml"),
        include_str!("../../examples/playground/ephemeraljob.yaml"),
        include_str!("../../examples/cluster/podprobemarker.yaml"),
        include_str!("../../examples/openkruise-samples/v1beta1/daemonset.yaml"),
        include_str!("../../examples/openkruise-samples/docs-v1alpha1/daemonset.yaml"),
    ]
    .iter()
    .flat_map(|text| serde_saphyr::from_multiple::<Value>(text).unwrap())
    .filter(|doc| {
        KINDS
            .iter()
            .chain(ALPHA_ONLY)
            .any(|(_, kind)| doc["kind"] == *kind)
    })
    .collect();
    assert!(docs.len() >= 10, "{docs:?}");
    let mut failures = Vec::new();
    for doc in &docs {
        assert_eq!(decodes(doc), Ok(()), "{doc}");
        let mut pointers = Vec::new();
        for part in ["spec", "status"] {
            if let Some(v) = doc.get(part) {
                keys(v, &format!("/{part}"), &mut pointers);
            }
        }
        for pointer in pointers.iter().filter(|p| !inside_kubernetes_type(p)) {
            if let Err(e) = decodes(&without(doc, pointer)) {
                failures.push(format!("{} without {pointer}: {e}", doc["kind"]));
            }
        }
    }
    assert!(failures.is_empty(), "{}", failures.join("\n"));
}
