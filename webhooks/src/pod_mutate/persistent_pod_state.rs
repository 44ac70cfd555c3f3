//! Step 6 of `/mutate-pod`: PersistentPodState (OpenKruise's `persistentPodStateMutatingPod`;
//! docs/persistentpodstate.md#the-pod-webhook).
//!
//! A pod created by a StatefulSet (`apps` or `apps.kruise.io`) whose name has a recorded state in the
//! namespace's PersistentPodState for that StatefulSet is sent back where it ran:
//!
//! - each required key with a recorded value becomes a `spec.nodeSelector` entry (existing entries
//!   kept, the same key overwritten), as OpenKruise does;
//! - each preferred term is appended to the preferred node affinity with its weight and an `In`
//!   expression per key with a recorded value (a term with none is appended without expressions);
//! - the pod is annotated `kruise.io/injected-persistent-pod-state: <name>`.

use kruise_api::apps_v1beta1::{INJECTED_ANNOTATION, PersistentPodState, PodState};
use serde_json::{Map, Value, json};

use super::pub_annotation::{is_pods_resource, set_annotations};
use super::{PodContext, StepOutput, StepResult};
use crate::{
    owner::{self, ObjectRef},
    patch,
    view::ClusterView,
};

const PREFERRED: &str = "preferredDuringSchedulingIgnoredDuringExecution";

/// Step of `/mutate-pod`.
pub fn mutate(context: &PodContext<'_, impl ClusterView>, pod: &Value) -> StepResult {
    if !is_pods_resource(context.request) {
        return Ok(StepOutput::default());
    }
    let Some(owner) = owner::controller_of(pod).filter(is_stateful_set) else {
        return Ok(StepOutput::default());
    };
    let name = patch::get(pod, &["metadata", "name"])
        .and_then(Value::as_str)
        .unwrap_or(&context.request.name);
    let all = context
        .view
        .kinds()
        .persistent_pod_states
        .list(Some(context.namespace));
    let Some(pps) = all.iter().find(|p| targets(p, owner)) else {
        return Ok(StepOutput::default());
    };
    let Some(state) = pps.status.as_ref().and_then(|s| s.pod_states.get(name)) else {
        return Ok(StepOutput::default());
    };
    if state.node_topology_labels.is_empty() {
        return Ok(StepOutput::default());
    }
    let (selector, preferred) = affinity(pps, state);
    if selector.is_empty() && preferred.is_empty() {
        return Ok(StepOutput::default());
    }
    let pps_name = pps.metadata.name.as_deref().unwrap_or("");
    let mut ops = set_annotations(pod, &[(INJECTED_ANNOTATION, pps_name)]);
    ops.extend(node_selector_ops(pod, selector));
    if !preferred.is_empty() {
        ops.extend(append_preferred(pod, preferred));
    }
    Ok(StepOutput {
        patch: ops,
        ..StepOutput::default()
    })
}

fn is_stateful_set(owner: &ObjectRef<'_>) -> bool {
    owner.kind == "StatefulSet" && matches!(owner.group(), Ok("apps" | "apps.kruise.io"))
}

/// A PersistentPodState not being deleted whose target is the pod's controller.
fn targets(pps: &PersistentPodState, owner: ObjectRef<'_>) -> bool {
    let t = &pps.spec.target_ref;
    let target = ObjectRef {
        api_version: &t.api_version,
        kind: &t.kind,
        name: &t.name,
        uid: "",
    };
    pps.metadata.deletion_timestamp.is_none() && owner::same_group_kind_name(owner, target)
}

/// The node selector entries and preferred terms the recorded state gives.
fn affinity(pps: &PersistentPodState, state: &PodState) -> (Map<String, Value>, Vec<Value>) {
    let labels = &state.node_topology_labels;
    let selector = pps
        .spec
        .required_persistent_topology
        .iter()
        .flat_map(|t| &t.keys)
        .filter_map(|k| labels.get(k).map(|v| (k.clone(), Value::String(v.clone()))))
        .collect();
    let preferred = pps
        .spec
        .preferred_persistent_topology
        .iter()
        .map(|term| {
            let expressions: Vec<Value> = term
                .preference
                .keys
                .iter()
                .filter_map(|k| {
                    labels
                        .get(k)
                        .map(|v| json!({"key": k, "operator": "In", "values": [v]}))
                })
                .collect();
            let preference = if expressions.is_empty() {
                json!({})
            } else {
                json!({"matchExpressions": expressions})
            };
            json!({"weight": term.weight, "preference": preference})
        })
        .collect();
    (selector, preferred)
}

/// One `add` per entry when the pod has a node selector (same value: nothing), else one `add` of
/// the whole map (and of `spec` when the pod has none).
fn node_selector_ops(pod: &Value, selector: Map<String, Value>) -> Vec<json_patch::PatchOperation> {
    if selector.is_empty() {
        return Vec::new();
    }
    match patch::get(pod, &["spec", "nodeSelector"]) {
        Some(Value::Object(existing)) => selector
            .into_iter()
            .filter(|(k, v)| existing.get(k) != Some(v))
            .map(|(k, v)| patch::add(["spec", "nodeSelector", k.as_str()], v))
            .collect(),
        _ if patch::get(pod, &["spec"]).is_some_and(Value::is_object) => {
            vec![patch::add(["spec", "nodeSelector"], Value::Object(selector))]
        }
        _ => vec![patch::add(["spec"], json!({ "nodeSelector": selector }))],
    }
}

/// Appends the terms to `spec.affinity.nodeAffinity.preferred…`, creating what is missing.
fn append_preferred(pod: &Value, terms: Vec<Value>) -> Vec<json_patch::PatchOperation> {
    let path = ["spec", "affinity", "nodeAffinity", PREFERRED];
    if let Some(Value::Array(existing)) = patch::get(pod, &path) {
        // A term already there (a second run over the same pod) is not added again.
        return terms
            .into_iter()
            .filter(|t| !existing.contains(t))
            .map(|t| patch::add(path.iter().copied().chain(["-"]), t))
            .collect();
    }
    // The deepest existing object along the path; everything below it is added as one value.
    let mut depth = 0;
    while depth < path.len() - 1 && patch::get(pod, &path[..=depth]).is_some_and(Value::is_object) {
        depth += 1;
    }
    let mut value = Value::Array(terms);
    for token in path[depth + 1..].iter().rev() {
        value = json!({ *token: value });
    }
    vec![patch::add(path[..=depth].iter().copied(), value)]
}
