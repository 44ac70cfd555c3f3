//! The NodePodProbe controller: the pure planner ([`kruise_reconcile::node_pod_probe`]) on the shared
//! [`control_loop`] (docs/podprobemarker.md). Two loops: per Node (create the NodePodProbe of a Ready
//! node) and per NodePodProbe (delete it with its node, prune gone pods, mark the probe results on
//! the pods, one `pods/status` write per pod and only when something changes).

use std::{collections::BTreeMap, sync::Arc, time::Duration};

use k8s_openapi::api::core::v1::{Node, Pod};
use kruise_api::{
    PodRecord,
    apps_v1alpha1::{NodePodProbe, PodProbeMarker},
};
use kruise_reconcile::node_pod_probe::{Input, Marks, plan, wants_node_pod_probe};
use kube::{
    Api, ResourceExt as _,
    api::{DeleteParams, ObjectMeta, PostParams, Preconditions},
    runtime::reflector::ObjectRef,
};

use super::{
    Context, ControllerView, Error,
    control_loop::{self, Known, Next, Pass, Reconciler, Triggers},
};

/// Safety net: every object is re-planned at least this often.
pub const RESYNC: Duration = Duration::from_secs(300);
/// Requeue after a conflict or a spec write.
pub const REQUEUE: Duration = Duration::from_millis(200);

/// Passes per node.
pub struct Nodes {
    context: Context,
}

/// Passes per NodePodProbe.
pub struct Probes {
    context: Context,
}

fn code(e: &kube::Error) -> Option<u16> {
    match e {
        kube::Error::Api(s) => Some(s.code),
        _ => None,
    }
}

impl Reconciler for Nodes {
    type Object = Node;
    type Memory = ();
    const DEBOUNCE: Duration = Duration::from_millis(50);
    const RESYNC: Duration = RESYNC;

    fn triggers(&self, triggers: Triggers<Node>) -> Triggers<Node> {
        triggers.watch(|npp: &NodePodProbe, _: &Known<Node>| vec![ObjectRef::new(&npp.name_any())])
    }

    fn cached(view: &dyn ControllerView, _namespace: &str, name: &str) -> Option<Arc<Node>> {
        kruise_core::view::get(view, "", name)
    }

    async fn pass(self: Arc<Self>, node: Arc<Node>, _: Pass<Node, ()>) -> Result<Next, Error> {
        let name = node.name_any();
        let have: Option<Arc<NodePodProbe>> = kruise_core::view::get(self.context.view.as_ref(), "", &name);
        if have.is_some() || !wants_node_pod_probe(&node) {
            return Ok(Next::Resync);
        }
        let api: Api<NodePodProbe> = Api::all(self.context.client.clone());
        let new = NodePodProbe {
            metadata: ObjectMeta {
                name: Some(name.clone()),
                ..ObjectMeta::default()
            },
            ..NodePodProbe::default()
        };
        match api.create(&PostParams::default(), &new).await {
            Ok(_) => tracing::info!(node = %name, "NodePodProbe created"),
            Err(e) if matches!(code(&e), Some(409)) => {}
            Err(e) => return Err(e.into()),
        }
        Ok(Next::Resync)
    }
}

/// Writes one pod's marks: the fresh pod, marked, through `pods/status` (its resourceVersion is the
/// precondition). Returns false on a conflict.
async fn mark_pod(
    context: &Context,
    namespace: &str,
    name: &str,
    uid: &str,
    marks: &Marks,
) -> Result<bool, Error> {
    let api: Api<Pod> = Api::namespaced(context.client.clone(), namespace);
    let Some(mut pod) = api.get_opt(name).await? else {
        return Ok(true);
    };
    if pod.metadata.uid.as_deref() != Some(uid) {
        return Ok(true);
    }
    let mut labels: BTreeMap<String, String> = pod.metadata.labels.take().unwrap_or_default();
    let mut annotations: BTreeMap<String, String> = pod.metadata.annotations.take().unwrap_or_default();
    let status = pod.status.get_or_insert_with(Default::default);
    let mut conditions = status.conditions.take().unwrap_or_default();
    let changed = marks.apply(&mut labels, &mut annotations, &mut conditions);
    status.conditions = Some(conditions);
    pod.metadata.labels = Some(labels);
    pod.metadata.annotations = Some(annotations);
    if !changed {
        return Ok(true);
    }
    match api.replace_status(name, &PostParams::default(), &pod).await {
        Ok(stored) => {
            tracing::info!(pod = %format!("{namespace}/{name}"), "probe results marked on the pod");
            if let Ok(v) = serde_json::to_value(&stored) {
                context.view.remember(&v);
            }
            Ok(true)
        }
        Err(e) if matches!(code(&e), Some(409)) => Ok(false),
        Err(e) if matches!(code(&e), Some(404)) => Ok(true),
        Err(e) => Err(e.into()),
    }
}

