//! One registered kind, watched: a kube-runtime reflector whose objects decode leniently, plus copies
//! fresher than the watch (objects we just wrote), and the changes it applied, told to subscribers
//! (the controllers' pod triggers: one pod watch per process).

use std::{
    collections::{HashMap, HashSet},
    sync::{
        Arc, Mutex, OnceLock, RwLock,
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
use tokio::sync::{broadcast, watch};

use super::owner_index::OwnerIndex;
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
    /// The changes the watch applied, once someone subscribed ([`Reflector::changes`]).
    changes: Arc<OnceLock<broadcast::Sender<Change<K>>>>,
    /// Turns true once the store holds the first listing. (The store's own readiness wakes only the
    /// last of several waiters; a controller's runner over the store is one of them.)
    listed: Arc<watch::Sender<bool>>,
    /// The store's decoded objects by controller, kept from the same events.
    owners: Arc<RwLock<OwnerIndex<K>>>,
}

/// A change the watch applied to the store, told to subscribers once the store shows it.
#[derive(Clone, Debug)]
pub enum Change<K> {
    Applied(Arc<K>),
    Deleted(Arc<K>),
    /// The watch listed anew (at start, or after a gap), or the subscriber fell behind: changes may
    /// have gone untold.
    Relisted,
}

/// Changes kept for subscribers that have not read them yet; one who falls further behind is told
/// [`Change::Relisted`].
const CHANGES_BUFFERED: usize = 4096;

impl<K: Kind> Change<K> {
    /// The change `event` made to the store (none for the events of a listing in progress, and for
    /// objects that do not decode).
    fn of(event: &watcher::Event<Lenient<K>>) -> Option<Change<K>> {
        match event {
            watcher::Event::Apply(object) => object.decoded().cloned().map(Change::Applied),
            watcher::Event::Delete(object) => object.decoded().cloned().map(Change::Deleted),
            watcher::Event::InitDone => Some(Change::Relisted),
            watcher::Event::Init | watcher::Event::InitApply(_) => None,
        }
    }
}

/// Fresh copies by (namespace, name).
type FreshCopies<K> = HashMap<(String, String), Arc<K>>;

impl<K: Kind> Clone for Reflector<K> {
    fn clone(&self) -> Self {
        Reflector {
            store: self.store.clone(),
            generation: self.generation.clone(),
            fresh: self.fresh.clone(),
            changes: self.changes.clone(),
            listed: self.listed.clone(),
            owners: self.owners.clone(),
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
    /// A reflector whose store is not set yet.
    fn unstarted() -> Self {
        Reflector {
            store: Arc::new(OnceLock::new()),
            generation: Arc::new(AtomicU64::new(0)),
            fresh: Arc::default(),
            changes: Arc::default(),
            listed: Arc::new(watch::channel(false).0),
            owners: Arc::default(),
        }
    }

    /// Applies a watch event to the store, then to the index by controller.
    fn apply(&self, writer: &mut reflector::store::Writer<Lenient<K>>, event: &watcher::Event<Lenient<K>>) {
        let previous = match event {
            watcher::Event::Apply(object) | watcher::Event::Delete(object) => {
                let meta = object.meta();
                let key = store_key::<K>(
                    meta.namespace.as_deref().unwrap_or_default(),
                    meta.name.as_deref().unwrap_or_default(),
                );
                self.store.get().and_then(|store| store.get(&key))
            }
            _ => None,
        };
        writer.apply_watcher_event(event);
        self.owners
            .write()
            .unwrap_or_else(|p| p.into_inner())
            .apply(event, previous.as_deref());
        self.generation.fetch_add(1, Ordering::Release);
    }

    /// Remembers a copy as the API server returned it.
    pub fn remember(&self, object: K) {
        let mut fresh = self.fresh.lock().unwrap_or_else(|p| p.into_inner());
        fresh.insert(key_of(&object), Arc::new(object));
    }

    /// The changes the watch applies from now on, each told after the store shows it.
    pub fn changes(&self) -> impl futures::Stream<Item = Change<K>> + Send + use<K> {
        let receiver = self
            .changes
            .get_or_init(|| broadcast::channel(CHANGES_BUFFERED).0)
            .subscribe();
        futures::stream::unfold(receiver, |mut receiver| async move {
            let change = match receiver.recv().await {
                Ok(change) => change,
                Err(broadcast::error::RecvError::Lagged(_)) => Change::Relisted,
                Err(broadcast::error::RecvError::Closed) => return None,
            };
            Some((change, receiver))
        })
    }

    /// The store the watch keeps (`None` for an optional kind not served).
    pub fn store(&self) -> Option<Store<Lenient<K>>> {
        self.store.get().cloned()
    }

    /// Drops the fresh copy of `object` once the watch has delivered that version or a later one, or
    /// the object's deletion.
    fn forget_fresh(&self, object: &Lenient<K>, deleted: bool) {
        let mut fresh = self.fresh.lock().unwrap_or_else(|p| p.into_inner());
        if fresh.is_empty() {
            return;
        }
        let key = key_of(object);
        if fresh
            .get(&key)
            .is_some_and(|copy| deleted || version(&**copy) <= version(object))
        {
            fresh.remove(&key);
        }
    }

    /// After a listing, drops the fresh copies the store has caught up with or no longer holds.
    fn forget_stale_fresh(&self) {
        let Some(store) = self.store.get() else {
            return;
        };
        let mut fresh = self.fresh.lock().unwrap_or_else(|p| p.into_inner());
        fresh.retain(|(namespace, name), copy| {
            store
                .get(&store_key::<K>(namespace, name))
                .is_some_and(|cached| version(&**copy) > version(&*cached))
        });
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
        if self.store.get().is_some() {
            // The sender lives as long as `self`: the wait ends only with the listing.
            let _ = self.listed.subscribe().wait_for(|listed| *listed).await;
        }
        Ok(())
    }
}

/// The store's key of an object of kind `K` (cluster-scoped kinds have no namespace).
fn store_key<K: Kind>(namespace: &str, name: &str) -> ObjectRef<Lenient<K>> {
    if K::NAMESPACED {
        ObjectRef::new(name).within(namespace)
    } else {
        ObjectRef::new(name)
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
        let cached = self
            .store
            .get()?
            .get(&store_key::<K>(namespace, name))?
            .decoded()?
            .clone();
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

    fn controlled_by(&self, namespace: &str, uid: Option<&str>) -> Vec<Arc<K>> {
        let indexed = self
            .owners
            .read()
            .unwrap_or_else(|p| p.into_inner())
            .controlled_by(namespace, uid);
        let fresh = self.fresh.lock().unwrap_or_else(|p| p.into_inner());
        if fresh.is_empty() {
            return indexed;
        }
        // A copy we wrote may have a controller the watch has not delivered yet (released, adopted).
        let controlled = |o: &Arc<K>| kruise_core::kind::controller_uid(o.meta()) == uid;
        let mut objects: Vec<Arc<K>> = indexed
            .into_iter()
            .map(|cached| self.newest(cached, &fresh))
            .filter(controlled)
            .collect();
        let listed: HashSet<(String, String)> = objects.iter().map(|o| key_of(&**o)).collect();
        for ((ns, name), copy) in fresh.iter() {
            if ns != namespace || !controlled(copy) || listed.contains(&(ns.clone(), name.clone())) {
                continue;
            }
            let cached = self
                .store
                .get()
                .and_then(|store| store.get(&store_key::<K>(ns, name)))
                .and_then(|o| o.decoded().cloned());
            // As in `list`: a copy counts only over a cached object it is newer than.
            if cached.is_some_and(|cached| version(&**copy) > version(&*cached)) {
                objects.push(copy.clone());
            }
        }
        objects
    }
}

/// Starts the watch of each registered kind.
pub struct Start {
    pub client: Client,
    pub skipped: SkippedObjects,
}

impl MakeStore<Watched> for Start {
    fn make<K: Registered>(&mut self) -> Reflector<K> {
        let reflector = Reflector::unstarted();
        let writer = reflector::store::Writer::<Lenient<K>>::default();
        if !K::OPTIONAL {
            // Readiness waits for this store from the start.
            let _ = reflector.store.set(writer.as_reader());
        }
        let task = Watch {
            client: self.client.clone(),
            skipped: self.skipped.clone(),
            reflector: reflector.clone(),
        };
        tokio::spawn(task.run(writer));
        reflector
    }
}

/// The task keeping one kind's store current.
struct Watch<K: Kind> {
    client: Client,
    skipped: SkippedObjects,
    reflector: Reflector<K>,
}

impl<K: Kind> Watch<K> {
    async fn run(self, mut writer: reflector::store::Writer<Lenient<K>>) {
        let api: Api<Lenient<K>> = Api::all(self.client.clone());
        if K::OPTIONAL {
            if !served(&api).await {
                return;
            }
            let _ = self.reflector.store.set(writer.as_reader());
        }
        let mut reported = HashSet::new();
        let skipped = self.skipped;
        let reflector = self.reflector;
        let stream = watcher(api, watcher::Config::default().any_semantic())
            .default_backoff()
            .inspect_ok(move |event| {
                if let watcher::Event::Apply(object) | watcher::Event::InitApply(object) = event {
                    report_skipped(object, &mut reported, &skipped);
                }
            });
        let mut stream = std::pin::pin!(stream);
        while let Some(event) = stream.next().await {
            let event = match event {
                Ok(event) => event,
                Err(e) => {
                    tracing::warn!(kind = %K::kind(&()), error = %e, "watch error; retrying with backoff");
                    continue;
                }
            };
            reflector.apply(&mut writer, &event);
            match &event {
                watcher::Event::Apply(object) => reflector.forget_fresh(object, false),
                watcher::Event::Delete(object) => reflector.forget_fresh(object, true),
                watcher::Event::InitDone => {
                    reflector.listed.send_replace(true);
                    reflector.forget_stale_fresh();
                }
                _ => {}
            }
            if let Some(changes) = reflector.changes.get()
                && let Some(change) = Change::of(&event)
            {
                // No subscriber left is not an error.
                let _ = changes.send(change);
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

#[cfg(test)]
mod tests {
    use kruise_api::PodRecord;
    use kube::ResourceExt;
    use serde_json::json;

    use super::*;

    fn pod(name: &str, version: &str) -> Lenient<PodRecord> {
        Lenient::decode(json!({"metadata": {"name": name, "namespace": "ns", "resourceVersion": version}}))
    }

    fn unwatched() -> Reflector<PodRecord> {
        Reflector::unstarted()
    }

    fn remembered(reflector: &Reflector<PodRecord>, name: &str, version: &str) {
        let Lenient::Decoded(copy) = pod(name, version) else {
            panic!("decodes")
        };
        reflector.remember((*copy).clone());
    }

    fn fresh_names(reflector: &Reflector<PodRecord>) -> Vec<String> {
        let mut names: Vec<String> = reflector
            .fresh
            .lock()
            .unwrap()
            .keys()
            .map(|k| k.1.clone())
            .collect();
        names.sort();
        names
    }

    #[test]
    fn a_fresh_copy_is_dropped_once_the_watch_delivers_its_version_or_the_deletion() {
        let reflector = unwatched();
        remembered(&reflector, "a", "10");
        remembered(&reflector, "b", "10");
        remembered(&reflector, "c", "10");
        reflector.forget_fresh(&pod("a", "9"), false);
        assert_eq!(
            fresh_names(&reflector),
            ["a", "b", "c"],
            "older delivery: the copy is newer"
        );
        reflector.forget_fresh(&pod("a", "10"), false);
        reflector.forget_fresh(&pod("b", "12"), false);
        reflector.forget_fresh(&pod("c", "3"), true);
        assert!(fresh_names(&reflector).is_empty());
    }

    fn owned_pod(name: &str, version: &str, owner: Option<&str>) -> Lenient<PodRecord> {
        let owners = owner.map(|uid| {
            json!([{"apiVersion": "apps.kruise.io/v1alpha1", "kind": "CloneSet", "name": "web",
                "uid": uid, "controller": true}])
        });
        Lenient::decode(
            json!({"metadata": {"name": name, "namespace": "ns", "resourceVersion": version,
            "ownerReferences": owners}}),
        )
    }

    /// Each pod as name@resourceVersion, sorted.
    fn versions(pods: &[Arc<PodRecord>]) -> Vec<String> {
        let mut names: Vec<String> = pods
            .iter()
            .map(|p| format!("{}@{}", p.name_any(), p.resource_version().unwrap_or_default()))
            .collect();
        names.sort();
        names
    }

    fn controlled(reflector: &Reflector<PodRecord>, uid: Option<&str>) -> Vec<String> {
        versions(&reflector.controlled_by("ns", uid))
    }

    #[test]
    fn objects_by_controller_follow_the_watch_and_our_newer_copies() {
        let reflector = unwatched();
        let mut writer = reflector::store::Writer::<Lenient<PodRecord>>::default();
        let _ = reflector.store.set(writer.as_reader());
        let mut watch = |event| reflector.apply(&mut writer, &event);
        watch(watcher::Event::Apply(owned_pod("a", "1", Some("u1"))));
        watch(watcher::Event::Apply(owned_pod("b", "1", None)));
        watch(watcher::Event::Apply(owned_pod("c", "1", Some("u2"))));
        assert_eq!(controlled(&reflector, Some("u1")), ["a@1"]);
        assert_eq!(controlled(&reflector, None), ["b@1"]);

        // We adopted b and released a; the watch has not delivered either yet.
        let copy = |p: Lenient<PodRecord>| (**p.decoded().unwrap()).clone();
        reflector.remember(copy(owned_pod("b", "2", Some("u1"))));
        reflector.remember(copy(owned_pod("a", "2", None)));
        assert_eq!(controlled(&reflector, Some("u1")), ["b@2"]);
        assert_eq!(controlled(&reflector, None), ["a@2"]);
        // A copy older than the cache does not count.
        reflector.remember(copy(owned_pod("c", "0", Some("u1"))));
        assert_eq!(controlled(&reflector, Some("u2")), ["c@1"]);

        // The watch catches up; a deleted pod leaves its controller.
        watch(watcher::Event::Apply(owned_pod("b", "2", Some("u1"))));
        watch(watcher::Event::Apply(owned_pod("a", "2", None)));
        watch(watcher::Event::Delete(owned_pod("c", "3", Some("u2"))));
        assert_eq!(controlled(&reflector, Some("u1")), ["b@2"]);
        assert_eq!(controlled(&reflector, None), ["a@2"]);
        assert!(controlled(&reflector, Some("u2")).is_empty());
        assert_eq!(
            controlled(&reflector, Some("u1")),
            versions(
                &Lookup::list(&reflector, Some("ns"))
                    .into_iter()
                    .filter(|p| kruise_core::kind::controller_uid(&p.metadata) == Some("u1"))
                    .collect::<Vec<_>>()
            ),
            "the index answers as a walk of the namespace does"
        );
    }

    #[test]
    fn a_change_is_told_for_applied_and_deleted_objects_and_a_finished_listing() {
        let told = |event: watcher::Event<Lenient<PodRecord>>| match Change::of(&event) {
            Some(Change::Applied(p)) => format!("applied {}", p.metadata.name.as_deref().unwrap_or("")),
            Some(Change::Deleted(p)) => format!("deleted {}", p.metadata.name.as_deref().unwrap_or("")),
            Some(Change::Relisted) => "relisted".to_string(),
            None => "nothing".to_string(),
        };
        let bad = Lenient::<PodRecord>::decode(json!({"metadata": {"name": "bad", "labels": 5}}));
        assert!(bad.decoded().is_none());
        assert_eq!(told(watcher::Event::Apply(pod("a", "1"))), "applied a");
        assert_eq!(told(watcher::Event::Delete(pod("a", "2"))), "deleted a");
        assert_eq!(told(watcher::Event::Apply(bad)), "nothing");
        assert_eq!(told(watcher::Event::Init), "nothing");
        assert_eq!(told(watcher::Event::InitApply(pod("b", "1"))), "nothing");
        assert_eq!(told(watcher::Event::InitDone), "relisted");
    }

    #[tokio::test]
    async fn a_subscriber_that_falls_behind_is_told_to_relist() {
        let reflector = unwatched();
        let changes = reflector.changes();
        let sender = reflector
            .changes
            .get()
            .expect("created by the subscription")
            .clone();
        for i in 0..=CHANGES_BUFFERED {
            let Lenient::Decoded(p) = pod(&format!("p{i}"), "1") else {
                panic!("decodes")
            };
            sender.send(Change::Applied(p)).unwrap();
        }
        let mut changes = std::pin::pin!(changes);
        assert!(matches!(changes.next().await, Some(Change::Relisted)));
        assert!(
            matches!(changes.next().await, Some(Change::Applied(p)) if p.metadata.name.as_deref() == Some("p1")),
            "then the changes still buffered"
        );
        drop(sender);
        drop(reflector);
    }
}
