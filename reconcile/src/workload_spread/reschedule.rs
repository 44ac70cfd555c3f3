//! Adaptive rescheduling (`scheduleStrategy.type: Adaptive` with `adaptive.rescheduleCriticalSeconds > 0`):
//! a subset whose pods stay pending unschedulable longer than that becomes `Schedulable=False`
//! (`PodUnschedulable`) and those pods are deleted, so the workload recreates them and the pod webhook
//! skips the subset; [`MAX_SCHEDULED_FAILED_DURATION`] after the transition, once no pod of the subset is
//! stuck any more, the condition returns to `True` (`Sufficient`) with event `RecoverSchedulable`. The last
//! subset is never rescheduled: it is always `Schedulable=True`. Without Adaptive the condition is removed.

use std::time::Duration;

use k8s_openapi::{
    apimachinery::pkg::apis::meta::v1::{Condition, Time},
    jiff::Timestamp,
};
use kruise_api::{
    PodRecord,
    apps_v1beta1::{SUBSET_SCHEDULABLE, WorkloadSpread, WorkloadSpreadScheduleStrategyType},
};

use super::after;

/// How long a subset stays `Schedulable=False` before pods may be scheduled to it again (OpenKruise's
/// `MaxScheduledFailedDuration`).
pub const MAX_SCHEDULED_FAILED_DURATION: Duration = Duration::from_secs(300);
pub const REASON_UNSCHEDULABLE: &str = "PodUnschedulable";
pub const REASON_SUFFICIENT: &str = "Sufficient";

/// `rescheduleCriticalSeconds` when the WorkloadSpread is Adaptive and it is positive.
pub fn critical_duration(ws: &WorkloadSpread) -> Option<Duration> {
    let strategy = &ws.spec.schedule_strategy;
    if strategy.type_ != Some(WorkloadSpreadScheduleStrategyType::Adaptive) {
        return None;
    }
    let seconds = strategy.adaptive.as_ref()?.reschedule_critical_seconds?;
    (seconds > 0).then(|| Duration::from_secs(seconds as u64))
}

/// Whether `pod` has been pending unschedulable (`PodScheduled=False`, reason `Unschedulable`, no node)
/// for longer than `timeout` since its creation; `Err(at)` when it is unschedulable but `at` is when it
/// times out; `Ok(false)` otherwise.
pub fn pending_timed_out(pod: &PodRecord, timeout: Duration, now: Timestamp) -> Result<bool, Timestamp> {
    let pending = pod.status.as_ref().and_then(|s| s.phase.as_deref()) == Some("Pending");
    let on_node = pod
        .spec
        .as_ref()
        .and_then(|s| s.node_name.as_deref())
        .is_some_and(|n| !n.is_empty());
    if pod.metadata.deletion_timestamp.is_some() || !pending || on_node {
        return Ok(false);
    }
    let failed = pod
        .status
        .as_ref()
        .and_then(|s| s.conditions.as_ref())
        .into_iter()
        .flatten()
        .any(|c| {
            c.type_ == "PodScheduled" && c.status == "False" && c.reason.as_deref() == Some("Unschedulable")
        });
    let Some(created) = pod.metadata.creation_timestamp.as_ref() else {
        return Ok(false);
    };
    if !failed {
        return Ok(false);
    }
    let expect = after(created, timeout);
    if expect < now { Ok(true) } else { Err(expect) }
}

fn condition(status: &str, reason: &str, now: Timestamp) -> Condition {
    Condition {
        type_: SUBSET_SCHEDULABLE.into(),
        status: status.into(),
        reason: reason.into(),
        message: String::new(),
        observed_generation: None,
        last_transition_time: Time(now),
    }
}

/// OpenKruise's `setWorkloadSpreadSubsetCondition`: nothing changes when a condition of that type has the
/// same status and reason; a same-status condition keeps its transition time.
fn set(conditions: &mut Vec<Condition>, mut new: Condition) {
    if let Some(current) = conditions.iter().find(|c| c.type_ == new.type_) {
        if current.status == new.status && current.reason == new.reason {
            return;
        }
        if current.status == new.status {
            new.last_transition_time = current.last_transition_time.clone();
        }
    }
    conditions.retain(|c| c.type_ != new.type_);
    conditions.push(new);
}

/// A subset's conditions after one pass.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct Outcome {
    pub conditions: Vec<Condition>,
    /// When a `Schedulable=False` condition may recover.
    pub recheck_at: Option<Timestamp>,
    /// The condition recovered in this pass (event `RecoverSchedulable`).
    pub recovered: bool,
}

/// The `Schedulable` condition of a subset that is not the last one, from its previous conditions and
/// whether some of its pods timed out unscheduled.
pub fn rescheduled(old: &[Condition], unschedulable: bool, now: Timestamp) -> Outcome {
    let mut conditions = old.to_vec();
    let Some(previous) = old.iter().find(|c| c.type_ == SUBSET_SCHEDULABLE) else {
        let new = if unschedulable {
            condition("False", REASON_UNSCHEDULABLE, now)
        } else {
            condition("True", REASON_SUFFICIENT, now)
        };
        set(&mut conditions, new);
        return Outcome {
            conditions,
            ..Outcome::default()
        };
    };
    if unschedulable {
        set(&mut conditions, condition("False", REASON_UNSCHEDULABLE, now));
        return Outcome {
            conditions,
            ..Outcome::default()
        };
    }
    if previous.status != "False" {
        return Outcome {
            conditions,
            ..Outcome::default()
        };
    }
    let recover_at = after(&previous.last_transition_time, MAX_SCHEDULED_FAILED_DURATION);
    if recover_at < now {
        set(&mut conditions, condition("True", REASON_SUFFICIENT, now));
        Outcome {
            conditions,
            recheck_at: None,
            recovered: true,
        }
    } else {
        Outcome {
            conditions,
            recheck_at: Some(recover_at),
            recovered: false,
        }
    }
}

/// The last subset's conditions: always `Schedulable=True`.
pub fn last_subset(old: &[Condition], now: Timestamp) -> Vec<Condition> {
    let mut conditions = old.to_vec();
    set(&mut conditions, condition("True", REASON_SUFFICIENT, now));
    conditions
}

#[cfg(test)]
mod tests;
