//! The NodeImage controller: the pure planner ([`kruise_reconcile::node_image::plan()`]) on the shared
//! [`control_loop`] (docs/image-pull.md#nodeimage).
//!
//! Passes run per Node: they create the node's NodeImage once it is Ready, keep its labels, prune its
//! tags and fail the tags its agent never answered. A second, small loop over NodeImages deletes those
//! whose node is gone (a pass needs an object, and the node no longer exists).

use std::{collections::BTreeSet, sync::Arc, time::Duration};

use k8s_openapi::api::core::v1::Node;
use k8s_openapi::api::core::v1::ObjectReference;
use kruise_api::apps_v1beta1::{FAKE_NODE_IMAGE_LABEL, ImagePullJob, NodeImage};
use kruise_reconcile::node_image::FailedTag;
use kruise_reconcile::node_image::{Input, plan};
use kube::{
    Api, ResourceExt as _,
    api::{DeleteParams, PostParams, Preconditions},
    runtime::{
        events::{Event, EventType, Recorder, Reporter},
        reflector::ObjectRef,
    },
};

use super::{
    Context, ControllerView, Error,
    control_loop::{self, Known, Next, Pass, Reconciler, Triggers},
};

/// Every node is re-planned at least this often.
pub const RESYNC: Duration = Duration::from_secs(60);

/// Passes per node.
pub struct Nodes {
    context: Context,
    recorder: Recorder,
}

/// The events' reporter.
pub fn reporter() -> Reporter {
    Reporter {
        controller: "kruise-manager".into(),
        instance: Some("nodeimage-controller".into()),
    }
}

/// Warning `PullImageFailed` on each owner of a tag the controller failed, then on the NodeImage.
async fn announce(recorder: &Recorder, node_image: &NodeImage, failed: &[FailedTag]) {
    let name = node_image.name_any();
    let node_ref = ObjectReference {
        api_version: Some("apps.kruise.io/v1beta1".into()),
        kind: Some("NodeImage".into()),
        name: Some(name.clone()),
        uid: node_image.metadata.uid.clone(),
        ..ObjectReference::default()
    };
    for tag in failed {
        let event = Event {
            type_: EventType::Warning,
            reason: "PullImageFailed".into(),
            note: Some(tag.note(&name)),
            action: "PullImage".into(),
            secondary: None,
        };
        for regarding in tag.owners.iter().chain([&node_ref]) {
            if let Err(e) = recorder.publish(&event, regarding).await {
                tracing::debug!(error = %e, "PullImageFailed event not published");
            }
        }
    }
}

/// Passes per NodeImage (deletion with the node).
pub struct Orphans {
    context: Context,
}

/// Uids of the ImagePullJobs in the cache.
pub fn live_jobs(view: &dyn ControllerView) -> BTreeSet<String> {
    view.kinds()
        .image_pull_jobs
        .list(None)
        .into_iter()
        .filter_map(|j| j.metadata.uid.clone())
        .collect()
}

async fn node_pass(context: &Context, recorder: &Recorder, node: Arc<Node>) -> Result<Next, Error> {
    let name = node.name_any();
    let node_image: Option<Arc<NodeImage>> = kruise_core::view::get(context.view.as_ref(), "", &name);
    let live = live_jobs(context.view.as_ref());
    let plan = plan(&Input {
        name: &name,
        node: Some(&node),
        node_image: node_image.as_deref(),
        live_jobs: &live,
        creation_delay: context.tuning.node_image_creation_delay,
        now: context.clock.now(),
    });
    let api: Api<NodeImage> = Api::all(context.client.clone());
    if let Some(new) = &plan.create {
        match api.create(&PostParams::default(), new).await {
            Ok(_) => tracing::info!(node = %name, "NodeImage created"),
            Err(kube::Error::Api(s)) if s.code == 409 => {}
            Err(e) => return Err(e.into()),
        }
        return Ok(Next::Resync);
    }
    if let Some(updated) = &plan.update {
        match api.replace(&name, &PostParams::default(), updated).await {
            Ok(_) => {}
            Err(kube::Error::Api(s)) if s.code == 409 => return Ok(Next::After(Duration::from_millis(200))),
            Err(e) => return Err(e.into()),
        }
        // The status pass runs on the fresh copy the write triggers.
        return Ok(Next::After(Duration::from_millis(200)));
    }
    if let (Some(status), Some(current)) = (&plan.status, &node_image) {
        let mut body = (**current).clone();
        body.status = Some(status.clone());
        match api.replace_status(&name, &PostParams::default(), &body).await {
            Ok(_) => announce(recorder, current, &plan.failed).await,
            Err(kube::Error::Api(s)) if s.code == 409 => return Ok(Next::After(Duration::from_millis(200))),
            Err(e) => return Err(e.into()),
        }
    }
    Ok(Next::after(plan.requeue_after))
}

