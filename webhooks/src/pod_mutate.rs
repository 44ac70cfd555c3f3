//! `/mutate-pod`: what OpenKruise does to a pod on CREATE, in its order (spec/webhooks.md §2.0):
//! readiness gate → WorkloadSpread → SidecarSet injection → container launch priority → PUB annotation.
//!
//! Each step reads the pod as the previous steps left it (raw JSON, so fields we do not know survive) and
//! returns RFC 6902 operations against it; the pipeline applies them to its working copy and hands the
//! concatenated operations back, which apply in order to the object kube-apiserver sent.

pub mod launch_priority;
pub mod pub_annotation;
pub mod readiness_gate;
pub mod sidecarset;
pub mod workloadspread;

use json_patch::PatchOperation;
use serde_json::Value;

use crate::{
    Decision, Denial, StatusWrite,
    review::{AdmissionRequest, Operation},
    table::Settings,
    view::ClusterView,
};

/// What every step sees besides the pod.
pub struct PodContext<'a, V: ClusterView> {
    pub request: &'a AdmissionRequest,
    pub view: &'a V,
    pub settings: &'a Settings,
    /// `request.namespace` (a pod's own `metadata.namespace` may be empty on CREATE).
    pub namespace: &'a str,
}

/// What one step adds.
#[derive(Debug, Default)]
pub struct StepOutput {
    pub patch: Vec<PatchOperation>,
    pub warnings: Vec<String>,
    pub writes: Vec<StatusWrite>,
}

/// A step either contributes or ends the review with a denial (`Denial::new(403, "Forbidden", "…")`).
pub type StepResult = Result<StepOutput, Denial>;

type Step<V> = fn(&PodContext<'_, V>, &Value) -> StepResult;

/// Decides a pod CREATE.
pub fn mutate(request: &AdmissionRequest, view: &impl ClusterView, settings: &Settings) -> Decision {
    if request.operation != Operation::Create || request.sub_resource().is_some() {
        return Decision::allow();
    }
    if request.kind.kind != "Pod" || !request.kind.group.is_empty() {
        return Decision::allow().with_warning(format!(
            "kruise-rs: /mutate-pod received a {} and left it unchanged",
            request.kind.kind
        ));
    }
    let Some(object) = request.object.as_ref().filter(|o| o.is_object()) else {
        return Decision::bad_request("pod CREATE without an object: there is no content to decode");
    };
    if is_mirror_pod(object) {
        return Decision::allow();
    }
    run(request, view, settings, object)
}

fn run<V: ClusterView>(
    request: &AdmissionRequest,
    view: &V,
    settings: &Settings,
    object: &Value,
) -> Decision {
    let steps: [Step<V>; 5] = [
        readiness_gate::mutate,
        workloadspread::mutate,
        sidecarset::mutate,
        launch_priority::mutate,
        pub_annotation::mutate,
    ];
    let context = PodContext {
        request,
        view,
        settings,
        namespace: &request.namespace,
    };
    let mut pod = object.clone();
    let mut decision = Decision::allow();
    let last = steps.len() - 1;
    for (index, step) in steps.into_iter().enumerate() {
        let output = match step(&context, &pod) {
            Ok(output) => output,
            Err(denial) => return Decision::from(denial),
        };
        // The last step's operations need not be applied: nothing reads the pod after it.
        if index != last
            && let Err(e) = crate::patch::apply_in_place(&mut pod, &output.patch)
        {
            let message = format!("kruise-rs built a patch that does not apply: {e}");
            return Decision::deny(500, "InternalError", message);
        }
        decision.patch.extend(output.patch);
        decision.warnings.extend(output.warnings);
        decision.writes.extend(output.writes);
    }
    decision
}

/// Static pods mirrored by the kubelet are never mutated.
fn is_mirror_pod(pod: &Value) -> bool {
    crate::patch::get(pod, &["metadata", "annotations", "kubernetes.io/config.mirror"]).is_some()
}
