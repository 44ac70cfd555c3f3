//! The Advanced DaemonSet controller: the pure planner ([`kruise_reconcile::daemonset::plan()`]) on the
//! shared [`control_loop`] (docs/advanced-daemonset.md).
//!
//! One pass gathers the nodes, the DaemonSet's pods (controller ownerReference) and its
//! ControllerRevisions from the shared cluster cache, lets the planner decide, executes its actions in
//! order (stopping at the first failure) and writes the status with the DaemonSet's resourceVersion as
//! precondition. Outstanding writes ([`Expectations`]) hold the next plan until the cache shows them.
//! Any node change re-plans every DaemonSet.

use std::{sync::Arc, time::Duration};

use k8s_openapi::{
    api::{apps::v1::ControllerRevision, core::v1::Node},
    jiff::Timestamp,
};
use kruise_api::{PodRecord, apps_v1beta1::DaemonSet};
use kruise_core::kind::controller_uid;
use kruise_reconcile::Expectations;
use kruise_reconcile::daemonset::Input;
use kube::{
    ResourceExt as _,
    runtime::events::{Recorder, Reporter},
};
use tracing::Instrument as _;

use super::{
    Context, ControllerView, Error,
    control_loop::{self, Known, Next, Pass, Reconciler, Triggers},
    pods,
    workload_actions::{CONFLICT_REQUEUE, Owner, carry_out, is_conflict, while_waiting},
};

/// Safety net: every DaemonSet is re-planned at least this often.
pub const RESYNC: Duration = Duration::from_secs(300);

/// The event reporter (OpenKruise's source `daemonset-controller`).
pub fn reporter() -> Reporter {
    Reporter {
        controller: "kruise-manager".into(),
        instance: Some("daemonset-controller".into()),
    }
}

/// The controller's state shared by passes.
pub struct State {
    context: Context,
    recorder: Recorder,
}

/// What one pass reads: every node, the pods the DaemonSet controls and its revisions.
pub fn gather(context: &Context, ds: &DaemonSet) -> (Vec<Node>, Vec<PodRecord>, Vec<ControllerRevision>) {
    let namespace = ds.namespace().unwrap_or_default();
    let uid = ds.metadata.uid.clone().unwrap_or_default();
    let nodes = context
        .view
        .kinds()
        .nodes
        .list(None)
        .into_iter()
        .map(|n| (*n).clone())
        .collect();
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
    (nodes, pod_list, revisions)
}

async fn pass(state: &State, ds: Arc<DaemonSet>, pass: Pass<DaemonSet, Expectations>) -> Result<Next, Error> {
    let (nodes, pod_list, revisions) = gather(&state.context, &ds);
    let now = Timestamp::now();
    let mut expectations = pass.memory();
    expectations.observe(&pod_list, &[]);
    pass.keep(expectations.clone());
    let input = Input {
        ds: &ds,
        nodes: &nodes,
        pods: &pod_list,
        revisions: &revisions,
        now,
        env_from_metadata: state
            .context
            .settings
            .enabled(kruise_core::Gate::InPlaceUpdateEnvFromMetadata),
    };
    let plan = kruise_reconcile::daemonset::plan(&input, &expectations).map_err(|e| Error::Invalid {
        what: "DaemonSet",
        message: e.to_string(),
    })?;
    if plan.waiting {
        return Ok(while_waiting(plan.requeue_after, &expectations));
    }
    let owner = Owner {
        client: &state.context.client,
        recorder: &state.recorder,
        object: &*ds,
    };
    let failure = carry_out(&owner, &plan.actions, &pod_list, &mut expectations, now)
        .await
        .map(|(_, e)| e);
    pass.keep(expectations);
    if failure.is_none()
        && let Some(status) = &plan.status
    {
        pass.write_status(&ds, status).await?;
    }
    if let Some(e) = failure {
        if is_conflict(&e) {
            return Ok(Next::After(CONFLICT_REQUEUE));
        }
        return Err(e.into());
    }
    tracing::info!(
        actions = plan.actions.len(),
        status_written = plan.status.is_some(),
        "DaemonSet reconciled"
    );
    Ok(Next::after(plan.requeue_after))
}

impl Reconciler for State {
    type Object = DaemonSet;
    type Memory = Expectations;
    const DEBOUNCE: Duration = Duration::from_millis(50);
    const RESYNC: Duration = RESYNC;
    const CONFLICT_REQUEUE: Duration = CONFLICT_REQUEUE;

    fn triggers(&self, triggers: Triggers<DaemonSet>) -> Triggers<DaemonSet> {
        triggers
            .pods(|p: &PodRecord, _: &Known<DaemonSet>| {
                pods::kruise_controller::<DaemonSet, _>(p).into_iter().collect()
            })
            .watch(|r: &ControllerRevision, _: &Known<DaemonSet>| {
                pods::kruise_controller::<DaemonSet, _>(r).into_iter().collect()
            })
            .watch(|_: &Node, known: &Known<DaemonSet>| known.refs(|_| true))
    }

    fn cached(view: &dyn ControllerView, namespace: &str, name: &str) -> Option<Arc<DaemonSet>> {
        kruise_core::view::get(view, namespace, name)
    }

    async fn pass(
        self: Arc<Self>,
        ds: Arc<DaemonSet>,
        p: Pass<DaemonSet, Expectations>,
    ) -> Result<Next, Error> {
        let span = tracing::info_span!("daemonset", namespace = %ds.namespace().unwrap_or_default(),
            name = %ds.name_any());
        pass(&self, ds, p).instrument(span).await
    }
}

/// Runs the Advanced DaemonSet controller until aborted.
pub async fn run(context: Context) {
    let state = State {
        recorder: Recorder::new(context.client.clone(), reporter()),
        context: context.clone(),
    };
    control_loop::run(context, state).await;
}
