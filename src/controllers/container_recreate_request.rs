//! The ContainerRecreateRequest manager: the pure planner
//! ([`kruise_reconcile::container_recreate_request::plan()`]) on the shared [`control_loop`]
//! (docs/containerrecreaterequest.md). The node agent recreates the containers (`src/daemon/recreate.rs`);
//! this controller times requests out, keeps the status snapshot, holds a gated pod not-ready for
//! `unreadyGracePeriodSeconds`, and cleans up after completion (the `active` label, then the TTL).
//!
//! Pod changes trigger the pod's requests (same namespace, `pod-uid` label = the pod's uid).

use std::{sync::Arc, time::Duration};

use k8s_openapi::api::core::v1::Pod;
use kruise_api::{
    PodRecord,
    apps_v1beta1::{CRR_ACTIVE_LABEL, CRR_POD_UID_LABEL, CRR_UNREADY_ACQUIRED_KEY, ContainerRecreateRequest},
};
use kruise_reconcile::{action::Action, container_recreate_request::Input};
use kube::{
    Api, ResourceExt as _,
    api::{DeleteParams, Patch, PatchParams, Preconditions},
};
use serde_json::json;
use tracing::Instrument as _;

use super::{
    Context, ControllerView, Error,
    control_loop::{self, Known, Next, Pass, Reconciler, Triggers},
};

/// Safety net: every request is re-planned at least this often.
pub const RESYNC: Duration = Duration::from_secs(300);
/// Requeue after a conflict or a metadata write.
pub const CONFLICT_REQUEUE: Duration = Duration::from_millis(200);

/// The controller's state shared by passes.
pub struct State {
    context: Context,
}

fn conflict(e: &kube::Error) -> bool {
    matches!(e, kube::Error::Api(s) if s.code == 409)
}

fn gone(e: &kube::Error) -> bool {
    matches!(e, kube::Error::Api(s) if s.code == 404)
}

async fn patch_metadata(
    state: &State,
    crr: &ContainerRecreateRequest,
    patch: serde_json::Value,
) -> Result<(), kube::Error> {
    let api: Api<ContainerRecreateRequest> =
        Api::namespaced(state.context.client.clone(), &crr.namespace().unwrap_or_default());
    api.patch(&crr.name_any(), &PatchParams::default(), &Patch::Merge(&patch))
        .await
        .map(drop)
}

fn finalizers_with(crr: &ContainerRecreateRequest, present: bool) -> Vec<String> {
    let mut finalizers: Vec<String> = crr.finalizers().to_vec();
    finalizers.retain(|f| f != CRR_UNREADY_ACQUIRED_KEY);
    if present {
        finalizers.push(CRR_UNREADY_ACQUIRED_KEY.into());
    }
    finalizers
}

async fn pass(
    state: &State,
    crr: Arc<ContainerRecreateRequest>,
    pass: Pass<ContainerRecreateRequest, ()>,
) -> Result<Next, Error> {
    let namespace = crr.namespace().unwrap_or_default();
    let pod: Option<Arc<PodRecord>> = state.context.view.pod(&namespace, &crr.spec.pod_name);
    let now = state.context.clock.now();
    let plan = kruise_reconcile::container_recreate_request::plan(&Input {
        crr: &crr,
        pod: pod.as_deref(),
        now,
    });
    // A release patches the pod before the finalizer goes; an acquisition adds the finalizer first.
    if let Some(Action::PatchPodStatus { name, patch }) = &plan.pod_status
        && plan.finalizer != Some(true)
    {
        let pods: Api<Pod> = Api::namespaced(state.context.client.clone(), &namespace);
        match pods
            .patch_status(name, &PatchParams::default(), &Patch::Strategic(&**patch))
            .await
        {
            Ok(_) => {}
            Err(e) if gone(&e) => {}
            Err(e) => return Err(e.into()),
        }
    }
    if let Some(present) = plan.finalizer {
        let patch = json!({"metadata": {"finalizers": finalizers_with(&crr, present),
            "resourceVersion": crr.resource_version()}});
        return match patch_metadata(state, &crr, patch).await {
            Ok(()) => Ok(Next::After(CONFLICT_REQUEUE)),
            Err(e) if conflict(&e) => Ok(Next::After(CONFLICT_REQUEUE)),
            Err(e) if gone(&e) => Ok(Next::Idle),
            Err(e) => Err(e.into()),
        };
    }
    if plan.remove_active_label {
        let patch = json!({"metadata": {"labels": {CRR_ACTIVE_LABEL: null}}});
        return match patch_metadata(state, &crr, patch).await {
            Ok(()) => Ok(Next::After(CONFLICT_REQUEUE)),
            Err(e) if gone(&e) => Ok(Next::Idle),
            Err(e) => Err(e.into()),
        };
    }
    if plan.delete {
        let api: Api<ContainerRecreateRequest> = Api::namespaced(state.context.client.clone(), &namespace);
        let params = DeleteParams {
            preconditions: Some(Preconditions {
                uid: crr.metadata.uid.clone(),
                resource_version: None,
            }),
            ..DeleteParams::default()
        };
        match api.delete(&crr.name_any(), &params).await {
            Ok(_) => tracing::info!("ContainerRecreateRequest deleted: ttlSecondsAfterFinished passed"),
            Err(e) if gone(&e) => {}
            Err(e) => return Err(e.into()),
        }
        return Ok(Next::Idle);
    }
    if let Some(status) = &plan.status {
        if status.message.is_empty() {
            tracing::debug!(phase = %status.phase, "status written");
        } else {
            tracing::info!(phase = %status.phase, message = %status.message, "ContainerRecreateRequest completed");
        }
        pass.write_status(&crr, status).await?;
    }
    Ok(Next::after(plan.requeue_after))
}

/// The requests (namespace and `pod-uid` label) a pod change concerns.
fn concerns(crr: &ContainerRecreateRequest, pod: &PodRecord) -> bool {
    crr.namespace() == pod.metadata.namespace
        && pod.metadata.uid.is_some()
        && crr.labels().get(CRR_POD_UID_LABEL) == pod.metadata.uid.as_ref()
}

impl Reconciler for State {
    type Object = ContainerRecreateRequest;
    type Memory = ();
    const DEBOUNCE: Duration = Duration::from_millis(50);
    const RESYNC: Duration = RESYNC;
    const CONFLICT_REQUEUE: Duration = CONFLICT_REQUEUE;
    const WHILE_DELETING: bool = true;

    fn triggers(&self, triggers: Triggers<ContainerRecreateRequest>) -> Triggers<ContainerRecreateRequest> {
        triggers
            .pods(|p: &PodRecord, known: &Known<ContainerRecreateRequest>| known.refs(|crr| concerns(crr, p)))
            .all_on(self.context.clock.jumps())
    }

    fn cached(
        view: &dyn ControllerView,
        namespace: &str,
        name: &str,
    ) -> Option<Arc<ContainerRecreateRequest>> {
        kruise_core::view::get(view, namespace, name)
    }

    async fn pass(
        self: Arc<Self>,
        crr: Arc<ContainerRecreateRequest>,
        p: Pass<ContainerRecreateRequest, ()>,
    ) -> Result<Next, Error> {
        let span = tracing::info_span!("containerrecreaterequest", namespace = %crr.namespace().unwrap_or_default(),
            name = %crr.name_any());
        pass(&self, crr, p).instrument(span).await
    }
}

/// Runs the ContainerRecreateRequest manager until aborted.
pub async fn run(context: Context) {
    let state = State {
        context: context.clone(),
    };
    control_loop::run(context, state).await;
}
