//! The Advanced StatefulSet controller: the pure planner ([`kruise_reconcile::statefulset::plan()`]) on
//! the shared [`control_loop`] (docs/advanced-statefulset.md#controller).
//!
//! One pass gathers the set's pods (controller ownerReference), ControllerRevisions and the claims
//! named after its volumeClaimTemplates from the shared cluster cache, adopts orphans named
//! `<set>-<N>` that the selector matches, lets the planner decide, executes its actions in order
//! (stopping at the first failure) and writes the status with the set's resourceVersion as
//! precondition. Outstanding writes ([`Expectations`]) hold the next plan until the cache shows them.

use std::{sync::Arc, time::Duration};

use k8s_openapi::{
    api::{apps::v1::ControllerRevision, core::v1::PersistentVolumeClaim},
    jiff::Timestamp,
};
use kruise_api::{PodRecord, apps_v1beta1::StatefulSet};
use kruise_core::kind::controller_uid;
use kruise_reconcile::Expectations;
use kruise_reconcile::statefulset::{Input, identity};
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
    workload_actions::{
        CONFLICT_REQUEUE, Owner, adopt, after_adoption, carry_out, is_conflict, while_waiting,
    },
};

/// Safety net: every set is re-planned at least this often.
pub const RESYNC: Duration = Duration::from_secs(300);

/// The event reporter.
pub fn reporter() -> Reporter {
    Reporter {
        controller: "kruise-manager".into(),
        instance: Some("statefulset-controller".into()),
    }
}

/// The controller's state shared by passes.
pub struct State {
    context: Context,
    recorder: Recorder,
}

/// What one pass reads: pods the set controls, its revisions, the claims named after its templates.
pub fn gather(
    context: &Context,
    set: &StatefulSet,
) -> (
    Vec<PodRecord>,
    Vec<ControllerRevision>,
    Vec<PersistentVolumeClaim>,
) {
    let namespace = set.namespace().unwrap_or_default();
    let uid = set.metadata.uid.clone().unwrap_or_default();
    let pod_list = context
        .view
        .pods_controlled_by(&namespace, Some(&uid))
        .into_iter()
        .map(|p| (*p).clone())
        .collect();
    let revisions = context
        .view
        .controller_revisions(&namespace)
        .into_iter()
        .filter(|r| controller_uid(&r.metadata) == Some(uid.as_str()))
        .map(|r| (*r).clone())
        .collect();
    let name = set.name_any();
    let prefixes: Vec<String> = identity::template_claims(set)
        .map(|(vct, _)| format!("{vct}-{name}-"))
        .collect();
    let claims = if prefixes.is_empty() {
        Vec::new()
    } else {
        context
            .view
            .persistent_volume_claims(&namespace)
            .into_iter()
            .filter(|c| {
                let n = c.metadata.name.as_deref().unwrap_or("");
                prefixes.iter().any(|p| n.starts_with(p.as_str()))
            })
            .map(|c| (*c).clone())
            .collect()
    };
    (pod_list, revisions, claims)
}

/// Orphans to adopt: active pods without a controller, named `<set>-<N>`, that the selector matches.
pub fn orphans(context: &Context, set: &StatefulSet) -> Vec<Arc<PodRecord>> {
    let Some(selector) = &set.spec.selector else {
        return Vec::new();
    };
    if set.metadata.deletion_timestamp.is_some() || selector == &Default::default() {
        return Vec::new();
    }
    let name = set.name_any();
    context
        .view
        .pods_controlled_by(&set.namespace().unwrap_or_default(), None)
        .into_iter()
        .filter(|p| kruise_core::pod_state::is_active(p))
        .filter(|p| identity::ordinal_of(&name, &p.name_any()).is_some())
        .filter(|p| pods::selects(selector, &p.metadata.labels))
        .collect()
}

