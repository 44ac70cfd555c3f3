//! The CloneSet controller: the pure planner ([`kruise_reconcile::cloneset::plan()`]) on the shared
//! [`control_loop`].
//!
//! One pass gathers the CloneSet's pods, ControllerRevisions and PVCs from the shared cluster cache,
//! adopts orphans, lets the planner decide, executes its actions in order (stopping at the first
//! failure, whose expectation is forgotten), records events and writes the status (with the CloneSet's
//! resourceVersion as precondition: 409 re-reads and plans again, never overwrites). The expectations
//! (docs/cloneset-controller.md#expectations) are the loop's per-CloneSet memory, observed against the
//! cache on every pass, so a stale cache never causes a second create or delete; the loop also waits
//! until the cache shows the pod changes that triggered a pass.

use std::{
    hash::{BuildHasher as _, Hasher as _},
    sync::Arc,
    time::Duration,
};

use k8s_openapi::{
    api::{apps::v1::ControllerRevision, core::v1::PersistentVolumeClaim},
    jiff::Timestamp,
};
use kruise_api::{PodRecord, apps_v1beta1::CloneSet};
use kruise_reconcile::cloneset::{Input, Options, Plan};
use kruise_reconcile::{Action as Step, Expectations};
use kube::{
    ResourceExt as _,
    runtime::{
        events::{Recorder, Reporter},
        reflector::ObjectRef,
    },
};
use tracing::Instrument as _;

use super::{
    Context, ControllerView, Error,
    control_loop::{self, Known, Next, Pass, Reconciler, Triggers},
    pods,
};

use super::workload_actions::{
    CONFLICT_REQUEUE, Owner, adopt, after_adoption, carry_out, is_conflict, while_waiting,
};

/// Safety net: every CloneSet is re-planned at least this often.
pub const RESYNC: Duration = Duration::from_secs(300);

/// The event reporter (`reportingController` / `reportingInstance`).
pub fn reporter() -> Reporter {
    Reporter {
        controller: "kruise-manager".into(),
        instance: Some("cloneset-controller".into()),
    }
}

/// The controller's state shared by passes (the loop keeps each CloneSet's [`Expectations`]).
pub struct State {
    context: Context,
    recorder: Recorder,
    options: Options,
}

/// The alphabet of Kubernetes' `rand.String` (no vowels, no confusable digits).
const ID_ALPHABET: &[u8] = b"bcdfghjklmnpqrstvwxz2456789";

/// A random 5-character instance id, as OpenKruise's `rand.String(5)`.
pub fn random_id() -> String {
    let mut hasher = std::collections::hash_map::RandomState::new().build_hasher();
    hasher.write_u128(
        std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .map(|d| d.as_nanos())
            .unwrap_or(0),
    );
    let mut bits = hasher.finish();
    (0..5)
        .map(|_| {
            let c = ID_ALPHABET[(bits % ID_ALPHABET.len() as u64) as usize];
            bits /= ID_ALPHABET.len() as u64;
            char::from(c)
        })
        .collect()
}

/// What one pass reads: the CloneSet's pods (controller ownerReference), revisions (owned, or unowned
/// and matching the selector) and PVCs (owned).
pub fn gather(
    context: &Context,
    cs: &CloneSet,
) -> (
    Vec<PodRecord>,
    Vec<ControllerRevision>,
    Vec<PersistentVolumeClaim>,
) {
    let namespace = cs.namespace().unwrap_or_default();
    let uid = cs.metadata.uid.clone().unwrap_or_default();
    let pod_list = context
        .view
        .pods_controlled_by(&namespace, Some(&uid))
        .into_iter()
        .map(|p| (*p).clone())
        .collect();
    let revisions =
        context
            .view
            .controller_revisions(&namespace)
            .into_iter()
            .filter(|r| match kruise_core::kind::controller_ref(&r.metadata) {
                Some(o) => o.uid == uid,
                None => cs.spec.selector.as_ref().is_some_and(|s| {
                    pods::selects(s, r.metadata.labels.as_ref().unwrap_or(&Default::default()))
                }),
            })
            .map(|r| (*r).clone())
            .collect();
    let pvcs = context
        .view
        .persistent_volume_claims(&namespace)
        .into_iter()
        .filter(|p| p.metadata.owner_references.iter().flatten().any(|o| o.uid == uid))
        .map(|p| (*p).clone())
        .collect();
    (pod_list, revisions, pvcs)
}

