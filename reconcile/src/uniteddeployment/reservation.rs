//! Adaptive scheduling, reservation mode (`reserveUnschedulablePods`; OpenKruise's
//! `calculateSubsetsStatusForReservedAdaptiveStrategy`; docs/uniteddeployment.md, "Reservation mode").
//! A pod that cannot run where it is stays in its subset as a *reserved* pod (label
//! `apps.kruise.io/united-deployment-reserved-pod: "true"`) while the allocator places a temporary pod
//! in another subset; the reserved pod leaves that state once it has run Ready for
//! `unschedulableDuration`, and the temporary pods are then scaled away.

use k8s_openapi::apimachinery::pkg::apis::meta::v1::Time;
use k8s_openapi::jiff::Timestamp;
use kruise_api::PodRecord;
use kruise_api::apps_v1beta1::{
    RESERVED_POD_LABEL, REVISION_LABEL, SUBSET_CONDITION_SCHEDULABLE, UnitedDeploymentScheduleStrategy,
    UnitedDeploymentSubsetCondition,
};
use kruise_core::pod_state::{condition, phase};

use super::adaptive::{pending_timeout, set_schedulable};
use crate::pods::ready_since;

/// The reserved label a pod should carry, when it differs from what it carries.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct PodLabel {
    pub pod: String,
    pub reserved: bool,
}

/// One existing subset under reservation after this pass.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Reservation {
    /// Pods of the subset that are reserved.
    pub reserved_pods: i32,
    /// Pods on an old revision whose update has run longer than `rescheduleCriticalSeconds`.
    pub update_timeout_pods: i32,
    /// The subset's `Schedulable` condition was False when the pass began.
    pub marked_unschedulable: bool,
    /// The subset has reserved pods.
    pub unschedulable: bool,
    /// The subset's conditions after this pass.
    pub conditions: Vec<UnitedDeploymentSubsetCondition>,
    /// Pods whose reserved label must be written.
    pub labels: Vec<PodLabel>,
    /// Seconds until a pod's state may change.
    pub requeue_after: Option<i64>,
}

/// What the pass knows of the UnitedDeployment's rollout.
#[derive(Clone, Copy, Debug)]
pub struct Rollout<'a> {
    /// The update revision's name.
    pub revision: &'a str,
    /// When the UD began updating to it (its `UnitedDeploymentUpdated` condition turned False), if
    /// it is updating.
    pub updating_since: Option<Timestamp>,
}

/// The reserved label a pod carries: `Some(true)`, `Some(false)` or none.
fn marked(pod: &PodRecord) -> Option<bool> {
    pod.metadata.labels.get(RESERVED_POD_LABEL).map(|v| v == "true")
}

fn revision_of(pod: &PodRecord) -> Option<&str> {
    pod.metadata.labels.get(REVISION_LABEL)
}

/// Whether a pod is reserved now, and the seconds until that may change (OpenKruise's
/// `CheckPodReallyInReservedStatus`). `timed_out_update` is set for a pod reserved because its
/// update timed out.
fn check(
    pod: &PodRecord,
    rollout: Rollout<'_>,
    critical: i64,
    duration: i64,
    now: Timestamp,
) -> (bool, Option<i64>, bool) {
    let at_revision = revision_of(pod) == Some(rollout.revision);
    if marked(pod) == Some(true) {
        // Reserved until it has run Ready at the update revision for `unschedulableDuration`.
        let ready = condition(pod, "Ready").is_some_and(|c| c.status == "True");
        if at_revision && phase(pod) == "Running" && ready {
            // A Ready condition without a transition time counts as Ready long ago, as in OpenKruise.
            let left = ready_since(pod).map_or(-1, |since| since.as_second() + duration - now.as_second());
            return if left < 0 {
                (false, None, false)
            } else {
                (true, Some(left.max(1)), false)
            };
        }
        return (true, Some(duration), false);
    }
    if at_revision {
        let (out, after) = pending_timeout(pod, critical, now);
        return (out, if out { Some(duration) } else { after }, false);
    }
    // An old-revision pod: reserved once the update has run longer than `rescheduleCriticalSeconds`
    // (OpenKruise counts it whatever the rollout state; here only while the UD is updating).
    let Some(since) = rollout.updating_since else {
        return (false, None, false);
    };
    if pod.metadata.deletion_timestamp.is_some() {
        return (false, None, false);
    }
    let left = since.as_second() + critical - now.as_second();
    if left < 0 {
        (true, Some(duration), true)
    } else {
        (false, Some(left.max(1)), false)
    }
}

