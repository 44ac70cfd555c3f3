//! The WorkloadSpread controller: the planner is [`kruise_reconcile::workload_spread`]; this gathers the
//! target's pods, replicas and version and the pods' nodes, then adopts pre-existing pods, writes deletion
//! costs and the planned status, and deletes pods stuck unschedulable (Adaptive rescheduling).

use std::{collections::BTreeMap, sync::Arc, time::Duration};

use k8s_openapi::{
    api::{
        apps::v1::{Deployment, ReplicaSet},
        batch::v1::Job,
        core::v1::Node,
    },
    jiff::Timestamp,
};
use kruise_api::{
    PodRecord,
    apps_v1beta1::{CloneSet, WorkloadSpread},
};
use kruise_reconcile::workload_spread::{self, DELETION_COST_ANNOTATION, Observed, VERSION_IGNORED};
use kube::{
    Api, Resource, ResourceExt as _,
    api::{Patch, PatchParams},
    runtime::reflector::ObjectRef,
};
use serde_json::json;

use super::{
    Context, ControllerView, Error,
    control_loop::{self, Known, Next, Pass, Reconciler, Triggers},
    pods, workloads,
};

/// Safety net: every WorkloadSpread is recounted at least this often.
pub const RESYNC: Duration = Duration::from_secs(60);

/// The pods and replicas of the WorkloadSpread's target, and the target's latest version.
async fn observe(
    context: &Context,
    ws: &WorkloadSpread,
) -> Result<(Vec<Arc<PodRecord>>, i32, Option<String>), Error> {
    let Some(target) = &ws.spec.target_reference else {
        return Ok((Vec::new(), 0, None));
    };
    let namespace = ws.namespace().unwrap_or_default();
    let (pods, mut replicas) = if target.kind == "Job" && workloads::group_of(&target.api_version) == "batch"
    {
        match context.view.job(&namespace, &target.name) {
            None => (Vec::new(), 0),
            Some(job) => {
                let uid = job.metadata.uid.clone().unwrap_or_default();
                let selector = job
                    .spec
                    .as_ref()
                    .and_then(|s| s.selector.clone())
                    .unwrap_or_default();
                let pods = context
                    .view
                    .pods(&namespace)
                    .into_iter()
                    .filter(|p| kruise_core::kind::controller_ref(&p.metadata).is_some_and(|o| o.uid == uid))
                    .filter(|p| pods::selects(&selector, &p.metadata.labels))
                    .collect();
                (pods, job.spec.as_ref().and_then(|s| s.parallelism).unwrap_or(1))
            }
        }
    } else {
        workloads::pods_for_ref(
            context,
            &target.api_version,
            &target.kind,
            &namespace,
            &target.name,
            false,
        )
        .await?
    };
    if let Some(paths) = ws
        .spec
        .target_filter
        .as_ref()
        .and_then(|f| f.replicas_path_list.as_ref())
        .filter(|p| !p.is_empty())
    {
        let object = match target.kind.as_str() {
            "Deployment" => context
                .view
                .deployment(&namespace, &target.name)
                .map(|o| serde_json::to_value(&*o)),
            "ReplicaSet" => context
                .view
                .replica_set(&namespace, &target.name)
                .map(|o| serde_json::to_value(&*o)),
            "StatefulSet" => context
                .view
                .stateful_set(&namespace, &target.name)
                .map(|o| serde_json::to_value(&*o)),
            "CloneSet" => context
                .view
                .clone_set(&namespace, &target.name)
                .map(|o| serde_json::to_value(&*o)),
            "Job" => context
                .view
                .job(&namespace, &target.name)
                .map(|o| serde_json::to_value(&*o)),
            _ => None,
        };
        if let Some(Ok(object)) = object {
            replicas = workload_spread::replicas_from_paths(&object, paths);
        }
    }
    let latest = match target.kind.as_str() {
        "ReplicaSet" => context
            .view
            .replica_set(&namespace, &target.name)
            .and_then(|rs| rs.metadata.labels.as_ref()?.get("pod-template-hash").cloned()),
        "Deployment" => context
            .view
            .deployment(&namespace, &target.name)
            .and_then(|deployment| {
                let replica_sets: Vec<_> = workload_spread::replica_sets_of(&pods)
                    .iter()
                    .filter_map(|name| context.view.replica_set(&namespace, name))
                    .collect();
                workload_spread::latest_deployment_version(&deployment, replica_sets.iter().map(|rs| &**rs))
            }),
        _ => Some(VERSION_IGNORED.to_string()),
    };
    Ok((pods, replicas, latest))
}