/// Pods to adopt (`ClaimPods`): active pods of the namespace without a controller ownerReference whose
/// labels the selector matches, while the CloneSet is not being deleted.
pub fn orphans(context: &Context, cs: &CloneSet) -> Vec<Arc<PodRecord>> {
    let Some(selector) = &cs.spec.selector else {
        return Vec::new();
    };
    if cs.metadata.deletion_timestamp.is_some() || selector == &Default::default() {
        return Vec::new();
    }
    context
        .view
        .pods_controlled_by(&cs.namespace().unwrap_or_default(), None)
        .into_iter()
        .filter(|p| kruise_core::pod_state::is_active(p))
        .filter(|p| pods::selects(selector, &p.metadata.labels))
        .collect()
}

/// Counts of one plan's actions, for the pass's span and log.
#[derive(Debug, Default, Clone, Copy, PartialEq, Eq)]
pub struct Counts {
    pub creates: usize,
    pub deletes: usize,
    pub patches: usize,
    pub revisions: usize,
    pub events: usize,
}

impl Counts {
    pub fn of(plan: &Plan) -> Self {
        let mut c = Counts::default();
        for a in &plan.actions {
            match a {
                Step::CreatePod(_) | Step::CreatePodOnNode { .. } | Step::CreatePvc(_) => c.creates += 1,
                Step::DeletePod { .. } | Step::DeletePvc { .. } => c.deletes += 1,
                Step::PatchPod { .. } | Step::PatchPodStatus { .. } | Step::PatchPvc { .. } => c.patches += 1,
                Step::SetPodsToDelete(_) => c.patches += 1,
                Step::CreateRevision(_) | Step::UpdateRevision(_) | Step::DeleteRevision { .. } => {
                    c.revisions += 1
                }
                Step::Event { .. } => c.events += 1,
            }
        }
        c
    }
}

async fn pass(
    state: &State,
    cs: Arc<CloneSet>,
    pass: Pass<CloneSet, Expectations>,
    span: tracing::Span,
) -> Result<Next, Error> {
    let (pod_list, revisions, pvcs) = gather(&state.context, &cs);
    let now = Timestamp::now();
    let mut expectations = pass.memory();
    expectations.observe(&pod_list, &pvcs);
    pass.keep(expectations.clone());
    let orphans = orphans(&state.context, &cs);
    if !orphans.is_empty() && expectations.is_satisfied() {
        let adopted = adopt(&state.context.client, &*cs, &orphans, &mut expectations, now).await;
        pass.keep(expectations);
        return after_adoption(adopted);
    }
    let input = Input {
        cloneset: &cs,
        pods: &pod_list,
        revisions: &revisions,
        pvcs: &pvcs,
        now,
        options: state.options,
    };
    let plan = kruise_reconcile::cloneset::plan(&input, &expectations, &mut random_id).map_err(|e| {
        Error::Invalid {
            what: "CloneSet",
            message: e.to_string(),
        }
    })?;
    pass.decided();
    if plan.waiting {
        return Ok(while_waiting(plan.requeue_after, &expectations));
    }
    let counts = Counts::of(&plan);
    span.record("creates", counts.creates);
    span.record("deletes", counts.deletes);
    span.record("patches", counts.patches);
    span.record("revisions", counts.revisions);
    let owner = Owner {
        client: &state.context.client,
        recorder: &state.recorder,
        object: &*cs,
    };
    let failure = carry_out(&owner, &plan.actions, &pod_list, &mut expectations, now)
        .await
        .map(|(_, e)| e);
    pass.keep(expectations);
    // The status is computed from the pods as read, so it is written even when an action failed (as
    // OpenKruise's doReconcile does); then the failure decides the requeue.
    if let Some(status) = &plan.status {
        match pass.write_status(&cs, status).await {
            Ok(()) => {}
            Err(e @ (Error::Conflict { .. } | Error::Gone)) => return Err(e),
            Err(e) => return Err(failure.map_or(e, Error::from)),
        }
    }
    if let Some(e) = failure {
        if is_conflict(&e) {
            tracing::debug!(error = %e, "a write conflicted; planning again");
            return Ok(Next::After(CONFLICT_REQUEUE));
        }
        return Err(e.into());
    }
    tracing::info!(
        creates = counts.creates,
        deletes = counts.deletes,
        patches = counts.patches,
        revisions = counts.revisions,
        events = counts.events,
        scaled = plan.scaled,
        status_written = plan.status.is_some(),
        "CloneSet reconciled"
    );
    // Writes made this pass come back as watch events; the expectations gate the next plan until then.
    Ok(Next::after(plan.requeue_after))
}

