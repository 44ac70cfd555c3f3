//! The per-pod refresh run on every pass, before scaling and whatever the pod management policy: the
//! in-place refresh (grace period, next container batch, `InPlaceUpdateReady`) and the lifecycle moves
//! (docs/advanced-statefulset.md#lifecycle).
//!
//! Two moves are kruise-rs's own: a `PreparingDelete` pod that is no longer to be deleted (back in
//! range, below the partition, at the update revision) returns to `Normal`, and one that is to be
//! deleted is deleted as soon as its hook is released, even while OrderedReady scaling is halted.
//! OpenKruise leaves the first stuck and does the second only in its update step.

use std::time::Duration;

use kruise_api::PodRecord;

use crate::action::Action;
use crate::inplace;
use crate::lifecycle::{self, PRE_DELETE_HOOK_KEY, PRE_UPDATE_HOOK_KEY};
use crate::pods::{self, SPECIFIED_DELETE};
use crate::statefulset::context::{Ctx, min_delay, terminating};

/// What refreshing every pod decided.
#[derive(Debug, Default)]
pub struct Refreshed {
    /// Writes, in order.
    pub actions: Vec<Action>,
    /// The shortest grace period left.
    pub delay: Option<Duration>,
    /// A lifecycle state changed or a pod was deleted: the rolling update waits for the next pass.
    pub modified: bool,
    /// Names of pods deleted here.
    pub deleted: Vec<String>,
}

/// Should a `PreparingDelete` pod still go: condemned, labelled for deletion, or an update victim
/// (off the update revision at or above the partition).
fn still_to_delete(ctx: &Ctx<'_>, pod: &PodRecord, index: Option<usize>) -> bool {
    let Some(index) = index else { return true };
    pods::label(pod, SPECIFIED_DELETE).is_some()
        || (pods::label(pod, pods::CONTROLLER_REVISION_HASH) != Some(ctx.update_name)
            && index >= usize::try_from(ctx.partition()).unwrap_or(0)
            && !ctx.on_delete())
}

/// Refreshes every pod of the pass.
pub fn refresh(ctx: &Ctx<'_>) -> Refreshed {
    let mut out = Refreshed::default();
    let indexed = ctx
        .slots
        .iter()
        .filter_map(|s| s.pod.map(|p| (p, Some(s.index))))
        .chain(ctx.condemned.iter().map(|(_, p)| (*p, None)));
    for (pod, index) in indexed {
        if terminating(pod) {
            continue;
        }
        let r = inplace::refresh_in_place(pod, ctx.now);
        out.delay = min_delay(out.delay, r.delay);
        out.actions.extend(r.actions);
        lifecycle_move(ctx, pod, index, &mut out);
    }
    out
}

fn lifecycle_move(ctx: &Ctx<'_>, pod: &PodRecord, index: Option<usize>, out: &mut Refreshed) {
    let in_place_hook = ctx.hook(|l| l.in_place_update.as_ref());
    let pre_delete = ctx.hook(|l| l.pre_delete.as_ref());
    let after_update = || {
        if in_place_hook.is_some() && !lifecycle::is_all_hooked(in_place_hook, pod) {
            "Updated"
        } else {
            "Normal"
        }
    };
    let at_update = pods::label(pod, pods::CONTROLLER_REVISION_HASH) == Some(ctx.update_name);
    let target = match pods::lifecycle_state(pod) {
        "PreparingNormal" => {
            let hook = ctx.hook(|l| l.pre_normal.as_ref());
            (hook.is_none() || lifecycle::is_all_hooked(hook, pod)).then_some("Normal")
        }
        "PreparingUpdate" => at_update.then(after_update),
        "Updating" => inplace::update_completed(pod).then(after_update),
        "Updated" => {
            (in_place_hook.is_none() || lifecycle::is_all_hooked(in_place_hook, pod)).then_some("Normal")
        }
        "PreparingDelete" if !still_to_delete(ctx, pod, index) => {
            if lifecycle::marks_not_ready(pre_delete) {
                out.actions.extend(lifecycle::not_ready_key_patch(
                    pod,
                    PRE_DELETE_HOOK_KEY,
                    false,
                    ctx.now,
                ));
            }
            Some("Normal")
        }
        "PreparingDelete" if !lifecycle::is_hooked(pre_delete, pod) => {
            let name = pods::name(pod).to_owned();
            out.actions.push(Action::DeletePod {
                name: name.clone(),
                uid: pod.metadata.uid.clone(),
            });
            out.deleted.push(name);
            out.modified = true;
            None
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
}
