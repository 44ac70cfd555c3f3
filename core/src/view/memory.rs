//! [`MemoryView`]: cluster state held in memory, the view of `kruise admit` and standalone `kruise serve`.

use std::{collections::BTreeMap, sync::Arc};

use k8s_openapi::jiff::Timestamp;
use kruise_api::{apps_v1beta1::WorkloadSpread, policy_v1beta1::PodUnavailableBudget};
use serde_json::Value;

use super::{
    ClusterView, DerivedCache, Lookup, Lookups,
    status::{
        StatusChange, StatusWrite, WriteError, next_resource_version, replace_status, replace_typed_status,
    },
};
use crate::{
    decode::{self, DecodeError},
    kinds::{Backend, ForKind, ForKindMut, Kind, Kinds, Registered},
    pub_protection::{expire_spends, has_expired_spends},
    workload_spread::{expire_records, has_expired_records},
};

/// Objects of one type keyed by (namespace, name); cluster-scoped objects use an empty namespace.
#[derive(Debug)]
pub struct ObjectMap<K> {
    objects: BTreeMap<(String, String), Arc<K>>,
    /// Bumped by every change.
    generation: u64,
}

impl<K> Default for ObjectMap<K> {
    fn default() -> Self {
        ObjectMap {
            objects: BTreeMap::new(),
            generation: 0,
        }
    }
}

impl<K> Clone for ObjectMap<K> {
    fn clone(&self) -> Self {
        ObjectMap {
            objects: self.objects.clone(),
            generation: self.generation,
        }
    }
}

impl<K> ObjectMap<K> {
    /// Inserts or replaces an object.
    pub fn insert(&mut self, namespace: &str, name: &str, object: K) {
        self.objects
            .insert((namespace.to_string(), name.to_string()), Arc::new(object));
        self.generation += 1;
    }

    /// Changes one object in place (copied first only when a reader still holds it); `None` when absent.
    pub fn update<R>(&mut self, namespace: &str, name: &str, change: impl FnOnce(&mut K) -> R) -> Option<R>
    where
        K: Clone,
    {
        let object = self.objects.get_mut(&(namespace.to_string(), name.to_string()))?;
        self.generation += 1;
        Some(change(Arc::make_mut(object)))
    }

    /// Removes an object.
    pub fn remove(&mut self, namespace: &str, name: &str) -> Option<Arc<K>> {
        self.generation += 1;
        self.objects.remove(&(namespace.to_string(), name.to_string()))
    }

    /// One object.
    pub fn get(&self, namespace: &str, name: &str) -> Option<Arc<K>> {
        self.objects
            .get(&(namespace.to_string(), name.to_string()))
            .cloned()
    }

    /// Every object of a namespace, in name order.
    pub fn in_namespace(&self, namespace: &str) -> Vec<Arc<K>> {
        self.objects
            .range((namespace.to_string(), String::new())..)
            .take_while(|((ns, _), _)| ns == namespace)
            .map(|(_, o)| o.clone())
            .collect()
    }

    /// Every object.
    pub fn all(&self) -> impl Iterator<Item = &Arc<K>> {
        self.objects.values()
    }

    /// Number of objects.
    pub fn len(&self) -> usize {
        self.objects.len()
    }

    /// True when empty.
    pub fn is_empty(&self) -> bool {
        self.objects.is_empty()
    }
}

impl<K: Send + Sync> Lookup<K> for ObjectMap<K> {
    fn get(&self, namespace: &str, name: &str) -> Option<Arc<K>> {
        ObjectMap::get(self, namespace, name)
    }
    fn list(&self, namespace: Option<&str>) -> Vec<Arc<K>> {
        match namespace {
            Some(namespace) => self.in_namespace(namespace),
            None => self.all().cloned().collect(),
        }
    }
    fn generation(&self) -> u64 {
        self.generation
    }
}

/// The in-memory backend: an [`ObjectMap`] per kind.
#[derive(Debug)]
pub struct InMemory;

impl Backend for InMemory {
    type Store<K: Kind> = ObjectMap<K>;
}

/// An in-memory cluster state: the view of `kruise admit` and of standalone `kruise serve`.
#[derive(Clone, Debug)]
pub struct MemoryView {
    /// The objects of every registered kind.
    pub kinds: Kinds<InMemory>,
    /// Objects of every other kind, raw, keyed by "group/Kind" (so custom resources can be counted).
    pub others: BTreeMap<String, ObjectMap<Value>>,
    /// Where SidecarSet revisions are looked up.
    pub own_namespace: String,
    derived: DerivedCache,
}

/// The namespace OpenKruise is installed in by default.
pub const DEFAULT_NAMESPACE: &str = "kruise-system";

impl Default for MemoryView {
    fn default() -> Self {
        MemoryView {
            kinds: Kinds::default(),
            others: BTreeMap::new(),
            own_namespace: DEFAULT_NAMESPACE.to_string(),
            derived: DerivedCache::default(),
        }
    }
}

