//! The rolling update (docs/advanced-statefulset.md#rolling-update): pods labelled for deletion first,
//! then the candidates (descending ordinals at or above the partition, or priority order when
//! unordered), never more than `maxUnavailable` in-range pods unavailable at once; each is updated in
//! place when the policy and the change allow it, else deleted for the slot to be refilled.

use std::collections::BTreeSet;
use std::time::Duration;

use kruise_api::PodRecord;
use kruise_api::apps_v1beta1::PodUpdateStrategyType;

use crate::action::Action;
use crate::cloneset::update::{Priority, UpdateError};
use crate::inplace::{self, NotInPlace};
use crate::int_or_percent::{InvalidIntOrPercent, scaled};
use crate::pods::{self, CONTROLLER_REVISION_HASH, SPECIFIED_DELETE};
use crate::statefulset::context::{Ctx, min_delay, terminating};
use crate::statefulset::identity;
use crate::statefulset::revision::template_of;
use crate::statefulset::scale::delete_pod;

/// What the update decided.
#[derive(Debug, Default)]
pub struct Updated {
    /// Writes, in order.
    pub actions: Vec<Action>,
    /// Requeue (minReadySeconds left, grace periods).
    pub delay: Option<Duration>,
    /// The error that stopped the walk (a `FailedUpdatePod` condition).
    pub error: Option<UpdateError>,
    /// Pods at the current revision deleted or updated here.
    pub current_touched: i32,
}

/// `rollingUpdate.maxUnavailable` (default 1) resolved against `replicas`, rounded down, at least 1.
pub fn max_unavailable(ctx: &Ctx<'_>) -> Result<i64, InvalidIntOrPercent> {
    let Some(v) = ctx.rolling().and_then(|r| r.max_unavailable.as_ref()) else {
        return Ok(1);
    };
    Ok(scaled(
        v,
        ctx.replicas,
        false,
        "updateStrategy.rollingUpdate.maxUnavailable",
    )?
    .max(1))
}

fn at_update(ctx: &Ctx<'_>, pod: &PodRecord) -> bool {
    pods::label(pod, CONTROLLER_REVISION_HASH) == Some(ctx.update_name)
}

/// kruise-rs: the pod's claim volumes differ from the volumeClaimTemplates (one was added or
/// removed). A live pod's volumes cannot change, so such a pod is recreated within the update budget;
/// OpenKruise patches the volumes, which the API server refuses, and the set stays `FailedUpdatePod`.
pub fn claims_differ(ctx: &Ctx<'_>, pod: &PodRecord) -> bool {
    let volumes = pod
        .spec
        .as_ref()
        .and_then(|s| s.volumes.as_deref())
        .unwrap_or_default();
    let templates: Vec<&str> = identity::template_claims(ctx.set).map(|(n, _)| n).collect();
    if templates.is_empty() && volumes.iter().all(|v| v.persistent_volume_claim.is_none()) {
        return false;
    }
    let Some(ordinal) = identity::ordinal_of(identity::set_name(ctx.set), pods::name(pod)) else {
        return false;
    };
    let set = identity::set_name(ctx.set);
    let suffix = format!("-{set}-{ordinal}");
    let missing = templates.iter().any(|vct| {
        let want = identity::claim_name(vct, set, ordinal);
        !volumes.iter().any(|v| {
            v.name == *vct
                && v.persistent_volume_claim
                    .as_ref()
                    .is_some_and(|c| c.claim_name == want)
        })
    });
    let removed = volumes.iter().any(|v| {
        v.persistent_volume_claim.as_ref().is_some_and(|c| {
            c.claim_name
                .strip_suffix(suffix.as_str())
                .is_some_and(|vct| vct == v.name && !templates.contains(&vct))
        })
    });
    missing || removed
}

/// Shared by the pods updated in one pass.
#[derive(Default)]
struct Shared<'a> {
    specs: inplace::SpecCache<'a>,
    texts: inplace::StateText,
    not_ready: [Option<std::sync::Arc<serde_json::Value>>; 2],
}

