//! Step 5 of `/mutate-pod`: the related-PUB annotations (docs/pod-admission.md#pub-annotations).
//!
//! The pod's workload is resolved from its controller ownerReference ([`owner::pub_workload`]); then the
//! first PodUnavailableBudget of the namespace (in list order) that either targets that workload (API
//! group, kind and name) or — when it has no `targetRef`, or when no workload was found — whose non-empty
//! selector matches the pod labels, is recorded as `pub.kruise.io/related-pub` and the deprecated
//! `kruise.io/related-pub`.

use kruise_api::policy_v1beta1::PodUnavailableBudget;
use serde_json::Value;

use super::{PodContext, StepOutput, StepResult};
use crate::{
    owner::{self, ObjectRef, OwnedRef},
    patch, selector,
    view::ClusterView,
};

/// The deprecated spelling, still written for older readers.
pub use kruise_api::policy_v1beta1::DEPRECATED_POD_RELATED_PUB_ANNOTATION as DEPRECATED_RELATED_PUB;
/// The pod annotation naming the PodUnavailableBudget that protects it.
pub use kruise_api::policy_v1beta1::POD_RELATED_PUB_ANNOTATION as RELATED_PUB;

/// OpenKruise's gates PodUnavailableBudgetDeleteGate (default on) OR PodUnavailableBudgetUpdateGate.
const PUB_GATES_ENABLED: bool = true;

const ANNOTATIONS: &[&str] = &["metadata", "annotations"];

/// Step of `/mutate-pod`.
pub fn mutate(context: &PodContext<'_, impl ClusterView>, pod: &Value) -> StepResult {
    if !PUB_GATES_ENABLED || !is_pods_resource(context.request) {
        return Ok(StepOutput::default());
    }
    let pubs = context.view.pod_unavailable_budgets(context.namespace);
    if pubs.is_empty() {
        return Ok(StepOutput::default());
    }
    let workload =
        owner::controller_of(pod).and_then(|r| owner::pub_workload(context.view, context.namespace, r));
    let Some(matched) = pubs.iter().find(|p| matches(p, workload.as_ref(), pod)) else {
        return Ok(StepOutput::default());
    };
    let name = matched.metadata.name.as_deref().unwrap_or("");
    Ok(StepOutput {
        patch: set_annotations(pod, &[(RELATED_PUB, name), (DEPRECATED_RELATED_PUB, name)]),
        ..StepOutput::default()
    })
}

/// OpenKruise's steps run only for the `pods` resource (an empty resource, from a hand-made request, is
/// taken as `pods`).
pub(crate) fn is_pods_resource(request: &crate::AdmissionRequest) -> bool {
    matches!(request.resource.resource.as_str(), "" | "pods")
}

/// Operations setting several annotations at once: one `add` of the whole map when the pod has none,
/// else one `add` per entry that differs.
pub(crate) fn set_annotations(pod: &Value, entries: &[(&str, &str)]) -> Vec<json_patch::PatchOperation> {
    match pod.get("metadata").map(|m| m.get("annotations")) {
        Some(Some(Value::Object(map))) => entries
            .iter()
            .filter(|(k, v)| map.get(*k).and_then(Value::as_str) != Some(*v))
            .map(|(k, v)| patch::add(["metadata", "annotations", k], Value::String(v.to_string())))
            .collect(),
        found => {
            let map: serde_json::Map<String, Value> = entries
                .iter()
                .map(|(k, v)| (k.to_string(), Value::String(v.to_string())))
                .collect();
            if found.is_some_and(|_| pod["metadata"].is_object()) {
                vec![patch::add(ANNOTATIONS.iter().copied(), Value::Object(map))]
            } else {
                vec![patch::add(
                    ["metadata"],
                    serde_json::json!({ "annotations": map }),
                )]
            }
        }
    }
}

/// Whether `pub_` protects the pod: by targetRef when it has one and the pod's workload is known, else by
/// its non-empty selector (an invalid selector never matches).
fn matches(pub_: &PodUnavailableBudget, workload: Option<&OwnedRef>, pod: &Value) -> bool {
    if let (Some(target), Some(workload)) = (pub_.spec.target_reference.as_ref(), workload) {
        let target = ObjectRef {
            api_version: target.api_version.as_deref().unwrap_or(""),
            kind: target.kind.as_deref().unwrap_or(""),
            name: target.name.as_deref().unwrap_or(""),
            uid: "",
        };
        return owner::same_group_kind_name(workload.as_ref(), target);
    }
    selector::selects_non_empty(pub_.spec.selector.as_ref(), &selector::raw_labels(pod)).unwrap_or(false)
}
