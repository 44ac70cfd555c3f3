//! The status of a pass (docs/advanced-daemonset.md#status): counters over each node's first pod
//! (its oldest, scheduled pods first, terminating ones included).

use std::time::Duration;

use kruise_api::apps_v1beta1::DaemonSetStatus;

use crate::daemonset::nodes::Ctx;

/// Computes the status; the second value asks for a requeue after `minReadySeconds` when some pods
/// are ready but not yet available.
pub fn compute(ctx: &Ctx<'_>, collision_count: Option<i32>) -> (DaemonSetStatus, Option<Duration>) {
    let ds = ctx.ds;
    let mut s = DaemonSetStatus {
        observed_generation: ds.metadata.generation.unwrap_or(0),
        collision_count,
        conditions: ds.status.as_ref().and_then(|s| s.conditions.clone()),
        update_revision: ctx.hash.to_owned(),
        ..DaemonSetStatus::default()
    };
    for node in &ctx.nodes {
        let Some(first) = node.pods.first() else {
            s.desired_number_scheduled += i32::from(node.fit.should_run);
            continue;
        };
        if !node.fit.should_run {
            s.number_misscheduled += 1;
            continue;
        }
        s.desired_number_scheduled += 1;
        s.current_number_scheduled += 1;
        if first.ready {
            s.number_ready += 1;
            if first.available {
                s.number_available += 1;
            }
        }
        if first.current {
            s.updated_number_scheduled += 1;
        }
    }
    s.number_unavailable = s.desired_number_scheduled - s.number_available;
    let requeue = (s.number_ready != s.number_available && ds.spec.min_ready_seconds > 0)
        .then(|| Duration::from_secs(u64::try_from(ds.spec.min_ready_seconds).unwrap_or(0)));
    (s, requeue)
}