/// `updatePod`: in place when the policy allows and the change permits, else `deletePod`.
fn update_pod<'a>(
    ctx: &Ctx<'_>,
    pod: &'a PodRecord,
    shared: &mut Shared<'a>,
) -> Result<(Vec<Action>, Option<Duration>), UpdateError> {
    let name = pods::name(pod).to_owned();
    let policy = ctx.pod_update_policy();
    if policy == PodUpdateStrategyType::ReCreate || claims_differ(ctx, pod) {
        return Ok((delete_pod(ctx, pod), None));
    }
    let own = pods::label(pod, CONTROLLER_REVISION_HASH).unwrap_or("");
    // The verdict depends on the pod's revision only.
    let verdict = inplace::cached_spec(&mut shared.specs, own, || {
        ctx.revisions
            .iter()
            .find(|r| r.metadata.name.as_deref() == Some(own))
            .map_or(Err(NotInPlace::SpecChanged), |old| match template_of(old) {
                Ok(t) => inplace::calculate_spec(&t, &ctx.update_template, ctx.update_name),
                Err(_) => Err(NotInPlace::SpecChanged),
            })
    });
    match inplace::for_pod(verdict, pod, ctx.env_from_metadata) {
        Ok(spec) => {
            let grace = ctx
                .rolling()
                .and_then(|r| r.in_place_update_strategy.as_ref())
                .and_then(|s| s.grace_period_seconds)
                .unwrap_or(0);
            inplace::start_hooked(
                pod,
                spec,
                ctx.hook(|l| l.in_place_update.as_ref()),
                grace,
                ctx.now,
                &mut shared.texts,
                &mut shared.not_ready,
            )
            .map_err(|e| UpdateError::BadState(e.pod, e.state))
        }
        Err(NotInPlace::EnvFromMetadata { containers, .. })
            if policy == PodUpdateStrategyType::InPlaceOnly =>
        {
            Err(UpdateError::NeedsRestart {
                pod: name,
                containers: containers.clone(),
            })
        }
        Err(_) if policy == PodUpdateStrategyType::InPlaceOnly => Err(UpdateError::InPlaceOnly(name)),
        Err(_) => Ok((delete_pod(ctx, pod), None)),
    }
}

/// The candidates, in the order they are walked.
fn candidates<'a>(ctx: &Ctx<'a>) -> Vec<&'a PodRecord> {
    let partition = i64::from(ctx.partition());
    let quota = usize::try_from((i64::from(ctx.replicas) - partition).max(0)).unwrap_or(0);
    if !ctx.unordered() {
        return ctx
            .slots
            .iter()
            .rev()
            .filter(|s| s.ordinal - ctx.start >= partition)
            .filter_map(|s| s.pod)
            .take(quota)
            .collect();
    }
    let pods_desc = ctx.slots.iter().rev().filter_map(|s| s.pod);
    let (mut first, mut rest): (Vec<&PodRecord>, Vec<&PodRecord>) = pods_desc.partition(|p| {
        pods::short_hash(pods::label(p, CONTROLLER_REVISION_HASH).unwrap_or(""))
            == pods::short_hash(ctx.update_name)
            || terminating(p)
    });
    if let Some(strategy) = ctx
        .rolling()
        .and_then(|r| r.unordered_update.as_ref())
        .and_then(|u| u.priority_strategy.as_ref())
    {
        let priority = Priority::new(strategy);
        rest.sort_by_cached_key(|p| priority.key(p));
    }
    first.extend(rest);
    first.truncate(quota);
    first
}

