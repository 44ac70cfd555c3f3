//! The PodUnavailableBudget status planner (OpenKruise's `pkg/controller/podunavailablebudget`). The
//! admission webhook spends the budget (decrements `unavailableAllowed` and records the pod in
//! `disruptedPods`/`unavailablePods`); a pass recounts it from the pods and prunes the records the
//! cluster has caught up with:
//!
//! - `desiredAvailable`: `max(expected − maxUnavailable, 0)` (percent rounded up), or `minAvailable`;
//! - a `disruptedPods` record lives 20s ([`DELETION_TIMEOUT`]) while its pod is still there, an
//!   `unavailablePods` record 10s ([`UPDATED_DELAY_CHECK`]); records of pods that are gone disappear;
//! - `currentAvailable`: active pods outside both maps that are consistent and Running+Ready without an
//!   `unavailable-pod.kruise.io/` label;
//! - `unavailableAllowed = max(currentAvailable − desiredAvailable, 0)`, `totalReplicas = expected`.

use std::{collections::BTreeMap, sync::Arc, time::Duration};

use k8s_openapi::{
    apimachinery::pkg::apis::meta::v1::Time,
    jiff::{SignedDuration, Timestamp},
};
use kruise_api::{
    PodRecord,
    policy_v1beta1::{PodUnavailableBudget, PodUnavailableBudgetStatus},
};
// The availability rule the pod webhook spends the budget by.
use kruise_core::pod_state;
use kruise_core::selector::LabelSource;

use crate::{
    int_or_percent::{InvalidIntOrPercent, scaled_i32},
    pods,
};

pub use kruise_core::pub_protection::{DELETION_TIMEOUT, UPDATED_DELAY_CHECK};

/// The pods a budget must keep available.
pub fn desired_available(budget: &PodUnavailableBudget, expected: i32) -> Result<i32, InvalidIntOrPercent> {
    if let Some(max_unavailable) = &budget.spec.max_unavailable {
        let max = scaled_i32(max_unavailable, expected, true, "spec.maxUnavailable")?;
        Ok((expected - max).max(0))
    } else if let Some(min_available) = &budget.spec.min_available {
        scaled_i32(min_available, expected, true, "spec.minAvailable")
    } else {
        Ok(0)
    }
}

/// Whether `budget` covers a pod of `namespace` with `labels` whose workload (the pod's controller, or
/// the Deployment above its ReplicaSet) is `workload` (kind, name): by targetRef when it has one, else
/// by selector.
pub fn covers(
    budget: &PodUnavailableBudget,
    namespace: &str,
    labels: &impl LabelSource,
    workload: Option<(&str, &str)>,
) -> bool {
    if budget.metadata.namespace.as_deref() != Some(namespace) {
        return false;
    }
    match (&budget.spec.target_reference, &budget.spec.selector) {
        (Some(t), _) => workload
            .is_some_and(|(kind, name)| t.kind.as_deref() == Some(kind) && t.name.as_deref() == Some(name)),
        (None, Some(s)) => kruise_core::selector::selects(Some(s), labels).unwrap_or(false),
        (None, None) => false,
    }
}

/// The outcome of one pass.
#[derive(Debug, Clone, PartialEq)]
pub struct Plan {
    pub status: PodUnavailableBudgetStatus,
    /// Whether `status` differs from the budget's.
    pub changed: bool,
    /// When the earliest kept record expires.
    pub recheck_at: Option<Timestamp>,
    /// Pods whose admitted disruption never happened (event `NotDeleted`).
    pub not_deleted: Vec<String>,
}

impl Plan {
    /// How long after `now` the next pass is due (`None`: only on a change).
    pub fn requeue_after(&self, now: Timestamp) -> Option<Duration> {
        self.recheck_at
            .map(|at| Duration::try_from(at.duration_since(now)).unwrap_or_default())
    }
}

fn after(time: &Time, delay: Duration) -> Timestamp {
    time.0 + SignedDuration::try_from(delay).unwrap_or_default()
}

/// Recounts `budget` over `pods` (its pods; inactive ones are ignored) with `expected` replicas.
pub fn plan(
    budget: &PodUnavailableBudget,
    pods: &[Arc<PodRecord>],
    expected: i32,
    now: Timestamp,
) -> Result<Plan, InvalidIntOrPercent> {
    let desired = desired_available(budget, expected)?;
    let old = budget.status.clone().unwrap_or_default();
    let old_disrupted = old.disrupted_pods.clone().unwrap_or_default();
    let old_unavailable = old.unavailable_pods.clone().unwrap_or_default();
    let mut disrupted = BTreeMap::new();
    let mut unavailable = BTreeMap::new();
    let mut recheck_at: Option<Timestamp> = None;
    let mut not_deleted = Vec::new();
    let mut recheck = |at: Timestamp| recheck_at = Some(recheck_at.map_or(at, |r| r.min(at)));
    for pod in pods.iter().filter(|p| pods::is_active(p)) {
        let name = pods::name(pod);
        if let Some(at) = old_disrupted.get(name) {
            let expiry = after(at, DELETION_TIMEOUT);
            if expiry < now {
                not_deleted.push(name.to_string());
            } else {
                disrupted.insert(name.to_string(), at.clone());
                recheck(expiry);
            }
        }
        if let Some(at) = old_unavailable.get(name) {
            let expiry = after(at, UPDATED_DELAY_CHECK);
            if expiry >= now {
                unavailable.insert(name.to_string(), at.clone());
                recheck(expiry);
            }
        }
    }
    let current = pods
        .iter()
        .filter(|p| pods::is_active(p))
        .filter(|p| {
            let name = pods::name(p);
            !disrupted.contains_key(name) && !unavailable.contains_key(name)
        })
        .filter(|p| pod_state::is_state_consistent(p) && pod_state::is_ready_for_pub(p))
        .count() as i32;
    let status = PodUnavailableBudgetStatus {
        observed_generation: budget.metadata.generation.unwrap_or(0),
        disrupted_pods: Some(disrupted).filter(|m| !m.is_empty()),
        unavailable_pods: Some(unavailable).filter(|m| !m.is_empty()),
        unavailable_allowed: (current - desired).max(0),
        current_available: current,
        desired_available: desired,
        total_replicas: expected,
    };
    let normalized_old = PodUnavailableBudgetStatus {
        disrupted_pods: old.disrupted_pods.clone().filter(|m| !m.is_empty()),
        unavailable_pods: old.unavailable_pods.clone().filter(|m| !m.is_empty()),
        ..old
    };
    Ok(Plan {
        changed: status != normalized_old,
        status,
        recheck_at,
        not_deleted,
    })
}

#[cfg(test)]
mod tests;
