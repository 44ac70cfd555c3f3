//! The per-pod refresh that runs before any update (`refreshPodState`): finish an in-place grace period,
//! release the next container batch, flip `InPlaceUpdateReady` back to True, and walk the lifecycle
//! state machine (docs/cloneset-controller.md#refresh, #lifecycle).

use kruise_api::PodRecord;
use serde_json::json;

use crate::cloneset::context::Ctx;
use crate::inplace::{self, patch};
pub use crate::inplace::{Refreshed, refresh_in_place};
use crate::lifecycle::{self, PRE_UPDATE_HOOK_KEY};
use crate::pods::{self, CONTROLLER_REVISION_HASH, POD_TEMPLATE_HASH};

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
