//! Scaling (docs/advanced-statefulset.md#scaling): fill the slots of the in-range ordinals in
//! ascending order, then delete the condemned pods (out of range or reserved) in descending order.
//!
//! OrderedReady creates one pod per pass and never passes a pod that is not available; Parallel
//! creates every missing pod, and with `scaleStrategy.maxUnavailable` stops once that many pods are
//! unavailable or were created this pass.

use std::time::Duration;

use kruise_api::PodRecord;
use kruise_api::apps_v1beta1::{POD_INDEX_LABEL, STATEFULSET_POD_NAME_LABEL};
use serde_json::json;

use crate::action::Action;
use crate::int_or_percent::{InvalidIntOrPercent, scaled};
use crate::lifecycle::{self, PRE_DELETE_HOOK_KEY};
use crate::pods;
use crate::statefulset::context::{
    Ctx, Slot, created, finished, healthy, min_delay, running_ready, terminating,
};
use crate::statefulset::identity::{
    claims_for, new_pod, owned_by_older_pod, pod_name, retention_patch, set_name, wanted_claim_owners,
};

/// What scaling decided.
#[derive(Debug, Default)]
pub struct Scaled {
    /// Writes, in order.
    pub actions: Vec<Action>,
    /// Requeue for a pod that becomes available later.
    pub delay: Option<Duration>,
    /// OrderedReady stopped at a pod: the rolling update waits.
    pub halted: bool,
    /// Pods deleted (or moved to `PreparingDelete`) here, by name.
    pub deleted: Vec<String>,
}

/// The `scaleStrategy.maxUnavailable` budget (Parallel only): resolved against `replicas`, rounded
/// down, at least 1. `None` without a limit.
pub fn budget(ctx: &Ctx<'_>) -> Result<Option<i64>, InvalidIntOrPercent> {
    if !ctx.parallel() {
        return Ok(None);
    }
    let Some(v) = ctx
        .set
        .spec
        .scale_strategy
        .as_ref()
        .and_then(|s| s.max_unavailable.as_ref())
    else {
        return Ok(None);
    };
    Ok(Some(
        scaled(v, ctx.replicas, false, "scaleStrategy.maxUnavailable")?.max(1),
    ))
}

/// `deletePod`: a pod hooked by `preDelete` moves to `PreparingDelete` (with its not-ready key when
/// the hook marks it), any other is deleted. Nothing for a pod already held in `PreparingDelete`.
pub fn delete_pod(ctx: &Ctx<'_>, pod: &PodRecord) -> Vec<Action> {
    let hook = ctx.hook(|l| l.pre_delete.as_ref());
    if lifecycle::is_hooked(hook, pod) {
        let mut out = Vec::new();
        if lifecycle::marks_not_ready(hook) {
            out.extend(lifecycle::not_ready_key_patch(
                pod,
                PRE_DELETE_HOOK_KEY,
                true,
                ctx.now,
            ));
        }
        out.extend(lifecycle::set_state(pod, "PreparingDelete", ctx.now));
        return out;
    }
    vec![Action::DeletePod {
        name: pods::name(pod).to_owned(),
        uid: pod.metadata.uid.clone(),
    }]
}

/// The revision and template of a pod (re)created in slot `slot`.
pub fn revision_for<'c>(
    ctx: &'c Ctx<'_>,
    slot: &Slot<'_>,
) -> (&'c str, &'c k8s_openapi::api::core::v1::PodTemplateSpec) {
    let current = (ctx.current_name, &ctx.current_template);
    let update = (ctx.update_name, &ctx.update_template);
    if ctx.on_delete() {
        return update;
    }
    let partition = i64::from(ctx.partition());
    let Some(_) = ctx.rolling() else {
        let current_replicas = ctx.set.status.as_ref().map_or(0, |s| s.current_replicas);
        return if slot.ordinal < ctx.start + i64::from(current_replicas) {
            current
        } else {
            update
        };
    };
    let below = if ctx.unordered() {
        let off_update = ctx
            .slots
            .iter()
            .filter(|s| s.ordinal != slot.ordinal)
            .filter_map(|s| s.pod)
            .filter(|p| pods::label(p, pods::CONTROLLER_REVISION_HASH) != Some(ctx.update_name))
            .count();
        (off_update as i64) < partition
    } else {
        (slot.index as i64) < partition
    };
    if below { current } else { update }
}

/// Creates what slot `slot` lacks: missing claims and, when `with_pod`, the pod. `None` when a
/// claim blocks the creation (being deleted, or still owned by an older pod of the name).
fn create(ctx: &Ctx<'_>, slot: &Slot<'_>, with_pod: bool) -> Option<Vec<Action>> {
    let name = pod_name(set_name(ctx.set), slot.ordinal);
    let mut actions = Vec::new();
    let wait_for_gc = wanted_claim_owners(ctx.set, true).1;
    for claim in claims_for(ctx.set, slot.ordinal) {
        match ctx.claims.get(claim.metadata.name.as_deref().unwrap_or("")) {
            Some(existing) if existing.metadata.deletion_timestamp.is_some() => return None,
            Some(existing) if with_pod && wait_for_gc && owned_by_older_pod(existing, &name, None) => {
                return None;
            }
            Some(_) => {}
            None => actions.push(Action::CreatePvc(Box::new(claim))),
        }
    }
    if with_pod {
        let (revision, template) = revision_for(ctx, slot);
        actions.push(Action::CreatePod(Box::new(new_pod(
            ctx.set,
            template,
            revision,
            slot.ordinal,
            ctx.now,
        ))));
    }
    Some(actions)
}

