//! The EphemeralJob controller: the pure planner ([`kruise_reconcile::ephemeraljob::plan()`]) on the
//! shared [`control_loop`] (docs/ephemeraljob.md).
//!
//! One pass reads the pods of the job's namespace from the shared cluster cache, lets the planner
//! decide, adds or removes the finalizer (merge patch carrying the job's resourceVersion), adds the
//! job's containers to the chosen pods through `pods/<name>/ephemeralcontainers` (a strategic merge
//! patch, as `kubectl debug` sends), writes the status with its resourceVersion precondition, and
//! deletes the job once its TTL has passed. Pods injected but not yet shown by the cache are
//! remembered for [`EXPECTATION_TIMEOUT`], so a pass never injects twice or over `parallelism`.

use std::collections::{BTreeMap, BTreeSet};
use std::{sync::Arc, time::Duration};

use k8s_openapi::{api::core::v1::Pod, jiff::Timestamp};
use kruise_api::{
    PodRecord,
    apps_v1alpha1::{EPHEMERAL_JOB_FINALIZER, EphemeralJob},
};
use kruise_reconcile::ephemeraljob::{Input, holds};
use kube::{
    Api, Resource as _, ResourceExt as _,
    api::{DeleteParams, Patch, PatchParams, Preconditions},
    runtime::events::{Event, EventType, Recorder, Reporter},
};
use serde_json::json;
use tracing::Instrument as _;

use super::{
    Context, ControllerView, Error,
    control_loop::{self, Known, Next, Pass, Reconciler, Triggers},
};

/// Safety net: every job is re-planned at least this often.
pub const RESYNC: Duration = Duration::from_secs(300);
/// Requeue after a conflict.
pub const CONFLICT_REQUEUE: Duration = Duration::from_millis(200);
/// How long an injection the cache does not show yet holds its place.
pub const EXPECTATION_TIMEOUT: Duration = Duration::from_secs(30);

/// The event reporter.
pub fn reporter() -> Reporter {
    Reporter {
        controller: "kruise-manager".into(),
        instance: Some("ephemeraljob-controller".into()),
    }
}

/// Pods (by name) injected by earlier passes, with when.
pub type Injected = BTreeMap<String, Timestamp>;

/// The controller's state shared by passes.
pub struct State {
    context: Context,
    recorder: Recorder,
}

fn namespace_pods(context: &Context, job: &EphemeralJob) -> Vec<PodRecord> {
    context
        .view
        .pods(&job.namespace().unwrap_or_default())
        .into_iter()
        .map(|p| (*p).clone())
        .collect()
}

/// Drops the remembered injections the cache shows, or that are too old.
fn observe(memory: &mut Injected, job: &EphemeralJob, pods: &[PodRecord], now: Timestamp) {
    memory.retain(|name, at| {
        let pod = pods
            .iter()
            .find(|p| p.metadata.name.as_deref() == Some(name.as_str()));
        let seen = pod.is_none_or(|p| holds(job, p).0);
        let fresh =
            Duration::try_from(now.duration_since(*at)).is_ok_and(|d| d < EXPECTATION_TIMEOUT) || now < *at;
        !seen && fresh
    });
}

async fn set_finalizer(state: &State, job: &EphemeralJob, present: bool) -> Result<(), kube::Error> {
    let mut finalizers: Vec<String> = job.finalizers().to_vec();
    finalizers.retain(|f| f != EPHEMERAL_JOB_FINALIZER);
    if present {
        finalizers.push(EPHEMERAL_JOB_FINALIZER.into());
    }
    let api: Api<EphemeralJob> =
        Api::namespaced(state.context.client.clone(), &job.namespace().unwrap_or_default());
    let patch = json!({"metadata": {"finalizers": finalizers, "resourceVersion": job.resource_version()}});
    api.patch(&job.name_any(), &PatchParams::default(), &Patch::Merge(&patch))
        .await
        .map(drop)
}

