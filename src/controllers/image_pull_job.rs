//! The ImagePullJob controller: the pure planner ([`kruise_reconcile::image_pull_job::plan()`]) on the
//! shared [`control_loop`] (docs/image-pull.md#imagepulljob).
//!
//! One pass reads every NodeImage (and, for `podSelector` jobs, the pods of the job's namespace) from
//! the shared cache, writes the planned tags into the NodeImages (read, apply, replace with the
//! resourceVersion read; a conflict re-reads and re-applies), writes the job's status and deletes the
//! job once its TTL has passed. NodeImage changes trigger the unfinished jobs.

use std::{sync::Arc, time::Duration};

use k8s_openapi::jiff::Timestamp;
use kruise_api::{
    PodRecord,
    apps_v1beta1::{ImagePullJob, NodeImage},
};
use kruise_reconcile::image_pull_job::{Input, TagRequest, plan};
use kube::{
    Api, ResourceExt as _,
    api::{DeleteParams, PostParams, Preconditions, PropagationPolicy},
};

use super::{
    Context, ControllerView, Error,
    control_loop::{self, Known, Next, Pass, Reconciler, Triggers},
};

/// Every job is re-planned at least this often.
pub const RESYNC: Duration = Duration::from_secs(60);
/// Tries of one NodeImage write against conflicting writers.
const WRITE_TRIES: usize = 5;

/// The controller's state shared by passes.
pub struct State {
    context: Context,
}

fn unfinished(job: &ImagePullJob) -> bool {
    job.status.as_ref().is_none_or(|s| s.completion_time.is_none())
}

/// Writes one request into its NodeImage, re-reading on a conflict.
async fn write(api: &Api<NodeImage>, request: &TagRequest) -> Result<(), kube::Error> {
    for _ in 0..WRITE_TRIES {
        let Some(mut ni) = api.get_opt(&request.node).await? else {
            return Ok(());
        };
        if !request.apply(&mut ni, Timestamp::now()) {
            return Ok(());
        }
        match api.replace(&request.node, &PostParams::default(), &ni).await {
            Ok(_) => return Ok(()),
            Err(kube::Error::Api(s)) if s.code == 409 => continue,
            Err(e) => return Err(e),
        }
    }
    Ok(())
}

async fn pass(
    context: &Context,
    job: Arc<ImagePullJob>,
    pass: Pass<ImagePullJob, ()>,
) -> Result<Next, Error> {
    let namespace = job.namespace().unwrap_or_default();
    let mut node_images: Vec<NodeImage> = context
        .view
        .kinds()
        .node_images
        .list(None)
        .into_iter()
        .map(|n| (*n).clone())
        .collect();
    node_images.sort_by(|a, b| a.metadata.name.cmp(&b.metadata.name));
    let pods: Vec<PodRecord> = if job.spec.template.pod_selector.is_some() {
        context
            .view
            .pods(&namespace)
            .into_iter()
            .map(|p| (*p).clone())
            .collect()
    } else {
        Vec::new()
    };
    let now = Timestamp::now();
    let jitter = i32::try_from(now.subsec_nanosecond().unsigned_abs() % 600).unwrap_or(0);
    let plan = plan(&Input {
        job: &job,
        node_images: &node_images,
        pods: &pods,
        now,
        jitter,
    });
    if plan.delete_job {
        let api: Api<ImagePullJob> = Api::namespaced(context.client.clone(), &namespace);
        let params = DeleteParams {
            propagation_policy: Some(PropagationPolicy::Background),
            preconditions: Some(Preconditions {
                uid: job.metadata.uid.clone(),
                resource_version: None,
            }),
            ..DeleteParams::default()
        };
        match api.delete(&job.name_any(), &params).await {
            Ok(_) => tracing::info!("ImagePullJob deleted: ttlSecondsAfterFinished passed"),
            Err(kube::Error::Api(s)) if s.is_not_found() => {}
            Err(e) => return Err(e.into()),
        }
        return Ok(Next::Idle);
    }
    let api: Api<NodeImage> = Api::all(context.client.clone());
    for request in &plan.requests {
        write(&api, request).await?;
    }
    if let Some(status) = &plan.status
        && job.status.as_ref() != Some(status)
    {
        pass.write_status(&job, status).await?;
    }
    Ok(Next::after(plan.requeue_after))
}

impl Reconciler for State {
    type Object = ImagePullJob;
    type Memory = ();
    const DEBOUNCE: Duration = Duration::from_millis(100);
    const RESYNC: Duration = RESYNC;

    fn triggers(&self, triggers: Triggers<ImagePullJob>) -> Triggers<ImagePullJob> {
        triggers
            .watch(|_: &NodeImage, known: &Known<ImagePullJob>| known.refs(unfinished))
            .pods(|pod: &PodRecord, known: &Known<ImagePullJob>| {
                let ns = pod.metadata.namespace.clone();
                known.refs(|j| {
                    unfinished(j) && j.spec.template.pod_selector.is_some() && j.metadata.namespace == ns
                })
            })
    }

    fn cached(view: &dyn ControllerView, namespace: &str, name: &str) -> Option<Arc<ImagePullJob>> {
        kruise_core::view::get(view, namespace, name)
    }

    async fn pass(self: Arc<Self>, job: Arc<ImagePullJob>, p: Pass<ImagePullJob, ()>) -> Result<Next, Error> {
        pass(&self.context, job, p).await
    }
}

/// Runs the ImagePullJob controller until aborted.
pub async fn run(context: Context) {
    control_loop::run(context.clone(), State { context }).await;
}
