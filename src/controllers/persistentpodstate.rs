//! The PersistentPodState controllers (docs/persistentpodstate.md): the planner is
//! [`kruise_reconcile::persistentpodstate`].
//!
//! - [`PodStates`] records where the target's pods run: it gathers the target StatefulSet (apps/v1 or
//!   Advanced), its active pods and their nodes from the cluster cache and writes the planned status;
//! - [`Generated`] keeps the PersistentPodState a StatefulSet's `kruise.io/auto-generate-…`
//!   annotations ask for (one loop per StatefulSet kind).

use std::{marker::PhantomData, sync::Arc, time::Duration};

use k8s_openapi::api::apps::v1::{StatefulSet, StatefulSetSpec};
use kruise_api::{
    PodRecord,
    apps_v1beta1::{PersistentPodState, StatefulSet as AdvancedStatefulSet},
};
use kruise_reconcile::persistentpodstate::{self as planner, Generated as Plan, Target, Workload};
use kube::{
    Api, Resource, ResourceExt as _,
    api::{DeleteParams, ObjectMeta, PostParams},
    runtime::reflector::ObjectRef,
};

use super::{
    Context, ControllerView, Error,
    control_loop::{self, Known, Next, Pass, Reconciler, Triggers},
    workloads,
};

/// Every PersistentPodState is looked at least this often (node label changes trigger nothing).
pub const RESYNC: Duration = Duration::from_secs(60);

/// The target of `pps` as the planner sees it, and its uid; `None` when it is not in the cache.
fn target(view: &dyn ControllerView, pps: &PersistentPodState) -> Option<(Target, String)> {
    let namespace = pps.namespace().unwrap_or_default();
    let t = &pps.spec.target_ref;
    if t.kind != "StatefulSet" {
        return None;
    }
    let deleting = |m: &ObjectMeta| m.deletion_timestamp.is_some();
    match workloads::group_of(&t.api_version) {
        "apps" => view.stateful_set(&namespace, &t.name).map(|s| {
            // Compiles whether k8s-openapi makes `spec` optional or not (as `kruise_core::owner`).
            let spec = Option::<&StatefulSetSpec>::from(&s.spec);
            let target = Target {
                start: spec
                    .and_then(|s| s.ordinals.as_ref())
                    .and_then(|o| o.start)
                    .map_or(0, i64::from),
                replicas: spec.and_then(|s| s.replicas).unwrap_or(1).into(),
                reserved: Default::default(),
                deleting: deleting(&s.metadata),
            };
            (target, s.metadata.uid.clone().unwrap_or_default())
        }),
        "apps.kruise.io" => {
            kruise_core::view::get::<AdvancedStatefulSet>(view, &namespace, &t.name).map(|s| {
                use kruise_reconcile::statefulset::identity;
                let target = Target {
                    start: identity::start(&s),
                    replicas: s.spec.replicas.unwrap_or(1).into(),
                    reserved: identity::reserved(&s),
                    deleting: deleting(&s.metadata),
                };
                (target, s.metadata.uid.clone().unwrap_or_default())
            })
        }
        _ => None,
    }
}

/// The PersistentPodStates of the pod's namespace whose target is its controller.
fn states_of_pod(pod: &PodRecord, known: &Known<PersistentPodState>) -> Vec<ObjectRef<PersistentPodState>> {
    let Some(owner) = kruise_core::kind::controller_ref(&pod.metadata) else {
        return Vec::new();
    };
    states_targeting(
        known,
        &pod.namespace().unwrap_or_default(),
        &owner.api_version,
        &owner.kind,
        &owner.name,
    )
}

fn states_targeting(
    known: &Known<PersistentPodState>,
    namespace: &str,
    api_version: &str,
    kind: &str,
    name: &str,
) -> Vec<ObjectRef<PersistentPodState>> {
    let group = workloads::group_of(api_version);
    known.refs(|p| {
        let t = &p.spec.target_ref;
        p.namespace().as_deref() == Some(namespace)
            && workloads::group_of(&t.api_version) == group
            && t.kind == kind
            && t.name == name
    })
}

fn states_of_workload<W: Resource<DynamicType = ()>>(
    w: &W,
    known: &Known<PersistentPodState>,
) -> Vec<ObjectRef<PersistentPodState>> {
    let meta = w.meta();
    let api_version = W::api_version(&());
    states_targeting(
        known,
        meta.namespace.as_deref().unwrap_or(""),
        &api_version,
        &W::kind(&()),
        meta.name.as_deref().unwrap_or(""),
    )
}

/// Records the target's pods in the status.
pub struct PodStates;

impl Reconciler for PodStates {
    type Object = PersistentPodState;
    type Memory = ();
    const DEBOUNCE: Duration = Duration::from_millis(300);
    const RESYNC: Duration = RESYNC;

    fn triggers(&self, triggers: Triggers<PersistentPodState>) -> Triggers<PersistentPodState> {
        triggers
            .pods(states_of_pod)
            .watch(states_of_workload::<StatefulSet>)
            .watch(states_of_workload::<AdvancedStatefulSet>)
    }

    fn cached(view: &dyn ControllerView, namespace: &str, name: &str) -> Option<Arc<PersistentPodState>> {
        kruise_core::view::get(view, namespace, name)
    }