/// A pod's CloneSet; for an orphan, every CloneSet that would adopt it.
fn clone_sets_of_pod(p: &PodRecord, known: &Known<CloneSet>) -> Vec<ObjectRef<CloneSet>> {
    if let Some(owner) = pods::kruise_controller::<CloneSet, _>(p) {
        return vec![owner];
    }
    if kruise_core::kind::controller_ref(&p.metadata).is_some() {
        return Vec::new();
    }
    let namespace = p.namespace().unwrap_or_default();
    let labels = &p.metadata.labels;
    known.refs(|c| {
        c.metadata.namespace.as_deref() == Some(namespace.as_str())
            && c.spec.selector.as_ref().is_some_and(|s| pods::selects(s, labels))
    })
}

impl Reconciler for State {
    type Object = CloneSet;
    type Memory = Expectations;
    const DEBOUNCE: Duration = Duration::from_millis(50);
    const RESYNC: Duration = RESYNC;
    const CONFLICT_REQUEUE: Duration = CONFLICT_REQUEUE;
    // A CloneSet being deleted is planned too (the planner stops adopting and creating for it).
    const WHILE_DELETING: bool = true;

    fn triggers(&self, triggers: Triggers<CloneSet>) -> Triggers<CloneSet> {
        triggers
            .pods(clone_sets_of_pod)
            .watch(|r: &ControllerRevision, _: &Known<CloneSet>| {
                pods::kruise_controller::<CloneSet, _>(r).into_iter().collect()
            })
            .watch(|p: &PersistentVolumeClaim, _: &Known<CloneSet>| {
                let namespace = p.namespace().unwrap_or_default();
                p.metadata
                    .owner_references
                    .iter()
                    .flatten()
                    .filter(|o| o.kind == "CloneSet")
                    .map(|o| ObjectRef::new(&o.name).within(&namespace))
                    .collect()
            })
    }

    fn cached(view: &dyn ControllerView, namespace: &str, name: &str) -> Option<Arc<CloneSet>> {
        view.clone_set(namespace, name)
    }

    async fn pass(
        self: Arc<Self>,
        cs: Arc<CloneSet>,
        pass: Pass<CloneSet, Expectations>,
    ) -> Result<Next, Error> {
        let span = tracing::info_span!("cloneset", namespace = %cs.namespace().unwrap_or_default(),
            name = %cs.name_any(), creates = tracing::field::Empty, deletes = tracing::field::Empty,
            patches = tracing::field::Empty, revisions = tracing::field::Empty);
        self::pass(&self, cs, pass, span.clone()).instrument(span).await
    }
}

/// Runs the CloneSet controller until aborted.
pub async fn run(context: Context) {
    let state = State {
        recorder: Recorder::new(context.client.clone(), reporter()),
        options: Options {
            env_from_metadata: context
                .settings
                .enabled(kruise_core::Gate::InPlaceUpdateEnvFromMetadata),
            ..Options::default()
        },
        context: context.clone(),
    };
    control_loop::run(context, state).await;
}

#[cfg(test)]
mod tests;
