//! `/mutate-pod`: what OpenKruise does to a pod on CREATE, in its order (docs/pod-admission.md#mutate-pod):
//! readiness gate → WorkloadSpread → SidecarSet injection → container launch priority → PUB annotation →
//! PersistentPodState node affinity → PodProbeMarker probes for serverless pods (gated, off by default).
//!
//! Each step reads the pod as the previous steps left it (raw JSON, so fields we do not know survive) and
//! returns RFC 6902 operations against it; the pipeline applies them to its working copy and hands the
//! concatenated operations back, which apply in order to the object kube-apiserver sent.

pub mod launch_priority;
pub mod persistent_pod_state;
pub mod pod_probe_marker;
pub mod pub_annotation;
pub mod readiness_gate;
pub mod sidecarset;
pub mod workloadspread;

use std::sync::LazyLock;

use json_patch::PatchOperation;
use k8s_openapi::api::core::v1::Pod;
use kruise_core::Shape;
use serde_json::Value;

use crate::{
    Decision, Denial, Settings, StatusWrite,
    review::{AdmissionRequest, Operation},
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
    /// SidecarSets that selected the pod but were skipped as invalid (each also has a warning).
    pub skipped_sidecar_sets: Vec<String>,
}

/// A step either contributes or ends the review with a denial (`Denial::new(403, "Forbidden", "…")`).
pub type StepResult = Result<StepOutput, Denial>;

type Step<V> = fn(&PodContext<'_, V>, &Value) -> StepResult;

/// Decides a pod CREATE.
pub fn mutate(request: &AdmissionRequest, view: &impl ClusterView, settings: &Settings) -> Decision {
    if let Some(answer) = early_answer(request) {
        return answer;
    }
    let mut pod = request.object.clone().unwrap_or_default();
    run(request, view, settings, &mut pod)
}

/// [`mutate`] without copying the pod: the pipeline patches the request's own object and restores it
/// before returning, so the request is unchanged afterwards. Never inlined: it is the entry point the
/// callgrind figures of benches/README.md are read at.
#[inline(never)]
pub fn mutate_in_place(
    request: &mut AdmissionRequest,
    view: &impl ClusterView,
    settings: &Settings,
) -> Decision {
    if let Some(answer) = early_answer(request) {
        return answer;
    }
    let mut pod = request.object.take().unwrap_or_default();
    let decision = run(request, view, settings, &mut pod);
    request.object = Some(pod);
    decision
}

/// The shape of a Pod, read on first use: checks that a reviewed pod decodes without decoding it.
static POD_SHAPE: LazyLock<Shape> = LazyLock::new(Shape::pod);

/// The answer when the review ends before the pipeline; `None` when the request carries a pod object
/// to mutate.
fn early_answer(request: &AdmissionRequest) -> Option<Decision> {
    if request.operation != Operation::Create || request.sub_resource().is_some() {
        return Some(Decision::allow());
    }
    if request.kind.kind != "Pod" || !request.kind.group.is_empty() {
        return Some(Decision::allow().with_warning(format!(
            "kruise-rs: /mutate-pod received a {} and left it unchanged",
            request.kind.kind
        )));
    }
    let Some(object) = request.object.as_ref().filter(|o| o.is_object()) else {
        return Some(Decision::bad_request(
            "pod CREATE without an object: there is no content to decode",
        ));
    };
    // As OpenKruise's decoder: an object that is not a Pod is a bad request, with the field at fault.
    if let Err(e) = POD_SHAPE.check::<Pod>(object) {
        return Some(Decision::bad_request(format!("object is not a valid Pod: {e}")));
    }
    is_mirror_pod(object).then(Decision::allow)
}

/// The steps in order, each seeing the pod as the steps before it left it. `pod` is patched as the steps
/// go and restored before returning.
fn run<V: ClusterView>(
    request: &AdmissionRequest,
    view: &V,
    settings: &Settings,
    pod: &mut Value,
) -> Decision {
    let mut decision = Decision::allow();
    let mut undo = Vec::new();
    let outcome = run_steps(request, view, settings, pod, &mut decision, &mut undo);
    crate::patch::undo_all(pod, &mut decision.patch, undo);
    match outcome {
        Ok(()) => decision,
        Err(ended) => *ended,
    }
}

fn run_steps<V: ClusterView>(
    request: &AdmissionRequest,
    view: &V,
    settings: &Settings,
    pod: &mut Value,
    decision: &mut Decision,
    undo: &mut Vec<crate::patch::Undo>,
) -> Result<(), Box<Decision>> {
    let steps: [Step<V>; 7] = [
        readiness_gate::mutate,
        workloadspread::mutate,
        sidecarset::mutate,
        launch_priority::mutate,
        pub_annotation::mutate,
        persistent_pod_state::mutate,
        pod_probe_marker::mutate,
    ];
    let context = PodContext {
        request,
        view,
        settings,
        namespace: &request.namespace,
    };
    let last = steps.len() - 1;
    for (index, step) in steps.into_iter().enumerate() {
        let output = step(&context, pod).map_err(|denial| Box::new(Decision::from(denial)))?;
        let first = decision.patch.len();
        decision.patch.extend(output.patch);
        decision.warnings.extend(output.warnings);
        decision.writes.extend(output.writes);
        decision.skipped_sidecar_sets.extend(output.skipped_sidecar_sets);
        // The last step's operations need not be applied: nothing reads the pod after it.
        if index != last
            && let Err(e) = crate::patch::apply_with_undo(pod, &mut decision.patch[first..], first, undo)
        {
            let message = format!("kruise-rs built a patch that does not apply: {e}");
            return Err(Box::new(Decision::deny(500, "InternalError", message)));
        }
    }
    Ok(())
}

/// Static pods mirrored by the kubelet are never mutated.
fn is_mirror_pod(pod: &Value) -> bool {
    crate::patch::get(pod, &["metadata", "annotations", "kubernetes.io/config.mirror"]).is_some()
}
