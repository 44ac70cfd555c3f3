//! A new daemon pod for one node (Kubernetes' `CreatePods` as OpenKruise's DaemonSet calls it).

use k8s_openapi::api::core::v1::{
    Affinity, NodeAffinity, NodeSelector, NodeSelectorRequirement, NodeSelectorTerm, Pod, PodReadinessGate,
};
use k8s_openapi::apimachinery::pkg::apis::meta::v1::ObjectMeta;
use k8s_openapi::jiff::Timestamp;
use kruise_api::apps_v1beta1::{
    DEPRECATED_TEMPLATE_GENERATION_ANNOTATION, DaemonSet, POD_TEMPLATE_GENERATION_LABEL, RollingUpdateType,
};
use kruise_api::common::IN_PLACE_UPDATE_READY;
use kruise_core::node_fit::daemon_tolerations;

use crate::daemonset::revision::{ds_name, owner_reference};
use crate::history::{FNV_OFFSET, fnv1_32, safe_encode};
use crate::pods::CONTROLLER_REVISION_HASH;

/// The rollout updates pods in place where it can (`rollingUpdateType: InPlaceIfPossible`).
pub fn in_place(ds: &DaemonSet) -> bool {
    ds.spec
        .update_strategy
        .rolling_update
        .as_ref()
        .and_then(|r| r.type_.as_ref())
        == Some(&RollingUpdateType::InPlaceIfPossible)
}

/// The name of a new pod: `<ds>-` and five characters of the alphabet of generated names, hashed from
/// the node, the revision and the time. Upstream lets the apiserver pick (`generateName`); choosing it
/// here lets the loop's expectations wait for exactly that pod (a clash is a 409, planned again).
pub fn pod_name(ds: &DaemonSet, node: &str, hash: &str, now: Timestamp) -> String {
    let seed = format!("{node}/{hash}/{}", now.as_nanosecond());
    let h = fnv1_32(seed.bytes(), FNV_OFFSET);
    let suffix: String = safe_encode(&h.to_string()).chars().rev().take(5).collect();
    format!("{}-{suffix}", ds_name(ds))
}

/// The pod of `ds` for `node` at revision `hash`: the template's metadata and spec, the hash label,
/// the controller ownerReference, the daemon tolerations, the required node affinity replaced by
/// `metadata.name In [node]`, and the `InPlaceUpdateReady` gate when the rollout is in place.
pub fn new_pod(ds: &DaemonSet, node: &str, hash: &str, now: Timestamp) -> Pod {
    let template = &ds.spec.template;
    let meta = template.metadata.clone().unwrap_or_default();
    let mut labels = meta.labels.unwrap_or_default();
    labels.insert(CONTROLLER_REVISION_HASH.into(), hash.to_owned());
    if ds
        .metadata
        .annotations
        .as_ref()
        .is_some_and(|a| a.contains_key(DEPRECATED_TEMPLATE_GENERATION_ANNOTATION))
        && let Some(generation) = ds.metadata.generation
    {
        labels.insert(POD_TEMPLATE_GENERATION_LABEL.into(), generation.to_string());
    }
    let mut spec = template.spec.clone().unwrap_or_default();
    spec.tolerations = Some(daemon_tolerations(&spec));
    let pin = NodeSelectorTerm {
        match_fields: Some(vec![NodeSelectorRequirement {
            key: "metadata.name".into(),
            operator: "In".into(),
            values: Some(vec![node.to_owned()]),
        }]),
        ..Default::default()
    };
    let affinity = spec.affinity.get_or_insert_with(Affinity::default);
    let node_affinity = affinity.node_affinity.get_or_insert_with(NodeAffinity::default);
    node_affinity.required_during_scheduling_ignored_during_execution = Some(NodeSelector {
        node_selector_terms: vec![pin],
    });
    if in_place(ds) {
        let gates = spec.readiness_gates.get_or_insert_with(Vec::new);
        if !gates.iter().any(|g| g.condition_type == IN_PLACE_UPDATE_READY) {
            gates.push(PodReadinessGate {
                condition_type: IN_PLACE_UPDATE_READY.into(),
            });
        }
    }
    Pod {
        metadata: ObjectMeta {
            name: Some(pod_name(ds, node, hash, now)),
            generate_name: Some(format!("{}-", ds_name(ds))),
            namespace: ds.metadata.namespace.clone(),
            labels: Some(labels),
            annotations: meta.annotations,
            finalizers: meta.finalizers,
            owner_references: Some(vec![owner_reference(ds)]),
            ..Default::default()
        },
        spec: Some(spec),
        status: None,
    }
}
