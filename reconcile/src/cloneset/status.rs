//! The CloneSet status (docs/cloneset-controller.md#status): counters over the active pods, revisions, and
//! the `Progressing`,
//! `FailedScale` and `FailedUpdate` conditions.

use std::time::Duration;

use k8s_openapi::apimachinery::pkg::apis::meta::v1::Time;
use k8s_openapi::jiff::{SignedDuration, Timestamp};
use kruise_api::apps_v1beta1::{
    CLONESET_AVAILABLE, CLONESET_PROGRESS_DEADLINE_EXCEEDED, CLONESET_PROGRESS_PARTITION_AVAILABLE,
    CLONESET_PROGRESS_PAUSED, CLONESET_PROGRESS_UPDATED, CloneSetCondition, CloneSetConditionType,
    CloneSetStatus,
};

use crate::cloneset::arithmetic::rolling_update;
use crate::cloneset::context::Ctx;

/// Sets a condition as OpenKruise's `SetCloneSetCondition`: unchanged status and reason keep the old
/// condition (times included); an unchanged status keeps the old transition time.
pub fn set_condition(status: &mut CloneSetStatus, mut cond: CloneSetCondition) {
    let conditions = status.conditions.get_or_insert_default();
    if let Some(cur) = conditions.iter().find(|c| c.type_ == cond.type_) {
        if cur.status == cond.status && cur.reason == cond.reason {
            return;
        }
        if cur.status == cond.status {
            cond.last_transition_time = cur.last_transition_time.clone();
        }
    }
    conditions.retain(|c| c.type_ != cond.type_);
    conditions.push(cond);
}

/// A condition stamped `now`.
pub fn condition(
    type_: CloneSetConditionType,
    status: &str,
    reason: &str,
    message: String,
    now: Timestamp,
) -> CloneSetCondition {
    CloneSetCondition {
        type_,
        status: status.into(),
        last_update_time: Some(Time(now)),
        last_transition_time: Some(Time(now)),
        reason: (!reason.is_empty()).then(|| reason.to_owned()),
        message: Some(message),
    }
}

/// Computes the new status. `failed_scale` / `failed_update` carry the error of this pass. Returns the
/// status and the requeue the Progressing deadline asks for.
pub fn compute(
    ctx: &Ctx<'_>,
    collision_count: Option<i32>,
    failed_scale: Option<String>,
    failed_update: Option<String>,
) -> (CloneSetStatus, Option<Duration>) {
    let cs = ctx.cs;
    let old = cs.status.clone().unwrap_or_default();
    let spec_replicas = cs.spec.replicas.unwrap_or(1);
    let mut s = CloneSetStatus {
        observed_generation: cs.metadata.generation.unwrap_or(0),
        update_revision: Some(ctx.update_name.to_owned()),
        current_revision: Some(ctx.current_name.to_owned()),
        collision_count,
        label_selector: cs.spec.selector.as_ref().and_then(|s| {
            kruise_core::selector::Selector::parse(Some(s))
                .to_selector_string()
                .ok()
        }),
        conditions: old.conditions.clone(),
        ..Default::default()
    };
    for (_, v) in ctx.pods_with_views() {
        let (updated, ready, available) = (v.at_update, v.update_ready, v.available);
        s.replicas += 1;
        s.ready_replicas += i32::from(ready);
        s.available_replicas += i32::from(available);
        s.updated_replicas += i32::from(updated);
        s.updated_ready_replicas += i32::from(updated && ready);
        s.updated_available_replicas += i32::from(updated && available);
    }
    if s.updated_replicas == s.replicas && s.replicas == spec_replicas {
        s.current_revision = s.update_revision.clone();
    }
    s.expected_updated_replicas = spec_replicas - i32::try_from(ctx.params.partition).unwrap_or(0);
    if let Some(msg) = failed_scale {
        set_condition(
            &mut s,
            condition(CloneSetConditionType::FailedScale, "True", "", msg, ctx.now),
        );
    }
    if let Some(msg) = failed_update {
        set_condition(
            &mut s,
            condition(CloneSetConditionType::FailedUpdate, "True", "", msg, ctx.now),
        );
    }
    let requeue = progressing(ctx, &mut s, spec_replicas);
    (s, requeue)
}

