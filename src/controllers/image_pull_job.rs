//! The ImagePullJob controller: the pure planner ([`kruise_reconcile::image_pull_job::plan()`]) on the
//! shared [`control_loop`] (docs/image-pull.md#imagepulljob).
//!
//! One pass reads every NodeImage (and, for `podSelector` jobs, the pods of the job's namespace) from
//! the shared cache, writes the planned tags into the NodeImages (read, apply, replace with the
//! resourceVersion read; a conflict re-reads and re-applies), writes the job's status and deletes the
//! job once its TTL has passed. NodeImage changes trigger the unfinished jobs.
//!
//! A job with `pullSecrets` first has them copied into the daemon config namespace
//! ([`kruise_reconcile::image_pull_job::secrets`]); its finalizer keeps it until a deletion has
//! released its copies. Secrets are read from the API server (never cached); a source's edit reaches
//! its copy on the job's next pass (at most 10 s apart while it runs).

use std::{sync::Arc, time::Duration};

use k8s_openapi::{api::core::v1::Secret, jiff::Timestamp};
use kruise_api::{
    PodRecord,
    apps_v1beta1::{ImagePullJob, NodeImage, ReferenceObject},
};
use kruise_reconcile::image_pull_job::{
    Input, TagRequest, plan,
    secrets::{PROTECTION_FINALIZER, SecretsInput, is_running, plan_secrets},
};
use kube::{
    Api, ResourceExt as _,
    api::{DeleteParams, ListParams, Patch, PatchParams, PostParams, Preconditions, PropagationPolicy},
};
use serde_json::json;

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

/// Six hex digits for a new copy's name.
fn suffix() -> String {
    use std::hash::{BuildHasher as _, Hasher as _};
    let mut hasher = std::collections::hash_map::RandomState::new().build_hasher();
    hasher.write_i128(Timestamp::now().as_nanosecond());
    format!("{:06x}", hasher.finish() & 0xff_ffff)
}

fn conflict(secret: &Secret) -> Error {
    Error::Conflict {
        kind: "Secret".into(),
        namespace: secret.namespace().unwrap_or_default(),
        name: secret.name_any(),
    }
}

/// Copies, refreshes and releases the job's pull secrets in the daemon config namespace, adds or
/// removes the job's finalizer, and returns the references its NodeImages need.
async fn sync_secrets(context: &Context, job: &ImagePullJob) -> Result<Vec<ReferenceObject>, Error> {
    let has_finalizer = job.finalizers().iter().any(|f| f == PROTECTION_FINALIZER);
    if job.spec.template.pull_secrets.is_empty() && !has_finalizer {
        return Ok(Vec::new());
    }
    let namespace = job.namespace().unwrap_or_default();
    let config = context.tuning.daemon_config_namespace.as_str();
    let copies_api: Api<Secret> = Api::namespaced(context.client.clone(), config);
    let copies = if namespace == config {
        Vec::new()
    } else {
        copies_api.list(&ListParams::default()).await?.items
    };
    let mut sources = Vec::new();
    if is_running(job) {
        let api: Api<Secret> = Api::namespaced(context.client.clone(), &namespace);
        for name in &job.spec.template.pull_secrets {
            match api.get_opt(name).await? {
                Some(secret) => sources.push(secret),
                None => tracing::warn!(secret = %name, "a pull secret of the ImagePullJob does not exist"),
            }
        }
    }
    let suffix = suffix();
    let plan = plan_secrets(&SecretsInput {
        job,
        config_namespace: config,
        sources: &sources,
        copies: &copies,
        suffix: &suffix,
    });
    for secret in &plan.create {
        match copies_api.create(&PostParams::default(), secret).await {
            Ok(_) => tracing::info!(secret = %secret.name_any(), "pull secret copied for the node agents"),
            Err(kube::Error::Api(s)) if s.code == 409 => return Err(conflict(secret)),
            Err(e) => return Err(e.into()),
        }
    }
    for secret in &plan.update {
        match copies_api
            .replace(&secret.name_any(), &PostParams::default(), secret)
            .await
        {
            Ok(_) => {}
            Err(kube::Error::Api(s)) if s.code == 409 => return Err(conflict(secret)),
            Err(e) => return Err(e.into()),
        }
    }
    for secret in &plan.delete {
        let params = DeleteParams {
            preconditions: Some(Preconditions {
                uid: secret.metadata.uid.clone(),
                resource_version: secret.metadata.resource_version.clone(),
            }),
            ..DeleteParams::default()
        };
        match copies_api.delete(&secret.name_any(), &params).await {
            Ok(_) => tracing::info!(secret = %secret.name_any(), "pull secret copy released"),
            Err(kube::Error::Api(s)) if s.is_not_found() => {}
            Err(kube::Error::Api(s)) if s.code == 409 => return Err(conflict(secret)),
            Err(e) => return Err(e.into()),
        }
    }
    if let Some(present) = plan.finalizer {
        let mut finalizers: Vec<String> = job.finalizers().to_vec();
        finalizers.retain(|f| f != PROTECTION_FINALIZER);
        if present {
            finalizers.push(PROTECTION_FINALIZER.into());
        }
        let api: Api<ImagePullJob> = Api::namespaced(context.client.clone(), &namespace);
        let patch =
            json!({"metadata": {"finalizers": finalizers, "resourceVersion": job.resource_version()}});
        match api
            .patch(&job.name_any(), &PatchParams::default(), &Patch::Merge(&patch))
            .await
        {
            Ok(_) => {}
            Err(kube::Error::Api(s)) if s.is_not_found() && !present => {}
            Err(e) => return Err(e.into()),
        }
    }
    Ok(plan.refs)
}

async fn pass(
    context: &Context,
    job: Arc<ImagePullJob>,
    pass: Pass<ImagePullJob, ()>,
) -> Result<Next, Error> {
    let secrets = sync_secrets(context, &job).await?;
    if job.metadata.deletion_timestamp.is_some() {
        return Ok(Next::Idle);
    }
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
        secrets: &secrets,
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
    const WHILE_DELETING: bool = true;

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
