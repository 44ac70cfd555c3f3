//! The AdvancedCronJob controller: the pure planner ([`kruise_reconcile::advancedcronjob::plan()`]) on
//! the shared [`control_loop`] (docs/advancedcronjob.md#controller).
//!
//! One pass gathers the Jobs and BroadcastJobs the AdvancedCronJob controls from the shared cluster
//! cache, lets the planner decide, deletes (background propagation) and creates children, writes the
//! status with the resourceVersion as precondition, and looks again at the next scheduled time. Changes
//! of either child kind trigger the owner (OpenKruise's Job watch names the wrong owner type). "Now" is
//! the context's clock; when it jumps (the playground's manual clock), every AdvancedCronJob is passed.

use std::{sync::Arc, time::Duration};

use k8s_openapi::{api::batch::v1::Job, jiff::Timestamp};
use kruise_api::apps_v1alpha1::{AdvancedCronJob, BroadcastJob, SCHEDULED_AT_ANNOTATION};
use kruise_reconcile::advancedcronjob::{Child, ChildKind, Input, NewChild, Step};
use kube::{
    Api, ResourceExt as _,
    api::{DeleteParams, PostParams, Preconditions, PropagationPolicy},
    runtime::reflector::ObjectRef,
};
use tracing::Instrument as _;

use super::{
    Context, ControllerView, Error,
    control_loop::{self, Known, Next, Pass, Reconciler, Triggers},
    pods,
};

/// Safety net: every AdvancedCronJob is looked at least this often.
pub const RESYNC: Duration = Duration::from_secs(300);

/// The controller's state shared by passes.
pub struct State {
    context: Context,
}

fn finished(conditions: impl Iterator<Item = (String, String)>) -> Option<bool> {
    let mut outcome = None;
    for (type_, status) in conditions {
        if status == "True" {
            match type_.as_str() {
                "Complete" => outcome = Some(true),
                "Failed" => outcome = Some(false),
                _ => {}
            }
        }
    }
    outcome
}

fn scheduled_at(meta: &k8s_openapi::apimachinery::pkg::apis::meta::v1::ObjectMeta) -> Option<Timestamp> {
    meta.annotations
        .as_ref()
        .and_then(|a| a.get(SCHEDULED_AT_ANNOTATION))
        .and_then(|v| v.parse().ok())
        .or_else(|| meta.creation_timestamp.as_ref().map(|t| t.0))
}

/// The children `acj` controls, from the shared cache.
pub fn children(context: &Context, acj: &AdvancedCronJob) -> Vec<Child> {
    let namespace = acj.namespace().unwrap_or_default();
    let uid = acj.metadata.uid.clone().unwrap_or_default();
    let ours = |meta: &k8s_openapi::apimachinery::pkg::apis::meta::v1::ObjectMeta| {
        kruise_core::kind::controller_ref(meta).is_some_and(|o| o.uid == uid)
    };
    let kinds = context.view.kinds();
    let mut out: Vec<Child> = kinds
        .jobs
        .list(Some(&namespace))
        .into_iter()
        .filter(|j| ours(&j.metadata))
        .map(|j| Child {
            kind: ChildKind::Job,
            name: j.name_any(),
            uid: j.metadata.uid.clone(),
            scheduled_at: scheduled_at(&j.metadata),
            succeeded: finished(
                j.status
                    .iter()
                    .flat_map(|s| s.conditions.iter().flatten())
                    .map(|c| (c.type_.clone(), c.status.clone())),
            ),
        })
        .collect();
    out.extend(
        kinds
            .broadcast_jobs
            .list(Some(&namespace))
            .into_iter()
            .filter(|b| ours(&b.metadata))
            .map(|b| Child {
                kind: ChildKind::BroadcastJob,
                name: b.name_any(),
                uid: b.metadata.uid.clone(),
                scheduled_at: scheduled_at(&b.metadata),
                succeeded: finished(
                    b.status
                        .iter()
                        .flat_map(|s| s.conditions.iter())
                        .map(|c| (c.type_.to_string(), c.status.clone())),
                ),
            }),
    );
    out
}