/// The WorkloadSpreads that target `pod`'s workload (its controller, or the Deployment above its
/// ReplicaSet), and the one its matched annotation names.
fn spreads_of_pod(pod: &PodRecord, known: &Known<WorkloadSpread>) -> Vec<ObjectRef<WorkloadSpread>> {
    let namespace = pod.namespace().unwrap_or_default();
    let mut refs: Vec<_> = workload_spread::injected(pod)
        .map(|i| ObjectRef::new(&i.name).within(&namespace))
        .into_iter()
        .collect();
    if let Some(owner) = kruise_core::kind::controller_ref(&pod.metadata) {
        refs.extend(known.refs(|w| workload_spread::targets(w, &namespace, &owner.kind, &owner.name)));
        if owner.kind == "ReplicaSet"
            && let Some(rs) = known.view().replica_set(&namespace, &owner.name)
            && let Some(d) = kruise_core::kind::controller_ref(&rs.metadata)
        {
            refs.extend(known.refs(|w| workload_spread::targets(w, &namespace, &d.kind, &d.name)));
        }
    }
    refs
}

/// The WorkloadSpreads that target a changed workload of kind `W`.
fn spreads_of<W: Resource<DynamicType = ()>>(
    w: &W,
    known: &Known<WorkloadSpread>,
) -> Vec<ObjectRef<WorkloadSpread>> {
    let (namespace, name) = (
        w.meta().namespace.as_deref().unwrap_or(""),
        w.meta().name.as_deref().unwrap_or(""),
    );
    known.refs(|s| workload_spread::targets(s, namespace, &W::kind(&()), name))
}

struct SpreadStatus;

impl Reconciler for SpreadStatus {
    type Object = WorkloadSpread;
    type Memory = ();
    const DEBOUNCE: Duration = Duration::from_millis(500);
    const RESYNC: Duration = RESYNC;

    fn triggers(&self, triggers: Triggers<WorkloadSpread>) -> Triggers<WorkloadSpread> {
        triggers
            .pods(spreads_of_pod)
            .watch(spreads_of::<Deployment>)
            .watch(spreads_of::<ReplicaSet>)
            .watch(spreads_of::<CloneSet>)
            .watch(spreads_of::<Job>)
    }

    fn cached(view: &dyn ControllerView, namespace: &str, name: &str) -> Option<Arc<WorkloadSpread>> {
        view.workload_spreads(namespace)
            .into_iter()
            .find(|w| w.metadata.name.as_deref() == Some(name))
    }

    async fn pass(
        self: Arc<Self>,
        ws: Arc<WorkloadSpread>,
        pass: Pass<WorkloadSpread, ()>,
    ) -> Result<Next, Error> {
        let context = &pass.context;
        let (namespace, name) = (ws.namespace().unwrap_or_default(), ws.name_any());
        let (pods, replicas, latest) = observe(context, &ws).await?;
        let nodes: BTreeMap<String, Arc<Node>> = pods
            .iter()
            .filter_map(|p| p.spec.as_ref()?.node_name.clone())
            .filter_map(|n| Some((n.clone(), context.view.node(&n)?)))
            .collect();
        let observed = Observed {
            pods: &pods,
            replicas,
            latest_version: latest.as_deref(),
            nodes: &nodes,
            now: Timestamp::now(),
        };
        let plan = workload_spread::plan(&ws, &observed).map_err(|e| Error::Invalid {
            what: "WorkloadSpread",
            message: e.to_string(),
        })?;
        let pods_api: Api<PodRecord> = Api::namespaced(context.client.clone(), &namespace);
        for (pod, patch) in &plan.adoptions {
            match pods_api
                .patch(pod, &PatchParams::default(), &Patch::Merge(patch))
                .await
            {
                Ok(_) => {
                    tracing::info!(%namespace, workload_spread = %name, pod, "adopted a pre-existing pod")
                }
                Err(kube::Error::Api(e)) if e.code == 404 => {}
                Err(e) => return Err(e.into()),
            }
        }
        for (pod, cost) in &plan.deletion_costs {
            let patch = json!({"metadata": {"annotations": {DELETION_COST_ANNOTATION: cost}}});
            match pods_api
                .patch(pod, &PatchParams::default(), &Patch::Merge(&patch))
                .await
            {
                Ok(_) | Err(kube::Error::Api(_)) => {}
                Err(e) => return Err(e.into()),
            }
        }
        for event in &plan.events {
            tracing::warn!(%namespace, workload_spread = %name, "{event}");
        }
        if plan.changed {
            pass.write_status(&ws, &plan.status).await?;
            tracing::info!(%namespace, workload_spread = %name, "WorkloadSpread status updated");
        }
        // Adaptive rescheduling: the workload recreates these pods and the webhook skips the subset now
        // that it is Schedulable=False.
        for pod in &plan.unschedulable {
            match pods_api.delete(pod, &Default::default()).await {
                Ok(_) => {
                    tracing::info!(%namespace, workload_spread = %name, pod, "deleted unschedulable pod")
                }
                Err(kube::Error::Api(e)) if e.code == 404 => {}
                Err(e) => {
                    tracing::warn!(%namespace, workload_spread = %name,
                        "DeletePodFailed: Failed to delete unschedulable Pod {namespace}/{pod}: {e}");
                    return Err(e.into());
                }
            }
        }
        Ok(Next::after(plan.recheck_after))
    }
}

/// Runs the WorkloadSpread controller until aborted.
pub async fn run(context: Context) {
    control_loop::run(context, SpreadStatus).await;
}
