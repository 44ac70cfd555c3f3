//! The in-memory object store: one global resourceVersion counter (as etcd's revision), objects by
//! group/resource/namespace/name, and a bounded event history per resource for watches.
//!
//! Objects are stored once per group/resource whatever version they were written in (as etcd
//! stores the storage version); readers rewrite `apiVersion`. The store knows nothing of API
//! semantics (finalizers, generation…): the handlers decide, the store checks resourceVersions,
//! stamps them and records events.

use std::collections::{BTreeMap, HashMap, VecDeque};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex, MutexGuard};

use serde_json::Value;
use tokio::sync::{Notify, broadcast, watch};

use crate::meta;

/// A group and plural resource: the storage key of a kind.
#[derive(Debug, Clone, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct ResKey {
    /// API group ("" for core).
    pub group: String,
    /// Plural resource.
    pub resource: String,
}

impl ResKey {
    /// A key.
    pub fn new(group: &str, resource: &str) -> Self {
        ResKey {
            group: group.into(),
            resource: resource.into(),
        }
    }
}

/// Watch event type.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum EventType {
    /// `ADDED`
    Added,
    /// `MODIFIED`
    Modified,
    /// `DELETED`
    Deleted,
}

impl EventType {
    /// The wire name.
    pub fn as_str(self) -> &'static str {
        match self {
            EventType::Added => "ADDED",
            EventType::Modified => "MODIFIED",
            EventType::Deleted => "DELETED",
        }
    }
}

/// One change of one object.
#[derive(Debug, Clone)]
pub struct Event {
    /// What happened.
    pub kind: EventType,
    /// Of which resource.
    pub key: ResKey,
    /// The resourceVersion of the change.
    pub rv: u64,
    /// The object after the change (for DELETED: the last state, with the deletion's rv).
    pub object: Value,
    /// The object before the change (MODIFIED and DELETED).
    pub old: Option<Value>,
}

/// Why the store refused a write.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum StoreError {
    /// Create of an existing object.
    #[error("already exists")]
    Exists,
    /// Update or delete of a missing object.
    #[error("not found")]
    NotFound,
    /// The expected resourceVersion is not the stored one.
    #[error("conflict")]
    Conflict,
}

/// A watch from a resourceVersion older than the retained history.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("too old resource version: {requested} ({oldest})")]
pub struct TooOld {
    /// The requested resourceVersion.
    pub requested: u64,
    /// The oldest resourceVersion a watch can start from.
    pub oldest: u64,
}

/// The start of a watch: the replayed events and the receiver of later ones.
pub type WatchStart = (Vec<Arc<Event>>, broadcast::Receiver<Arc<Event>>);

/// Stored objects are shared: listing hands out pointers, not copies.
type Objects = BTreeMap<(String, String), Arc<Value>>;

#[derive(Debug, Default)]
struct History {
    events: VecDeque<Arc<Event>>,
    /// A watch from below this resourceVersion missed evicted events.
    oldest: u64,
}

#[derive(Debug, Default)]
struct Inner {
    rv: u64,
    objects: HashMap<ResKey, Objects>,
    history: HashMap<ResKey, History>,
}

/// The store. Cheap to share behind an `Arc`.
#[derive(Debug)]
pub struct Store {
    inner: Mutex<Inner>,
    tx: broadcast::Sender<Arc<Event>>,
    history_limit: usize,
    /// Woken on every change (garbage collector, namespace controller).
    pub changed: Notify,
    /// Bumped by [`Store::expire_watches`]: open watches end.
    expired: watch::Sender<u64>,
    /// Watches refused because they started below the retained history (answered 410 `Expired`).
    too_old: AtomicU64,
}

impl Store {
    /// A store keeping `history_limit` events per resource for watches.
    pub fn new(history_limit: usize) -> Self {
        Store {
            inner: Mutex::default(),
            tx: broadcast::channel(16 * 1024).0,
            history_limit: history_limit.max(1),
            changed: Notify::new(),
            expired: watch::channel(0).0,
            too_old: AtomicU64::new(0),
        }
    }

