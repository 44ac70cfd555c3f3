//! Owner references and workload lookups shared by the pod webhooks and the planners.
//!
//! * [`api_group`] parses an apiVersion as Go's `schema.ParseGroupVersion` does;
//! * [`controller_of`] reads the controller ownerReference of a raw object without decoding it;
//! * [`fetch_workload`] finds a workload in the [`ClusterView`] by API group and kind (the version is
//!   ignored, as every OpenKruise comparison here ignores it);
//! * [`pub_workload`] resolves the workload a PodUnavailableBudget `targetRef` is compared with, as
//!   OpenKruise's controller finder does (a ReplicaSet owned by an existing Deployment of the same uid
//!   resolves to the Deployment);
//! * [`workload_replicas`] reads the replica count a WorkloadSpread scales percentages against.

use std::sync::Arc;

use k8s_openapi::{
    Metadata,
    api::{
        apps::v1::{Deployment, DeploymentSpec, ReplicaSet, ReplicaSetSpec, StatefulSet, StatefulSetSpec},
        batch::v1::{Job, JobSpec},
    },
    apimachinery::pkg::apis::meta::v1::{ObjectMeta, OwnerReference},
};
use kruise_api::apps_v1beta1::CloneSet;
use serde_json::Value;

use kruise_api::apps_v1beta1::StatefulSet as AdvancedStatefulSet;

use crate::view::ClusterView;

mod replicas;

pub use replicas::{ReplicasPathError, workload_replicas};

/// An apiVersion with more than one `/`.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
#[error("unexpected GroupVersion string: {0}")]
pub struct InvalidApiVersion(pub String);

/// The API group of `api_version`: `""` for `v1` or an empty string, `apps` for `apps/v1`; an error for
/// more than one `/`.
pub fn api_group(api_version: &str) -> Result<&str, InvalidApiVersion> {
    if api_version.is_empty() || api_version == "/" {
        return Ok("");
    }
    let mut parts = api_version.splitn(3, '/');
    let first = parts.next().unwrap_or("");
    match (parts.next(), parts.next()) {
        (None, _) => Ok(""),
        (Some(_), None) => Ok(first),
        (Some(_), Some(_)) => Err(InvalidApiVersion(api_version.to_string())),
    }
}

/// A reference to another object (an ownerReference or a workload), borrowed.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct ObjectRef<'a> {
    pub api_version: &'a str,
    pub kind: &'a str,
    pub name: &'a str,
    /// Empty when unknown.
    pub uid: &'a str,
}

impl ObjectRef<'_> {
    /// The API group, or an error for a malformed apiVersion.
    pub fn group(&self) -> Result<&str, InvalidApiVersion> {
        api_group(self.api_version)
    }

    /// An owned copy.
    pub fn to_owned_ref(&self) -> OwnedRef {
        OwnedRef {
            api_version: self.api_version.to_string(),
            kind: self.kind.to_string(),
            name: self.name.to_string(),
            uid: self.uid.to_string(),
        }
    }
}

/// An owned [`ObjectRef`].
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct OwnedRef {
    pub api_version: String,
    pub kind: String,
    pub name: String,
    pub uid: String,
}

impl OwnedRef {
    /// Borrows it.
    pub fn as_ref(&self) -> ObjectRef<'_> {
        ObjectRef {
            api_version: &self.api_version,
            kind: &self.kind,
            name: &self.name,
            uid: &self.uid,
        }
    }
}

/// True when two references name the same object by API group, kind and name (version ignored). A
/// malformed apiVersion on either side never matches.
pub fn same_group_kind_name(a: ObjectRef<'_>, b: ObjectRef<'_>) -> bool {
    match (a.group(), b.group()) {
        (Ok(ga), Ok(gb)) => ga == gb && a.kind == b.kind && a.name == b.name,
        _ => false,
    }
}

/// The controller ownerReference (`controller: true`, the first one) of a raw object.
pub fn controller_of(object: &Value) -> Option<ObjectRef<'_>> {
    let refs = object.get("metadata")?.get("ownerReferences")?.as_array()?;
    refs.iter()
        .find(|r| r.get("controller").and_then(Value::as_bool) == Some(true))
        .map(|r| {
            let s = |k: &str| r.get(k).and_then(Value::as_str).unwrap_or("");
            ObjectRef {
                api_version: s("apiVersion"),
                kind: s("kind"),
                name: s("name"),
                uid: s("uid"),
            }
        })
}

/// The controller ownerReference of typed metadata.
pub fn controller_of_meta(meta: &ObjectMeta) -> Option<ObjectRef<'_>> {
    crate::kind::controller_ref(meta).map(|r: &OwnerReference| ObjectRef {
        api_version: &r.api_version,
        kind: &r.kind,
        name: &r.name,
        uid: &r.uid,
    })
}