async fn execute(client: &kube::Client, namespace: &str, step: &Step) -> Result<(), kube::Error> {
    let jobs: Api<Job> = Api::namespaced(client.clone(), namespace);
    let bcjs: Api<BroadcastJob> = Api::namespaced(client.clone(), namespace);
    match step {
        Step::Create(NewChild::Job(job)) => match jobs.create(&PostParams::default(), job).await {
            Err(kube::Error::Api(s)) if s.code == 409 => Ok(()),
            other => other.map(drop),
        },
        Step::Create(NewChild::BroadcastJob(b)) => match bcjs.create(&PostParams::default(), b).await {
            Err(kube::Error::Api(s)) if s.code == 409 => Ok(()),
            other => other.map(drop),
        },
        Step::Delete { kind, name, uid } => {
            let params = DeleteParams {
                propagation_policy: Some(PropagationPolicy::Background),
                preconditions: uid.clone().map(|uid| Preconditions {
                    uid: Some(uid),
                    resource_version: None,
                }),
                ..DeleteParams::default()
            };
            let result = match kind {
                ChildKind::Job => jobs.delete(name, &params).await.map(drop),
                ChildKind::BroadcastJob => bcjs.delete(name, &params).await.map(drop),
            };
            match result {
                Err(kube::Error::Api(s)) if s.is_not_found() => Ok(()),
                other => other,
            }
        }
    }
}

async fn pass(
    state: &State,
    acj: Arc<AdvancedCronJob>,
    pass: Pass<AdvancedCronJob, ()>,
) -> Result<Next, Error> {
    let children = children(&state.context, &acj);
    let input = Input {
        acj: &acj,
        children: &children,
        now: state.context.clock.now(),
    };
    let plan = kruise_reconcile::advancedcronjob::plan(&input);
    if let Some(e) = &plan.error {
        tracing::warn!(error = %e, "AdvancedCronJob schedule cannot be used");
    }
    let namespace = acj.namespace().unwrap_or_default();
    // The status first: lastScheduleTime moves before the child exists, so a crash between the two
    // skips a run rather than repeating one.
    if acj.status.as_ref() != Some(&plan.status) {
        pass.write_status(&acj, &plan.status).await?;
    }
    for step in &plan.steps {
        execute(&state.context.client, &namespace, step).await?;
    }
    tracing::info!(steps = plan.steps.len(), "AdvancedCronJob reconciled");
    Ok(Next::after(plan.requeue_after))
}

fn owner_of<K: kube::Resource<DynamicType = ()>>(
    child: &K,
    _: &Known<AdvancedCronJob>,
) -> Vec<ObjectRef<AdvancedCronJob>> {
    pods::kruise_controller::<AdvancedCronJob, _>(child)
        .into_iter()
        .collect()
}

impl Reconciler for State {
    type Object = AdvancedCronJob;
    type Memory = ();
    const DEBOUNCE: Duration = Duration::from_millis(50);
    const RESYNC: Duration = RESYNC;

    fn triggers(&self, triggers: Triggers<AdvancedCronJob>) -> Triggers<AdvancedCronJob> {
        triggers
            .watch(owner_of::<Job>)
            .watch(owner_of::<BroadcastJob>)
            .all_on(self.context.clock.jumps())
    }

    fn cached(view: &dyn ControllerView, namespace: &str, name: &str) -> Option<Arc<AdvancedCronJob>> {
        kruise_core::view::get(view, namespace, name)
    }

    async fn pass(
        self: Arc<Self>,
        acj: Arc<AdvancedCronJob>,
        p: Pass<AdvancedCronJob, ()>,
    ) -> Result<Next, Error> {
        let span = tracing::info_span!("advancedcronjob", namespace = %acj.namespace().unwrap_or_default(),
            name = %acj.name_any());
        pass(&self, acj, p).instrument(span).await
    }
}

/// Runs the AdvancedCronJob controller until aborted.
pub async fn run(context: Context) {
    control_loop::run(context.clone(), State { context }).await;
}
