//! Adaptive scheduling, default mode (OpenKruise's `calculateSubsetsStatusForDefaultAdaptiveStrategy`;
//! docs/uniteddeployment.md, "Adaptive scheduling"): a subset whose pods stay unschedulable longer than
//! `rescheduleCriticalSeconds` is marked unschedulable (its `Schedulable` condition False, reason
//! `reschedule`) for `unschedulableDuration`, during which the adaptive allocator moves its pending pods
//! to other subsets; then it is tried again (True, reason `recover`).

use k8s_openapi::apimachinery::pkg::apis::meta::v1::Time;
use k8s_openapi::jiff::Timestamp;
use kruise_api::PodRecord;
use kruise_api::apps_v1beta1::{
    SUBSET_CONDITION_SCHEDULABLE, UnitedDeploymentScheduleStrategy, UnitedDeploymentSubsetCondition,
};

/// Seconds from `now` until `t` (negative when passed).
fn seconds_until(t: Timestamp, now: Timestamp) -> i64 {
    t.as_second() - now.as_second()
}

/// OpenKruise's `GetTimeBeforePendingTimeout`: `(timed out, seconds until it would)`. A pod counts when
/// it is not deleting, Pending, unbound and `PodScheduled=False` with reason `Unschedulable`.
pub fn pending_timeout(pod: &PodRecord, timeout_seconds: i64, now: Timestamp) -> (bool, Option<i64>) {
    let status = pod.status.as_ref();
    let unbound = pod
        .spec
        .as_ref()
        .and_then(|s| s.node_name.as_deref())
        .is_none_or(str::is_empty);
    if pod.metadata.deletion_timestamp.is_some()
        || status.and_then(|s| s.phase.as_deref()) != Some("Pending")
        || !unbound
    {
        return (false, None);
    }
    let unschedulable = status
        .and_then(|s| s.conditions.as_ref())
        .into_iter()
        .flatten()
        .any(|c| {
            c.type_ == "PodScheduled" && c.status == "False" && c.reason.as_deref() == Some("Unschedulable")
        });
    let Some(created) = pod.metadata.creation_timestamp.as_ref().map(|t| t.0) else {
        return (false, None);
    };
    if !unschedulable {
        return (false, None);
    }
    let left = seconds_until(created, now) + timeout_seconds;
    if left < 0 {
        (true, None)
    } else {
        (false, Some(left.max(1)))
    }
}

/// One subset's schedulability after this pass.
#[derive(Clone, Debug, PartialEq)]
pub struct Schedulability {
    pub unschedulable: bool,
    /// The subset's conditions after this pass.
    pub conditions: Vec<UnitedDeploymentSubsetCondition>,
    /// Seconds until the state may change.
    pub requeue_after: Option<i64>,
}

/// Sets the `Schedulable` condition (a change of status or reason moves `lastTransitionTime`).
pub(super) fn set_schedulable(
    conditions: &mut Vec<UnitedDeploymentSubsetCondition>,
    status: &str,
    reason: &str,
    message: String,
    now: &Time,
) {
    match conditions
        .iter_mut()
        .find(|c| c.type_ == SUBSET_CONDITION_SCHEDULABLE)
    {
        Some(c) if c.status == status && c.reason == reason => {}
        Some(c) => {
            c.status = status.into();
            c.reason = reason.into();
            c.message = message;
            c.last_transition_time = Some(now.clone());
        }
        None => conditions.push(UnitedDeploymentSubsetCondition {
            type_: SUBSET_CONDITION_SCHEDULABLE.into(),
            status: status.into(),
            last_transition_time: Some(now.clone()),
            reason: reason.into(),
            message,
        }),
    }
}

/// The schedulability of an existing subset: `conditions` as stored, its workload's `status.replicas`
/// and `readyReplicas`, and its pods.
pub fn schedulability(
    strategy: &UnitedDeploymentScheduleStrategy,
    mut conditions: Vec<UnitedDeploymentSubsetCondition>,
    replicas: i32,
    ready: i32,
    pods: &[&PodRecord],
    now: Timestamp,
) -> Schedulability {
    let now_time = Time(Timestamp::from_second(now.as_second()).unwrap_or(now));
    let duration = i64::from(strategy.unschedulable_duration_seconds());
    let mut unschedulable = false;
    let mut requeue: Option<i64> = None;
    let mut push = |after: i64| requeue = Some(requeue.map_or(after, |r| r.min(after)));
    let current = conditions
        .iter()
        .find(|c| c.type_ == SUBSET_CONDITION_SCHEDULABLE)
        .cloned();
    if let Some(c) = current.filter(|c| c.status == "False") {
        let since = c.last_transition_time.map_or(now, |t| t.0);
        let left = seconds_until(since, now) + duration;
        if left > 0 {
            push(left);
            unschedulable = true;
        } else {
            let message = format!(
                "unschedulable subset recovered after {duration:.6} seconds",
                duration = duration as f64
            );
            set_schedulable(&mut conditions, "True", "recover", message, &now_time);
        }
    }
    if ready < replicas {
        let critical = i64::from(strategy.reschedule_critical_seconds());
        let mut timed_out = 0;
        for pod in pods {
            let (out, after) = pending_timeout(pod, critical, now);
            timed_out += usize::from(out);
            if let Some(after) = after {
                push(after);
            }
        }
        if timed_out > 0 {
            unschedulable = true;
            set_schedulable(
                &mut conditions,
                "False",
                "reschedule",
                "timeout pending pods found".into(),
                &now_time,
            );
            push(duration);
        }
    }
    Schedulability {
        unschedulable,
        conditions,
        requeue_after: requeue,
    }
}
