//! The ImageListPullJob controller: the pure planner ([`kruise_reconcile::image_list_pull_job::plan()`])
//! on the shared [`control_loop`] (docs/image-pull.md#imagelistpulljob). A pass reads the list job's
//! children from the shared cache, creates and deletes children, writes the status and deletes the
//! list job after its TTL. Child changes trigger their list job.

use std::{sync::Arc, time::Duration};

use k8s_openapi::jiff::Timestamp;
use kruise_api::apps_v1beta1::{ImageListPullJob, ImagePullJob};
use kruise_reconcile::image_list_pull_job::{Input, plan};
use kube::{
    Api, ResourceExt as _,
    api::{DeleteParams, PostParams, Preconditions, PropagationPolicy},
    runtime::reflector::ObjectRef,
};

use super::{
    Context, ControllerView, Error,
    control_loop::{self, Known, Next, Pass, Reconciler, Triggers},
};

/// Every list job is re-planned at least this often.
pub const RESYNC: Duration = Duration::from_secs(60);

/// The controller's state shared by passes.
pub struct State {
    context: Context,
}

fn controller_uid(job: &ImagePullJob) -> Option<&str> {
    job.metadata
        .owner_references
        .as_ref()?
        .iter()
        .find(|o| o.controller == Some(true) && o.kind == "ImageListPullJob")
        .map(|o| o.uid.as_str())
}

async fn pass(
    context: &Context,
    job: Arc<ImageListPullJob>,
    pass: Pass<ImageListPullJob, ()>,
) -> Result<Next, Error> {
    let namespace = job.namespace().unwrap_or_default();
    let uid = job.metadata.uid.clone().unwrap_or_default();
    let children: Vec<ImagePullJob> = context
        .view
        .kinds()
        .image_pull_jobs
        .list(Some(&namespace))
        .into_iter()
        .filter(|c| controller_uid(c) == Some(uid.as_str()))
        .map(|c| (*c).clone())
        .collect();
    let plan = plan(&Input {
        job: &job,
        children: &children,
        now: Timestamp::now(),
    });
    let lists: Api<ImageListPullJob> = Api::namespaced(context.client.clone(), &namespace);
    if plan.delete_job {
        let params = DeleteParams {
            propagation_policy: Some(PropagationPolicy::Background),
            preconditions: Some(Preconditions {
                uid: job.metadata.uid.clone(),
                resource_version: None,
            }),
            ..DeleteParams::default()
        };
        match lists.delete(&job.name_any(), &params).await {
            Ok(_) => {}
            Err(kube::Error::Api(s)) if s.is_not_found() => {}
            Err(e) => return Err(e.into()),
        }
        return Ok(Next::Idle);
    }
    let api: Api<ImagePullJob> = Api::namespaced(context.client.clone(), &namespace);
    for name in &plan.delete {
        match api.delete(name, &DeleteParams::background()).await {
            Ok(_) => {}
            Err(kube::Error::Api(s)) if s.is_not_found() => {}
            Err(e) => return Err(e.into()),
        }
    }
    for child in &plan.create {
        api.create(&PostParams::default(), child).await?;
    }
    if !plan.create.is_empty() || !plan.delete.is_empty() {
        tracing::info!(
            created = plan.create.len(),
            deleted = plan.delete.len(),
            "ImageListPullJob children"
        );
        // Count the children once the cache shows them.
        return Ok(Next::After(Duration::from_millis(500)));
    }
    if let Some(status) = &plan.status
        && job.status.as_ref() != Some(status)
    {
        pass.write_status(&job, status).await?;
    }
    Ok(Next::after(plan.requeue_after))
}

impl Reconciler for State {
    type Object = ImageListPullJob;
    type Memory = ();
    const DEBOUNCE: Duration = Duration::from_millis(100);
    const RESYNC: Duration = RESYNC;

    fn triggers(&self, triggers: Triggers<ImageListPullJob>) -> Triggers<ImageListPullJob> {
        triggers.watch(|child: &ImagePullJob, _: &Known<ImageListPullJob>| {
            child
                .metadata
                .owner_references
                .iter()
                .flatten()
                .filter(|o| o.controller == Some(true) && o.kind == "ImageListPullJob")
                .map(|o| ObjectRef::new(&o.name).within(&child.namespace().unwrap_or_default()))
                .collect()
        })
    }

    fn cached(view: &dyn ControllerView, namespace: &str, name: &str) -> Option<Arc<ImageListPullJob>> {
        kruise_core::view::get(view, namespace, name)
    }

    async fn pass(
        self: Arc<Self>,
        job: Arc<ImageListPullJob>,
        p: Pass<ImageListPullJob, ()>,
    ) -> Result<Next, Error> {
        pass(&self.context, job, p).await
    }
}

/// Runs the ImageListPullJob controller until aborted.
pub async fn run(context: Context) {
    control_loop::run(context.clone(), State { context }).await;
}
