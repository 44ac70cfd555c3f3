//! One registered kind, watched: a kube-runtime reflector whose objects decode leniently, plus copies
//! fresher than the watch (objects we just wrote).

use std::{
    collections::{HashMap, HashSet},
    sync::{
        Arc, Mutex, OnceLock,
        atomic::{AtomicU64, Ordering},
    },
    time::Duration,
};

use futures::{StreamExt, TryStreamExt};
use kruise_core::{
    Lenient, Lookup,
    kinds::{Backend, Kind, MakeStore, Registered},
};
use kube::{
    Api, Client, Resource,
    api::ListParams,
    runtime::{
        WatchStreamExt,
        reflector::{self, ObjectRef, Store},
        watcher,
    },
};

use crate::server::metrics::{KindLabels, SkippedObjects};

/// The cluster cache's backend: a [`Reflector`] per kind.
pub struct Watched;

impl Backend for Watched {
    type Store<K: Kind> = Reflector<K>;
}

/// The watched objects of kind `K`.
pub struct Reflector<K: Kind> {
    /// Set once the watch started (optional kinds: once the API server is found to serve them).
    store: Arc<OnceLock<Store<Lenient<K>>>>,
    /// Bumped after every watch event has reached the store.
    generation: Arc<AtomicU64>,
    /// Copies newer than the watch has delivered yet: objects we just wrote, or re-read after a
    /// conflict. A copy is used only while its resourceVersion is ahead of the cached one (OpenKruise
    /// likewise takes the newest of its own cache and the informer's).
    fresh: Arc<Mutex<FreshCopies<K>>>,
}

/// Fresh copies by (namespace, name).
type FreshCopies<K> = HashMap<(String, String), Arc<K>>;

impl<K: Kind> Clone for Reflector<K> {
    fn clone(&self) -> Self {
        Reflector {
            store: self.store.clone(),
            generation: self.generation.clone(),
            fresh: self.fresh.clone(),
        }
    }
}

fn key_of<K: Resource>(object: &K) -> (String, String) {
    (
        object.meta().namespace.clone().unwrap_or_default(),
        object.meta().name.clone().unwrap_or_default(),
    )
}

impl<K: Kind> Reflector<K> {
    /// Remembers a copy as the API server returned it.
    pub fn remember(&self, object: K) {
        let mut fresh = self.fresh.lock().unwrap_or_else(|p| p.into_inner());
        fresh.insert(key_of(&object), Arc::new(object));
    }

    /// `cached`, or its fresh copy when that is newer.
    fn newest(&self, cached: Arc<K>, fresh: &HashMap<(String, String), Arc<K>>) -> Arc<K> {
        match fresh.get(&key_of(&*cached)) {
            Some(copy) if version(&**copy) > version(&*cached) => copy.clone(),
            _ => cached,
        }
    }

    /// Resolves once the first list has reached the store; optional kinds not served are ready.
    pub async fn wait_until_ready(&self) -> Result<(), reflector::store::WriterDropped> {
        match self.store.get() {
            Some(store) => store.wait_until_ready().await,
            None => Ok(()),
        }
    }
}

fn version<K: Resource>(object: &K) -> u64 {
    object
        .meta()
        .resource_version
        .as_deref()
        .and_then(|v| v.parse().ok())
        .unwrap_or(0)
}

impl<K: Kind> Lookup<K> for Reflector<K> {
    fn get(&self, namespace: &str, name: &str) -> Option<Arc<K>> {
        let key = if K::NAMESPACED {
            ObjectRef::new(name).within(namespace)
        } else {
            ObjectRef::new(name)
        };
        let cached = self.store.get()?.get(&key)?.decoded()?.clone();
        let fresh = self.fresh.lock().unwrap_or_else(|p| p.into_inner());
        Some(self.newest(cached, &fresh))
    }

    fn list(&self, namespace: Option<&str>) -> Vec<Arc<K>> {
        let Some(store) = self.store.get() else {
            return Vec::new();
        };
        let listed = match namespace {
            Some(namespace) => store.state_filter(|o| o.meta().namespace.as_deref() == Some(namespace)),
            None => store.state(),
        };
        let decoded = listed.iter().filter_map(|o| o.decoded().cloned());
        let fresh = self.fresh.lock().unwrap_or_else(|p| p.into_inner());
        if fresh.is_empty() {
            return decoded.collect();
        }
        decoded.map(|cached| self.newest(cached, &fresh)).collect()
    }

