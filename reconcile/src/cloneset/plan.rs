//! One reconcile of a CloneSet (`doReconcile`, docs/cloneset-controller.md#reconcile), as a pure function.

use std::collections::BTreeSet;
use std::time::Duration;

use k8s_openapi::api::apps::v1::ControllerRevision;
use k8s_openapi::api::core::v1::PersistentVolumeClaim;
use k8s_openapi::jiff::Timestamp;
use kruise_api::PodRecord;
use kruise_api::apps_v1beta1::{CLONESET_INSTANCE_ID, CloneSet, CloneSetStatus};
use kruise_core::selector::LabelSource;
use serde_json::json;

use crate::action::Action;
use crate::cloneset::arithmetic::{Diffs, Params};
use crate::cloneset::context::{Ctx, Options};
use crate::cloneset::revision::{self, RevisionAction, RevisionError};
use crate::cloneset::{scale, status, update};
use crate::expectations::{Blocked, Expectations};
use crate::int_or_percent::InvalidIntOrPercent;
use crate::pods;
use kruise_core::selector::{InvalidOperator, Selection, Selector};

/// Everything one reconcile reads.
#[derive(Debug, Clone, Copy)]
pub struct Input<'a> {
    /// The CloneSet (v1beta1).
    pub cloneset: &'a CloneSet,
    /// Pods whose controller ownerReference is the CloneSet (any phase).
    pub pods: &'a [PodRecord],
    /// ControllerRevisions owned by the CloneSet (or matching its selector and unowned).
    pub revisions: &'a [ControllerRevision],
    /// PVCs owned by the CloneSet.
    pub pvcs: &'a [PersistentVolumeClaim],
    /// Now.
    pub now: Timestamp,
    /// Manager gates and flags.
    pub options: Options,
}

/// The decision of one reconcile.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct Plan {
    /// API calls to make, in order; stop at the first failure.
    pub actions: Vec<Action>,
    /// The status to write (status subresource), `None` when unchanged or when planning waited.
    pub status: Option<CloneSetStatus>,
    /// Requeue after this long even without events.
    pub requeue_after: Option<Duration>,
    /// Scale did something, so update was skipped this pass.
    pub scaled: bool,
    /// The update error of this pass (also a `FailedUpdate` condition in `status`).
    pub update_error: Option<String>,
    /// Planning waited on unobserved writes (expectations).
    pub waiting: bool,
    /// The numbers this pass worked from (the update step's when it ran, else the scale step's), for
    /// logs.
    pub diffs: Option<Diffs>,
}

