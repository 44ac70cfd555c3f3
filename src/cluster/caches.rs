//! Reflector caches of what the webhooks read, shared by every handler; objects behind `Arc`.

use std::{
    collections::HashMap,
    sync::{
        Arc, Mutex, OnceLock,
        atomic::{AtomicU64, Ordering},
    },
};

use futures::StreamExt;
use k8s_openapi::api::{
    apps::v1::{ControllerRevision, Deployment, ReplicaSet, StatefulSet},
    batch::v1::Job,
    core::v1::{ConfigMap, Namespace, Node, PersistentVolumeClaim},
};
use kruise_api::{
    PodRecord,
    apps_v1beta1::{CloneSet, SidecarSet, WorkloadSpread},
    policy_v1beta1::PodUnavailableBudget,
};
use kruise_webhooks::{ClusterView, pod_mutate::sidecarset::SidecarSetIndex};
use kube::{
    Api, Client, Resource,
    api::{ApiResource, DynamicObject, GroupVersionKind, ListParams},
    runtime::{
        WatchStreamExt,
        reflector::{self, ObjectRef, Store},
        watcher,
    },
};
use serde::de::DeserializeOwned;
use serde_json::Value;

/// The cluster state the webhooks see, kept current by watches. Kruise kinds are watched at `v1beta1`
/// (kube-apiserver converts older objects through our conversion webhook).
#[derive(Clone)]
pub struct ClusterCache {
    namespaces: Store<Namespace>,
    /// Nodes: the WorkloadSpread controller adopts pods by their node's labels and taints.
    nodes: Store<Node>,
    pods: Store<PodRecord>,
    pvcs: Store<PersistentVolumeClaim>,
    sidecar_sets: Store<SidecarSet>,
    pod_unavailable_budgets: Store<PodUnavailableBudget>,
    workload_spreads: Store<WorkloadSpread>,
    controller_revisions: Store<ControllerRevision>,
    clone_sets: Store<CloneSet>,
    deployments: Store<Deployment>,
    replica_sets: Store<ReplicaSet>,
    stateful_sets: Store<StatefulSet>,
    jobs: Store<Job>,
    /// Advanced StatefulSets (`apps.kruise.io/v1beta1`), once the API server is found to serve them.
    advanced_stateful_sets: Arc<OnceLock<Store<DynamicObject>>>,
    /// `kruise-configuration` in our namespace (OpenKruise's whitelists read by the CRD webhooks).
    configuration: Store<ConfigMap>,
    namespace: String,
    /// Bumped on every SidecarSet watch event; the index is rebuilt when it moved.
    sidecar_set_generation: Arc<AtomicU64>,
    sidecar_set_index: Arc<Mutex<Option<BuiltIndex>>>,
    fresh: Arc<Mutex<Fresh>>,
    client: Client,
}

/// A SidecarSet index and the watch generation it was built at.
type BuiltIndex = (u64, Arc<SidecarSetIndex>);

/// The ConfigMap of OpenKruise's configuration whitelists.
pub const CONFIGURATION: &str = "kruise-configuration";

/// Copies newer than the watch has delivered yet: objects we just wrote, or re-read after a conflict.
/// A copy is used only while its resourceVersion is ahead of the cached one (OpenKruise likewise takes
/// the newest of its own cache and the informer's).
#[derive(Default)]
struct Fresh {
    budgets: HashMap<(String, String), Arc<PodUnavailableBudget>>,
    spreads: HashMap<(String, String), Arc<WorkloadSpread>>,
}

fn version_of<K: Resource>(object: &K) -> u64 {
    object
        .meta()
        .resource_version
        .as_deref()
        .and_then(|v| v.parse().ok())
        .unwrap_or(0)
}

/// `listed`, each replaced by its fresh copy when that is newer.
fn newest<K: Resource>(listed: Vec<Arc<K>>, fresh: &HashMap<(String, String), Arc<K>>) -> Vec<Arc<K>> {
    listed
        .into_iter()
        .map(|cached| {
            let key = (
                cached.meta().namespace.clone().unwrap_or_default(),
                cached.meta().name.clone().unwrap_or_default(),
            );
            match fresh.get(&key) {
                Some(copy) if version_of(&**copy) > version_of(&*cached) => copy.clone(),
                _ => cached,
            }
        })
        .collect()
}

