//! The per-pod refresh that runs before any update (`refreshPodState`): finish an in-place grace period,
//! release the next container batch, flip `InPlaceUpdateReady` back to True, and walk the lifecycle
//! state machine (docs/cloneset-controller.md#refresh, #lifecycle).

use std::time::Duration;

use k8s_openapi::jiff::{SignedDuration, Timestamp};
use kruise_api::PodRecord;
use kruise_api::common::{IN_PLACE_UPDATE_GRACE_KEY, IN_PLACE_UPDATE_READY, IN_PLACE_UPDATE_STATE_KEY};
use serde_json::json;

use crate::action::Action;
use crate::cloneset::context::Ctx;
use crate::inplace::{self, InPlaceUpdateState};
use crate::lifecycle::{self, PRE_UPDATE_HOOK_KEY};
use crate::pods::{self, CONTROLLER_REVISION_HASH, POD_TEMPLATE_HASH};

/// What refreshing one pod decided.
#[derive(Debug, Default, PartialEq)]
pub struct Refreshed {
    /// Writes for this pod.
    pub actions: Vec<Action>,
    /// Requeue after this long (the rest of a grace period).
    pub delay: Option<Duration>,
    /// The lifecycle state or the `pod-template-hash` label was patched: the update step must stop
    /// for this pass. In-place refresh writes (condition, next batch, grace end) do not stop it.
    pub modified: bool,
}

fn patch(pod: &PodRecord, reason: &'static str, patch: serde_json::Value) -> Action {
    Action::PatchPod {
        name: pods::name(pod).to_owned(),
        reason,
        patch,
    }
}

/// In-place `Refresh`.
fn refresh_in_place(pod: &PodRecord, now: Timestamp) -> Refreshed {
    let mut out = Refreshed::default();
    if pods::in_grace_period(pod) {
        let Some(spec) = inplace::grace_of(pod) else {
            out.actions.push(patch(
                pod,
                "inPlaceUpdate",
                json!({"metadata": {"annotations": {IN_PLACE_UPDATE_GRACE_KEY: null}}}),
            ));
            return out;
        };
        let at_revision = pods::label(pod, CONTROLLER_REVISION_HASH) == Some(spec.revision.as_str());
        let mut state =
            inplace::state_of(pod).unwrap_or_else(|| InPlaceUpdateState::new(&spec.revision, now));
        if !at_revision {
            out.actions.push(patch(
                pod,
                "inPlaceUpdate",
                json!({"metadata": {"annotations": {IN_PLACE_UPDATE_GRACE_KEY: null}}}),
            ));
            return out;
        }
        let due = state
            .update_timestamp
            .0
            .checked_add(SignedDuration::from_secs(i64::from(spec.grace_seconds)));
        if let Ok(due) = due
            && now < due
        {
            let left = due.duration_since(now);
            let secs = left.as_secs() + i64::from(left.subsec_nanos() > 0);
            out.delay = Some(Duration::from_secs(u64::try_from(secs).unwrap_or(0)));
            return out;
        }
        let mut p = inplace::patch_batch(
            pod,
            &spec.container_images,
            spec.meta_data_patch.as_ref(),
            &mut state,
            now,
        );
        inplace::merge(
            &mut p,
            json!({"metadata": {"annotations": {IN_PLACE_UPDATE_GRACE_KEY: null}}}),
        );
        if let Some(rv) = &pod.metadata.resource_version {
            inplace::merge(&mut p, json!({"metadata": {"resourceVersion": rv}}));
        }
        out.actions.push(patch(pod, "inPlaceUpdate", p));
        return out;
    }
    let ready_already = pods::condition(pod, IN_PLACE_UPDATE_READY).is_some_and(|c| {
        c.status == "True"
            && c.reason.as_deref().unwrap_or("").is_empty()
            && c.message.as_deref().unwrap_or("").is_empty()
    });
    // Fast path: with nothing queued and the condition already True, the state cannot lead to a write.
    let queued =
        pods::annotation(pod, IN_PLACE_UPDATE_STATE_KEY).is_some_and(|s| s.contains("\"nextContainer"));
    if (queued || !ready_already)
        && let Some(mut state) = inplace::state_of(pod)
    {
        if !inplace::containers_completed(pod, &state) {
            return out;
        }
        if !state.next_container_images.is_empty() {
            let statuses = pod
                .status
                .as_ref()
                .and_then(|s| s.container_statuses.as_deref())
                .unwrap_or_default();
            let required = state
                .pre_check_before_next
                .clone()
                .unwrap_or_default()
                .containers_required_ready;
            let all_ready = required
                .iter()
                .all(|c| statuses.iter().any(|s| &s.name == c && s.ready));
            if !all_ready {
                return out;
            }
            let next = std::mem::take(&mut state.next_container_images);
            let mut p = inplace::patch_batch(pod, &next, None, &mut state, now);
            if let Some(rv) = &pod.metadata.resource_version {
                inplace::merge(&mut p, json!({"metadata": {"resourceVersion": rv}}));
            }
            out.actions.push(patch(pod, "inPlaceUpdate", p));
            return out;
        }
    }
    if inplace::has_gate(pod) && !ready_already {
        // Only for the pod version that was checked (OpenKruise does not retry this write on conflict).
        let mut patch = inplace::ready_condition_patch(pod, true, now);
        if let Some(rv) = &pod.metadata.resource_version {
            inplace::merge(&mut patch, json!({"metadata": {"resourceVersion": rv}}));
        }
        out.actions.push(Action::PatchPodStatus {
            name: pods::name(pod).to_owned(),
            patch,
        });
    }
    out
}

