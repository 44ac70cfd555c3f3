//! Pod deletion cost (`controller.kubernetes.io/pod-deletion-cost`) for CloneSet, Deployment and
//! ReplicaSet targets: the workload scales down pods of no subset first, then the excess of over-full
//! subsets, then the last subsets (for the latest version; old versions leave the first subsets first).

use std::{cmp::Ordering, sync::Arc};

use super::{DELETION_COST_ANNOTATION, FAKE_SUBSET, PlanError, PodsBySubset, max_replicas};
use crate::pods;
use kruise_api::{PodRecord, apps_v1beta1::WorkloadSpread};

/// Kubernetes' `ActivePods` order: the pods to delete first sort first.
fn deletion_order(a: &PodRecord, b: &PodRecord) -> Ordering {
    let assigned = |p: &PodRecord| {
        p.spec
            .as_ref()
            .and_then(|s| s.node_name.as_ref())
            .is_some_and(|n| !n.is_empty())
    };
    let phase_rank = |p: &PodRecord| match p.status.as_ref().and_then(|s| s.phase.as_deref()) {
        Some("Pending") => 0,
        Some("Unknown") => 1,
        Some("Running") => 2,
        _ => 3,
    };
    let ready = |p: &PodRecord| {
        p.metadata.deletion_timestamp.is_none() && pods::phase(p) == "Running" && pods::is_ready(p)
    };
    let ready_since = |p: &PodRecord| {
        p.status
            .as_ref()
            .and_then(|s| s.conditions.as_ref())
            .and_then(|c| c.iter().find(|c| c.type_ == "Ready" && c.status == "True"))
            .and_then(|c| c.last_transition_time.as_ref().map(|t| t.0))
    };
    let restarts = |p: &PodRecord| {
        p.status
            .as_ref()
            .and_then(|s| s.container_statuses.as_ref())
            .map_or(0, |c| c.iter().map(|c| c.restart_count).max().unwrap_or(0))
    };
    let created = |p: &PodRecord| p.metadata.creation_timestamp.as_ref().map(|t| t.0);
    assigned(a)
        .cmp(&assigned(b))
        .then(phase_rank(a).cmp(&phase_rank(b)))
        .then(ready(a).cmp(&ready(b)))
        // Ready for a shorter time first: a later (or no) ready time sorts first.
        .then_with(|| match (ready(a), ready_since(a), ready_since(b)) {
            (true, Some(x), Some(y)) => y.cmp(&x),
            _ => Ordering::Equal,
        })
        .then(restarts(b).cmp(&restarts(a)))
        .then_with(|| match (created(a), created(b)) {
            (Some(x), Some(y)) => y.cmp(&x),
            (None, Some(_)) => Ordering::Less,
            (Some(_), None) => Ordering::Greater,
            (None, None) => Ordering::Equal,
        })
}

fn cost_change(pod: &PodRecord, value: String) -> Option<(String, String)> {
    let current = pods::annotation(pod, DELETION_COST_ANNOTATION);
    if current == Some(value.as_str()) || (current.is_none() && value == "0") {
        return None;
    }
    Some((pods::name(pod).to_string(), value))
}

/// Deletion costs of one version's pods.
pub(super) fn deletion_costs(
    ws: &WorkloadSpread,
    by_subset: &PodsBySubset,
    replicas: i32,
    reverse: bool,
) -> Result<Vec<(String, String)>, PlanError> {
    let subsets = &ws.spec.subsets;
    let n = subsets.len() as i64;
    let mut changes = Vec::new();
    for (i, subset) in subsets.iter().enumerate() {
        let index = if reverse { n - i as i64 - 1 } else { i as i64 };
        let mut active: Vec<&Arc<PodRecord>> = by_subset
            .get(&subset.name)
            .into_iter()
            .flatten()
            .filter(|p| pods::is_active(p))
            .collect();
        let positive = (100 * (n - index)).to_string();
        let negative = (-100 * (index + 1)).to_string();
        let excess = match max_replicas(subset, replicas)? {
            None => 0,
            Some(max) => active.len().saturating_sub(max as usize),
        };
        active.sort_by(|a, b| deletion_order(a, b));
        for (k, pod) in active.iter().enumerate() {
            let value = if k < excess {
                negative.clone()
            } else {
                positive.clone()
            };
            changes.extend(cost_change(pod, value));
        }
    }
    // Pods of no subset (of a subset that no longer exists, or that could not be adopted) go first.
    let fake = (-100 * (n + 1)).to_string();
    for pod in by_subset.get(FAKE_SUBSET).into_iter().flatten() {
        if pods::is_active(pod) {
            changes.extend(cost_change(pod, fake.clone()));
        }
    }
    Ok(changes)
}