/// A workload found in the view.
#[derive(Clone, Debug)]
pub enum Workload {
    ReplicaSet(Arc<ReplicaSet>),
    Deployment(Arc<Deployment>),
    StatefulSet(Arc<StatefulSet>),
    Job(Arc<Job>),
    CloneSet(Arc<CloneSet>),
    AdvancedStatefulSet(Arc<AdvancedStatefulSet>),
    /// Any other kind, raw.
    Other(Arc<Value>),
}

impl Workload {
    fn meta(&self) -> Option<&ObjectMeta> {
        Some(match self {
            Workload::ReplicaSet(o) => o.metadata(),
            Workload::Deployment(o) => o.metadata(),
            Workload::StatefulSet(o) => o.metadata(),
            Workload::Job(o) => o.metadata(),
            Workload::CloneSet(o) => &o.metadata,
            Workload::AdvancedStatefulSet(o) => &o.metadata,
            Workload::Other(_) => return None,
        })
    }

    /// `metadata.uid`, empty when unknown.
    pub fn uid(&self) -> &str {
        match self {
            Workload::Other(v) => v.pointer("/metadata/uid").and_then(Value::as_str).unwrap_or(""),
            _ => self.meta().and_then(|m| m.uid.as_deref()).unwrap_or(""),
        }
    }

    /// The workload's own controller ownerReference.
    pub fn controller(&self) -> Option<ObjectRef<'_>> {
        match self {
            Workload::Other(v) => controller_of(v),
            _ => self.meta().and_then(controller_of_meta),
        }
    }

    // `Option::from(&spec)` compiles whether the k8s-openapi version in use makes `spec` optional or not
    // (feature unification may pick a newer one in some builds).
    /// The desired replica count as OpenKruise reads it for a WorkloadSpread: `spec.replicas` (Job:
    /// `spec.parallelism`), with the apiserver's default of 1 when unset. `None` for kinds whose count
    /// is unknown.
    pub fn replicas(&self) -> Option<i64> {
        match self {
            Workload::ReplicaSet(o) => Some(
                Option::<&ReplicaSetSpec>::from(&o.spec)
                    .and_then(|s| s.replicas)
                    .unwrap_or(1)
                    .into(),
            ),
            Workload::Deployment(o) => Some(
                Option::<&DeploymentSpec>::from(&o.spec)
                    .and_then(|s| s.replicas)
                    .unwrap_or(1)
                    .into(),
            ),
            Workload::StatefulSet(o) => Some(
                Option::<&StatefulSetSpec>::from(&o.spec)
                    .and_then(|s| s.replicas)
                    .unwrap_or(1)
                    .into(),
            ),
            Workload::Job(o) => Some(
                Option::<&JobSpec>::from(&o.spec)
                    .and_then(|s| s.parallelism)
                    .unwrap_or(1)
                    .into(),
            ),
            Workload::CloneSet(o) => Some(o.spec.replicas.unwrap_or(1).into()),
            Workload::AdvancedStatefulSet(o) => Some(o.spec.replicas.unwrap_or(1).into()),
            Workload::Other(_) => None,
        }
    }

    /// The object as JSON (for dot-path lookups).
    pub fn to_json(&self) -> Value {
        let json = match self {
            Workload::ReplicaSet(o) => serde_json::to_value(&**o),
            Workload::Deployment(o) => serde_json::to_value(&**o),
            Workload::StatefulSet(o) => serde_json::to_value(&**o),
            Workload::Job(o) => serde_json::to_value(&**o),
            Workload::CloneSet(o) => serde_json::to_value(&**o),
            Workload::AdvancedStatefulSet(o) => serde_json::to_value(&**o),
            Workload::Other(v) => return (**v).clone(),
        };
        json.unwrap_or(Value::Null)
    }
}

/// A workload by API group and kind (version ignored). Registered kinds come from their store; any
/// other kind from [`ClusterView::object`].
pub fn fetch_workload(
    view: &impl ClusterView,
    group: &str,
    kind: &str,
    namespace: &str,
    name: &str,
) -> Option<Workload> {
    match (group, kind) {
        ("apps", "ReplicaSet") => view.replica_set(namespace, name).map(Workload::ReplicaSet),
        ("apps", "Deployment") => view.deployment(namespace, name).map(Workload::Deployment),
        ("apps", "StatefulSet") => view.stateful_set(namespace, name).map(Workload::StatefulSet),
        ("batch", "Job") => view.job(namespace, name).map(Workload::Job),
        ("apps.kruise.io", "CloneSet") => view.clone_set(namespace, name).map(Workload::CloneSet),
        ("apps.kruise.io", "StatefulSet") => {
            crate::view::get(view, namespace, name).map(Workload::AdvancedStatefulSet)
        }
        _ => view.object(group, kind, namespace, name).map(Workload::Other),
    }
}