/// Why an object could not be added to a [`MemoryView`].
#[derive(Debug, thiserror::Error)]
pub enum ViewError {
    #[error("object has no kind")]
    MissingKind,
    #[error("{kind} has no metadata.name")]
    MissingName { kind: String },
    #[error("{kind} {name} is not a valid {kind}: {source}")]
    Invalid {
        kind: String,
        name: String,
        #[source]
        source: DecodeError,
    },
}

fn group_of(api_version: &str) -> &str {
    api_version.rsplit_once('/').map_or("", |(g, _)| g)
}

/// Decodes an object as its registered kind and stores it.
struct Add<'a> {
    object: Value,
    namespace: &'a str,
    name: &'a str,
}

impl ForKindMut<InMemory> for Add<'_> {
    type Output = Result<(), DecodeError>;
    fn call<K: Registered>(self, store: &mut ObjectMap<K>) -> Self::Output {
        let mut object = self.object;
        decode::strip_managed_fields(&mut object);
        let namespace = if K::NAMESPACED { self.namespace } else { "" };
        store.insert(namespace, self.name, K::decode(object)?);
        Ok(())
    }
}

/// Counts the objects of a registered kind (only those not being deleted, when `active_only`).
struct Count {
    active_only: bool,
}

impl ForKind<InMemory> for Count {
    type Output = usize;
    fn call<K: Registered>(self, store: &ObjectMap<K>) -> usize {
        let counted = |o: &&Arc<K>| !self.active_only || o.meta().deletion_timestamp.is_none();
        store.all().filter(counted).count()
    }
}

/// Replaces the status of an object of a registered kind.
struct ApplyStatus<'a>(&'a StatusWrite, &'a Value);

impl ForKindMut<InMemory> for ApplyStatus<'_> {
    type Output = Result<(), WriteError>;
    fn call<K: Registered>(self, store: &mut ObjectMap<K>) -> Self::Output {
        let (write, t) = (self.0, &self.0.target);
        if !K::HAS_STATUS {
            return Err(WriteError::NoStatus { kind: t.kind.clone() });
        }
        let namespace = if K::NAMESPACED { t.namespace.as_str() } else { "" };
        let current = store
            .get(namespace, &t.name)
            .ok_or_else(|| WriteError::not_found(write))?;
        let updated = replace_typed_status(&*current, write, self.1)?;
        store.insert(namespace, &t.name, updated);
        Ok(())
    }
}

/// Runs `expire` on every object `due` selects, bumping its resourceVersion; the sum of what it returns.
fn expire_in<K: Registered>(
    store: &mut ObjectMap<K>,
    due: impl Fn(&K) -> bool,
    expire: impl Fn(&mut K) -> usize,
) -> usize {
    let keys: Vec<(String, String)> = store
        .all()
        .filter(|o| due(o))
        .map(|o| {
            let meta = o.meta();
            (
                meta.namespace.clone().unwrap_or_default(),
                meta.name.clone().unwrap_or_default(),
            )
        })
        .collect();
    let mut dropped = 0;
    for (namespace, name) in keys {
        dropped += store
            .update(&namespace, &name, |object| {
                let meta = object.meta_mut();
                let next = next_resource_version(meta.resource_version.as_deref().unwrap_or(""));
                meta.resource_version = Some(next);
                expire(object)
            })
            .unwrap_or(0);
    }
    dropped
}

/// Changes the stored `K` named by `write` in place, as the apiserver would: it must still be at the
/// write's resourceVersion, which is then bumped.
fn change_in_place<K: Registered>(
    store: &mut ObjectMap<K>,
    write: &StatusWrite,
    change: impl FnOnce(&mut K),
) -> Result<(), WriteError> {
    let t = &write.target;
    let namespace = if K::NAMESPACED { t.namespace.as_str() } else { "" };
    store
        .update(namespace, &t.name, |object| {
            let meta = object.meta_mut();
            write.check_version(meta.resource_version.as_deref().unwrap_or(""))?;
            meta.resource_version = Some(next_resource_version(
                meta.resource_version.as_deref().unwrap_or(""),
            ));
            change(object);
            Ok(())
        })
        .unwrap_or_else(|| Err(WriteError::not_found(write)))
}

