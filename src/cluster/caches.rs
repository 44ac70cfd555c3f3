//! Reflector caches of what the webhooks and controllers read, shared by every handler; objects behind
//! `Arc`. One [`Reflector`] per kind of `kruise_core`'s registry, so a registered kind is always watched.

use std::{future::Future, pin::Pin, sync::Arc};

use futures::StreamExt;
use k8s_openapi::api::core::v1::ConfigMap;
use kruise_core::{
    ClusterView, DerivedCache, Kinds,
    kinds::{EachKind, ForKind, Registered},
    view::Lookups,
};
use kube::{
    Api, Client,
    api::{ApiResource, DynamicObject},
    runtime::{
        WatchStreamExt,
        reflector::{self, ObjectRef, Store},
        watcher,
    },
};
use serde_json::Value;

use super::reflector::{Reflector, Start, Watched};
use crate::server::metrics::SkippedObjects;

/// The cluster state the webhooks see, kept current by watches. Kruise kinds are watched at `v1beta1`
/// (kube-apiserver converts older objects through our conversion webhook).
#[derive(Clone)]
pub struct ClusterCache {
    kinds: Arc<Kinds<Watched>>,
    /// `kruise-configuration` in our namespace (OpenKruise's whitelists read by the CRD webhooks).
    configuration: Store<ConfigMap>,
    namespace: String,
    derived: Arc<DerivedCache>,
    client: Client,
}

/// The ConfigMap of OpenKruise's configuration whitelists.
pub const CONFIGURATION: &str = "kruise-configuration";

/// Watches the configuration ConfigMap in `namespace`.
fn reflect_configuration(client: Client, namespace: &str) -> Store<ConfigMap> {
    let (reader, writer) = reflector::store();
    let config = watcher::Config::default().fields(&format!("metadata.name={CONFIGURATION}"));
    let stream = watcher(
        Api::<ConfigMap>::namespaced(client, namespace),
        config.any_semantic(),
    )
    .default_backoff()
    .modify(|o: &mut ConfigMap| o.metadata.managed_fields = None)
    .reflect(writer)
    .applied_objects();
    tokio::spawn(async move {
        let mut stream = std::pin::pin!(stream);
        while let Some(event) = stream.next().await {
            if let Err(e) = event {
                tracing::warn!(kind = "ConfigMap", error = %e, "watch error; retrying with backoff");
            }
        }
    });
    reader
}

/// Decodes an object as its registered kind and remembers it as fresher than the watch.
struct Remember<'a>(&'a Value);

impl ForKind<Watched> for Remember<'_> {
    type Output = ();
    fn call<K: Registered>(self, store: &Reflector<K>) {
        let mut object = self.0.clone();
        kruise_core::decode::strip_managed_fields(&mut object);
        match K::decode(object) {
            Ok(object) => store.remember(object),
            Err(e) => tracing::warn!(kind = %K::kind(&()), error = %e, "cannot remember a written object"),
        }
    }
}

/// Why [`ClusterCache::read`] has no answer.
#[derive(Debug, thiserror::Error)]
pub enum ReadError {
    /// The kind is not one kruise-rs watches (its served version is unknown).
    #[error("{0} is not a kind kruise-rs watches")]
    NotWatched(String),
    #[error(transparent)]
    Api(Box<kube::Error>),
}

/// The API resource a registered kind is watched at.
struct ResourceOf;

impl ForKind<Watched> for ResourceOf {
    type Output = ApiResource;
    fn call<K: Registered>(self, _store: &Reflector<K>) -> ApiResource {
        ApiResource::erase::<K>(&())
    }
}

/// A readiness wait of one kind.
type Ready = Pin<Box<dyn Future<Output = Result<(), reflector::store::WriterDropped>> + Send>>;

/// Collects the readiness wait of every kind.
struct Readiness(Vec<Ready>);

impl EachKind<Watched> for Readiness {
    fn visit<K: Registered>(&mut self, store: &Reflector<K>) {
        let store = store.clone();
        self.0
            .push(Box::pin(async move { store.wait_until_ready().await }));
    }
}

impl ClusterCache {
    /// Starts every watch; `namespace` is kruise-rs's own (SidecarSet revisions, configuration). Objects
    /// that do not decode are counted in a counter of its own; see [`start_counting`](Self::start_counting).
    pub fn start(client: &Client, namespace: &str) -> Self {
        ClusterCache::start_counting(client, namespace, SkippedObjects::default())
    }