/// The reservation state of an existing subset: its stored conditions and its pods.
pub fn reservation(
    strategy: &UnitedDeploymentScheduleStrategy,
    mut conditions: Vec<UnitedDeploymentSubsetCondition>,
    pods: &[&PodRecord],
    rollout: Rollout<'_>,
    now: Timestamp,
) -> Reservation {
    let critical = i64::from(strategy.reschedule_critical_seconds());
    let duration = i64::from(strategy.unschedulable_duration_seconds());
    let marked_unschedulable = conditions
        .iter()
        .any(|c| c.type_ == SUBSET_CONDITION_SCHEDULABLE && c.status == "False");
    let mut out = Reservation {
        marked_unschedulable,
        ..Reservation::default()
    };
    let mut push = |after: i64| out.requeue_after = Some(out.requeue_after.map_or(after, |r| r.min(after)));
    let mut labels = Vec::new();
    for pod in pods {
        let old = marked(pod);
        let reserved = if marked_unschedulable && old.is_none() {
            // Created into a subset marked unschedulable: reserved from the start.
            push(duration);
            true
        } else {
            let (reserved, after, timed_out_update) = check(pod, rollout, critical, duration, now);
            out.update_timeout_pods += i32::from(timed_out_update);
            if let Some(after) = after {
                push(after);
            }
            reserved
        };
        out.reserved_pods += i32::from(reserved);
        if old != Some(reserved) {
            labels.push(PodLabel {
                pod: pod.metadata.name.clone().unwrap_or_default(),
                reserved,
            });
        }
    }
    let now_time = Time(Timestamp::from_second(now.as_second()).unwrap_or(now));
    out.unschedulable = out.reserved_pods > 0;
    let (status, message) = if out.unschedulable {
        ("False", "reserved pods found")
    } else {
        ("True", "no reserved pods")
    };
    set_schedulable(&mut conditions, status, "reschedule", message.into(), &now_time);
    out.conditions = conditions;
    out.labels = labels;
    out
}

/// A subset that just recovered (no reserved pods left, but marked unschedulable when the pass began)
/// and is given more pods is marked unschedulable again, so that its new pods start reserved and the
/// temporary pods elsewhere go only once those are healthy.
pub fn just_recovered_scaled_up(r: &mut Reservation, spec_replicas: i32, allocated: i32, now: Timestamp) {
    if !r.unschedulable && r.marked_unschedulable && allocated > spec_replicas {
        let now_time = Time(Timestamp::from_second(now.as_second()).unwrap_or(now));
        set_schedulable(
            &mut r.conditions,
            "False",
            "reschedule",
            "subset just recovered scaled up".into(),
            &now_time,
        );
    }
}

/// The `Schedulable` condition a subset added to a UD under reservation starts with (only when the
/// UD already had subsets: the first subsets start schedulable).
pub fn created_condition(now: Timestamp) -> UnitedDeploymentSubsetCondition {
    UnitedDeploymentSubsetCondition {
        type_: SUBSET_CONDITION_SCHEDULABLE.into(),
        status: "False".into(),
        last_transition_time: Some(Time(Timestamp::from_second(now.as_second()).unwrap_or(now))),
        reason: "created".into(),
        message: "newly-created subsets in reservation strategy".into(),
    }
}

/// OpenKruise's `maxUnavailable` override for an unschedulable subset's workload, so that its old
/// reserved pods can be replaced: `spec.replicas − ready + updateTimeoutPods`.
pub fn max_unavailable(spec_replicas: i32, ready: i32, r: &Reservation) -> i32 {
    (spec_replicas - ready + r.update_timeout_pods).max(0)
}
