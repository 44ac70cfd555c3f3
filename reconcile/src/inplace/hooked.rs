//! Starting an in-place update under an `inPlaceUpdate` lifecycle hook (CloneSet and Advanced
//! StatefulSet alike): hold a hooked pod in `PreparingUpdate`, re-arm the hook of an `Updated` pod,
//! and otherwise begin the update (docs/cloneset-controller.md#lifecycle).

use std::sync::Arc;
use std::time::Duration;

use k8s_openapi::jiff::Timestamp;
use kruise_api::PodRecord;
use kruise_api::common::LifecycleHook;
use serde_json::json;

use crate::action::Action;
use crate::inplace::{self, StateText, UpdateSpec};
use crate::lifecycle::{self, PRE_UPDATE_HOOK_KEY};
use crate::pods;

/// A pod in a lifecycle state from which no in-place update may start.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("not allowed to in-place update pod {pod} in state {state}")]
pub struct BadLifecycleState {
    /// Pod name.
    pub pod: String,
    /// Its lifecycle state.
    pub state: String,
}

/// The writes that move `pod` towards `spec` this pass, and the requeue a grace period asks for.
/// `not_ready` caches the `InPlaceUpdateReady=False` status patch (for a pod not ready, and ready).
pub fn start_hooked(
    pod: &PodRecord,
    spec: &UpdateSpec,
    hook: Option<&LifecycleHook>,
    grace: i32,
    now: Timestamp,
    texts: &mut StateText,
    not_ready: &mut [Option<Arc<serde_json::Value>>; 2],
) -> Result<(Vec<Action>, Option<Duration>), BadLifecycleState> {
    let name = pods::name(pod).to_owned();
    let mut actions = Vec::new();
    let state = pods::lifecycle_state(pod);
    match state {
        "" | "PreparingNormal" | "Normal" if lifecycle::is_hooked(hook, pod) => {
            if lifecycle::marks_not_ready(hook) {
                actions.extend(lifecycle::not_ready_key_patch(
                    pod,
                    PRE_UPDATE_HOOK_KEY,
                    true,
                    now,
                ));
            }
            actions.extend(lifecycle::set_state(pod, "PreparingUpdate", now));
            return Ok((actions, None));
        }
        "" | "PreparingNormal" | "Normal" | "Updating" => {}
        "Updated" => {
            let mut patch = lifecycle::state_patch(pod, "PreparingUpdate", now).unwrap_or_else(|| json!({}));
            // Re-add the hook's handlers (never write `null`: that would drop every label).
            if let Some(labels) = hook.and_then(|h| h.labels_handler.as_ref()) {
                inplace::merge(&mut patch, json!({"metadata": {"labels": labels}}));
            }
            if let Some(finalizers) = hook.and_then(|h| h.finalizers_handler.as_ref()) {
                inplace::merge(&mut patch, json!({"metadata": {"finalizers": finalizers}}));
            }
            return Ok((
                vec![Action::PatchPod {
                    name,
                    reason: "lifecycle",
                    patch,
                }],
                None,
            ));
        }
        "PreparingUpdate" if lifecycle::is_hooked(hook, pod) => return Ok((actions, None)),
        "PreparingUpdate" => {}
        other => {
            return Err(BadLifecycleState {
                pod: name,
                state: other.to_owned(),
            });
        }
    }
    if inplace::has_gate(pod) {
        actions.push(Action::PatchPodStatus {
            name: name.clone(),
            // The same for every pod of the pass with the same readiness.
            patch: not_ready[usize::from(pods::is_ready(pod))]
                .get_or_insert_with(|| Arc::new(inplace::ready_condition_patch(pod, false, now)))
                .clone(),
        });
    }
    let updating = (state != "Updating").then_some("Updating");
    actions.push(Action::PatchPod {
        name: name.clone(),
        reason: "inPlaceUpdate",
        patch: inplace::begin(pod, spec, grace, updating, now, texts),
    });
    actions.push(Action::normal(
        "SuccessfulUpdatePodInPlace",
        format!("successfully update pod {name} in-place"),
    ));
    let delay = (grace > 0).then(|| Duration::from_secs(u64::try_from(grace).unwrap_or(0)));
    Ok((actions, delay))
}