async fn probes_pass(context: &Context, npp: Arc<NodePodProbe>) -> Result<Next, Error> {
    let name = npp.name_any();
    let view = context.view.as_ref();
    let node: Option<Arc<Node>> = kruise_core::view::get(view, "", &name);
    let pods: BTreeMap<(String, String), Arc<PodRecord>> = npp
        .spec
        .pod_probes
        .iter()
        .map(|e| (e.namespace.clone(), e.name.clone()))
        .chain(
            npp.status
                .iter()
                .flat_map(|s| &s.pod_probe_statuses)
                .map(|s| (s.namespace.clone(), s.name.clone())),
        )
        .filter_map(|(ns, n)| view.pod(&ns, &n).map(|p| ((ns, n), p)))
        .collect();
    let markers: Vec<Arc<PodProbeMarker>> = view.kinds().pod_probe_markers.list(None);
    let plan = plan(&Input {
        npp: &npp,
        node: node.as_deref(),
        pod: |ns: &str, n: &str| pods.get(&(ns.to_string(), n.to_string())).map(|p| &**p),
        marker: |ns: &str, n: &str| {
            markers
                .iter()
                .find(|m| {
                    m.metadata.namespace.as_deref() == Some(ns) && m.metadata.name.as_deref() == Some(n)
                })
                .map(|m| &**m)
        },
    });
    let api: Api<NodePodProbe> = Api::all(context.client.clone());
    if plan.delete {
        // The cache may lag behind a node just created: ask the API server before deleting.
        let nodes: Api<Node> = Api::all(context.client.clone());
        if nodes
            .get_opt(&name)
            .await?
            .is_some_and(|n| n.metadata.deletion_timestamp.is_none())
        {
            return Ok(Next::Resync);
        }
        let params = DeleteParams {
            preconditions: Some(Preconditions {
                uid: npp.metadata.uid.clone(),
                resource_version: None,
            }),
            ..DeleteParams::default()
        };
        match api.delete(&name, &params).await {
            Ok(_) => tracing::info!(node = %name, "NodePodProbe deleted with its node"),
            Err(e) if matches!(code(&e), Some(404 | 409)) => {}
            Err(e) => return Err(e.into()),
        }
        return Ok(Next::Idle);
    }
    let mut again = false;
    if let Some(spec) = &plan.spec {
        let mut body = (*npp).clone();
        body.spec = spec.clone();
        match api.replace(&name, &PostParams::default(), &body).await {
            Ok(_) => {}
            Err(e) if matches!(code(&e), Some(409)) => again = true,
            Err(e) => return Err(e.into()),
        }
    }
    for (namespace, pod, uid, marks) in &plan.pods {
        if !mark_pod(context, namespace, pod, uid, marks).await? {
            again = true;
        }
    }
    Ok(if again { Next::After(REQUEUE) } else { Next::Resync })
}

impl Reconciler for Probes {
    type Object = NodePodProbe;
    type Memory = ();
    const DEBOUNCE: Duration = Duration::from_millis(50);
    const RESYNC: Duration = RESYNC;
    const CONFLICT_REQUEUE: Duration = REQUEUE;

    fn triggers(&self, triggers: Triggers<NodePodProbe>) -> Triggers<NodePodProbe> {
        triggers
            .pods(|pod: &PodRecord, _: &Known<NodePodProbe>| {
                pod.spec
                    .as_ref()
                    .and_then(|s| s.node_name.as_deref())
                    .filter(|n| !n.is_empty())
                    .map(|n| vec![ObjectRef::new(n)])
                    .unwrap_or_default()
            })
            .watch(|node: &Node, _: &Known<NodePodProbe>| vec![ObjectRef::new(&node.name_any())])
            .watch(|_: &PodProbeMarker, known: &Known<NodePodProbe>| known.refs(|_| true))
    }

    fn cached(view: &dyn ControllerView, _namespace: &str, name: &str) -> Option<Arc<NodePodProbe>> {
        kruise_core::view::get(view, "", name)
    }

    async fn pass(self: Arc<Self>, npp: Arc<NodePodProbe>, _: Pass<NodePodProbe, ()>) -> Result<Next, Error> {
        let span = tracing::info_span!("nodepodprobe", name = %npp.name_any());
        use tracing::Instrument as _;
        probes_pass(&self.context, npp).instrument(span).await
    }
}

/// Runs both NodePodProbe loops until aborted.
pub async fn run(context: Context) {
    let nodes = control_loop::run(
        context.clone(),
        Nodes {
            context: context.clone(),
        },
    );
    let probes = control_loop::run(context.clone(), Probes { context });
    tokio::join!(nodes, probes);
}