/// Refreshes one pod: the in-place `Refresh`, then the lifecycle transition and the `pod-template-hash`
/// backfill on pods from before OpenKruise 1.1 (both set [`Refreshed::modified`]).
pub fn refresh_pod(ctx: &Ctx<'_>, pod: &PodRecord) -> Refreshed {
    let mut out = refresh_in_place(pod, ctx.now);
    let lc = ctx.cs.spec.lifecycle.as_ref();
    let in_place_hook = lc.and_then(|l| l.in_place_update.as_ref());
    let after_update = || {
        if lc.is_some() && !lifecycle::is_all_hooked(in_place_hook, pod) {
            "Updated"
        } else {
            "Normal"
        }
    };
    let view = ctx.view(pod);
    let target = match view.state {
        "PreparingNormal" => {
            let normal = match lc.and_then(|l| l.pre_normal.as_ref()) {
                None => pods::condition(pod, "PodScheduled").is_some_and(|c| c.status == "True"),
                Some(hook) => lifecycle::is_all_hooked(Some(hook), pod),
            };
            normal.then_some("Normal")
        }
        "PreparingUpdate" => pods::is_at_revision(pod, ctx.update_name).then(after_update),
        "Updating" => inplace::update_completed(pod).then(after_update),
        "Updated" => {
            (in_place_hook.is_none() || lifecycle::is_all_hooked(in_place_hook, pod)).then_some("Normal")
        }
        _ => None,
    };
    if let Some(state) = target
        && let Some(action) = lifecycle::set_state(pod, state, ctx.now)
    {
        if lifecycle::marks_not_ready(in_place_hook) && matches!(state, "Updated" | "Normal") {
            out.actions.extend(lifecycle::not_ready_key_patch(
                pod,
                PRE_UPDATE_HOOK_KEY,
                false,
                ctx.now,
            ));
        }
        out.actions.push(action);
        out.modified = true;
    }
    if !view.has_template_hash
        && let Some(revision) = pods::label(pod, CONTROLLER_REVISION_HASH)
    {
        out.actions.push(patch(
            pod,
            "podTemplateHash",
            json!({"metadata": {"labels": {POD_TEMPLATE_HASH: pods::short_hash(revision)}}}),
        ));
        out.modified = true;
    }
    out
}

#[cfg(test)]
mod tests;