async fn pass(
    state: &State,
    set: Arc<StatefulSet>,
    pass: Pass<StatefulSet, Expectations>,
) -> Result<Next, Error> {
    let (pod_list, revisions, claims) = gather(&state.context, &set);
    let now = Timestamp::now();
    let mut expectations = pass.memory();
    expectations.observe(&pod_list, &claims);
    pass.keep(expectations.clone());
    let orphans = orphans(&state.context, &set);
    if !orphans.is_empty() && expectations.is_satisfied() {
        let adopted = adopt(&state.context.client, &*set, &orphans, &mut expectations, now).await;
        pass.keep(expectations);
        return after_adoption(adopted);
    }
    let input = Input {
        set: &set,
        pods: &pod_list,
        revisions: &revisions,
        pvcs: &claims,
        now,
        env_from_metadata: state
            .context
            .settings
            .enabled(kruise_core::Gate::InPlaceUpdateEnvFromMetadata),
    };
    let plan = kruise_reconcile::statefulset::plan(&input, &expectations).map_err(|e| Error::Invalid {
        what: "StatefulSet",
        message: e.to_string(),
    })?;
    if plan.waiting {
        return Ok(while_waiting(plan.requeue_after, &expectations));
    }
    let owner = Owner {
        client: &state.context.client,
        recorder: &state.recorder,
        object: &*set,
    };
    let failure = carry_out(&owner, &plan.actions, &pod_list, &mut expectations, now).await;
    pass.keep(expectations);
    // A failed create or identity repair shows in the status (`FailedCreatePod`, `FailedUpdatePod`).
    let status = match &failure {
        Some((index, e)) => {
            let message = match e {
                kube::Error::Api(s) => s.message.clone(),
                other => other.to_string(),
            };
            kruise_reconcile::statefulset::status::after_failure(
                &set,
                plan.status.clone(),
                &plan.actions,
                *index,
                &message,
                now,
            )
        }
        None => plan.status.clone(),
    };
    let failure = failure.map(|(_, e)| e);
    if let Some(status) = &status {
        match pass.write_status(&set, status).await {
            Ok(()) => {}
            Err(e @ (Error::Conflict { .. } | Error::Gone)) => return Err(e),
            Err(e) => return Err(failure.map_or(e, Error::from)),
        }
    }
    if let Some(e) = failure {
        if is_conflict(&e) {
            return Ok(Next::After(CONFLICT_REQUEUE));
        }
        return Err(e.into());
    }
    tracing::info!(
        actions = plan.actions.len(),
        halted = plan.halted,
        status_written = status.is_some(),
        "StatefulSet reconciled"
    );
    Ok(Next::after(plan.requeue_after))
}

/// A pod's set; for an orphan named like a set's pod, that set.
fn sets_of_pod(p: &PodRecord, known: &Known<StatefulSet>) -> Vec<ObjectRef<StatefulSet>> {
    if let Some(owner) = pods::kruise_controller::<StatefulSet, _>(p) {
        return vec![owner];
    }
    if kruise_core::kind::controller_ref(&p.metadata).is_some() {
        return Vec::new();
    }
    let namespace = p.namespace().unwrap_or_default();
    let name = p.name_any();
    known.refs(|s| {
        s.metadata.namespace.as_deref() == Some(namespace.as_str())
            && identity::ordinal_of(&s.name_any(), &name).is_some()
    })
}

/// The sets whose claim names a PVC carries (`<claim>-<set>-<N>`), among the known ones.
fn sets_of_claim(c: &PersistentVolumeClaim, known: &Known<StatefulSet>) -> Vec<ObjectRef<StatefulSet>> {
    let namespace = c.namespace().unwrap_or_default();
    let name = c.name_any();
    known.refs(|s| {
        s.metadata.namespace.as_deref() == Some(namespace.as_str())
            && identity::template_claims(s).any(|(vct, _)| {
                name.strip_prefix(vct)
                    .and_then(|rest| rest.strip_prefix('-'))
                    .is_some_and(|rest| identity::ordinal_of(&s.name_any(), rest).is_some())
            })
    })
}

impl Reconciler for State {
    type Object = StatefulSet;
    type Memory = Expectations;
    const DEBOUNCE: Duration = Duration::from_millis(50);
    const RESYNC: Duration = RESYNC;
    const CONFLICT_REQUEUE: Duration = CONFLICT_REQUEUE;

    fn triggers(&self, triggers: Triggers<StatefulSet>) -> Triggers<StatefulSet> {
        triggers
            .pods(sets_of_pod)
            .watch(|r: &ControllerRevision, _: &Known<StatefulSet>| {
                pods::kruise_controller::<StatefulSet, _>(r).into_iter().collect()
            })
            .watch(sets_of_claim)
    }

    fn cached(view: &dyn ControllerView, namespace: &str, name: &str) -> Option<Arc<StatefulSet>> {
        kruise_core::view::get(view, namespace, name)
    }

    async fn pass(
        self: Arc<Self>,
        set: Arc<StatefulSet>,
        p: Pass<StatefulSet, Expectations>,
    ) -> Result<Next, Error> {
        let span = tracing::info_span!("statefulset", namespace = %set.namespace().unwrap_or_default(),
            name = %set.name_any());
        pass(&self, set, p).instrument(span).await
    }
}

/// Runs the Advanced StatefulSet controller until aborted.
pub async fn run(context: Context) {
    let state = State {
        recorder: Recorder::new(context.client.clone(), reporter()),
        context: context.clone(),
    };
    control_loop::run(context, state).await;
}
