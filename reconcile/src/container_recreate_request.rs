//! The ContainerRecreateRequest manager planner (OpenKruise's `pkg/controller/containerrecreaterequest`;
//! docs/containerrecreaterequest.md). The node agent does the recreating; the manager, per request:
//!
//! 1. completed or deleting: drops the pod's not-ready key and then the finalizer; a completed one loses
//!    its `active` label, then is deleted once `ttlSecondsAfterFinished` has passed;
//! 2. completes it (`Completed`, `completionTime`, a message) when the pod is gone, deleting or replaced
//!    (uid ≠ the `pod-uid` label) — `pod has gone` —, when no agent set a phase within a minute, or past
//!    `activeDeadlineSeconds`;
//! 3. while `Recreating`: keeps `containerStatusSnapshot` — the request's containers that run and started
//!    after it was created (an empty result keeps the old snapshot) — and looks again every 3 s;
//! 4. `unreadyGracePeriodSeconds`: a pod with the `KruisePodReady` gate gets the finalizer, then the
//!    not-ready key `{"userAgent":"ContainerRecreateRequest","key":"<ns>/<name>"}`; then the
//!    `PreRecreateGrace` condition is set (its `lastTransitionTime` starts the agent's wait). A pod
//!    without the gate stays Ready (as in OpenKruise) and the agent still waits out the grace.

use std::time::Duration;

use k8s_openapi::apimachinery::pkg::apis::meta::v1::{Condition, Time};
use k8s_openapi::jiff::{SignedDuration, Timestamp};
use kruise_api::PodRecord;
use kruise_api::apps_v1beta1::{
    CRR_ACTIVE_LABEL, CRR_POD_UID_LABEL, CRR_PRE_RECREATE_GRACE, CRR_PRE_RECREATE_GRACE_MESSAGE,
    CRR_UNREADY_ACQUIRED_KEY, ContainerRecreateRequest, ContainerRecreateRequestPhase as Phase,
    ContainerRecreateRequestStatus, ContainerRecreateRequestSyncContainerStatus as Snapshot,
};

pub mod agent;

use crate::action::Action;
use crate::lifecycle::{has_not_ready_key, not_ready_key_patch_as};
use crate::rfc3339::rfc3339;

/// The not-ready key's user agent.
pub const USER_AGENT: &str = "ContainerRecreateRequest";
/// How long a request may stay without a phase (no agent picked it up).
pub const RESPONSE_TIMEOUT: Duration = Duration::from_secs(60);
/// How often a `Recreating` request is looked at.
pub const RECREATING_RESYNC: Duration = Duration::from_secs(3);
/// Message: the pod is gone, deleting or replaced.
pub const POD_GONE: &str = "pod has gone";
/// Message: no agent set a phase in time.
pub const NO_RESPONSE: &str = "daemon has not responded for a long time";
/// Message: `activeDeadlineSeconds` passed.
pub const DEADLINE_EXCEEDED: &str = "recreating has exceeded the activeDeadlineSeconds";

/// What one pass sees.
pub struct Input<'a> {
    /// The request.
    pub crr: &'a ContainerRecreateRequest,
    /// Its pod (by name in its namespace), if the cache has it.
    pub pod: Option<&'a PodRecord>,
    /// Now.
    pub now: Timestamp,
}

/// What to do, in this order; the loop carries out one finalizer change per pass and comes back.
#[derive(Debug, Default, PartialEq)]
pub struct Plan {
    /// Add (`Some(true)`) or remove (`Some(false)`) the `unready-acquired` finalizer.
    pub finalizer: Option<bool>,
    /// A `pods/status` patch adding or removing the request's not-ready key.
    pub pod_status: Option<Action>,
    /// Merge-patch the `active` label away.
    pub remove_active_label: bool,
    /// Delete the request (its TTL passed).
    pub delete: bool,
    /// The status to write, when it changed.
    pub status: Option<ContainerRecreateRequestStatus>,
    /// Look again after this long.
    pub requeue_after: Option<Duration>,
}

/// The not-ready key of a request: `<namespace>/<name>`.
pub fn not_ready_key(crr: &ContainerRecreateRequest) -> String {
    format!(
        "{}/{}",
        crr.metadata.namespace.as_deref().unwrap_or_default(),
        crr.metadata.name.as_deref().unwrap_or_default()
    )
}

fn label<'a>(crr: &'a ContainerRecreateRequest, key: &str) -> Option<&'a str> {
    crr.metadata.labels.as_ref()?.get(key).map(String::as_str)
}

fn has_finalizer(crr: &ContainerRecreateRequest) -> bool {
    crr.metadata
        .finalizers
        .as_deref()
        .unwrap_or_default()
        .iter()
        .any(|f| f == CRR_UNREADY_ACQUIRED_KEY)
}

/// Time left until `start + seconds` (zero when passed).
fn left(start: Timestamp, seconds: i64, now: Timestamp) -> Duration {
    let end = start
        .checked_add(SignedDuration::from_secs(seconds))
        .unwrap_or(start);
    Duration::try_from(end.duration_since(now)).unwrap_or(Duration::ZERO)
}

/// Whether the request's `PreRecreateGrace` condition is True.
pub fn grace_acquired(status: &ContainerRecreateRequestStatus) -> Option<&Condition> {
    status
        .conditions
        .iter()
        .find(|c| c.type_ == CRR_PRE_RECREATE_GRACE && c.status == "True")
}

