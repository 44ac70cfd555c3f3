//! The status of an Advanced StatefulSet (docs/advanced-statefulset.md#status), counted from the pods
//! as read; `currentRevision` moves to the update revision once every pod is updated and ready.
//!
//! kruise-rs writes whenever any field differs (OpenKruise skips writes when only
//! `updatedReadyReplicas`, `updatedAvailableReplicas`, `collisionCount` or conditions changed), and
//! carries the conditions over: `FailedUpdatePod` is cleared once an update pass succeeds,
//! `FailedCreatePod` once a pass creates pods again or no slot is empty. The loop adds the condition of
//! a write that failed with [`after_failure`].

use k8s_openapi::apimachinery::pkg::apis::meta::v1::Time;
use k8s_openapi::jiff::Timestamp;
use kruise_api::apps_v1beta1::{
    FAILED_CREATE_POD, FAILED_UPDATE_POD, StatefulSet, StatefulSetCondition, StatefulSetStatus,
    StatefulSetUpdateStrategyType, VolumeClaimStatus,
};
use kruise_core::quantity::Quantity;

use crate::action::Action;
use crate::pods::{self, CONTROLLER_REVISION_HASH};
use crate::statefulset::context::{Ctx, created, running_ready, terminating};
use crate::statefulset::identity::template_claims;

/// What the pass did that the status reports.
#[derive(Debug, Default, Clone)]
pub struct PassOutcome {
    /// The update step ran.
    pub update_ran: bool,
    /// Its error, if any.
    pub update_error: Option<String>,
    /// Current pods deleted or updated this pass.
    pub current_touched: i32,
    /// The pass plans a pod creation.
    pub creates: bool,
}

fn storage(
    q: Option<&std::collections::BTreeMap<String, k8s_openapi::apimachinery::pkg::api::resource::Quantity>>,
) -> Option<Quantity> {
    q?.get("storage").and_then(|v| Quantity::parse(&v.0).ok())
}

/// The status after this pass.
pub fn compute(ctx: &Ctx<'_>, collision_count: Option<i32>, outcome: &PassOutcome) -> StatefulSetStatus {
    let set = ctx.set;
    let old = set.status.clone().unwrap_or_default();
    let mut s = StatefulSetStatus {
        observed_generation: set.metadata.generation.unwrap_or(0),
        update_revision: Some(ctx.update_name.to_owned()),
        current_revision: Some(ctx.current_name.to_owned()),
        collision_count,
        label_selector: set.spec.selector.as_ref().and_then(|sel| {
            kruise_core::selector::Selector::parse(Some(sel))
                .to_selector_string()
                .ok()
        }),
        conditions: old.conditions.clone(),
        ..Default::default()
    };
    let slots = ctx
        .slots
        .iter()
        .filter_map(|s| s.pod.map(|p| (p, Some(s.available))));
    let condemned = ctx.condemned.iter().map(|(_, p)| (*p, None));
    for (pod, available) in slots.chain(condemned).filter(|(p, _)| created(p)) {
        s.replicas += 1;
        let ready = running_ready(pod);
        let available = ready && available.unwrap_or_else(|| ctx.available(pod));
        s.ready_replicas += i32::from(ready);
        s.available_replicas += i32::from(available);
        let revision = pods::label(pod, CONTROLLER_REVISION_HASH).unwrap_or("");
        if !terminating(pod) {
            s.current_replicas += i32::from(revision == ctx.current_name);
            s.updated_replicas += i32::from(revision == ctx.update_name);
        }
        if revision == ctx.update_name && ready {
            s.updated_ready_replicas += 1;
            s.updated_available_replicas += i32::from(available);
        }
    }
    s.current_replicas = (s.current_replicas - outcome.current_touched).max(0);
    let rolling = set.spec.update_strategy.type_ != Some(StatefulSetUpdateStrategyType::OnDelete);
    if rolling && s.updated_replicas == s.replicas && s.ready_replicas == s.replicas {
        s.current_revision = s.update_revision.clone();
        s.current_replicas = s.updated_replicas;
    }
    s.volume_claims = volume_claims(ctx);
    if outcome.creates || ctx.slots.iter().all(|slot| slot.pod.is_some()) {
        clear(&mut s, FAILED_CREATE_POD);
    }
    if let Some(message) = &outcome.update_error {
        clear(&mut s, FAILED_UPDATE_POD);
        set_condition(&mut s, FAILED_UPDATE_POD, message.clone(), ctx.now);
    } else if outcome.update_ran {
        clear(&mut s, FAILED_UPDATE_POD);
    }
    s
}

fn clear(s: &mut StatefulSetStatus, type_: &str) {
    if let Some(conditions) = s.conditions.as_mut() {
        conditions.retain(|c| c.type_ != type_);
        if conditions.is_empty() {
            s.conditions = None;
        }
    }
}