/// Runs the rolling update. `gone` names pods earlier steps deleted this pass (they count as
/// unavailable).
pub fn update(ctx: &Ctx<'_>, gone: &[String]) -> Result<Updated, InvalidIntOrPercent> {
    let mut out = Updated::default();
    if ctx.on_delete() || ctx.rolling().is_some_and(|r| r.paused) {
        return Ok(out);
    }
    let max = usize::try_from(max_unavailable(ctx)?).unwrap_or(usize::MAX);
    let mut unavailable: BTreeSet<&str> = gone.iter().map(String::as_str).collect();
    // An in-range slot without a pod (deleted by an earlier pass and not back yet, or being created
    // now) is unavailable too: without it a recreate rollout deletes past the budget.
    let empty: Vec<String> = ctx
        .slots
        .iter()
        .filter(|s| s.pod.is_none())
        .map(|s| format!("\0slot-{}", s.ordinal))
        .collect();
    unavailable.extend(empty.iter().map(String::as_str));
    let mut completion = inplace::Completion::default();
    for slot in &ctx.slots {
        let Some(pod) = slot.pod else { continue };
        if !slot.available {
            out.delay = min_delay(out.delay, ctx.until_available(pod));
        }
        if !slot.healthy || !completion.update_completed(pod) || !slot.available {
            unavailable.insert(pods::name(pod));
        }
    }
    let mut shared = Shared::default();
    // Pods labelled for deletion, top slot first; the partition does not protect them.
    for pod in ctx.slots.iter().rev().filter_map(|s| s.pod) {
        let name = pods::name(pod);
        if pods::label(pod, SPECIFIED_DELETE).is_none() || terminating(pod) || gone.iter().any(|g| g == name)
        {
            continue;
        }
        if !unavailable.contains(name) && unavailable.len() >= max {
            continue;
        }
        out.current_touched +=
            i32::from(pods::label(pod, CONTROLLER_REVISION_HASH) == Some(ctx.current_name));
        out.actions.extend(delete_pod(ctx, pod));
        unavailable.insert(name);
    }
    for pod in candidates(ctx) {
        let name = pods::name(pod);
        if at_update(ctx, pod) && !claims_differ(ctx, pod) {
            continue;
        }
        if unavailable.len() >= max && !unavailable.contains(name) {
            break;
        }
        if pods::label(pod, SPECIFIED_DELETE).is_none()
            && !terminating(pod)
            && !gone.iter().any(|g| g == name)
        {
            match update_pod(ctx, pod, &mut shared) {
                Ok((actions, delay)) => {
                    out.current_touched +=
                        i32::from(pods::label(pod, CONTROLLER_REVISION_HASH) == Some(ctx.current_name));
                    out.actions.extend(actions);
                    out.delay = min_delay(out.delay, delay);
                }
                Err(e) => {
                    out.actions
                        .push(Action::warning("FailedUpdatePodInPlace", e.to_string()));
                    out.error = Some(e);
                    return Ok(out);
                }
            }
        }
        unavailable.insert(name);
    }
    Ok(out)
}

/// kruise-rs: a pod whose `inPlaceUpdate` hook was released while in `PreparingUpdate` goes on with
/// its in-place update even when OrderedReady scaling halted the pass (OpenKruise only does it in the
/// update step, which a halted pass never reaches).
pub fn released(ctx: &Ctx<'_>) -> Updated {
    let mut out = Updated::default();
    let hook = ctx.hook(|l| l.in_place_update.as_ref());
    let mut shared = Shared::default();
    for pod in ctx.slots.iter().filter_map(|s| s.pod) {
        if pods::lifecycle_state(pod) != "PreparingUpdate"
            || crate::lifecycle::is_hooked(hook, pod)
            || at_update(ctx, pod)
            || terminating(pod)
        {
            continue;
        }
        match update_pod(ctx, pod, &mut shared) {
            Ok((actions, delay)) => {
                out.actions.extend(actions);
                out.delay = min_delay(out.delay, delay);
            }
            Err(e) => {
                out.actions
                    .push(Action::warning("FailedUpdatePodInPlace", e.to_string()));
                out.error = Some(e);
                return out;
            }
        }
    }
    out
}