impl Reconciler for Nodes {
    type Object = Node;
    type Memory = ();
    const DEBOUNCE: Duration = Duration::from_millis(50);
    const RESYNC: Duration = RESYNC;

    fn triggers(&self, triggers: Triggers<Node>) -> Triggers<Node> {
        triggers
            .watch(|ni: &NodeImage, _: &Known<Node>| vec![ObjectRef::new(&ni.name_any())])
            .watch(|_: &ImagePullJob, known: &Known<Node>| known.refs(|_| true))
            .all_on(self.context.clock.jumps())
    }

    fn cached(view: &dyn ControllerView, _namespace: &str, name: &str) -> Option<Arc<Node>> {
        kruise_core::view::get(view, "", name)
    }

    async fn pass(self: Arc<Self>, node: Arc<Node>, _: Pass<Node, ()>) -> Result<Next, Error> {
        node_pass(&self.context, &self.recorder, node).await
    }
}

impl Reconciler for Orphans {
    type Object = NodeImage;
    type Memory = ();
    const DEBOUNCE: Duration = Duration::from_millis(50);
    const RESYNC: Duration = RESYNC;

    fn triggers(&self, triggers: Triggers<NodeImage>) -> Triggers<NodeImage> {
        triggers.watch(|node: &Node, _: &Known<NodeImage>| vec![ObjectRef::new(&node.name_any())])
    }

    fn cached(view: &dyn ControllerView, _namespace: &str, name: &str) -> Option<Arc<NodeImage>> {
        kruise_core::view::get(view, "", name)
    }

    async fn pass(self: Arc<Self>, ni: Arc<NodeImage>, _: Pass<NodeImage, ()>) -> Result<Next, Error> {
        let name = ni.name_any();
        let node: Option<Arc<Node>> = kruise_core::view::get(self.context.view.as_ref(), "", &name);
        let fake = ni.labels().contains_key(FAKE_NODE_IMAGE_LABEL);
        if node.is_some() || fake {
            return Ok(Next::Resync);
        }
        // The cache may lag behind a node just created: ask the API server before deleting.
        let nodes: Api<Node> = Api::all(self.context.client.clone());
        if nodes.get_opt(&name).await?.is_some() {
            return Ok(Next::Resync);
        }
        let api: Api<NodeImage> = Api::all(self.context.client.clone());
        let params = DeleteParams {
            preconditions: Some(Preconditions {
                uid: ni.metadata.uid.clone(),
                resource_version: None,
            }),
            ..DeleteParams::default()
        };
        match api.delete(&name, &params).await {
            Ok(_) => tracing::info!(node = %name, "NodeImage deleted with its node"),
            Err(kube::Error::Api(s)) if s.is_not_found() => {}
            Err(e) => return Err(e.into()),
        }
        Ok(Next::Idle)
    }
}

/// Runs both NodeImage loops until aborted.
pub async fn run(context: Context) {
    let nodes = control_loop::run(
        context.clone(),
        Nodes {
            recorder: Recorder::new(context.client.clone(), reporter()),
            context: context.clone(),
        },
    );
    let orphans = control_loop::run(context.clone(), Orphans { context });
    tokio::join!(nodes, orphans);
}
