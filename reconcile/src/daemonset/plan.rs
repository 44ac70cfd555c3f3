//! One reconcile of an Advanced DaemonSet, as a pure function (docs/advanced-daemonset.md).

use std::time::Duration;

use k8s_openapi::api::apps::v1::ControllerRevision;
use k8s_openapi::api::core::v1::Node;
use k8s_openapi::jiff::Timestamp;
use kruise_api::PodRecord;
use kruise_api::apps_v1beta1::{DaemonSet, DaemonSetStatus};

use crate::action::Action;
use crate::cloneset::revision::template_of;
use crate::daemonset::manage::{manage, min_delay};
use crate::daemonset::nodes::Ctx;
use crate::daemonset::revision::{current, truncate_history};
use crate::daemonset::{rolling, status};
use crate::expectations::{Blocked, Expectations};
use crate::int_or_percent::InvalidIntOrPercent;
use crate::pods;

/// Everything one reconcile reads.
#[derive(Debug, Clone, Copy)]
pub struct Input<'a> {
    /// The DaemonSet (v1beta1).
    pub ds: &'a DaemonSet,
    /// Every node of the cluster.
    pub nodes: &'a [Node],
    /// Pods whose controller ownerReference is the DaemonSet (any phase).
    pub pods: &'a [PodRecord],
    /// ControllerRevisions owned by the DaemonSet.
    pub revisions: &'a [ControllerRevision],
    /// Now.
    pub now: Timestamp,
    /// Gates `KruiseDaemon` and `InPlaceUpdateEnvFromMetadata`: a change of env fed from metadata is
    /// applied in place on pods the node agent serves (docs/env-from-metadata.md); otherwise such pods
    /// are recreated.
    pub env_from_metadata: bool,
}

/// The decision of one reconcile.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct Plan {
    /// API calls to make, in order; stop at the first failure.
    pub actions: Vec<Action>,
    /// The status to write, `None` when unchanged or when planning waited.
    pub status: Option<DaemonSetStatus>,
    /// Requeue after this long even without events.
    pub requeue_after: Option<Duration>,
    /// Planning waited on unobserved writes (expectations).
    pub waiting: bool,
}

/// A DaemonSet that cannot be planned for.
#[derive(Debug, thiserror::Error)]
pub enum PlanError {
    /// An int-or-percent field does not resolve.
    #[error(transparent)]
    IntOrPercent(#[from] InvalidIntOrPercent),
}

/// Plans one reconcile. `expectations` are the loop's outstanding writes for this DaemonSet (already
/// `observe`d against the same cache): while any is outstanding, planning waits.
pub fn plan(input: &Input<'_>, expectations: &Expectations) -> Result<Plan, PlanError> {
    let ds = input.ds;
    if ds.metadata.deletion_timestamp.is_some() {
        return Ok(Plan::default());
    }
    match expectations.blocked(input.now) {
        Some(Blocked::Wait(d)) => {
            return Ok(Plan {
                requeue_after: Some(d),
                waiting: true,
                ..Plan::default()
            });
        }
        Some(Blocked::Leaked) => {
            return Ok(Plan {
                waiting: true,
                ..Plan::default()
            });
        }
        None => {}
    }
    let selects_all = ds.spec.selector.as_ref().is_none_or(|s| {
        s.match_labels.as_ref().is_none_or(|m| m.is_empty())
            && s.match_expressions.as_ref().is_none_or(|e| e.is_empty())
    });
    if selects_all {
        return Ok(Plan {
            actions: vec![Action::warning(
                "SelectingAll",
                "This daemon set is selecting all pods. A non-empty selector is required.".into(),
            )],
            ..Plan::default()
        });
    }
    let mut actions = Vec::new();
    let cur = current(ds, input.revisions);
    let mut revisions = input.revisions.to_vec();
    if let Some((create, r)) = &cur.write {
        actions.push(if *create {
            Action::CreateRevision(Box::new(r.clone()))
        } else {
            Action::UpdateRevision(Box::new(r.clone()))
        });
        revisions.retain(|e| e.metadata.name != r.metadata.name);
        revisions.push(r.clone());
    }
    let template = ds.spec.template.spec.clone().unwrap_or_default();
    let mut ctx = Ctx::new(ds, &cur.hash, &revisions, input.now);
    ctx.env_from_metadata = input.env_from_metadata;
    let orphans = ctx.place(&template, input.nodes, input.pods);
    ctx.update_template = template_of(&cur.revision).ok();

    let surge = ctx.max_surge()? > 0;
    let managed = manage(&ctx, &orphans, surge)?;
    let mut delay = managed.delay;
    actions.extend(managed.actions);
    for pod in input
        .pods
        .iter()
        .filter(|p| p.metadata.deletion_timestamp.is_none())
    {
        let refreshed = crate::inplace::refresh_in_place(pod, input.now);
        delay = min_delay(delay, refreshed.delay);
        actions.extend(refreshed.actions);
    }
    let paused = ctx.rolling().and_then(|r| r.paused) == Some(true);
    if !managed.changed && !paused && ctx.is_rolling() {
        let rolled = rolling::rolling(&ctx)?;
        delay = min_delay(delay, rolled.delay);
        actions.extend(rolled.actions);
    }
    let in_use = |hash: &str| {
        input
            .pods
            .iter()
            .any(|p| pods::label(p, pods::CONTROLLER_REVISION_HASH) == Some(hash))
    };
    let current_name = cur.revision.metadata.name.as_deref().unwrap_or("");
    for name in truncate_history(ds, &revisions, current_name, &in_use) {
        actions.push(Action::DeleteRevision { name });
    }
    let (new_status, requeue) = status::compute(&ctx, cur.collision_count);
    let mut result = Plan {
        actions,
        requeue_after: min_delay(delay, requeue),
        ..Plan::default()
    };
    if ds.status.as_ref() != Some(&new_status) {
        result.status = Some(new_status);
    }
    Ok(result)
}