/// Sets condition `type_` True with `message` and an empty reason; one that is True already is kept
/// as it is (its time and message), as OpenKruise's `SetStatefulsetCondition` does.
fn set_condition(s: &mut StatefulSetStatus, type_: &str, message: String, now: Timestamp) {
    let conditions = s.conditions.get_or_insert_default();
    if conditions
        .iter()
        .any(|c| c.type_ == type_ && c.status == "True" && c.reason.as_deref().unwrap_or("").is_empty())
    {
        return;
    }
    conditions.retain(|c| c.type_ != type_);
    conditions.push(StatefulSetCondition {
        type_: type_.into(),
        status: "True".into(),
        last_transition_time: Some(Time(now)),
        reason: None,
        message: Some(message),
    });
}

/// The condition a failed write sets (OpenKruise's `processReplica`): creating a pod, or a claim
/// planned right before a pod of its ordinal, → `FailedCreatePod`; the identity repair of a pod →
/// `FailedUpdatePod`. Other writes set none.
pub fn failure_condition(actions: &[Action], failed: usize) -> Option<(&'static str, &'static str)> {
    const CREATE: (&str, &str) = (FAILED_CREATE_POD, "create");
    match actions.get(failed)? {
        Action::CreatePod(_) => Some(CREATE),
        Action::PatchPod {
            reason: "identity", ..
        } => Some((FAILED_UPDATE_POD, "update")),
        Action::CreatePvc(claim) => {
            let claim = claim.metadata.name.as_deref().unwrap_or("");
            actions[failed + 1..]
                .iter()
                .find_map(|a| match a {
                    Action::CreatePod(p) => p.metadata.name.as_deref(),
                    _ => None,
                })
                .filter(|pod| {
                    claim
                        .strip_suffix(pod)
                        .is_some_and(|vct| vct.len() > 1 && vct.ends_with('-'))
                })
                .map(|_| CREATE)
        }
        _ => None,
    }
}

/// The status to write after action `failed` of `actions` failed with `error`: `planned` (or the
/// set's status when the plan left it unchanged) with the failure's condition (see
/// [`failure_condition`]). `None` when that is what the set already shows.
pub fn after_failure(
    set: &StatefulSet,
    planned: Option<StatefulSetStatus>,
    actions: &[Action],
    failed: usize,
    error: &str,
    now: Timestamp,
) -> Option<StatefulSetStatus> {
    let Some((type_, verb)) = failure_condition(actions, failed) else {
        return planned;
    };
    let mut status = planned.unwrap_or_else(|| set.status.clone().unwrap_or_default());
    if let Some(was) = set
        .status
        .as_ref()
        .and_then(|s| s.conditions.as_ref())
        .and_then(|cs| cs.iter().find(|c| c.type_ == type_))
    {
        // Still failing: the condition the set shows stays as it is.
        clear(&mut status, type_);
        status.conditions.get_or_insert_default().push(was.clone());
    }
    let message = format!("StatefulPodControl failed to {verb} Pod error: {error}");
    set_condition(&mut status, type_, message, now);
    (set.status.as_ref() != Some(&status)).then_some(status)
}

/// Per volumeClaimTemplate: in-range pods whose claim matches it (storage class when both are set,
/// access modes) and requests at least its size, and those whose capacity reached the request.
fn volume_claims(ctx: &Ctx<'_>) -> Option<Vec<VolumeClaimStatus>> {
    let templates: Vec<_> = template_claims(ctx.set).collect();
    if templates.is_empty() {
        return None;
    }
    let set_name = crate::statefulset::identity::set_name(ctx.set);
    Some(
        templates
            .into_iter()
            .map(|(vct, t)| {
                let tspec = t.spec.clone().unwrap_or_default();
                let want = storage(tspec.resources.as_ref().and_then(|r| r.requests.as_ref()));
                let mut entry = VolumeClaimStatus {
                    volume_claim_name: vct.to_owned(),
                    ..Default::default()
                };
                for slot in ctx.slots.iter().filter(|s| s.pod.is_some()) {
                    let name = crate::statefulset::identity::claim_name(vct, set_name, slot.ordinal);
                    let Some(claim) = ctx.claims.get(name.as_str()) else {
                        continue;
                    };
                    let spec = claim.spec.clone().unwrap_or_default();
                    let class_ok = match (&spec.storage_class_name, &tspec.storage_class_name) {
                        (Some(a), Some(b)) => a == b,
                        _ => true,
                    };
                    let modes_ok = spec.access_modes == tspec.access_modes;
                    let requested = storage(spec.resources.as_ref().and_then(|r| r.requests.as_ref()));
                    let big_enough = |have: &Option<Quantity>| match (&want, have) {
                        (None, _) => true,
                        (Some(w), Some(h)) => h.compare(w) != std::cmp::Ordering::Less,
                        (Some(_), None) => false,
                    };
                    if class_ok && modes_ok && big_enough(&requested) {
                        entry.compatible_replicas += 1;
                        let capacity = storage(claim.status.as_ref().and_then(|st| st.capacity.as_ref()));
                        entry.compatible_ready_replicas += i32::from(big_enough(&capacity));
                    }
                }
                entry
            })
            .collect(),
    )
}

#[cfg(test)]
mod tests;
