//! What one kind is, below the registry ([`crate::kinds`]) and the view ([`crate::view`]): the
//! [`Kind`] trait, the [`Lookup`] of its objects a view holds, and the [`Backend`] that says which
//! store a view keeps per kind.

use std::{fmt::Debug, sync::Arc};

use k8s_openapi::apimachinery::pkg::apis::meta::v1::{ObjectMeta, OwnerReference};
use serde::{Serialize, de::DeserializeOwned};
use serde_json::Value;

use crate::decode::DecodeError;

/// A kind kruise-rs reads. Implemented by the registry (`registry!` in [`crate::kinds`]); group,
/// version, kind and plural come from [`kube::Resource`].
pub trait Kind:
    kube::Resource<DynamicType = ()> + Serialize + DeserializeOwned + Clone + Debug + Send + Sync + 'static
{
    /// Objects live in a namespace (cluster-scoped ones are keyed with an empty namespace).
    const NAMESPACED: bool;
    /// kruise-rs writes this kind's status (admission decisions record budgets and subsets in it).
    const HAS_STATUS: bool;
    /// The API server may not serve it (its CRD is optional): the cluster cache probes before watching
    /// and readiness does not wait for it.
    const OPTIONAL: bool;

    /// Decodes a stored object of any served version as this kind.
    fn decode(object: Value) -> Result<Self, DecodeError>;
}

/// True when `K` is the kind named by API group and kind (the version is not compared).
pub fn is<K: Kind>(group: &str, kind: &str) -> bool {
    K::group(&()) == group && K::kind(&()) == kind
}

/// The objects of one kind a view holds. Every method is a cheap lookup in memory.
pub trait Lookup<K>: Send + Sync {
    /// One object; cluster-scoped objects have an empty namespace.
    fn get(&self, namespace: &str, name: &str) -> Option<Arc<K>>;
    /// Every object of a namespace, or every object with `None`.
    fn list(&self, namespace: Option<&str>) -> Vec<Arc<K>>;
    /// Changes whenever an object of the kind is added, changed or deleted (for [`crate::derived`]).
    fn generation(&self) -> u64;
    /// The objects of a namespace whose controller ownerReference has `uid`; with `None`, those without
    /// a controller. A store with an index by controller answers without walking the namespace.
    fn controlled_by(&self, namespace: &str, uid: Option<&str>) -> Vec<Arc<K>>
    where
        K: kube::Resource,
    {
        let mut objects = self.list(Some(namespace));
        objects.retain(|o| controller_uid(o.meta()) == uid);
        objects
    }
}

/// The controller ownerReference (`controller: true`, the first one) of an object.
pub fn controller_ref(meta: &ObjectMeta) -> Option<&OwnerReference> {
    meta.owner_references
        .as_deref()?
        .iter()
        .find(|r| r.controller == Some(true))
}

/// The uid of an object's controller.
pub fn controller_uid(meta: &ObjectMeta) -> Option<&str> {
    controller_ref(meta).map(|owner| owner.uid.as_str())
}

impl<K, L: Lookup<K> + ?Sized> Lookup<K> for &L {
    fn get(&self, namespace: &str, name: &str) -> Option<Arc<K>> {
        (**self).get(namespace, name)
    }
    fn list(&self, namespace: Option<&str>) -> Vec<Arc<K>> {
        (**self).list(namespace)
    }
    fn generation(&self) -> u64 {
        (**self).generation()
    }
    fn controlled_by(&self, namespace: &str, uid: Option<&str>) -> Vec<Arc<K>>
    where
        K: kube::Resource,
    {
        (**self).controlled_by(namespace, uid)
    }
}

/// Where a backend keeps the objects of one kind.
pub trait Backend {
    type Store<K: Kind>: Lookup<K>;
}