async fn pass(
    state: &State,
    job: Arc<EphemeralJob>,
    pass: Pass<EphemeralJob, Injected>,
) -> Result<Next, Error> {
    let pods = namespace_pods(&state.context, &job);
    let now = state.context.clock.now();
    let mut memory = pass.memory();
    observe(&mut memory, &job, &pods, now);
    pass.keep(memory.clone());
    let injected: BTreeSet<String> = memory.keys().cloned().collect();
    let plan = kruise_reconcile::ephemeraljob::plan(&Input {
        job: &job,
        pods: &pods,
        injected: &injected,
        now,
    });
    let conflict = |e: &kube::Error| matches!(e, kube::Error::Api(s) if s.code == 409);
    if plan.remove_finalizer || plan.add_finalizer {
        match set_finalizer(state, &job, plan.add_finalizer).await {
            Ok(()) => {}
            Err(e) if conflict(&e) => return Ok(Next::After(CONFLICT_REQUEUE)),
            Err(kube::Error::Api(s)) if s.code == 404 => return Ok(Next::Idle),
            Err(e) => return Err(e.into()),
        }
        // The write changed the job: the next pass works on the fresh copy.
        return Ok(Next::After(CONFLICT_REQUEUE));
    }
    if plan.delete_job {
        let api: Api<EphemeralJob> =
            Api::namespaced(state.context.client.clone(), &job.namespace().unwrap_or_default());
        let params = DeleteParams {
            preconditions: Some(Preconditions {
                uid: job.metadata.uid.clone(),
                resource_version: None,
            }),
            ..DeleteParams::default()
        };
        match api.delete(&job.name_any(), &params).await {
            Ok(_) => tracing::info!("EphemeralJob deleted: ttlSecondsAfterFinished passed"),
            Err(kube::Error::Api(s)) if s.is_not_found() => {}
            Err(e) => return Err(e.into()),
        }
        return Ok(Next::Idle);
    }
    let pod_api: Api<Pod> =
        Api::namespaced(state.context.client.clone(), &job.namespace().unwrap_or_default());
    let patch = json!({"spec": {"ephemeralContainers": plan.containers}});
    let mut failure = None;
    for name in &plan.inject {
        let sent = pod_api
            .patch_subresource(
                "ephemeralcontainers",
                name,
                &PatchParams::default(),
                &Patch::Strategic(&patch),
            )
            .await;
        match sent {
            Ok(_) => {
                memory.insert(name.clone(), now);
                tracing::info!(pod = %name, "EphemeralJob injected its containers");
            }
            Err(e) => {
                let note = format!("failed to create ephemeral container in pod {name}: {e}");
                let event = Event {
                    type_: EventType::Warning,
                    reason: "CreateFailed".into(),
                    note: Some(note),
                    action: "Inject".into(),
                    secondary: None,
                };
                if let Err(e) = state.recorder.publish(&event, &job.object_ref(&())).await {
                    tracing::debug!(error = %e, "event not published");
                }
                failure = Some(e);
                break;
            }
        }
    }
    pass.keep(memory);
    if let Some(status) = &plan.status {
        pass.write_status(&job, status).await?;
    }
    if let Some(e) = failure {
        return Err(e.into());
    }
    Ok(Next::after(plan.requeue_after))
}

fn selects(job: &EphemeralJob, pod: &PodRecord) -> bool {
    job.namespace() == pod.metadata.namespace
        && kruise_core::selector::selects(Some(&job.spec.selector), &pod.metadata.labels).unwrap_or(false)
}

impl Reconciler for State {
    type Object = EphemeralJob;
    type Memory = Injected;
    const DEBOUNCE: Duration = Duration::from_millis(50);
    const RESYNC: Duration = RESYNC;
    const CONFLICT_REQUEUE: Duration = CONFLICT_REQUEUE;
    const WHILE_DELETING: bool = true;

    fn triggers(&self, triggers: Triggers<EphemeralJob>) -> Triggers<EphemeralJob> {
        triggers
            .pods(|p: &PodRecord, known: &Known<EphemeralJob>| known.refs(|job| selects(job, p)))
            .all_on(self.context.clock.jumps())
    }

    fn cached(view: &dyn ControllerView, namespace: &str, name: &str) -> Option<Arc<EphemeralJob>> {
        kruise_core::view::get(view, namespace, name)
    }

    async fn pass(
        self: Arc<Self>,
        job: Arc<EphemeralJob>,
        p: Pass<EphemeralJob, Injected>,
    ) -> Result<Next, Error> {
        let span = tracing::info_span!("ephemeraljob", namespace = %job.namespace().unwrap_or_default(),
            name = %job.name_any());
        pass(&self, job, p).instrument(span).await
    }
}

/// Runs the EphemeralJob controller until aborted.
pub async fn run(context: Context) {
    let state = State {
        recorder: Recorder::new(context.client.clone(), reporter()),
        context: context.clone(),
    };
    control_loop::run(context, state).await;
}