/// The lowest-ordinal unhealthy pod, among the slots first, then the condemned.
fn first_unhealthy<'a>(ctx: &Ctx<'a>) -> Option<&'a PodRecord> {
    ctx.slots
        .iter()
        .find(|s| s.pod.is_some() && !s.healthy)
        .and_then(|s| s.pod)
        .or_else(|| ctx.condemned.iter().map(|(_, p)| *p).find(|p| !healthy(p)))
}

/// Runs scaling. `skip` names pods an earlier step of the pass already deleted.
pub fn scale(ctx: &Ctx<'_>, skip: &[String]) -> Result<Scaled, InvalidIntOrPercent> {
    let mut out = Scaled::default();
    let mut budget = budget(ctx)?;
    let parallel = ctx.parallel();
    let spend = |budget: &mut Option<i64>| {
        if let Some(b) = budget.as_mut() {
            *b -= 1;
        }
    };
    let exhausted = |budget: &Option<i64>| budget.is_some_and(|b| b <= 0);
    for slot in &ctx.slots {
        if exhausted(&budget) {
            break;
        }
        let Some(pod) = slot.pod else {
            match create(ctx, slot, true) {
                Some(actions) => out.actions.extend(actions),
                None if parallel => continue,
                None => {}
            }
            if !parallel {
                out.halted = true;
                return Ok(out);
            }
            spend(&mut budget);
            continue;
        };
        let name = pods::name(pod);
        if skip.iter().any(|s| s == name) {
            continue;
        }
        if finished(pod) && !terminating(pod) {
            // kruise-rs: with a budget, a failed pod is replaced while any budget is left (OpenKruise
            // spends first and, with a budget of 1, never replaces it).
            out.actions.extend(delete_pod(ctx, pod));
            out.deleted.push(name.to_owned());
            if !parallel {
                out.halted = true;
                return Ok(out);
            }
            spend(&mut budget);
            continue;
        }
        if pods::phase(pod) == "Pending"
            && let Some(actions) = create(ctx, slot, false)
        {
            out.actions.extend(actions);
        }
        if terminating(pod) {
            if !parallel {
                out.halted = true;
                return Ok(out);
            }
            spend(&mut budget);
            continue;
        }
        if !slot.available {
            if !parallel {
                out.delay = min_delay(out.delay, ctx.until_available(pod));
                out.halted = true;
                return Ok(out);
            }
            spend(&mut budget);
        }
        out.actions.extend(repair(ctx, slot, pod));
    }
    condemned(ctx, &mut out);
    Ok(out)
}

/// Identity and retention repair of an existing in-range pod: the pod-name label (with the pod-index
/// label) and the claims' ownerReferences.
fn repair(ctx: &Ctx<'_>, slot: &Slot<'_>, pod: &PodRecord) -> Vec<Action> {
    let mut out = Vec::new();
    let name = pods::name(pod);
    if pods::label(pod, STATEFULSET_POD_NAME_LABEL) != Some(name) {
        out.push(Action::PatchPod {
            name: name.to_owned(),
            reason: "identity",
            patch: json!({"metadata": {"labels": {
                STATEFULSET_POD_NAME_LABEL: name, POD_INDEX_LABEL: slot.ordinal.to_string(),
            }}}),
        });
    }
    if created(pod) {
        out.extend(
            ctx.claims_of(slot.ordinal)
                .filter_map(|c| retention_patch(ctx.set, pod, c, false)),
        );
    }
    out
}

/// Condemned pods, highest ordinal first.
fn condemned(ctx: &Ctx<'_>, out: &mut Scaled) {
    let parallel = ctx.parallel();
    let first_unhealthy = first_unhealthy(ctx).map(pods::name);
    for (ordinal, pod) in &ctx.condemned {
        if out.deleted.iter().any(|d| d == pods::name(pod)) {
            continue;
        }
        if terminating(pod) {
            if parallel {
                continue;
            }
            out.halted = true;
            return;
        }
        let name = pods::name(pod);
        let settled = running_ready(pod) && ctx.available(pod);
        if !parallel && !settled && first_unhealthy != Some(name) {
            out.halted = true;
            return;
        }
        out.actions.extend(
            ctx.claims_of(*ordinal)
                .filter_map(|c| retention_patch(ctx.set, pod, c, true)),
        );
        let actions = delete_pod(ctx, pod);
        let changed = !actions.is_empty();
        out.actions.extend(actions);
        out.deleted.push(name.to_owned());
        if !parallel {
            out.halted |= changed || pods::lifecycle_state(pod) == "PreparingDelete";
            return;
        }
    }
}
