//! The PodProbeMarker controller: the pure planner ([`kruise_reconcile::pod_probe_marker::plan()`]) on
//! the shared [`control_loop`] (docs/podprobemarker.md). It holds the marker's finalizer, writes the
//! marker's probes into the NodePodProbes of its pods' nodes, and counts the matched pods.
//!
//! Pod changes trigger the markers of the pod's namespace (a pod that stops matching must lose its
//! probes, a serverless pod's provider sets a condition); NodePodProbe changes trigger every marker (a
//! NodePodProbe created for a new node). With gate `EnablePodProbeMarkerOnServerless`, pods of
//! virtual-kubelet nodes are marked from their conditions with a merge patch of their labels and
//! annotations (`null` removes one).

use std::{collections::BTreeSet, sync::Arc, time::Duration};

use kruise_api::{
    PodRecord,
    apps_v1alpha1::{NodePodProbe, POD_PROBE_MARKER_FINALIZER, PodProbeMarker},
};
use kruise_core::{Gate, names};
use kruise_reconcile::pod_probe_marker::{Input, plan};
use kube::{
    Api, ResourceExt as _,
    api::{Patch, PatchParams, PostParams},
};
use serde_json::json;
use tracing::Instrument as _;

use super::{
    Context, ControllerView, Error,
    control_loop::{self, Known, Next, Pass, Reconciler, Triggers},
};

/// Safety net: every marker is re-planned at least this often.
pub const RESYNC: Duration = Duration::from_secs(300);
/// Requeue after a conflict or a metadata write.
pub const REQUEUE: Duration = Duration::from_millis(200);

/// The controller's state shared by passes.
pub struct Markers {
    context: Context,
}

fn code(e: &kube::Error) -> Option<u16> {
    match e {
        kube::Error::Api(s) => Some(s.code),
        _ => None,
    }
}

async fn pass(
    context: &Context,
    ppm: Arc<PodProbeMarker>,
    p: Pass<PodProbeMarker, ()>,
) -> Result<Next, Error> {
    let namespace = ppm.namespace().unwrap_or_default();
    let pods = context.view.pods(&namespace);
    let pods: Vec<&PodRecord> = pods.iter().map(|p| &**p).collect();
    let npps = context.view.kinds().node_pod_probes.list(None);
    let npp_refs: Vec<&NodePodProbe> = npps.iter().map(|n| &**n).collect();
    let serverless_nodes: Option<BTreeSet<String>> = context
        .settings
        .enabled(Gate::EnablePodProbeMarkerOnServerless)
        .then(|| {
            context
                .view
                .kinds()
                .nodes
                .list(None)
                .iter()
                .filter(|n| names::is_virtual_kubelet(n.metadata.labels.as_ref()))
                .filter_map(|n| n.metadata.name.clone())
                .collect()
        });
    let plan = plan(&Input {
        ppm: &ppm,
        pods: &pods,
        node_pod_probes: &npp_refs,
        serverless_nodes: serverless_nodes.as_ref(),
    });
    if let Some(present) = plan.finalizer {
        let mut finalizers: Vec<String> = ppm.finalizers().to_vec();
        finalizers.retain(|f| f != POD_PROBE_MARKER_FINALIZER);
        if present {
            finalizers.push(POD_PROBE_MARKER_FINALIZER.to_string());
        }
        let patch =
            json!({"metadata": {"finalizers": finalizers, "resourceVersion": ppm.resource_version()}});
        let api: Api<PodProbeMarker> = Api::namespaced(context.client.clone(), &namespace);
        return match api
            .patch(&ppm.name_any(), &PatchParams::default(), &Patch::Merge(&patch))
            .await
        {
            Ok(_) => Ok(Next::After(REQUEUE)),
            Err(e) if matches!(code(&e), Some(404)) => Ok(Next::Idle),
            Err(e) if matches!(code(&e), Some(409)) => Ok(Next::After(REQUEUE)),
            Err(e) => Err(e.into()),
        };
    }
    let api: Api<NodePodProbe> = Api::all(context.client.clone());
    let mut conflicted = false;
    for write in &plan.writes {
        let Some(current) = npps.iter().find(|n| n.name_any() == write.name) else {
            continue;
        };
        let mut body = (**current).clone();
        body.spec = write.spec.clone();
        body.metadata.resource_version = write.resource_version.clone();
        match api.replace(&write.name, &PostParams::default(), &body).await {
            Ok(stored) => {
                tracing::debug!(node = %write.name, "NodePodProbe probes written");
                if let Ok(v) = serde_json::to_value(&stored) {
                    context.view.remember(&v);
                }
            }
            Err(e) if matches!(code(&e), Some(409 | 404)) => conflicted = true,
            Err(e) => return Err(e.into()),
        }
    }
    if conflicted || (ppm.metadata.deletion_timestamp.is_some() && !plan.writes.is_empty()) {
        return Ok(Next::After(REQUEUE));
    }
    let pods_api: Api<k8s_openapi::api::core::v1::Pod> = Api::namespaced(context.client.clone(), &namespace);
    for pod in &plan.pods {
        let patch = json!({"metadata": {"labels": pod.marks.labels, "annotations": pod.marks.annotations}});
        match pods_api
            .patch(&pod.name, &PatchParams::default(), &Patch::Merge(&patch))
            .await
        {
            Ok(_) => tracing::debug!(pod = %pod.name, "serverless pod marked from its conditions"),
            Err(e) if matches!(code(&e), Some(404)) => {}
            Err(e) => return Err(e.into()),
        }
    }
    if let Some(status) = &plan.status {
        p.write_status(&ppm, status).await?;
    }
    Ok(Next::Resync)
}

impl Reconciler for Markers {
    type Object = PodProbeMarker;
    type Memory = ();
    const DEBOUNCE: Duration = Duration::from_millis(100);
    const RESYNC: Duration = RESYNC;
    const CONFLICT_REQUEUE: Duration = REQUEUE;
    const WHILE_DELETING: bool = true;

    fn triggers(&self, triggers: Triggers<PodProbeMarker>) -> Triggers<PodProbeMarker> {
        triggers
            .pods(|pod: &PodRecord, known: &Known<PodProbeMarker>| {
                known.refs(|m| m.metadata.namespace == pod.metadata.namespace)
            })
            .watch(|_: &NodePodProbe, known: &Known<PodProbeMarker>| known.refs(|_| true))
    }

    fn cached(view: &dyn ControllerView, namespace: &str, name: &str) -> Option<Arc<PodProbeMarker>> {
        kruise_core::view::get(view, namespace, name)
    }

    async fn pass(
        self: Arc<Self>,
        ppm: Arc<PodProbeMarker>,
        p: Pass<PodProbeMarker, ()>,
    ) -> Result<Next, Error> {
        let span = tracing::info_span!("podprobemarker", namespace = %ppm.namespace().unwrap_or_default(),
            name = %ppm.name_any());
        pass(&self.context, ppm, p).instrument(span).await
    }
}

/// Runs the PodProbeMarker controller until aborted.
pub async fn run(context: Context) {
    let markers = Markers {
        context: context.clone(),
    };
    control_loop::run(context, markers).await;
}
