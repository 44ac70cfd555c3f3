//! The in-place half of a pod refresh (OpenKruise's in-place `Refresh`), shared by the workload
//! planners: finish a grace period, release the next container batch, flip `InPlaceUpdateReady` back
//! to True.

use std::time::Duration;

use k8s_openapi::jiff::{SignedDuration, Timestamp};
use kruise_api::PodRecord;
use kruise_api::common::{IN_PLACE_UPDATE_GRACE_KEY, IN_PLACE_UPDATE_READY, IN_PLACE_UPDATE_STATE_KEY};
use serde_json::json;

use crate::action::Action;
use crate::inplace::{self, InPlaceUpdateState};
use crate::pods::{self, CONTROLLER_REVISION_HASH};

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

pub(crate) fn patch(pod: &PodRecord, reason: &'static str, patch: serde_json::Value) -> Action {
    Action::PatchPod {
        name: pods::name(pod).to_owned(),
        reason,
        patch,
    }
}

/// In-place `Refresh` of one pod.
pub fn refresh_in_place(pod: &PodRecord, now: Timestamp) -> Refreshed {
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
            &spec.container_ref_metadata,
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
        if !state.next_container_images.is_empty() || !state.next_container_ref_metadata.is_empty() {
            let statuses = pod.container_statuses();
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
            let next_meta = std::mem::take(&mut state.next_container_ref_metadata);
            let mut p = inplace::patch_batch(pod, &next, &next_meta, None, &mut state, now);
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
            patch: patch.into(),
        });
    }
    out
}