/// Starts a reflector for `K` on the runtime and returns its store. Managed fields are dropped to save
/// memory.
fn reflect<K>(api: Api<K>) -> Store<K>
where
    K: Resource<DynamicType = ()> + Clone + DeserializeOwned + std::fmt::Debug + Send + Sync + 'static,
{
    reflect_with(api, watcher::Config::default(), None)
}

/// Like [`reflect`], with a watch configuration and a counter bumped after every event has reached the
/// store.
fn reflect_with<K>(api: Api<K>, config: watcher::Config, generation: Option<Arc<AtomicU64>>) -> Store<K>
where
    K: Resource<DynamicType = ()> + Clone + DeserializeOwned + std::fmt::Debug + Send + Sync + 'static,
{
    let (reader, writer) = reflector::store();
    let stream = watcher(api, config.any_semantic())
        .default_backoff()
        .modify(|o: &mut K| o.meta_mut().managed_fields = None)
        .reflect(writer)
        .inspect(move |_| {
            if let Some(generation) = &generation {
                generation.fetch_add(1, Ordering::Release);
            }
        })
        .applied_objects();
    tokio::spawn(async move {
        let mut stream = std::pin::pin!(stream);
        while let Some(event) = stream.next().await {
            if let Err(e) = event {
                tracing::warn!(kind = %K::kind(&()), error = %e, "watch error; retrying with backoff");
            }
        }
    });
    reader
}

/// OpenKruise's Advanced StatefulSet, `apps.kruise.io/v1beta1` `statefulsets`.
fn advanced_stateful_set() -> ApiResource {
    ApiResource::from_gvk_with_plural(
        &GroupVersionKind::gvk("apps.kruise.io", "v1beta1", "StatefulSet"),
        "statefulsets",
    )
}

/// Watches `resource` if the API server serves it: probes with a one-item list (retrying transient
/// errors with backoff); a 404 means the CRD is not installed, which is logged once and left alone.
fn reflect_if_served(client: Client, resource: ApiResource) -> Arc<OnceLock<Store<DynamicObject>>> {
    let slot = Arc::new(OnceLock::new());
    let filled = slot.clone();
    tokio::spawn(async move {
        let api: Api<DynamicObject> = Api::all_with(client, &resource);
        let mut delay = std::time::Duration::from_millis(500);
        loop {
            match api.list_metadata(&ListParams::default().limit(1)).await {
                Ok(_) => break,
                Err(kube::Error::Api(e)) if e.code == 404 => {
                    tracing::info!(
                        resource = %resource.plural, group = %resource.group,
                        "not served by the API server; WorkloadSpreads over it are not matched"
                    );
                    return;
                }
                Err(e) => {
                    tracing::warn!(resource = %resource.plural, error = %e, "probe failed; retrying");
                    tokio::time::sleep(delay).await;
                    delay = (delay * 2).min(std::time::Duration::from_secs(30));
                }
            }
        }
        let writer = reflector::store::Writer::new(resource.clone());
        let _ = filled.set(writer.as_reader());
        let stream = watcher(api, watcher::Config::default().any_semantic())
            .default_backoff()
            .modify(|o: &mut DynamicObject| o.metadata.managed_fields = None)
            .reflect(writer)
            .applied_objects();
        let mut stream = std::pin::pin!(stream);
        while let Some(event) = stream.next().await {
            if let Err(e) = event {
                tracing::warn!(resource = %resource.plural, error = %e, "watch error; retrying with backoff");
            }
        }
    });
    slot
}