fn progressing(ctx: &Ctx<'_>, s: &mut CloneSetStatus, spec_replicas: i32) -> Option<Duration> {
    let Some(deadline) = ctx.cs.spec.progress_deadline_seconds.filter(|d| *d != i32::MAX) else {
        if let Some(c) = s.conditions.as_mut() {
            c.retain(|c| c.type_ != CloneSetConditionType::Progressing);
        }
        return None;
    };
    let now = ctx.now;
    let cond = |status: &str, reason: &str, msg: String| {
        condition(CloneSetConditionType::Progressing, status, reason, msg, now)
    };
    let existing = s
        .conditions
        .iter()
        .flatten()
        .find(|c| c.type_ == CloneSetConditionType::Progressing)
        .cloned();
    let deadline_span = SignedDuration::from_secs(i64::from(deadline));
    let exceeded = existing.as_ref().is_some_and(|c| {
        c.reason.as_deref() == Some(CLONESET_PROGRESS_DEADLINE_EXCEEDED)
            || c.last_update_time
                .as_ref()
                .is_some_and(|t| t.0.checked_add(deadline_span).is_ok_and(|at| at < now))
    });
    let paused = rolling_update(ctx.cs).is_some_and(|r| r.paused);
    if s.current_revision == s.update_revision
        && s.replicas == s.updated_replicas
        && s.replicas == s.updated_available_replicas
        && s.replicas == spec_replicas
    {
        set_condition(
            s,
            cond("True", CLONESET_AVAILABLE, "CloneSet is available".into()),
        );
    } else if paused {
        set_condition(
            s,
            cond("True", CLONESET_PROGRESS_PAUSED, "CloneSet is paused".into()),
        );
    } else if s.expected_updated_replicas < spec_replicas
        && s.expected_updated_replicas <= s.updated_available_replicas
    {
        set_condition(
            s,
            cond(
                "True",
                CLONESET_PROGRESS_PARTITION_AVAILABLE,
                "CloneSet has been paused due to partition ready".into(),
            ),
        );
    } else if exceeded {
        let msg = format!("CloneSet revision {} has timed out progressing", ctx.update_name);
        set_condition(s, cond("False", CLONESET_PROGRESS_DEADLINE_EXCEEDED, msg));
    } else {
        set_condition(
            s,
            cond(
                "True",
                CLONESET_PROGRESS_UPDATED,
                "CloneSet is progressing".into(),
            ),
        );
        let c = s
            .conditions
            .iter()
            .flatten()
            .find(|c| c.type_ == CloneSetConditionType::Progressing)?;
        let at = c.last_update_time.as_ref()?.0.checked_add(deadline_span).ok()?;
        let after = at.duration_since(now);
        let after = if after < SignedDuration::from_secs(1) {
            after
        } else {
            after + SignedDuration::from_secs(1)
        };
        return after.try_into().ok().filter(|d: &Duration| !d.is_zero());
    }
    None
}

/// Whether the status must be written: observedGeneration grew, a counter or revision or the selector
/// changed, or the Progressing condition changed status or reason (`inconsistentStatus`). Failed*
/// conditions are written whenever they are new.
pub fn changed(old: Option<&CloneSetStatus>, new: &CloneSetStatus) -> bool {
    let Some(old) = old else { return true };
    let progressing = |s: &CloneSetStatus| {
        s.conditions
            .iter()
            .flatten()
            .find(|c| c.type_ == CloneSetConditionType::Progressing)
            .map(|c| (c.status.clone(), c.reason.clone()))
    };
    let failed = |s: &CloneSetStatus| {
        s.conditions
            .iter()
            .flatten()
            .filter(|c| {
                matches!(
                    c.type_,
                    CloneSetConditionType::FailedScale | CloneSetConditionType::FailedUpdate
                )
            })
            .map(|c| (c.type_.clone(), c.message.clone()))
            .collect::<Vec<_>>()
    };
    new.observed_generation > old.observed_generation
        || (
            old.replicas,
            old.ready_replicas,
            old.available_replicas,
            old.updated_replicas,
        ) != (
            new.replicas,
            new.ready_replicas,
            new.available_replicas,
            new.updated_replicas,
        )
        || (
            old.updated_ready_replicas,
            old.updated_available_replicas,
            old.expected_updated_replicas,
        ) != (
            new.updated_ready_replicas,
            new.updated_available_replicas,
            new.expected_updated_replicas,
        )
        || old.update_revision != new.update_revision
        || old.current_revision != new.current_revision
        || old.label_selector != new.label_selector
        || old.collision_count != new.collision_count
        || progressing(old) != progressing(new)
        || failed(old) != failed(new)
}

#[cfg(test)]
mod tests;
