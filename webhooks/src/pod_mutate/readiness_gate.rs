//! Step 1 of `/mutate-pod`: the `KruisePodReady` readiness gate (docs/pod-admission.md#readiness-gate).
//!
//! A pod whose controller ownerReference belongs to the `apps.kruise.io` group (CloneSet, Advanced
//! StatefulSet, ...) gets `{"conditionType": "KruisePodReady"}` appended to `spec.readinessGates`, unless
//! a gate of that type is already there. With OpenKruise's gate `KruisePodReadinessGate` (off by default,
//! and off in kruise-rs) every pod would get it.

use serde_json::{Value, json};

use super::{PodContext, StepOutput, StepResult};
use crate::{owner, patch, view::ClusterView};

/// The readiness-gate condition type OpenKruise's lifecycle and readiness controllers write.
pub const KRUISE_POD_READY: &str = "KruisePodReady";

/// OpenKruise's feature gate `KruisePodReadinessGate` (default off): inject into every pod.
const INJECT_INTO_ALL_PODS: bool = false;

/// Step of `/mutate-pod`.
pub fn mutate(_context: &PodContext<'_, impl ClusterView>, pod: &Value) -> StepResult {
    if !INJECT_INTO_ALL_PODS && !owned_by_kruise(pod) {
        return Ok(StepOutput::default());
    }
    Ok(StepOutput {
        patch: inject(pod, KRUISE_POD_READY),
        ..StepOutput::default()
    })
}

/// True when the pod's controller ownerReference has API group `apps.kruise.io` (a malformed apiVersion
/// is no group).
pub fn owned_by_kruise(pod: &Value) -> bool {
    owner::controller_of(pod).is_some_and(|r| r.group() == Ok("apps.kruise.io"))
}

/// The operations appending a readiness gate of `condition_type` unless one is present.
pub fn inject(pod: &Value, condition_type: &str) -> Vec<json_patch::PatchOperation> {
    let gate = json!({ "conditionType": condition_type });
    match pod.get("spec").and_then(|s| s.get("readinessGates")) {
        Some(Value::Array(gates)) => {
            if gates
                .iter()
                .any(|g| g.get("conditionType").and_then(Value::as_str) == Some(condition_type))
            {
                Vec::new()
            } else {
                vec![patch::add(["spec", "readinessGates", "-"], gate)]
            }
        }
        _ if pod.get("spec").is_some_and(Value::is_object) => {
            vec![patch::add(["spec", "readinessGates"], json!([gate]))]
        }
        _ => vec![patch::add(["spec"], json!({ "readinessGates": [gate] }))],
    }
}
