//! The read-only view of cluster state webhooks and controllers consult.
//!
//! Backed by files (`kruise admit`, standalone `kruise serve --objects`) through [`MemoryView`], or by
//! reflector caches in a cluster (the binary's `ClusterCache`). Both keep one store per registered kind
//! ([`Kinds`](crate::kinds::Kinds)); a view hands them out borrowed ([`ClusterView::kinds`]) and every typed accessor below
//! is written once on top of that. Objects are shared behind `Arc`, never deep-copied per review.

mod derived_cache;
mod memory;
mod overlay;
mod status;

use std::sync::Arc;

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

pub use derived_cache::DerivedCache;
pub use memory::{MemoryView, ObjectMap, ViewError};
pub use overlay::Overlay;
pub use status::{GroupedStatus, StatusChange, StatusWrite, WriteError, WriteTarget, grouped_status};

use crate::kinds::Registered;
pub use crate::kinds::{Borrowed, Lookup, Lookups};

/// What webhooks and controllers may read.
pub trait ClusterView {
    /// The objects of every registered kind.
    fn kinds(&self) -> Lookups<'_>;
    /// An object of a kind that is not registered (e.g. the `kruise-configuration` ConfigMap), raw;
    /// `None` when absent or not known to this view.
    fn object(&self, group: &str, kind: &str, namespace: &str, name: &str) -> Option<Arc<Value>>;
    /// How many objects of a custom resource (`group`, `kind`) exist, or `None` when this view cannot
    /// tell (not cached).
    fn custom_resource_count(&self, group: &str, kind: &str) -> Option<usize>;
    /// Like [`custom_resource_count`](Self::custom_resource_count), but only objects without a
    /// `metadata.deletionTimestamp` (what deletion protection counts, as OpenKruise does). The default
    /// counts every object, which errs on the protective side.
    fn active_custom_resource_count(&self, group: &str, kind: &str) -> Option<usize> {
        self.custom_resource_count(group, kind)
    }
    /// Where indexes derived from a kind are kept between calls; `None` builds them on every call.
    fn derived(&self) -> Option<&DerivedCache>;
    /// The namespace kruise-rs runs in (SidecarSet revisions and its configuration live there).
    fn own_namespace(&self) -> &str;

    /// A namespace by name.
    fn namespace(&self, name: &str) -> Option<Arc<Namespace>> {
        self.kinds().namespaces.get("", name)
    }
    /// A node by name.
    fn node(&self, name: &str) -> Option<Arc<Node>> {
        self.kinds().nodes.get("", name)
    }
    /// A pod by namespace and name.
    fn pod(&self, namespace: &str, name: &str) -> Option<Arc<PodRecord>> {
        self.kinds().pods.get(namespace, name)
    }
    /// Every pod of a namespace.
    fn pods(&self, namespace: &str) -> Vec<Arc<PodRecord>> {
        self.kinds().pods.list(Some(namespace))
    }
    /// The pods of a namespace whose controller has `uid` (`None`: the pods without a controller).
    fn pods_controlled_by(&self, namespace: &str, uid: Option<&str>) -> Vec<Arc<PodRecord>> {
        self.kinds().pods.controlled_by(namespace, uid)
    }
    /// Every PersistentVolumeClaim of a namespace.
    fn persistent_volume_claims(&self, namespace: &str) -> Vec<Arc<PersistentVolumeClaim>> {
        self.kinds().persistent_volume_claims.list(Some(namespace))
    }
    /// Every SidecarSet (cluster-scoped), as `v1beta1`.
    fn sidecar_sets(&self) -> Vec<Arc<SidecarSet>> {
        self.kinds().sidecar_sets.list(None)
    }
    /// The PodUnavailableBudgets of a namespace, as `v1beta1`.
    fn pod_unavailable_budgets(&self, namespace: &str) -> Vec<Arc<PodUnavailableBudget>> {
        self.kinds().pod_unavailable_budgets.list(Some(namespace))
    }
    /// The WorkloadSpreads of a namespace, as `v1beta1`.
    fn workload_spreads(&self, namespace: &str) -> Vec<Arc<WorkloadSpread>> {
        self.kinds().workload_spreads.list(Some(namespace))
    }
    /// The ControllerRevisions of a namespace.
    fn controller_revisions(&self, namespace: &str) -> Vec<Arc<ControllerRevision>> {
        self.kinds().controller_revisions.list(Some(namespace))
    }
    /// A CloneSet, as `v1beta1`.
    fn clone_set(&self, namespace: &str, name: &str) -> Option<Arc<CloneSet>> {
        self.kinds().clone_sets.get(namespace, name)
    }
    /// A Deployment.
    fn deployment(&self, namespace: &str, name: &str) -> Option<Arc<Deployment>> {
        self.kinds().deployments.get(namespace, name)
    }
    /// A ReplicaSet.
    fn replica_set(&self, namespace: &str, name: &str) -> Option<Arc<ReplicaSet>> {
        self.kinds().replica_sets.get(namespace, name)
    }
    /// A StatefulSet (`apps/v1`).
    fn stateful_set(&self, namespace: &str, name: &str) -> Option<Arc<StatefulSet>> {
        self.kinds().stateful_sets.get(namespace, name)
    }
    /// A Job.
    fn job(&self, namespace: &str, name: &str) -> Option<Arc<Job>> {
        self.kinds().jobs.get(namespace, name)
    }
}

/// One object of a registered kind, from any view.
pub fn get<K: Registered>(view: &(impl ClusterView + ?Sized), namespace: &str, name: &str) -> Option<Arc<K>> {
    view.kinds().of::<K>().get(namespace, name)
}

#[cfg(test)]
mod tests;