/// A CloneSet that cannot be planned for.
#[derive(Debug, thiserror::Error)]
pub enum PlanError {
    /// `spec.selector` is missing.
    #[error("CloneSet has no selector")]
    NoSelector,
    /// The selector does not evaluate.
    #[error(transparent)]
    Selector(#[from] InvalidOperator),
    /// A strategy value does not resolve.
    #[error(transparent)]
    IntOrPercent(#[from] InvalidIntOrPercent),
    /// A revision is unusable.
    #[error(transparent)]
    Revision(#[from] RevisionError),
}

fn min_delay(a: Option<Duration>, b: Option<Duration>) -> Option<Duration> {
    match (a, b) {
        (Some(a), Some(b)) => Some(a.min(b)),
        (a, b) => a.or(b),
    }
}

/// The pod or PVC instance-id label, `""` without.
fn id_of(labels: &impl LabelSource) -> &str {
    labels.label(CLONESET_INSTANCE_ID).unwrap_or_default()
}

/// Plans one reconcile. `expectations` are the loop's outstanding writes for this CloneSet (already
/// `observe`d against the same cache); `generate_id` yields candidate 5-character instance ids.
pub fn plan(
    input: &Input<'_>,
    expectations: &Expectations,
    generate_id: &mut dyn FnMut() -> String,
) -> Result<Plan, PlanError> {
    let now = input.now;
    match expectations.blocked(now) {
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
    let cs = input.cloneset;
    let sel = cs.spec.selector.as_ref().ok_or(PlanError::NoSelector)?;
    let sel = Selector::parse(Some(sel));
    let mut actions = Vec::new();

    // Active pods; release those whose labels left the selector.
    let mut active: Vec<&PodRecord> = Vec::with_capacity(input.pods.len());
    for p in input.pods.iter().filter(|p| pods::is_active(p)) {
        if sel.evaluate(&p.metadata.labels)? != Selection::NoMatch {
            active.push(p);
        } else if let Some(uid) = &cs.metadata.uid {
            actions.push(Action::PatchPod {
                name: pods::name(p).to_owned(),
                reason: "release",
                patch: json!({"metadata": {"ownerReferences": [{"$patch": "delete", "uid": uid}]}}),
            });
        }
    }

    // PVCs: without reuse, hand those of inactive pods to the pod and delete orphans.
    let active_ids: BTreeSet<&str> = if input.pvcs.is_empty() {
        BTreeSet::new()
    } else {
        active.iter().map(|p| id_of(&p.metadata.labels)).collect()
    };
    let mut pvcs: Vec<&PersistentVolumeClaim> = Vec::new();
    for pvc in input
        .pvcs
        .iter()
        .filter(|p| p.metadata.deletion_timestamp.is_none())
    {
        let id = id_of(&pvc.metadata.labels);
        if cs.spec.scale_strategy.enable_pvc_reuse || active_ids.contains(&id) {
            pvcs.push(pvc);
            continue;
        }
        let name = pvc.metadata.name.clone().unwrap_or_default();
        match input
            .pods
            .iter()
            .find(|p| !pods::is_active(p) && id_of(&p.metadata.labels) == id)
        {
            Some(pod) => actions.push(Action::PatchPvc {
                name,
                // ownerReferences merge by uid: drop the CloneSet's, add the pod as controller.
                patch: json!({"metadata": {"ownerReferences": [
                    {"$patch": "delete", "uid": cs.metadata.uid},
                    {"apiVersion": "v1", "kind": "Pod", "name": pods::name(pod), "uid": pod.metadata.uid,
                     "controller": true, "blockOwnerDeletion": true},
                ]}}),
            }),
            None => actions.push(Action::DeletePvc { name }),
        }
    }

    // Revisions.
    let revs = revision::active_revisions(cs, input.revisions);
    let mut all_revisions: Vec<ControllerRevision> = input.revisions.to_vec();
    for a in &revs.actions {
        match a {
            RevisionAction::Create(r) => {
                actions.push(Action::CreateRevision(Box::new(r.clone())));
                all_revisions.push(r.clone());
            }
            RevisionAction::Update(r) => {
                actions.push(Action::UpdateRevision(Box::new(r.clone())));
                for existing in all_revisions
                    .iter_mut()
                    .filter(|e| e.metadata.name == r.metadata.name)
                {
                    *existing = r.clone();
                }
            }
            RevisionAction::Delete(name) => actions.push(Action::DeleteRevision { name: name.clone() }),
        }
    }
    let update_name = revs.update.metadata.name.clone().unwrap_or_default();
    let current_name = revs.current.metadata.name.clone().unwrap_or_default();
    let mut ctx = Ctx {
        cs,
        params: Params::resolve(
            cs,
            input.options.scaling_exclude_preparing_delete,
            input.options.partition_rollback,
        )?,
        pods: active,
        pvcs,
        current_name: &current_name,
        update_name: &update_name,
        current_template: revision::template_of(&revs.current)?,
        update_template: revision::template_of(&revs.update)?,
        revisions: &all_revisions,
        now,
        options: input.options,
        pods_to_delete: cs
            .spec
            .scale_strategy
            .pods_to_delete
            .iter()
            .flatten()
            .map(String::as_str)
            .collect(),
        views: Vec::new(),
        by_address: Vec::new(),
    };
    ctx.index();

    // Sync: scale, or else update.
    let mut result = Plan::default();
    let mut delay = None;
    if cs.metadata.deletion_timestamp.is_none() {
        let scaled = scale::scale(&ctx, generate_id);
        result.scaled = scaled.scaling();
        result.diffs = scaled.diffs;
        actions.extend(scaled.actions);
        if !result.scaled {
            let updated = update::update(&ctx);
            delay = updated.delay;
            result.diffs = updated.diffs.or(result.diffs);
            result.update_error = updated.error.map(|e| e.to_string());
            actions.extend(updated.actions);
        }
    }

    // Status.
    let (new_status, status_delay) =
        status::compute(&ctx, revs.collision_count, None, result.update_error.clone());
    delay = min_delay(delay, status_delay);
    if cs.spec.min_ready_seconds > 0 && new_status.available_replicas != new_status.ready_replicas {
        delay = min_delay(
            delay,
            Some(Duration::from_secs(
                u64::try_from(cs.spec.min_ready_seconds).unwrap_or(0),
            )),
        );
    }
    if status::changed(cs.status.as_ref(), &new_status) {
        result.status = Some(new_status);
    }

    // podsToDelete keeps only existing pods.
    if let Some(listed) = &cs.spec.scale_strategy.pods_to_delete {
        let existing: BTreeSet<&str> = ctx.pods.iter().map(|p| pods::name(p)).collect();
        let kept: Vec<String> = listed
            .iter()
            .filter(|n| existing.contains(n.as_str()))
            .cloned()
            .collect();
        if kept.len() != listed.len() {
            actions.push(Action::SetPodsToDelete(kept));
        }
    }

    // History.
    for name in revision::truncate_history(cs, &all_revisions, &ctx.pods, &current_name, &update_name) {
        actions.push(Action::DeleteRevision { name });
    }

    result.actions = actions;
    result.requeue_after = delay;
    Ok(result)
}

#[cfg(test)]
mod tests;
