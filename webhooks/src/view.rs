//! The read-only view of cluster state a webhook may consult.
//!
//! Backed by files (`kruise admit`, standalone `kruise serve --objects`) through [`MemoryView`], or by
//! reflector caches in a cluster. Objects are shared behind `Arc`, never deep-copied per review.

use std::{
    collections::BTreeMap,
    sync::{Arc, OnceLock},
};

use k8s_openapi::api::{
    apps::v1::{ControllerRevision, Deployment, ReplicaSet, StatefulSet},
    batch::v1::Job,
    core::v1::{Namespace, Node, PersistentVolumeClaim},
};
use kruise_api::{
    PodRecord,
    apps_v1beta1::{CloneSet, SidecarSet, WorkloadSpread},
    policy_v1beta1::PodUnavailableBudget,
};
use serde_json::Value;

use crate::{StatusWrite, pod_mutate::sidecarset::SidecarSetIndex};

/// What webhooks may read. Every method is a cheap lookup in memory.
pub trait ClusterView {
    /// A namespace by name.
    fn namespace(&self, name: &str) -> Option<Arc<Namespace>>;
    /// A pod by namespace and name.
    fn pod(&self, namespace: &str, name: &str) -> Option<Arc<PodRecord>>;
    /// Every pod of a namespace.
    fn pods(&self, namespace: &str) -> Vec<Arc<PodRecord>>;
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
    // The accessors below default to an empty cluster, so small test views need not spell them out;
    // `MemoryView` and the binary's cluster cache implement every one.
    /// Every SidecarSet (cluster-scoped), as `v1beta1`.
    fn sidecar_sets(&self) -> Vec<Arc<SidecarSet>> {
        Vec::new()
    }
    /// The SidecarSets prepared and indexed for pod injection (selectors parsed, hashes read, sidecars
    /// pre-serialised). The default builds it from [`sidecar_sets`](Self::sidecar_sets) on every call:
    /// correct, but linear in the SidecarSets for every pod. Views that answer many reviews keep one and
    /// rebuild it (`SidecarSetIndex::build_in`) whenever a SidecarSet is added, changed or deleted.
    fn sidecar_set_index(&self) -> Arc<SidecarSetIndex> {
        Arc::new(SidecarSetIndex::build(self.sidecar_sets()))
    }
    /// The PodUnavailableBudgets of a namespace, as `v1beta1`.
    fn pod_unavailable_budgets(&self, _namespace: &str) -> Vec<Arc<PodUnavailableBudget>> {
        Vec::new()
    }
    /// The WorkloadSpreads of a namespace, as `v1beta1`.
    fn workload_spreads(&self, _namespace: &str) -> Vec<Arc<WorkloadSpread>> {
        Vec::new()
    }
    /// The ControllerRevisions of a namespace (SidecarSet revisions live in kruise-rs's namespace).
    fn controller_revisions(&self, _namespace: &str) -> Vec<Arc<ControllerRevision>> {
        Vec::new()
    }
    /// A CloneSet, as `v1beta1`.
    fn clone_set(&self, _namespace: &str, _name: &str) -> Option<Arc<CloneSet>> {
        None
    }
    /// A Deployment.
    fn deployment(&self, _namespace: &str, _name: &str) -> Option<Arc<Deployment>> {
        None
    }
    /// A ReplicaSet.
    fn replica_set(&self, _namespace: &str, _name: &str) -> Option<Arc<ReplicaSet>> {
        None
    }
    /// A StatefulSet (`apps/v1`).
    fn stateful_set(&self, _namespace: &str, _name: &str) -> Option<Arc<StatefulSet>> {
        None
    }
    /// A Job.
    fn job(&self, _namespace: &str, _name: &str) -> Option<Arc<Job>> {
        None
    }
    /// An object of a kind without a typed accessor (e.g. an Advanced StatefulSet), raw.
    fn object(&self, _group: &str, _kind: &str, _namespace: &str, _name: &str) -> Option<Arc<Value>> {
        None
    }
    /// A node by name (labels and taints: the WorkloadSpread controller adopts pods by their node).
    fn node(&self, _name: &str) -> Option<Arc<Node>> {
        None
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

/// The SidecarSet index of a [`MemoryView`], built on first use after a change.
#[derive(Clone, Default)]
struct SidecarSetIndexCache(OnceLock<Arc<SidecarSetIndex>>);

impl std::fmt::Debug for SidecarSetIndexCache {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self.0.get() {
            Some(index) => write!(f, "SidecarSetIndex({} SidecarSets)", index.len()),
            None => f.write_str("SidecarSetIndex(not built)"),
        }
    }
}

/// An in-memory cluster state: the view of `kruise admit` and of standalone `kruise serve`.
#[derive(Clone, Debug, Default)]
pub struct MemoryView {
    pub namespaces: ObjectMap<Namespace>,
    pub pods: ObjectMap<PodRecord>,
    pub persistent_volume_claims: ObjectMap<PersistentVolumeClaim>,
    /// After changing this map directly (rather than through [`add`](Self::add) or
    /// [`apply_status`](Self::apply_status)), call [`invalidate_sidecar_set_index`](Self::invalidate_sidecar_set_index).
    pub sidecar_sets: ObjectMap<SidecarSet>,
    pub pod_unavailable_budgets: ObjectMap<PodUnavailableBudget>,
    pub workload_spreads: ObjectMap<WorkloadSpread>,
    pub controller_revisions: ObjectMap<ControllerRevision>,
    pub clone_sets: ObjectMap<CloneSet>,
    pub deployments: ObjectMap<Deployment>,
    pub replica_sets: ObjectMap<ReplicaSet>,
    pub stateful_sets: ObjectMap<StatefulSet>,
    pub jobs: ObjectMap<Job>,
    pub nodes: ObjectMap<Node>,
    /// Objects of every other kind, raw, keyed by "group/Kind" (so custom resources can be counted).
    pub others: BTreeMap<String, ObjectMap<Value>>,
    sidecar_set_index: SidecarSetIndexCache,
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
    #[error("{kind} {name}: {source}")]
    Kruise {
        kind: String,
        name: String,
        #[source]
        source: kruise_api::ConversionError,
    },
}

/// Why a status write could not be applied to a [`MemoryView`].
#[derive(Debug, thiserror::Error, PartialEq, Eq)]
pub enum WriteError {
    #[error("{kind} {namespace}/{name} not found")]
    NotFound {
        kind: String,
        namespace: String,
        name: String,
    },
    #[error("{kind} {namespace}/{name} changed since it was read (resourceVersion {expected} != {actual})")]
    Conflict {
        kind: String,
        namespace: String,
        name: String,
        expected: String,
        actual: String,
    },
    #[error("{kind} {namespace}/{name}: the new status is not valid: {message}")]
    Invalid {
        kind: String,
        namespace: String,
        name: String,
        message: String,
    },
}

impl WriteError {
    fn not_found(write: &StatusWrite) -> Self {
        let t = &write.target;
        WriteError::NotFound {
            kind: t.kind.clone(),
            namespace: t.namespace.clone(),
            name: t.name.clone(),
        }
    }
}

/// Replaces `.status` of the stored object through its JSON form (so one function serves every type).
fn replace_status<K>(map: &mut ObjectMap<K>, write: &StatusWrite) -> Result<(), WriteError>
where
    K: serde::Serialize + serde::de::DeserializeOwned,
{
    let t = &write.target;
    let current = map
        .get(&t.namespace, &t.name)
        .ok_or_else(|| WriteError::not_found(write))?;
    let invalid = |e: serde_json::Error| WriteError::Invalid {
        kind: t.kind.clone(),
        namespace: t.namespace.clone(),
        name: t.name.clone(),
        message: e.to_string(),
    };
    let mut value = serde_json::to_value(&*current).map_err(invalid)?;
    let actual = value
        .pointer("/metadata/resourceVersion")
        .and_then(Value::as_str)
        .unwrap_or("")
        .to_string();
    if let Some(expected) = write.resource_version.as_ref().filter(|e| **e != actual) {
        return Err(WriteError::Conflict {
            kind: t.kind.clone(),
            namespace: t.namespace.clone(),
            name: t.name.clone(),
            expected: expected.clone(),
            actual,
        });
    }
    let next = actual.parse::<u64>().map_or(1, |v| v + 1);
    value["status"] = write.status.clone();
    if let Some(meta) = value.get_mut("metadata").and_then(Value::as_object_mut) {
        meta.insert("resourceVersion".into(), Value::String(next.to_string()));
    }
    let updated: K = serde_json::from_value(value).map_err(invalid)?;
    map.insert(&t.namespace, &t.name, updated);
    Ok(())
}

fn decode<K: serde::de::DeserializeOwned>(object: Value) -> Result<K, serde_json::Error> {
    serde_json::from_value(object)
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
        let kruise = |source| ViewError::Kruise {
            kind: kind.clone(),
            name: name.clone(),
            source,
        };
        let (ns, n) = (namespace.as_str(), name.as_str());
        match (group_of(&api_version), kind.as_str()) {
            ("", "Namespace") => self.namespaces.insert("", n, decode(object).map_err(invalid)?),
            ("", "Node") => self.nodes.insert("", n, decode(object).map_err(invalid)?),
            ("", "Pod") => self.pods.insert(ns, n, decode(object).map_err(invalid)?),
            ("", "PersistentVolumeClaim") => {
                self.persistent_volume_claims
                    .insert(ns, n, decode(object).map_err(invalid)?)
            }
            ("apps", "ControllerRevision") => {
                self.controller_revisions
                    .insert(ns, n, decode(object).map_err(invalid)?)
            }
            ("apps", "Deployment") => self.deployments.insert(ns, n, decode(object).map_err(invalid)?),
            ("apps", "ReplicaSet") => self.replica_sets.insert(ns, n, decode(object).map_err(invalid)?),
            ("apps", "StatefulSet") => self.stateful_sets.insert(ns, n, decode(object).map_err(invalid)?),
            ("batch", "Job") => self.jobs.insert(ns, n, decode(object).map_err(invalid)?),
            ("apps.kruise.io", "SidecarSet") => {
                self.sidecar_sets
                    .insert("", n, kruise_api::sidecarset_to_v1beta1(&object).map_err(kruise)?);
                self.invalidate_sidecar_set_index();
            }
            ("apps.kruise.io", "WorkloadSpread") => self.workload_spreads.insert(
                ns,
                n,
                kruise_api::workloadspread_to_v1beta1(&object).map_err(kruise)?,
            ),
            ("apps.kruise.io", "CloneSet") => {
                self.clone_sets
                    .insert(ns, n, kruise_api::cloneset_to_v1beta1(&object).map_err(kruise)?)
            }
            ("policy.kruise.io", "PodUnavailableBudget") => self.pod_unavailable_budgets.insert(
                ns,
                n,
                kruise_api::podunavailablebudget_to_v1beta1(&object).map_err(kruise)?,
            ),
            (group, _) => {
                let key = format!("{group}/{kind}");
                self.others.entry(key).or_default().insert(ns, n, object);
            }
        }
        Ok(())
    }