impl MemoryView {
    /// Adds one object (any kind). Registered kinds are decoded into their types (older versions
    /// converted); any other kind is kept raw.
    pub fn add(&mut self, object: Value) -> Result<(), ViewError> {
        let kind = object
            .get("kind")
            .and_then(Value::as_str)
            .ok_or(ViewError::MissingKind)?
            .to_string();
        let api_version = object
            .get("apiVersion")
            .and_then(Value::as_str)
            .unwrap_or("")
            .to_string();
        let meta = object.get("metadata");
        let name = meta
            .and_then(|m| m.get("name"))
            .and_then(Value::as_str)
            .ok_or_else(|| ViewError::MissingName { kind: kind.clone() })?
            .to_string();
        let namespace = meta
            .and_then(|m| m.get("namespace"))
            .and_then(Value::as_str)
            .unwrap_or("")
            .to_string();
        let group = group_of(&api_version);
        let add = Add {
            object,
            namespace: &namespace,
            name: &name,
        };
        // `with_kind_mut` consumes `add` only when the kind is registered; keep the object otherwise.
        if crate::kinds::registered(group, &kind) {
            return self
                .kinds
                .with_kind_mut(group, &kind, add)
                .unwrap_or(Ok(()))
                .map_err(|source| ViewError::Invalid { kind, name, source });
        }
        self.others
            .entry(format!("{group}/{kind}"))
            .or_default()
            .insert(&namespace, &name, add.object);
        Ok(())
    }

    /// Applies a status write as the apiserver would: the stored object must still be at the write's
    /// resourceVersion (else [`WriteError::Conflict`]); its `.status` is replaced and its resourceVersion
    /// bumped.
    pub fn apply_status(&mut self, write: &StatusWrite) -> Result<(), WriteError> {
        let status = match &write.change {
            StatusChange::Replace(status) => status,
            StatusChange::SpendBudget(spend) => {
                let store = PodUnavailableBudget::store_mut(&mut self.kinds);
                return change_in_place(store, write, |budget: &mut PodUnavailableBudget| {
                    spend.apply(budget.status.get_or_insert_with(Default::default))
                });
            }
            StatusChange::RecordInSubset(record) => {
                let store = WorkloadSpread::store_mut(&mut self.kinds);
                return change_in_place(store, write, |spread: &mut WorkloadSpread| {
                    record.apply(spread.status.get_or_insert_with(Default::default))
                });
            }
        };
        let t = &write.target;
        let group = group_of(&t.api_version);
        if let Some(result) = self
            .kinds
            .with_kind_mut(group, &t.kind, ApplyStatus(write, status))
        {
            return result;
        }
        let map = self
            .others
            .get_mut(&format!("{group}/{}", t.kind))
            .ok_or_else(|| WriteError::not_found(write))?;
        let current = map
            .get(&t.namespace, &t.name)
            .ok_or_else(|| WriteError::not_found(write))?;
        let updated = replace_status((*current).clone(), write, status)?;
        map.insert(&t.namespace, &t.name, updated);
        Ok(())
    }

    /// Drops the WorkloadSpread and PodUnavailableBudget records admission made that are past their
    /// timeouts, giving back what they took ([`expire_records`], [`expire_spends`]): the controllers do
    /// this in a cluster; standalone `kruise serve` calls it periodically. Returns how many it dropped.
    pub fn expire_admission_records(&mut self, now: Timestamp) -> usize {
        let spreads = WorkloadSpread::store_mut(&mut self.kinds);
        let mut dropped = expire_in(
            spreads,
            |ws| ws.status.as_ref().is_some_and(|s| has_expired_records(s, now)),
            |ws| expire_records(ws.status.get_or_insert_with(Default::default), now),
        );
        let budgets = PodUnavailableBudget::store_mut(&mut self.kinds);
        dropped += expire_in(
            budgets,
            |b| b.status.as_ref().is_some_and(|s| has_expired_spends(s, now)),
            |b| expire_spends(b.status.get_or_insert_with(Default::default), now),
        );
        dropped
    }

    /// Raw objects of a kind that is not registered.
    pub fn others_of(&self, group: &str, kind: &str) -> Option<&ObjectMap<Value>> {
        self.others.get(&format!("{group}/{kind}"))
    }
}

impl ClusterView for MemoryView {
    fn kinds(&self) -> Lookups<'_> {
        self.kinds.lookups()
    }

    fn object(&self, group: &str, kind: &str, namespace: &str, name: &str) -> Option<Arc<Value>> {
        self.others_of(group, kind)?.get(namespace, name)
    }

    fn custom_resource_count(&self, group: &str, kind: &str) -> Option<usize> {
        if let Some(count) = self.kinds.with_kind(group, kind, Count { active_only: false }) {
            return Some(count);
        }
        Some(self.others_of(group, kind).map_or(0, ObjectMap::len))
    }

    fn active_custom_resource_count(&self, group: &str, kind: &str) -> Option<usize> {
        if let Some(count) = self.kinds.with_kind(group, kind, Count { active_only: true }) {
            return Some(count);
        }
        let terminating = |o: &Value| {
            o.pointer("/metadata/deletionTimestamp")
                .is_some_and(|t| !t.is_null())
        };
        Some(
            self.others_of(group, kind)
                .map_or(0, |m| m.all().filter(|o| !terminating(o)).count()),
        )
    }

    fn derived(&self) -> Option<&DerivedCache> {
        Some(&self.derived)
    }

    fn own_namespace(&self) -> &str {
        &self.own_namespace
    }
}
