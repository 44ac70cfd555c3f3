//! One reconcile of an Advanced StatefulSet, as a pure function (docs/advanced-statefulset.md#controller).

use std::collections::BTreeMap;
use std::time::Duration;

use k8s_openapi::api::apps::v1::ControllerRevision;
use k8s_openapi::api::core::v1::PersistentVolumeClaim;
use k8s_openapi::jiff::Timestamp;
use kruise_api::PodRecord;
use kruise_api::apps_v1beta1::{StatefulSet, StatefulSetStatus};
use serde_json::json;

use crate::action::Action;
use crate::cloneset::revision::{RevisionAction, RevisionError};
use crate::expectations::{Blocked, Expectations};
use crate::int_or_percent::InvalidIntOrPercent;
use crate::pods;
use crate::statefulset::context::{Ctx, Slot, min_delay};
use crate::statefulset::identity::{ordinal_of, reserved, set_name, start};
use crate::statefulset::revision::{active_revisions, template_of, truncate_history};
use crate::statefulset::status::{self, PassOutcome};
use crate::statefulset::{refresh, scale, update};
use kruise_core::selector::{InvalidOperator, Selection, Selector};

/// Everything one reconcile reads.
#[derive(Debug, Clone, Copy)]
pub struct Input<'a> {
    /// The set (v1beta1).
    pub set: &'a StatefulSet,
    /// Pods whose controller ownerReference is the set (any phase).
    pub pods: &'a [PodRecord],
    /// ControllerRevisions owned by the set.
    pub revisions: &'a [ControllerRevision],
    /// PVCs of the namespace named after the set's claims (`<claim>-<set>-<ordinal>`).
    pub pvcs: &'a [PersistentVolumeClaim],
    /// Now.
    pub now: Timestamp,
    /// Gates `KruiseDaemon` and `InPlaceUpdateEnvFromMetadata`: a change of env fed from metadata is
    /// applied in place on pods a node agent serves (docs/env-from-metadata.md).
    pub env_from_metadata: bool,
}

/// The decision of one reconcile.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct Plan {
    /// API calls to make, in order; stop at the first failure.
    pub actions: Vec<Action>,
    /// The status to write, `None` when unchanged or when planning waited.
    pub status: Option<StatefulSetStatus>,
    /// Requeue after this long even without events.
    pub requeue_after: Option<Duration>,
    /// Planning waited on unobserved writes (expectations).
    pub waiting: bool,
    /// OrderedReady scaling stopped at a pod that is not ready yet (the update waited).
    pub halted: bool,
    /// The update error of this pass (also a `FailedUpdatePod` condition).
    pub update_error: Option<String>,
}

/// A set that cannot be planned for.
#[derive(Debug, thiserror::Error)]
pub enum PlanError {
    /// `spec.selector` is missing.
    #[error("StatefulSet has no selector")]
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

/// Plans one reconcile. `expectations` are the loop's outstanding writes for this set (already
/// `observe`d against the same cache): while any is outstanding, planning waits.
pub fn plan(input: &Input<'_>, expectations: &Expectations) -> Result<Plan, PlanError> {
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
    let set = input.set;
    let name = set_name(set);
    let sel = set.spec.selector.as_ref().ok_or(PlanError::NoSelector)?;
    let sel = Selector::parse(Some(sel));
    let mut actions = Vec::new();

    // Pods named `<set>-<N>`; release those whose labels left the selector.
    let mut by_ordinal: BTreeMap<i64, &PodRecord> = BTreeMap::new();
    for p in input.pods {
        let Some(ordinal) = ordinal_of(name, pods::name(p)) else {
            continue;
        };
        if sel.evaluate(&p.metadata.labels)? != Selection::NoMatch {
            by_ordinal.insert(ordinal, p);
        } else if let Some(uid) = &set.metadata.uid {
            actions.push(Action::PatchPod {
                name: pods::name(p).to_owned(),
                reason: "release",
                patch: json!({"metadata": {"ownerReferences": [{"$patch": "delete", "uid": uid}]}}),
            });
        }
    }

    // Revisions.
    let revs = active_revisions(set, input.revisions);
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
            RevisionAction::Delete(n) => actions.push(Action::DeleteRevision { name: n.clone() }),
        }
    }
    let update_name = revs.update.metadata.name.clone().unwrap_or_default();
    let current_name = revs.current.metadata.name.clone().unwrap_or_default();

    // Slots and condemned pods.
    let replicas = set.spec.replicas.unwrap_or(1).max(0);
    let first = start(set);
    let in_range = kruise_core::ordinals::in_range(first, i64::from(replicas), &reserved(set));
    let slots: Vec<Slot<'_>> = in_range
        .iter()
        .enumerate()
        .map(|(index, &ordinal)| Slot {
            ordinal,
            index,
            pod: by_ordinal.get(&ordinal).copied(),
            available: false,
            healthy: false,
        })
        .collect();
    let mut condemned: Vec<(i64, &PodRecord)> = by_ordinal
        .iter()
        .filter(|(o, _)| in_range.binary_search(o).is_err())
        .map(|(o, p)| (*o, *p))
        .collect();
    condemned.reverse();
    let ctx = Ctx {
        set,
        replicas,
        start: first,
        slots,
        condemned,
        claims: input
            .pvcs
            .iter()
            .filter_map(|c| c.metadata.name.as_deref().map(|n| (n, c)))
            .collect(),
        current_name: &current_name,
        update_name: &update_name,
        current_template: template_of(&revs.current)?,
        update_template: template_of(&revs.update)?,
        revisions: &all_revisions,
        now: input.now,
        env_from_metadata: input.env_from_metadata,
    }
    .with_facts();

    let mut result = Plan::default();
    let mut outcome = PassOutcome::default();
    let mut delay = None;
    if set.metadata.deletion_timestamp.is_none() {
        let refreshed = refresh::refresh(&ctx);
        actions.extend(refreshed.actions);
        delay = min_delay(delay, refreshed.delay);
        let scaled = scale::scale(&ctx, &refreshed.deleted)?;
        outcome.creates = scaled.actions.iter().any(|a| matches!(a, Action::CreatePod(_)));
        actions.extend(scaled.actions);
        delay = min_delay(delay, scaled.delay);
        result.halted = scaled.halted;
        let mut gone = refreshed.deleted;
        gone.extend(scaled.deleted);
        let updated = if scaled.halted {
            update::released(&ctx)
        } else if refreshed.modified {
            update::Updated::default()
        } else {
            outcome.update_ran = true;
            update::update(&ctx, &gone)?
        };
        actions.extend(updated.actions);
        delay = min_delay(delay, updated.delay);
        outcome.current_touched = updated.current_touched;
        outcome.update_error = updated.error.map(|e| e.to_string());
        result.update_error = outcome.update_error.clone();
    }

    let new_status = status::compute(&ctx, revs.collision_count, &outcome);
    if set.status.as_ref() != Some(&new_status) {
        result.status = Some(new_status);
    }
    let all_pods: Vec<&PodRecord> = ctx.pods().collect();
    for n in truncate_history(set, &all_revisions, &all_pods, &current_name, &update_name) {
        actions.push(Action::DeleteRevision { name: n });
    }
    result.actions = actions;
    result.requeue_after = delay;
    Ok(result)
}

#[cfg(test)]
mod tests;