impl ClusterCache {
    /// Starts every watch; `namespace` is kruise-rs's own (SidecarSet revisions, configuration).
    pub fn start(client: &Client, namespace: &str) -> Self {
        let sidecar_set_generation = Arc::new(AtomicU64::new(0));
        let configuration = watcher::Config::default().fields(&format!("metadata.name={CONFIGURATION}"));
        ClusterCache {
            configuration: reflect_with(Api::namespaced(client.clone(), namespace), configuration, None),
            namespace: namespace.to_string(),
            sidecar_set_index: Arc::default(),
            namespaces: reflect(Api::all(client.clone())),
            nodes: reflect(Api::all(client.clone())),
            pods: reflect(Api::all(client.clone())),
            pvcs: reflect(Api::all(client.clone())),
            sidecar_sets: reflect_with(
                Api::all(client.clone()),
                watcher::Config::default(),
                Some(sidecar_set_generation.clone()),
            ),
            sidecar_set_generation,
            pod_unavailable_budgets: reflect(Api::all(client.clone())),
            workload_spreads: reflect(Api::all(client.clone())),
            controller_revisions: reflect(Api::all(client.clone())),
            clone_sets: reflect(Api::all(client.clone())),
            deployments: reflect(Api::all(client.clone())),
            replica_sets: reflect(Api::all(client.clone())),
            stateful_sets: reflect(Api::all(client.clone())),
            jobs: reflect(Api::all(client.clone())),
            advanced_stateful_sets: reflect_if_served(client.clone(), advanced_stateful_set()),
            fresh: Arc::default(),
            client: client.clone(),
        }
    }

    /// The client the caches watch with (status writes use it too).
    pub fn client(&self) -> &Client {
        &self.client
    }

    /// Remembers an object as the API server returned it (after a write or a re-read).
    pub fn remember(&self, object: &Value) {
        let kind = object.get("kind").and_then(Value::as_str).unwrap_or("");
        let mut fresh = self.fresh.lock().unwrap_or_else(|p| p.into_inner());
        match kind {
            "PodUnavailableBudget" => {
                if let Ok(budget) = kruise_api::podunavailablebudget_to_v1beta1(object) {
                    fresh.budgets.insert(key_of(&budget), Arc::new(budget));
                }
            }
            "WorkloadSpread" => {
                if let Ok(spread) = kruise_api::workloadspread_to_v1beta1(object) {
                    fresh.spreads.insert(key_of(&spread), Arc::new(spread));
                }
            }
            _ => {}
        }
    }

    /// Re-reads the target of a conflicting write into the cache.
    pub async fn refresh(&self, target: &kruise_webhooks::WriteTarget) -> Result<(), kube::Error> {
        let resource = super::status_writes::api_resource(target);
        let api: Api<kube::api::DynamicObject> =
            Api::namespaced_with(self.client.clone(), &target.namespace, &resource);
        let object = api.get(&target.name).await?;
        self.remember(&serde_json::to_value(object).unwrap_or_default());
        Ok(())
    }

    /// Resolves once every cache has listed once.
    pub async fn wait_until_ready(&self) -> Result<(), reflector::store::WriterDropped> {
        self.namespaces.wait_until_ready().await?;
        self.nodes.wait_until_ready().await?;
        self.pods.wait_until_ready().await?;
        self.pvcs.wait_until_ready().await?;
        self.sidecar_sets.wait_until_ready().await?;
        self.pod_unavailable_budgets.wait_until_ready().await?;
        self.workload_spreads.wait_until_ready().await?;
        self.controller_revisions.wait_until_ready().await?;
        self.clone_sets.wait_until_ready().await?;
        self.deployments.wait_until_ready().await?;
        self.replica_sets.wait_until_ready().await?;
        self.stateful_sets.wait_until_ready().await?;
        self.jobs.wait_until_ready().await?;
        self.configuration.wait_until_ready().await
    }
}

fn key_of<K: Resource>(object: &K) -> (String, String) {
    (
        object.meta().namespace.clone().unwrap_or_default(),
        object.meta().name.clone().unwrap_or_default(),
    )
}

fn in_namespace<K: Resource<DynamicType = ()> + Clone>(store: &Store<K>, namespace: &str) -> Vec<Arc<K>> {
    store.state_filter(|o| o.meta().namespace.as_deref() == Some(namespace))
}

impl ClusterView for ClusterCache {
    fn namespace(&self, name: &str) -> Option<Arc<Namespace>> {
        self.namespaces.get(&ObjectRef::new(name))
    }

