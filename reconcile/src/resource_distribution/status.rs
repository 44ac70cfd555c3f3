//! The status of a distribution after a pass: counts and the six conditions, as OpenKruise's
//! `calculateNewStatus`.

use std::collections::BTreeSet;

use k8s_openapi::apimachinery::pkg::apis::meta::v1::Time;
use kruise_api::apps_v1beta1::{
    CONDITION_TYPES, ResourceDistribution, ResourceDistributionCondition, ResourceDistributionStatus,
};

/// Why one namespace failed; the order is the conditions' order.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub enum FailureKind {
    GetResourceFailed,
    CreateResourceFailed,
    UpdateResourceFailed,
    DeleteResourceFailed,
    ConflictOccurred,
    NamespaceNotExists,
}

impl FailureKind {
    /// The condition type it is reported under.
    pub fn condition(self) -> &'static str {
        CONDITION_TYPES[self as usize]
    }

    /// Whether the pass should be retried with backoff (conflicts and missing namespaces wait for an
    /// event instead, as in OpenKruise).
    pub fn retried(self) -> bool {
        !matches!(
            self,
            FailureKind::ConflictOccurred | FailureKind::NamespaceNotExists
        )
    }
}

/// One namespace that failed.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Failure {
    pub namespace: String,
    pub kind: FailureKind,
    /// The error text (the condition's reason).
    pub reason: String,
}

/// The reason of a copy that exists but is not controlled by the distribution.
pub const CONFLICT_REASON: &str =
    "conflict with existing resources because of the same namespace, group, version, kind and name";
/// The reason of a targeted namespace that does not exist or is being deleted.
pub const MISSING_NAMESPACE_REASON: &str = "namespace not found or is terminating";
/// The reason of a condition without failures.
pub const SUCCEEDED: &str = "Succeeded";

/// The status for `desired` targeted namespaces and the pass's `failures`; `lastTransitionTime` moves
/// only when a condition's status flips. Failures outside the targeted namespaces (cleanup) count only
/// in the conditions.
pub fn status(
    rd: &ResourceDistribution,
    desired: &BTreeSet<String>,
    failures: &[Failure],
    now: &Time,
) -> ResourceDistributionStatus {
    let old = rd
        .status
        .as_ref()
        .map(|s| s.conditions.as_slice())
        .unwrap_or_default();
    let mut failed_targets: BTreeSet<&str> = BTreeSet::new();
    let conditions = CONDITION_TYPES
        .iter()
        .enumerate()
        .map(|(i, type_)| {
            let mine: Vec<&Failure> = failures.iter().filter(|f| f.kind as usize == i).collect();
            let mut namespaces: Vec<String> = mine.iter().map(|f| f.namespace.clone()).collect();
            namespaces.sort();
            namespaces.dedup();
            let status = if namespaces.is_empty() { "False" } else { "True" };
            let reason = mine.last().map_or(SUCCEEDED.to_string(), |f| f.reason.clone());
            let previous = old.iter().find(|c| c.type_ == *type_);
            let last_transition_time = match previous {
                Some(p) if p.status == status && p.last_transition_time.is_some() => {
                    p.last_transition_time.clone()
                }
                _ => Some(now.clone()),
            };
            ResourceDistributionCondition {
                type_: type_.to_string(),
                status: status.to_string(),
                last_transition_time,
                reason,
                failed_namespaces: namespaces,
            }
        })
        .collect();
    for f in failures {
        if desired.contains(&f.namespace) {
            failed_targets.insert(&f.namespace);
        }
    }
    let desired_count = i32::try_from(desired.len()).unwrap_or(i32::MAX);
    let succeeded = desired_count - i32::try_from(failed_targets.len()).unwrap_or(i32::MAX);
    ResourceDistributionStatus {
        desired: desired_count,
        succeeded,
        failed: desired_count - succeeded,
        observed_generation: rd.metadata.generation.unwrap_or_default(),
        conditions,
    }
}