/// The plural resource name of a workload kind, for "not found" messages
/// (`clonesets.apps.kruise.io "x" not found`).
pub fn resource_of(group: &str, kind: &str) -> String {
    let mut plural = kind.to_ascii_lowercase();
    plural.push('s');
    if group.is_empty() {
        plural
    } else {
        format!("{plural}.{group}")
    }
}

/// The workload a PodUnavailableBudget `targetRef` is compared with, for a pod whose controller is
/// `owner` (OpenKruise's controller finder):
/// * ReplicaSet → its controller Deployment, if that Deployment exists and its uid equals the
///   reference's uid (when the reference has one); otherwise the ReplicaSet itself;
/// * any other kind → the owner itself, if the object exists;
/// * an owner that is not in the view → none.
///
/// The pod's own reference is not checked against the owner's uid (OpenKruise passes none).
pub fn pub_workload(view: &impl ClusterView, namespace: &str, owner: ObjectRef<'_>) -> Option<OwnedRef> {
    let group = owner.group().ok()?;
    let found = fetch_workload(view, group, owner.kind, namespace, owner.name)?;
    if let Workload::ReplicaSet(_) = &found
        && let Some(dep_ref) = found.controller().filter(|r| r.kind == "Deployment")
        && dep_ref.group() == Ok("apps")
        && let Some(dep) = view.deployment(namespace, dep_ref.name)
    {
        let dep_uid = dep.metadata.uid.as_deref().unwrap_or("");
        if dep_ref.uid.is_empty() || dep_ref.uid == dep_uid {
            return Some(OwnedRef {
                api_version: "apps/v1".into(),
                kind: "Deployment".into(),
                name: dep_ref.name.to_string(),
                uid: dep_uid.to_string(),
            });
        }
    }
    let mut resolved = owner.to_owned_ref();
    resolved.uid = found.uid().to_string();
    Some(resolved)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::MemoryView;
    use serde_json::json;

    #[test]
    fn groups_are_parsed_like_go() {
        assert_eq!(api_group(""), Ok(""));
        assert_eq!(api_group("v1"), Ok(""));
        assert_eq!(api_group("apps/v1"), Ok("apps"));
        assert_eq!(api_group("/v1"), Ok(""));
        assert!(api_group("a/b/c").is_err());
    }

    #[test]
    fn controller_is_the_first_ref_with_controller_true() {
        let pod = json!({"metadata": {"ownerReferences": [
            {"apiVersion": "v1", "kind": "A", "name": "a", "uid": "1"},
            {"apiVersion": "apps/v1", "kind": "ReplicaSet", "name": "rs", "uid": "2", "controller": true},
            {"apiVersion": "apps/v1", "kind": "ReplicaSet", "name": "rs2", "uid": "3", "controller": true}]}});
        let c = controller_of(&pod).unwrap();
        assert_eq!((c.kind, c.name, c.uid), ("ReplicaSet", "rs", "2"));
        assert!(controller_of(&json!({"metadata": {"ownerReferences": [{"controller": "true"}]}})).is_none());
    }

    fn view() -> MemoryView {
        let mut v = MemoryView::default();
        v.add(json!({"apiVersion": "apps/v1", "kind": "Deployment",
            "metadata": {"name": "web", "namespace": "ns", "uid": "dep-1"}}))
            .unwrap();
        v.add(json!({"apiVersion": "apps/v1", "kind": "ReplicaSet",
            "metadata": {"name": "web-1", "namespace": "ns", "uid": "rs-1", "ownerReferences": [
                {"apiVersion": "apps/v1", "kind": "Deployment", "name": "web", "uid": "dep-1", "controller": true}]}}))
            .unwrap();
        v.add(json!({"apiVersion": "apps/v1", "kind": "ReplicaSet",
            "metadata": {"name": "web-2", "namespace": "ns", "uid": "rs-2", "ownerReferences": [
                {"apiVersion": "apps/v1", "kind": "Deployment", "name": "web", "uid": "other", "controller": true}]}}))
            .unwrap();
        v
    }

    fn rs(name: &str) -> ObjectRef<'_> {
        ObjectRef {
            api_version: "apps/v1",
            kind: "ReplicaSet",
            name,
            uid: "",
        }
    }

    #[test]
    fn a_replicaset_resolves_to_its_deployment_only_when_the_uid_matches() {
        let v = view();
        assert_eq!(pub_workload(&v, "ns", rs("web-1")).unwrap().kind, "Deployment");
        let own = pub_workload(&v, "ns", rs("web-2")).unwrap();
        assert_eq!((own.kind.as_str(), own.name.as_str()), ("ReplicaSet", "web-2"));
        assert!(pub_workload(&v, "ns", rs("gone")).is_none());
    }
}
