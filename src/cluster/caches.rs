//! Reflector caches of what the webhooks read, shared by every handler; objects behind `Arc`.

use std::sync::Arc;

use futures::StreamExt;
use k8s_openapi::api::core::v1::{Namespace, PersistentVolumeClaim, Pod};
use kruise_webhooks::ClusterView;
use kube::{
    Api, Client, Resource,
    runtime::{
        WatchStreamExt,
        reflector::{self, ObjectRef, Store},
        watcher,
    },
};
use serde::de::DeserializeOwned;

/// The cluster state the webhooks see, kept current by watches.
#[derive(Clone)]
pub struct ClusterCache {
    namespaces: Store<Namespace>,
    pods: Store<Pod>,
    pvcs: Store<PersistentVolumeClaim>,
}

/// Starts a reflector for `K` on the runtime and returns its store. Managed fields are dropped to save
/// memory.
fn reflect<K>(api: Api<K>) -> Store<K>
where
    K: Resource<DynamicType = ()> + Clone + DeserializeOwned + std::fmt::Debug + Send + Sync + 'static,
{
    let (reader, writer) = reflector::store();
    let stream = watcher(api, watcher::Config::default().any_semantic())
        .default_backoff()
        .modify(|o: &mut K| o.meta_mut().managed_fields = None)
        .reflect(writer)
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

impl ClusterCache {
    /// Starts every watch.
    pub fn start(client: &Client) -> Self {
        ClusterCache {
            namespaces: reflect(Api::all(client.clone())),
            pods: reflect(Api::all(client.clone())),
            pvcs: reflect(Api::all(client.clone())),
        }
    }

    /// Resolves once every cache has listed once.
    pub async fn wait_until_ready(&self) -> Result<(), reflector::store::WriterDropped> {
        self.namespaces.wait_until_ready().await?;
        self.pods.wait_until_ready().await?;
        self.pvcs.wait_until_ready().await
    }
}

fn in_namespace<K: Resource<DynamicType = ()> + Clone>(store: &Store<K>, namespace: &str) -> Vec<Arc<K>> {
    store.state_filter(|o| o.meta().namespace.as_deref() == Some(namespace))
}

impl ClusterView for ClusterCache {
    fn namespace(&self, name: &str) -> Option<Arc<Namespace>> {
        self.namespaces.get(&ObjectRef::new(name))
    }

    fn pod(&self, namespace: &str, name: &str) -> Option<Arc<Pod>> {
        self.pods.get(&ObjectRef::new(name).within(namespace))
    }

    fn pods(&self, namespace: &str) -> Vec<Arc<Pod>> {
        in_namespace(&self.pods, namespace)
    }

    fn persistent_volume_claims(&self, namespace: &str) -> Vec<Arc<PersistentVolumeClaim>> {
        in_namespace(&self.pvcs, namespace)
    }

    fn custom_resource_count(&self, _group: &str, _kind: &str) -> Option<usize> {
        // Custom resources of arbitrary CRDs are not cached; the CRD cascading check fails closed.
        None
    }
}