    /// Like [`start`](Self::start), counting skipped objects in `skipped`.
    pub fn start_counting(client: &Client, namespace: &str, skipped: SkippedObjects) -> Self {
        let mut start = Start {
            client: client.clone(),
            skipped,
        };
        ClusterCache {
            kinds: Arc::new(Kinds::new(&mut start)),
            configuration: reflect_configuration(client.clone(), namespace),
            namespace: namespace.to_string(),
            derived: Arc::default(),
            client: client.clone(),
        }
    }

    /// The pods, watched: the one pod watch of the process, whose changes trigger the controllers.
    pub fn pods(&self) -> &Reflector<kruise_api::PodRecord> {
        &self.kinds.pods
    }

    /// The client the caches watch with (status writes use it too).
    pub fn client(&self) -> &Client {
        &self.client
    }

    /// Remembers an object as the API server returned it (after a write or a re-read).
    pub fn remember(&self, object: &Value) {
        let kind = object.get("kind").and_then(Value::as_str).unwrap_or("");
        let api_version = object.get("apiVersion").and_then(Value::as_str).unwrap_or("");
        let group = api_version.rsplit_once('/').map_or("", |(g, _)| g);
        self.kinds.with_kind(group, kind, Remember(object));
    }

    /// Re-reads the target of a conflicting write into the cache.
    pub async fn refresh(&self, target: &kruise_core::WriteTarget) -> Result<(), kube::Error> {
        let resource = super::status_writes::api_resource(target);
        let api: Api<DynamicObject> = Api::namespaced_with(self.client.clone(), &target.namespace, &resource);
        let object = api.get(&target.name).await?;
        self.remember(&serde_json::to_value(object).unwrap_or_default());
        Ok(())
    }

    /// Reads one object of a registered kind from the API server, at the version the cache watches it
    /// (`None` on 404). The copy is not remembered: the caller decides with it and drops it, so it
    /// never stands in for what the watch delivers later (docs/pod-admission.md).
    pub async fn read(
        &self,
        group: &str,
        kind: &str,
        namespace: &str,
        name: &str,
    ) -> Result<Option<Value>, ReadError> {
        let resource = self
            .kinds
            .with_kind(group, kind, ResourceOf)
            .ok_or_else(|| ReadError::NotWatched(kruise_core::owner::resource_of(group, kind)))?;
        let api: Api<DynamicObject> = if namespace.is_empty() {
            Api::all_with(self.client.clone(), &resource)
        } else {
            Api::namespaced_with(self.client.clone(), namespace, &resource)
        };
        match api.get_opt(name).await {
            Ok(object) => Ok(object.map(|o| serde_json::to_value(o).unwrap_or_default())),
            Err(e) => Err(ReadError::Api(Box::new(e))),
        }
    }

    /// Resolves once every cache has listed once (optional kinds the API server does not serve aside).
    pub async fn wait_until_ready(&self) -> Result<(), reflector::store::WriterDropped> {
        let mut readiness = Readiness(Vec::new());
        self.kinds.each(&mut readiness);
        for ready in readiness.0 {
            ready.await?;
        }
        self.configuration.wait_until_ready().await
    }
}

impl ClusterView for ClusterCache {
    fn kinds(&self) -> Lookups<'_> {
        self.kinds.lookups()
    }

    fn object(&self, group: &str, kind: &str, namespace: &str, name: &str) -> Option<Arc<Value>> {
        match (group, kind) {
            ("", "ConfigMap") if namespace == self.namespace && name == CONFIGURATION => {
                let map = self.configuration.get(&ObjectRef::new(name).within(namespace))?;
                serde_json::to_value(&*map).ok().map(Arc::new)
            }
            // Other kinds without a cache are not watched.
            _ => None,
        }
    }

    fn custom_resource_count(&self, _group: &str, _kind: &str) -> Option<usize> {
        // Custom resources of arbitrary CRDs are not cached; the CRD cascading check fails closed.
        None
    }

    fn derived(&self) -> Option<&DerivedCache> {
        Some(&self.derived)
    }

    fn own_namespace(&self) -> &str {
        &self.namespace
    }
}
