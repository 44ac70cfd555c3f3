//! The BroadcastJob controller: the pure planner ([`kruise_reconcile::broadcastjob::plan()`]) on the
//! shared [`control_loop`] (docs/broadcastjob.md#controller).
//!
//! One pass gathers the job's pods (controller ownerReference with its uid) and every node from the
//! shared cluster cache, lets the planner decide, executes its pod creates and deletes in order
//! (stopping at the first failure: OpenKruise's slow start stops after a failed batch too), writes
//! the status with the job's resourceVersion as precondition, and deletes the job once its TTL has
//! passed. Node changes trigger every job, so `Never` jobs follow new and untainted nodes.

use std::{sync::Arc, time::Duration};

use k8s_openapi::{api::core::v1::Node, jiff::Timestamp};
use kruise_api::{PodRecord, apps_v1alpha1::BroadcastJob};
use kruise_reconcile::broadcastjob::{Input, NodeExpectations};
use kube::{
    Api, ResourceExt as _,
    api::{DeleteParams, Preconditions, PropagationPolicy},
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
    workload_actions::{CONFLICT_REQUEUE, EXPECTATION_RECHECK, Owner, carry_out, is_conflict},
};

/// Safety net: every job is re-planned at least this often.
pub const RESYNC: Duration = Duration::from_secs(300);

/// The event reporter.
pub fn reporter() -> Reporter {
    Reporter {
        controller: "kruise-manager".into(),
        instance: Some("broadcastjob-controller".into()),
    }
}

/// The controller's state shared by passes.
pub struct State {
    context: Context,
    recorder: Recorder,
}

/// The pods `job` controls, from the shared cache.
pub fn owned_pods(context: &Context, job: &BroadcastJob) -> Vec<PodRecord> {
    let uid = job.metadata.uid.clone().unwrap_or_default();
    context
        .view
        .pods_controlled_by(&job.namespace().unwrap_or_default(), Some(&uid))
        .into_iter()
        .map(|p| (*p).clone())
        .collect()
}

/// Every node in the shared cache.
pub fn all_nodes(context: &Context) -> Vec<Node> {
    let mut nodes: Vec<Node> = context
        .view
        .kinds()
        .nodes
        .list(None)
        .into_iter()
        .map(|n| (*n).clone())
        .collect();
    nodes.sort_by(|a, b| a.metadata.name.cmp(&b.metadata.name));
    nodes
}

async fn pass(
    state: &State,
    job: Arc<BroadcastJob>,
    pass: Pass<BroadcastJob, NodeExpectations>,
) -> Result<Next, Error> {
    let pod_list = owned_pods(&state.context, &job);
    let nodes = all_nodes(&state.context);
    let now = Timestamp::now();
    let mut expectations = pass.memory();
    expectations.observe(&pod_list, now);
    pass.keep(expectations.clone());
    let input = Input {
        job: &job,
        pods: &pod_list,
        nodes: &nodes,
        now,
    };
    let plan = kruise_reconcile::broadcastjob::plan(&input, &expectations);
    if plan.waiting {
        return Ok(Next::After(
            plan.requeue_after
                .unwrap_or(EXPECTATION_RECHECK)
                .min(EXPECTATION_RECHECK),
        ));
    }
    if plan.delete_job {
        let api: Api<BroadcastJob> =
            Api::namespaced(state.context.client.clone(), &job.namespace().unwrap_or_default());
        let params = DeleteParams {
            propagation_policy: Some(PropagationPolicy::Background),
            preconditions: Some(Preconditions {
                uid: job.metadata.uid.clone(),
                resource_version: None,
            }),
            ..DeleteParams::default()
        };
        match api.delete(&job.name_any(), &params).await {
            Ok(_) => tracing::info!("BroadcastJob deleted: ttlSecondsAfterFinished passed"),
            Err(kube::Error::Api(s)) if s.is_not_found() => {}
            Err(e) => return Err(e.into()),
        }
        return Ok(Next::Idle);
    }
    let owner = Owner {
        client: &state.context.client,
        recorder: &state.recorder,
        object: &*job,
    };
    let failure = carry_out(&owner, &plan.actions, &pod_list, &mut expectations, now)
        .await
        .map(|(_, e)| e);
    pass.keep(expectations);
    if let Some(status) = &plan.status
        && job.status.as_ref() != Some(status)
    {
        pass.write_status(&job, status).await?;
    }
    if let Some(e) = failure {
        if is_conflict(&e) {
            return Ok(Next::After(CONFLICT_REQUEUE));
        }
        return Err(e.into());
    }
    tracing::info!(actions = plan.actions.len(), "BroadcastJob reconciled");
    Ok(Next::after(plan.requeue_after))
}

impl Reconciler for State {
    type Object = BroadcastJob;
    type Memory = NodeExpectations;
    const DEBOUNCE: Duration = Duration::from_millis(50);
    const RESYNC: Duration = RESYNC;
    const CONFLICT_REQUEUE: Duration = CONFLICT_REQUEUE;

    fn triggers(&self, triggers: Triggers<BroadcastJob>) -> Triggers<BroadcastJob> {
        triggers
            .pods(|p: &PodRecord, _: &Known<BroadcastJob>| {
                pods::kruise_controller::<BroadcastJob, _>(p)
                    .into_iter()
                    .collect()
            })
            .watch(
                |_: &Node, known: &Known<BroadcastJob>| -> Vec<ObjectRef<BroadcastJob>> {
                    known.refs(|_| true)
                },
            )
    }

    fn cached(view: &dyn ControllerView, namespace: &str, name: &str) -> Option<Arc<BroadcastJob>> {
        kruise_core::view::get(view, namespace, name)
    }

    async fn pass(
        self: Arc<Self>,
        job: Arc<BroadcastJob>,
        p: Pass<BroadcastJob, NodeExpectations>,
    ) -> Result<Next, Error> {
        let span = tracing::info_span!("broadcastjob", namespace = %job.namespace().unwrap_or_default(),
            name = %job.name_any());
        pass(&self, job, p).instrument(span).await
    }
}

/// Runs the BroadcastJob controller until aborted.
pub async fn run(context: Context) {
    let state = State {
        recorder: Recorder::new(context.client.clone(), reporter()),
        context: context.clone(),
    };
    control_loop::run(context, state).await;
}
