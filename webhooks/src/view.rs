//! The read-only view of cluster state a webhook may consult.
//!
//! Backed by files (`kruise admit`, standalone `kruise serve --objects`) through [`MemoryView`], or by
//! reflector caches in a cluster. Objects are shared behind `Arc`, never deep-copied per review.

use std::{collections::BTreeMap, sync::Arc};

use k8s_openapi::api::core::v1::{Namespace, PersistentVolumeClaim, Pod};
use serde_json::Value;

/// What webhooks may read. Every method is a cheap lookup in memory.
pub trait ClusterView {
    /// A namespace by name.
    fn namespace(&self, name: &str) -> Option<Arc<Namespace>>;
    /// A pod by namespace and name.
    fn pod(&self, namespace: &str, name: &str) -> Option<Arc<Pod>>;
    /// Every pod of a namespace.
    fn pods(&self, namespace: &str) -> Vec<Arc<Pod>>;
    /// Every PersistentVolumeClaim of a namespace.
    fn persistent_volume_claims(&self, namespace: &str) -> Vec<Arc<PersistentVolumeClaim>>;
    /// How many objects of a custom resource (`group`, `kind`) exist, or `None` when this view cannot
    /// tell (not cached).
    fn custom_resource_count(&self, group: &str, kind: &str) -> Option<usize>;
    /// Like [`custom_resource_count`](Self::custom_resource_count), but only objects without a
    /// `metadata.deletionTimestamp` (what deletion protection counts, as OpenKruise does). The default
    /// counts every object, which errs on the protective side.
    fn active_custom_resource_count(&self, group: &str, kind: &str) -> Option<usize> {
        self.custom_resource_count(group, kind)
    }
}

/// Objects of one type keyed by (namespace, name); cluster-scoped objects use an empty namespace.
#[derive(Debug)]
pub struct ObjectMap<K>(BTreeMap<(String, String), Arc<K>>);

impl<K> Default for ObjectMap<K> {
    fn default() -> Self {
        ObjectMap(BTreeMap::new())
    }
}

impl<K> Clone for ObjectMap<K> {
    fn clone(&self) -> Self {
        ObjectMap(self.0.clone())
    }
}

impl<K> ObjectMap<K> {
    /// Inserts or replaces an object.
    pub fn insert(&mut self, namespace: &str, name: &str, object: K) {
        self.0
            .insert((namespace.to_string(), name.to_string()), Arc::new(object));
    }

    /// One object.
    pub fn get(&self, namespace: &str, name: &str) -> Option<Arc<K>> {
        self.0.get(&(namespace.to_string(), name.to_string())).cloned()
    }

    /// Every object of a namespace, in name order.
    pub fn in_namespace(&self, namespace: &str) -> Vec<Arc<K>> {
        self.0
            .range((namespace.to_string(), String::new())..)
            .take_while(|((ns, _), _)| ns == namespace)
            .map(|(_, o)| o.clone())
            .collect()
    }

    /// Every object.
    pub fn all(&self) -> impl Iterator<Item = &Arc<K>> {
        self.0.values()
    }

    /// Number of objects.
    pub fn len(&self) -> usize {
        self.0.len()
    }

    /// True when empty.
    pub fn is_empty(&self) -> bool {
        self.0.is_empty()
    }
}

/// An in-memory cluster state: the view of `kruise admit` and of standalone `kruise serve`.
#[derive(Clone, Debug, Default)]
pub struct MemoryView {
    pub namespaces: ObjectMap<Namespace>,
    pub pods: ObjectMap<Pod>,
    pub persistent_volume_claims: ObjectMap<PersistentVolumeClaim>,
    /// Objects of every other kind, raw, keyed by "group/Kind" (so custom resources can be counted).
    pub others: BTreeMap<String, ObjectMap<Value>>,
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
        source: serde_json::Error,
    },
}