/// One pass.
pub fn plan(input: &Input<'_>) -> Plan {
    let Input { crr, pod, now } = *input;
    let status = crr.status.clone().unwrap_or_default();
    let completed = status.phase == Phase::Completed;
    if completed || crr.metadata.deletion_timestamp.is_some() {
        return finish(crr, pod, &status, now);
    }
    let complete = |message: &str| {
        let mut s = status.clone();
        s.phase = Phase::Completed;
        s.completion_time = Some(Time(whole_seconds(now)));
        s.message = message.into();
        Plan {
            status: Some(s),
            ..Plan::default()
        }
    };
    let pod = match pod {
        Some(p)
            if p.metadata.deletion_timestamp.is_none()
                && p.metadata.uid.as_deref() == label(crr, CRR_POD_UID_LABEL) =>
        {
            p
        }
        _ => return complete(POD_GONE),
    };
    let created = crr.metadata.creation_timestamp.as_ref().map_or(now, |t| t.0);
    let mut wait = Vec::new();
    if status.phase.is_unset() {
        let l = left(created, RESPONSE_TIMEOUT.as_secs() as i64, now);
        if l.is_zero() {
            return complete(NO_RESPONSE);
        }
        wait.push(l);
    }
    if let Some(deadline) = crr.spec.active_deadline_seconds {
        let l = left(created, deadline, now);
        if l.is_zero() {
            return complete(DEADLINE_EXCEEDED);
        }
        wait.push(l);
    }
    if status.phase != Phase::Recreating {
        return Plan {
            requeue_after: wait.into_iter().min(),
            ..Plan::default()
        };
    }
    let mut plan = Plan {
        requeue_after: Some(RECREATING_RESYNC),
        ..Plan::default()
    };
    let mut next = status.clone();
    let snapshot = snapshot(crr, pod, created);
    if !snapshot.is_empty() {
        next.container_status_snapshot = snapshot;
    }
    if crr
        .spec
        .strategy
        .as_ref()
        .and_then(|s| s.unready_grace_period_seconds)
        .is_some()
        && grace_acquired(&status).is_none()
    {
        if has_kruise_pod_ready_gate(pod) {
            if !has_finalizer(crr) {
                plan.finalizer = Some(true);
                return plan;
            }
            plan.pod_status = not_ready_key_patch_as(pod, USER_AGENT, &not_ready_key(crr), true, now);
        }
        next.conditions.retain(|c| c.type_ != CRR_PRE_RECREATE_GRACE);
        next.conditions.push(Condition {
            type_: CRR_PRE_RECREATE_GRACE.into(),
            status: "True".into(),
            reason: CRR_PRE_RECREATE_GRACE.into(),
            message: CRR_PRE_RECREATE_GRACE_MESSAGE.into(),
            last_transition_time: Time(whole_seconds(now)),
            observed_generation: None,
        });
    }
    if next != status {
        plan.status = Some(next);
    }
    plan
}

fn has_kruise_pod_ready_gate(pod: &PodRecord) -> bool {
    pod.spec
        .as_ref()
        .and_then(|s| s.readiness_gates.as_ref())
        .is_some_and(|g| {
            g.iter()
                .any(|g| g.condition_type == crate::lifecycle::KRUISE_POD_READY)
        })
}

/// A completed or deleting request: release the pod, drop the label, then the TTL.
fn finish(
    crr: &ContainerRecreateRequest,
    pod: Option<&PodRecord>,
    status: &ContainerRecreateRequestStatus,
    now: Timestamp,
) -> Plan {
    if has_finalizer(crr) {
        let key = not_ready_key(crr);
        let pod_status = pod
            .filter(|p| has_not_ready_key(p, USER_AGENT, &key))
            .and_then(|p| not_ready_key_patch_as(p, USER_AGENT, &key, false, now));
        return Plan {
            pod_status,
            finalizer: Some(false),
            ..Plan::default()
        };
    }
    if crr.metadata.deletion_timestamp.is_some() {
        return Plan::default();
    }
    if label(crr, CRR_ACTIVE_LABEL).is_some() {
        return Plan {
            remove_active_label: true,
            ..Plan::default()
        };
    }
    match (crr.spec.ttl_seconds_after_finished, &status.completion_time) {
        (Some(ttl), Some(Time(done))) => {
            let l = left(*done, i64::from(ttl), now);
            if l.is_zero() {
                Plan {
                    delete: true,
                    ..Plan::default()
                }
            } else {
                Plan {
                    requeue_after: Some(l),
                    ..Plan::default()
                }
            }
        }
        _ => Plan::default(),
    }
}

/// The request's containers that run in the pod status and started after `created`.
fn snapshot(crr: &ContainerRecreateRequest, pod: &PodRecord, created: Timestamp) -> Vec<Snapshot> {
    let statuses = pod.container_statuses();
    crr.spec
        .containers
        .iter()
        .filter_map(|c| statuses.iter().find(|s| s.name == c.name))
        .filter(|s| {
            s.state
                .as_ref()
                .and_then(|st| st.running.as_ref())
                .and_then(|r| r.started_at.as_ref())
                .is_some_and(|t| t.0 > created)
        })
        .map(|s| Snapshot {
            name: s.name.clone(),
            ready: s.ready,
            restart_count: s.restart_count,
            container_id: s.container_id.clone().unwrap_or_default(),
        })
        .collect()
}

fn whole_seconds(t: Timestamp) -> Timestamp {
    rfc3339(t).parse().unwrap_or(t)
}

#[cfg(test)]
mod tests;