    async fn pass(
        self: Arc<Self>,
        pps: Arc<PersistentPodState>,
        pass: Pass<PersistentPodState, ()>,
    ) -> Result<Next, Error> {
        let view = &*pass.context.view;
        let namespace = pps.namespace().unwrap_or_default();
        let target = target(view, &pps);
        let pods: Vec<Arc<PodRecord>> = match &target {
            Some((_, uid)) if !uid.is_empty() => view
                .pods(&namespace)
                .into_iter()
                .filter(|p| kruise_core::kind::controller_ref(&p.metadata).is_some_and(|o| &o.uid == uid))
                .filter(|p| kruise_core::pod_state::is_active(p))
                .collect(),
            _ => Vec::new(),
        };
        let refs: Vec<&PodRecord> = pods.iter().map(|p| &**p).collect();
        if let Some(status) =
            planner::plan_status(&pps, target.as_ref().map(|(t, _)| t), &refs, |n| view.node(n))
        {
            pass.write_status(&pps, &status).await?;
            tracing::info!(%namespace, pps = %pps.name_any(), states = status.pod_states.len(),
                "PersistentPodState status updated");
        }
        Ok(Next::Resync)
    }
}

/// Keeps the generated PersistentPodState of StatefulSets of kind `W` (apps/v1 or Advanced).
pub struct Generated<W>(PhantomData<fn() -> W>);

impl<W> Generated<W> {
    pub fn new() -> Self {
        Generated(PhantomData)
    }
}

impl<W> Default for Generated<W> {
    fn default() -> Self {
        Self::new()
    }
}

/// A StatefulSet kind the generator runs for.
pub trait GeneratorKind: control_loop::Object {
    /// The cache's copy.
    fn cached(view: &dyn ControllerView, namespace: &str, name: &str) -> Option<Arc<Self>>;
}

impl GeneratorKind for StatefulSet {
    fn cached(view: &dyn ControllerView, namespace: &str, name: &str) -> Option<Arc<Self>> {
        view.stateful_set(namespace, name)
    }
}

impl GeneratorKind for AdvancedStatefulSet {
    fn cached(view: &dyn ControllerView, namespace: &str, name: &str) -> Option<Arc<Self>> {
        kruise_core::view::get(view, namespace, name)
    }
}

impl<W: GeneratorKind> Reconciler for Generated<W> {
    type Object = W;
    type Memory = ();
    const DEBOUNCE: Duration = Duration::from_millis(300);
    const RESYNC: Duration = Duration::from_secs(300);

    fn triggers(&self, triggers: Triggers<W>) -> Triggers<W> {
        // A generated object edited or deleted by hand is put back.
        triggers.watch(|pps: &PersistentPodState, _: &Known<W>| {
            let kind = W::kind(&());
            let group = workloads::group_of(&W::api_version(&())).to_string();
            pps.owner_references()
                .iter()
                .filter(|o| {
                    o.controller == Some(true)
                        && o.kind == kind
                        && workloads::group_of(&o.api_version) == group
                })
                .map(|o| ObjectRef::new(&o.name).within(pps.namespace().as_deref().unwrap_or("")))
                .collect()
        })
    }

    fn cached(view: &dyn ControllerView, namespace: &str, name: &str) -> Option<Arc<W>> {
        <W as GeneratorKind>::cached(view, namespace, name)
    }

    async fn pass(self: Arc<Self>, set: Arc<W>, pass: Pass<W, ()>) -> Result<Next, Error> {
        let context = &pass.context;
        let (namespace, name) = (set.namespace().unwrap_or_default(), set.name_any());
        let api_version = W::api_version(&());
        let kind = W::kind(&());
        let workload = Workload {
            api_version: &api_version,
            kind: &kind,
            metadata: set.meta(),
        };
        let existing: Option<Arc<PersistentPodState>> =
            kruise_core::view::get(&*context.view, &namespace, &name);
        apply(
            context,
            &namespace,
            &name,
            planner::plan_generated(workload, existing.as_deref()),
        )
        .await?;
        Ok(Next::Resync)
    }
}

/// Carries out a generation plan.
async fn apply(context: &Context, namespace: &str, name: &str, plan: Plan) -> Result<(), Error> {
    let api: Api<PersistentPodState> = Api::namespaced(context.client.clone(), namespace);
    let remember = |o: &PersistentPodState| {
        if let Ok(v) = serde_json::to_value(o) {
            context.view.remember(&v);
        }
    };
    match plan {
        Plan::Keep => {}
        Plan::Create(pps) => match api.create(&PostParams::default(), &pps).await {
            Ok(created) => {
                remember(&created);
                tracing::info!(%namespace, %name, "generated PersistentPodState created");
            }
            Err(kube::Error::Api(s)) if s.is_already_exists() => {}
            Err(e) => return Err(e.into()),
        },
        Plan::UpdateSpec(spec) => {
            // A fresh read, so the write carries the current resourceVersion; a conflict retries the pass.
            let Some(mut current) = api.get_opt(name).await? else {
                return Ok(());
            };
            current.spec = *spec;
            let stored = api.replace(name, &PostParams::default(), &current).await?;
            remember(&stored);
            tracing::info!(%namespace, %name, "generated PersistentPodState updated");
        }
        Plan::Delete => match api.delete(name, &DeleteParams::default()).await {
            Ok(_) => tracing::info!(%namespace, %name, "generated PersistentPodState deleted"),
            Err(kube::Error::Api(s)) if s.is_not_found() => {}
            Err(e) => return Err(e.into()),
        },
    }
    Ok(())
}

/// Runs the PersistentPodState controllers until aborted.
pub async fn run(context: Context) {
    tokio::join!(
        control_loop::run(context.clone(), PodStates),
        control_loop::run(context.clone(), Generated::<StatefulSet>::new()),
        control_loop::run(context, Generated::<AdvancedStatefulSet>::new()),
    );
}