    /// Applies a status write as the apiserver would: the stored object must still be at the write's
    /// resourceVersion (else [`WriteError::Conflict`]); its `.status` is replaced and its resourceVersion
    /// bumped.
    pub fn apply_status(&mut self, write: &StatusWrite) -> Result<(), WriteError> {
        let t = &write.target;
        match (group_of(&t.api_version), t.kind.as_str()) {
            ("policy.kruise.io", "PodUnavailableBudget") => {
                replace_status(&mut self.pod_unavailable_budgets, write)
            }
            ("apps.kruise.io", "WorkloadSpread") => replace_status(&mut self.workload_spreads, write),
            ("apps.kruise.io", "SidecarSet") => {
                // The index records status.latestRevision.
                self.invalidate_sidecar_set_index();
                replace_status(&mut self.sidecar_sets, write)
            }
            ("apps.kruise.io", "CloneSet") => replace_status(&mut self.clone_sets, write),
            (group, kind) => match self.others.get_mut(&format!("{group}/{kind}")) {
                Some(map) => replace_status(map, write),
                None => Err(WriteError::not_found(write)),
            },
        }
    }

    /// Drops the SidecarSet index; the next [`ClusterView::sidecar_set_index`] rebuilds it.
    pub fn invalidate_sidecar_set_index(&mut self) {
        self.sidecar_set_index = SidecarSetIndexCache::default();
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

    fn node(&self, name: &str) -> Option<Arc<Node>> {
        self.nodes.get("", name)
    }

    fn pod(&self, namespace: &str, name: &str) -> Option<Arc<PodRecord>> {
        self.pods.get(namespace, name)
    }

    fn pods(&self, namespace: &str) -> Vec<Arc<PodRecord>> {
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

    fn sidecar_sets(&self) -> Vec<Arc<SidecarSet>> {
        self.sidecar_sets.all().cloned().collect()
    }

    fn sidecar_set_index(&self) -> Arc<SidecarSetIndex> {
        self.sidecar_set_index
            .0
            .get_or_init(|| Arc::new(SidecarSetIndex::build(self.sidecar_sets.all().cloned())))
            .clone()
    }

    fn pod_unavailable_budgets(&self, namespace: &str) -> Vec<Arc<PodUnavailableBudget>> {
        self.pod_unavailable_budgets.in_namespace(namespace)
    }

    fn workload_spreads(&self, namespace: &str) -> Vec<Arc<WorkloadSpread>> {
        self.workload_spreads.in_namespace(namespace)
    }

    fn controller_revisions(&self, namespace: &str) -> Vec<Arc<ControllerRevision>> {
        self.controller_revisions.in_namespace(namespace)
    }

    fn clone_set(&self, namespace: &str, name: &str) -> Option<Arc<CloneSet>> {
        self.clone_sets.get(namespace, name)
    }

    fn deployment(&self, namespace: &str, name: &str) -> Option<Arc<Deployment>> {
        self.deployments.get(namespace, name)
    }

    fn replica_set(&self, namespace: &str, name: &str) -> Option<Arc<ReplicaSet>> {
        self.replica_sets.get(namespace, name)
    }

    fn stateful_set(&self, namespace: &str, name: &str) -> Option<Arc<StatefulSet>> {
        self.stateful_sets.get(namespace, name)
    }

    fn job(&self, namespace: &str, name: &str) -> Option<Arc<Job>> {
        self.jobs.get(namespace, name)
    }

    fn object(&self, group: &str, kind: &str, namespace: &str, name: &str) -> Option<Arc<Value>> {
        self.others_of(group, kind)?.get(namespace, name)
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
        view.add(
            json!({"apiVersion": "v1", "kind": "Node", "metadata": {"name": "n1", "labels": {"zone": "a"}}}),
        )
        .unwrap();
        assert!(view.namespace("a").is_some());
        assert_eq!(
            view.node("n1").unwrap().metadata.labels.as_ref().unwrap()["zone"],
            "a"
        );
        assert!(view.node("n2").is_none());
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

    fn budget_view() -> MemoryView {
        let mut view = MemoryView::default();
        view.add(
            json!({"apiVersion": "policy.kruise.io/v1alpha1", "kind": "PodUnavailableBudget",
            "metadata": {"name": "web", "namespace": "shop", "resourceVersion": "7"},
            "spec": {"maxUnavailable": 1}, "status": {"unavailableAllowed": 1, "desiredAvailable": 2, "currentAvailable": 3, "totalReplicas": 3}}),
        )
        .unwrap();
        view
    }

    fn budget_write(resource_version: Option<&str>, allowed: i32) -> StatusWrite {
        StatusWrite {
            target: crate::WriteTarget {
                api_version: "policy.kruise.io/v1beta1".into(),
                kind: "PodUnavailableBudget".into(),
                plural: "podunavailablebudgets".into(),
                namespace: "shop".into(),
                name: "web".into(),
            },
            resource_version: resource_version.map(String::from),
            status: json!({"unavailableAllowed": allowed, "desiredAvailable": 2, "currentAvailable": 3,
                "totalReplicas": 3}),
        }
    }

    #[test]
    fn kruise_objects_of_either_version_are_stored_as_v1beta1() {
        let view = budget_view();
        let pubs = view.pod_unavailable_budgets("shop");
        assert_eq!(pubs.len(), 1);
        assert_eq!(pubs[0].metadata.name.as_deref(), Some("web"));
    }

    #[test]
    fn a_status_write_replaces_status_and_bumps_the_resource_version() {
        let mut view = budget_view();
        view.apply_status(&budget_write(Some("7"), 0)).unwrap();
        let stored = serde_json::to_value(&*view.pod_unavailable_budgets("shop")[0]).unwrap();
        assert_eq!(stored["status"]["unavailableAllowed"], 0);
        assert_eq!(stored["metadata"]["resourceVersion"], "8");
        assert_eq!(stored["spec"]["maxUnavailable"], 1, "spec untouched");
    }

    #[test]
    fn a_stale_or_misdirected_write_changes_nothing() {
        let mut view = budget_view();
        view.apply_status(&budget_write(Some("7"), 0)).unwrap();
        let err = view.apply_status(&budget_write(Some("7"), 5)).unwrap_err();
        assert!(matches!(err, WriteError::Conflict { .. }), "{err}");
        let stored = serde_json::to_value(&*view.pod_unavailable_budgets("shop")[0]).unwrap();
        assert_eq!(stored["status"]["unavailableAllowed"], 0);
        let mut missing = budget_write(None, 0);
        missing.target.name = "gone".into();
        assert!(matches!(
            view.apply_status(&missing),
            Err(WriteError::NotFound { .. })
        ));
        let mut bad = budget_write(None, 0);
        bad.status = json!({"unavailableAllowed": "lots"});
        assert!(matches!(view.apply_status(&bad), Err(WriteError::Invalid { .. })));
    }
}