    fn generation(&self) -> u64 {
        self.generation.load(Ordering::Acquire)
    }
}

/// Starts the watch of each registered kind.
pub struct Start {
    pub client: Client,
    pub skipped: SkippedObjects,
}

impl MakeStore<Watched> for Start {
    fn make<K: Registered>(&mut self) -> Reflector<K> {
        let reflector = Reflector {
            store: Arc::new(OnceLock::new()),
            generation: Arc::new(AtomicU64::new(0)),
            fresh: Arc::default(),
        };
        let writer = reflector::store::Writer::<Lenient<K>>::default();
        if !K::OPTIONAL {
            // Readiness waits for this store from the start.
            let _ = reflector.store.set(writer.as_reader());
        }
        let task = Watch {
            client: self.client.clone(),
            skipped: self.skipped.clone(),
            store: reflector.store.clone(),
            generation: reflector.generation.clone(),
        };
        tokio::spawn(task.run(writer));
        reflector
    }
}

/// The task keeping one kind's store current.
struct Watch<K: Kind> {
    client: Client,
    skipped: SkippedObjects,
    store: Arc<OnceLock<Store<Lenient<K>>>>,
    generation: Arc<AtomicU64>,
}

impl<K: Kind> Watch<K> {
    async fn run(self, writer: reflector::store::Writer<Lenient<K>>) {
        let api: Api<Lenient<K>> = Api::all(self.client.clone());
        if K::OPTIONAL {
            if !served(&api).await {
                return;
            }
            let _ = self.store.set(writer.as_reader());
        }
        let mut reported = HashSet::new();
        let skipped = self.skipped;
        let generation = self.generation;
        let stream = watcher(api, watcher::Config::default().any_semantic())
            .default_backoff()
            .inspect_ok(move |event| {
                if let watcher::Event::Apply(object) | watcher::Event::InitApply(object) = event {
                    report_skipped(object, &mut reported, &skipped);
                }
            })
            .reflect(writer)
            .inspect(move |_| {
                generation.fetch_add(1, Ordering::Release);
            });
        let mut stream = std::pin::pin!(stream);
        while let Some(event) = stream.next().await {
            if let Err(e) = event {
                tracing::warn!(kind = %K::kind(&()), error = %e, "watch error; retrying with backoff");
            }
        }
    }
}

/// Logs and counts an object that does not decode, once per object and resourceVersion.
fn report_skipped<K: Kind>(
    object: &Lenient<K>,
    reported: &mut HashSet<(String, String, String)>,
    skipped: &SkippedObjects,
) {
    let Lenient::Skipped(skip) = object else {
        return;
    };
    let (meta, error) = &**skip;
    let namespace = meta.namespace.clone().unwrap_or_default();
    let name = meta.name.clone().unwrap_or_default();
    let version = meta.resource_version.clone().unwrap_or_default();
    if !reported.insert((namespace.clone(), name.clone(), version)) {
        return;
    }
    let kind = K::kind(&()).to_string();
    tracing::warn!(
        %kind, %namespace, %name, path = error.path.as_deref().unwrap_or("."), error = %error.message,
        "object does not decode as its kind; skipped"
    );
    skipped.get_or_create(&KindLabels { kind }).inc();
}

/// Whether the API server serves `api`'s resource: probes with a one-item list (retrying transient
/// errors with backoff); a 404 means the CRD is not installed, which is logged once.
async fn served<K: Kind>(api: &Api<Lenient<K>>) -> bool {
    let mut delay = Duration::from_millis(500);
    loop {
        match api.list_metadata(&ListParams::default().limit(1)).await {
            Ok(_) => return true,
            Err(kube::Error::Api(e)) if e.code == 404 => {
                tracing::info!(
                    resource = %K::plural(&()), group = %K::group(&()),
                    "not served by the API server; not watched"
                );
                return false;
            }
            Err(e) => {
                tracing::warn!(resource = %K::plural(&()), error = %e, "probe failed; retrying");
                tokio::time::sleep(delay).await;
                delay = (delay * 2).min(Duration::from_secs(30));
            }
        }
    }
}