    fn lock(&self) -> MutexGuard<'_, Inner> {
        self.inner.lock().unwrap_or_else(|e| e.into_inner())
    }

    /// The current resourceVersion.
    pub fn revision(&self) -> u64 {
        self.lock().rv
    }

    /// One object.
    pub fn get(&self, key: &ResKey, ns: &str, name: &str) -> Option<Value> {
        self.lock()
            .objects
            .get(key)
            .and_then(|o| o.get(&(ns.to_string(), name.to_string())))
            .map(|v| Value::clone(v))
    }

    /// Objects of a resource (in one namespace, or all when `ns` is `None`), sorted by namespace
    /// and name, and the current resourceVersion.
    pub fn list(&self, key: &ResKey, ns: Option<&str>) -> (Vec<Value>, u64) {
        let (items, rv) = self.list_shared(key, ns);
        (items.iter().map(|v| Value::clone(v)).collect(), rv)
    }

    /// [`Self::list`] without copying the objects: for controllers that read every object on every
    /// pass and change few.
    pub fn list_shared(&self, key: &ResKey, ns: Option<&str>) -> (Vec<Arc<Value>>, u64) {
        let inner = self.lock();
        let items = inner
            .objects
            .get(key)
            .map(|o| {
                o.iter()
                    .filter(|((n, _), _)| ns.is_none_or(|want| want == n))
                    .map(|(_, v)| v.clone())
                    .collect()
            })
            .unwrap_or_default();
        (items, inner.rv)
    }

    /// Every stored resource key.
    pub fn keys(&self) -> Vec<ResKey> {
        self.lock().objects.keys().cloned().collect()
    }

    fn record(&self, inner: &mut Inner, event: Event) {
        let event = Arc::new(event);
        let history = inner.history.entry(event.key.clone()).or_default();
        history.events.push_back(event.clone());
        while history.events.len() > self.history_limit {
            if let Some(evicted) = history.events.pop_front() {
                history.oldest = evicted.rv;
            }
        }
        // No receiver is fine: nobody watches.
        let _ = self.tx.send(event);
        self.changed.notify_waiters();
    }

    /// Stamps the next resourceVersion on `obj`, stores it and records the event (`Added` without an
    /// `old` object, `Modified` with one).
    fn store(
        &self,
        inner: &mut Inner,
        key: &ResKey,
        id: (String, String),
        mut obj: Value,
        old: Option<Value>,
    ) -> Value {
        inner.rv += 1;
        let rv = inner.rv;
        meta::metadata_mut(&mut obj).insert("resourceVersion".into(), Value::String(rv.to_string()));
        inner
            .objects
            .entry(key.clone())
            .or_default()
            .insert(id, Arc::new(obj.clone()));
        let kind = if old.is_some() {
            EventType::Modified
        } else {
            EventType::Added
        };
        let event = Event {
            kind,
            key: key.clone(),
            rv,
            object: obj.clone(),
            old,
        };
        self.record(inner, event);
        obj
    }

    /// Stores a new object, stamping its resourceVersion.
    pub fn create(&self, key: &ResKey, obj: Value) -> Result<Value, StoreError> {
        let mut inner = self.lock();
        let id = (meta::namespace(&obj).to_string(), meta::name(&obj).to_string());
        if inner.objects.get(key).is_some_and(|o| o.contains_key(&id)) {
            return Err(StoreError::Exists);
        }
        Ok(self.store(&mut inner, key, id, obj, None))
    }

    /// Replaces an object if its stored resourceVersion is `expected_rv`.
    pub fn update(&self, key: &ResKey, expected_rv: &str, obj: Value) -> Result<Value, StoreError> {
        let mut inner = self.lock();
        let id = (meta::namespace(&obj).to_string(), meta::name(&obj).to_string());
        let old = inner
            .objects
            .get(key)
            .and_then(|o| o.get(&id))
            .map(|v| Value::clone(v))
            .ok_or(StoreError::NotFound)?;
        if meta::resource_version(&old) != expected_rv {
            return Err(StoreError::Conflict);
        }
        Ok(self.store(&mut inner, key, id, obj, Some(old)))
    }

    /// Removes an object if its stored resourceVersion is `expected_rv`; returns its last state
    /// stamped with the deletion's resourceVersion.
    pub fn remove(&self, key: &ResKey, ns: &str, name: &str, expected_rv: &str) -> Result<Value, StoreError> {
        let mut inner = self.lock();
        let id = (ns.to_string(), name.to_string());
        let objects = inner.objects.get_mut(key).ok_or(StoreError::NotFound)?;
        let old = objects.get(&id).ok_or(StoreError::NotFound)?;
        if meta::resource_version(old) != expected_rv {
            return Err(StoreError::Conflict);
        }
        let old = Arc::unwrap_or_clone(objects.remove(&id).ok_or(StoreError::NotFound)?);
        inner.rv += 1;
        let rv = inner.rv;
        let mut last = old.clone();
        meta::metadata_mut(&mut last).insert("resourceVersion".into(), Value::String(rv.to_string()));
        let event = Event {
            kind: EventType::Deleted,
            key: key.clone(),
            rv,
            object: last.clone(),
            old: Some(old),
        };
        self.record(&mut inner, event);
        Ok(last)
    }

    /// Test hook, as a kube-apiserver restart: ends every open watch and forgets the event history (the
    /// restarted watch cache begins at the current resourceVersion), so a watcher resuming from an
    /// older resourceVersion is answered 410 `Expired` and has to list again.
    pub fn expire_watches(&self) {
        {
            let mut inner = self.lock();
            let now = inner.rv;
            for history in inner.history.values_mut() {
                history.events.clear();
                history.oldest = now;
            }
        }
        self.expired.send_modify(|n| *n += 1);
    }

    /// A receiver that changes when [`Store::expire_watches`] ends the open watches.
    pub fn watches_expired(&self) -> watch::Receiver<u64> {
        self.expired.subscribe()
    }

    /// How many watches were answered 410 `Expired` so far.
    pub fn too_old_watches(&self) -> u64 {
        self.too_old.load(Ordering::Relaxed)
    }

    /// Starts a watch on a resource after `from_rv`: the retained events since then, and a
    /// receiver of every later event (of all resources; the caller filters). Taken under one lock,
    /// so nothing falls between the two.
    pub fn watch(&self, key: &ResKey, from_rv: u64) -> Result<WatchStart, TooOld> {
        let inner = self.lock();
        let rx = self.tx.subscribe();
        let Some(history) = inner.history.get(key) else {
            return Ok((vec![], rx));
        };
        if from_rv < history.oldest {
            self.too_old.fetch_add(1, Ordering::Relaxed);
            return Err(TooOld {
                requested: from_rv,
                oldest: history.oldest,
            });
        }
        let replay = history
            .events
            .iter()
            .filter(|e| e.rv > from_rv)
            .cloned()
            .collect();
        Ok((replay, rx))
    }
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    fn cm(name: &str) -> Value {
        json!({"metadata": {"name": name, "namespace": "default"}})
    }

    #[test]
    fn one_counter_orders_every_write() {
        let store = Store::new(10);
        let key = ResKey::new("", "configmaps");
        let a = store.create(&key, cm("a")).unwrap();
        let b = store.create(&ResKey::new("", "secrets"), cm("b")).unwrap();
        assert_eq!(meta::resource_version(&a), "1");
        assert_eq!(meta::resource_version(&b), "2");
        assert_eq!(store.create(&key, cm("a")), Err(StoreError::Exists));
        assert_eq!(store.update(&key, "7", a.clone()), Err(StoreError::Conflict));
        let a2 = store.update(&key, "1", a).unwrap();
        assert_eq!(meta::resource_version(&a2), "3");
        let gone = store.remove(&key, "default", "a", "3").unwrap();
        assert_eq!(meta::resource_version(&gone), "4");
    }

    #[test]
    fn history_is_bounded_per_resource() {
        let store = Store::new(2);
        let key = ResKey::new("", "configmaps");
        for n in ["a", "b", "c"] {
            store.create(&key, cm(n)).unwrap();
        }
        assert_eq!(
            store.watch(&key, 0).unwrap_err(),
            TooOld {
                requested: 0,
                oldest: 1
            }
        );
        let (replay, _) = store.watch(&key, 1).unwrap();
        assert_eq!(replay.len(), 2);
    }
}