fn group_of(api_version: &str) -> &str {
    api_version.rsplit_once('/').map_or("", |(g, _)| g)
}

impl MemoryView {
    /// Adds one object (any kind). Known kinds are decoded into their types.
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
            .unwrap_or("");
        let namespace = namespace.to_string();
        let invalid = |source| ViewError::Invalid {
            kind: kind.clone(),
            name: name.clone(),
            source,
        };
        match (group_of(&api_version), kind.as_str()) {
            ("", "Namespace") => {
                let ns = serde_json::from_value(object).map_err(invalid)?;
                self.namespaces.insert("", &name, ns);
            }
            ("", "Pod") => {
                let pod = serde_json::from_value(object).map_err(invalid)?;
                self.pods.insert(&namespace, &name, pod);
            }
            ("", "PersistentVolumeClaim") => {
                let pvc = serde_json::from_value(object).map_err(invalid)?;
                self.persistent_volume_claims.insert(&namespace, &name, pvc);
            }
            (group, _) => {
                let key = format!("{group}/{kind}");
                self.others
                    .entry(key)
                    .or_default()
                    .insert(&namespace, &name, object);
            }
        }
        Ok(())
    }

    /// Raw objects of a kind that has no typed map.
    pub fn others_of(&self, group: &str, kind: &str) -> Option<&ObjectMap<Value>> {
        self.others.get(&format!("{group}/{kind}"))
    }
}

impl ClusterView for MemoryView {
    fn namespace(&self, name: &str) -> Option<Arc<Namespace>> {
        self.namespaces.get("", name)
    }

    fn pod(&self, namespace: &str, name: &str) -> Option<Arc<Pod>> {
        self.pods.get(namespace, name)
    }

    fn pods(&self, namespace: &str) -> Vec<Arc<Pod>> {
        self.pods.in_namespace(namespace)
    }

    fn persistent_volume_claims(&self, namespace: &str) -> Vec<Arc<PersistentVolumeClaim>> {
        self.persistent_volume_claims.in_namespace(namespace)
    }

    fn custom_resource_count(&self, group: &str, kind: &str) -> Option<usize> {
        Some(self.others_of(group, kind).map_or(0, ObjectMap::len))
    }

    fn active_custom_resource_count(&self, group: &str, kind: &str) -> Option<usize> {
        let terminating = |o: &Value| {
            o.pointer("/metadata/deletionTimestamp")
                .is_some_and(|t| !t.is_null())
        };
        Some(
            self.others_of(group, kind)
                .map_or(0, |m| m.all().filter(|o| !terminating(o)).count()),
        )
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn typed_and_raw_objects_are_indexed() {
        let mut view = MemoryView::default();
        view.add(json!({"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": "a"}}))
            .unwrap();
        for (ns, name) in [("a", "p1"), ("a", "p2"), ("ab", "p3")] {
            view.add(json!({"apiVersion": "v1", "kind": "Pod", "metadata": {"name": name, "namespace": ns}}))
                .unwrap();
        }
        view.add(json!({"apiVersion": "example.com/v1", "kind": "Foo", "metadata": {"name": "f"}}))
            .unwrap();
        assert!(view.namespace("a").is_some());
        assert_eq!(view.pods("a").len(), 2);
        assert_eq!(view.pods("ab").len(), 1);
        assert_eq!(view.custom_resource_count("example.com", "Foo"), Some(1));
        assert_eq!(view.custom_resource_count("example.com", "Bar"), Some(0));
    }

    #[test]
    fn invalid_objects_are_named_in_the_error() {
        let mut view = MemoryView::default();
        let err = view
            .add(json!({"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "p"}, "spec": {"containers": 3}}))
            .unwrap_err();
        assert!(err.to_string().starts_with("Pod p is not a valid Pod"), "{err}");
        assert!(matches!(
            view.add(json!({"kind": "Pod"})),
            Err(ViewError::MissingName { .. })
        ));
    }
}