    fn node(&self, name: &str) -> Option<Arc<Node>> {
        self.nodes.get(&ObjectRef::new(name))
    }

    fn pod(&self, namespace: &str, name: &str) -> Option<Arc<PodRecord>> {
        self.pods.get(&ObjectRef::new(name).within(namespace))
    }

    fn pods(&self, namespace: &str) -> Vec<Arc<PodRecord>> {
        in_namespace(&self.pods, namespace)
    }

    fn persistent_volume_claims(&self, namespace: &str) -> Vec<Arc<PersistentVolumeClaim>> {
        in_namespace(&self.pvcs, namespace)
    }

    fn custom_resource_count(&self, _group: &str, _kind: &str) -> Option<usize> {
        // Custom resources of arbitrary CRDs are not cached; the CRD cascading check fails closed.
        None
    }

    fn sidecar_sets(&self) -> Vec<Arc<SidecarSet>> {
        self.sidecar_sets.state()
    }

    fn sidecar_set_index(&self) -> Arc<SidecarSetIndex> {
        let generation = self.sidecar_set_generation.load(Ordering::Acquire);
        let mut cached = self.sidecar_set_index.lock().unwrap_or_else(|p| p.into_inner());
        match cached.as_ref() {
            Some((built_at, index)) if *built_at == generation => index.clone(),
            _ => {
                let index = Arc::new(SidecarSetIndex::build_in(
                    self.sidecar_sets.state(),
                    &self.namespace,
                ));
                *cached = Some((generation, index.clone()));
                index
            }
        }
    }

    fn pod_unavailable_budgets(&self, namespace: &str) -> Vec<Arc<PodUnavailableBudget>> {
        let fresh = self.fresh.lock().unwrap_or_else(|p| p.into_inner());
        newest(
            in_namespace(&self.pod_unavailable_budgets, namespace),
            &fresh.budgets,
        )
    }

    fn workload_spreads(&self, namespace: &str) -> Vec<Arc<WorkloadSpread>> {
        let fresh = self.fresh.lock().unwrap_or_else(|p| p.into_inner());
        newest(in_namespace(&self.workload_spreads, namespace), &fresh.spreads)
    }

    fn controller_revisions(&self, namespace: &str) -> Vec<Arc<ControllerRevision>> {
        in_namespace(&self.controller_revisions, namespace)
    }

    fn clone_set(&self, namespace: &str, name: &str) -> Option<Arc<CloneSet>> {
        self.clone_sets.get(&ObjectRef::new(name).within(namespace))
    }

    fn deployment(&self, namespace: &str, name: &str) -> Option<Arc<Deployment>> {
        self.deployments.get(&ObjectRef::new(name).within(namespace))
    }

    fn replica_set(&self, namespace: &str, name: &str) -> Option<Arc<ReplicaSet>> {
        self.replica_sets.get(&ObjectRef::new(name).within(namespace))
    }

    fn stateful_set(&self, namespace: &str, name: &str) -> Option<Arc<StatefulSet>> {
        self.stateful_sets.get(&ObjectRef::new(name).within(namespace))
    }

    fn job(&self, namespace: &str, name: &str) -> Option<Arc<Job>> {
        self.jobs.get(&ObjectRef::new(name).within(namespace))
    }

    fn object(&self, group: &str, kind: &str, namespace: &str, name: &str) -> Option<Arc<Value>> {
        match (group, kind) {
            ("", "ConfigMap") if namespace == self.namespace && name == CONFIGURATION => {
                let map = self.configuration.get(&ObjectRef::new(name).within(namespace))?;
                serde_json::to_value(&*map).ok().map(Arc::new)
            }
            ("apps.kruise.io", "StatefulSet") => {
                let resource = advanced_stateful_set();
                let set = self
                    .advanced_stateful_sets
                    .get()?
                    .get(&ObjectRef::new_with(name, resource).within(namespace))?;
                serde_json::to_value(&*set).ok().map(Arc::new)
            }
            // Other kinds without a cache are not watched.
            _ => None,
        }
    }
}
