//! [`Overlay`]: a view with a few objects read from the API server laid under it, for one decision.
//!
//! When a decision needed an object its view did not have yet (an owner created a moment ago, not yet
//! delivered by the watch), the IO layer reads that object once and decides again over
//! `Overlay::new(&cache, &read)`. Where the base view has an object, the base wins; the objects read only
//! fill its gaps, and they live as long as the overlay, so a copy read once can never hide a later
//! change or a deletion the watch delivers.

use std::sync::Arc;

use serde_json::Value;

use super::{ClusterView, DerivedCache, Lookup, Lookups, MemoryView, ObjectMap};
use crate::kinds::{Backend, Kind, Kinds, MakeStore, Registered};

/// `base`, with the objects of `under` where `base` has none.
pub struct Overlay<'a, V: ClusterView> {
    base: &'a V,
    under: &'a MemoryView,
    kinds: Kinds<Layers<'a>>,
}

impl<'a, V: ClusterView> Overlay<'a, V> {
    /// `base` over `under`.
    pub fn new(base: &'a V, under: &'a MemoryView) -> Self {
        let mut build = Build {
            base: base.kinds(),
            under: &under.kinds,
        };
        Overlay {
            base,
            under,
            kinds: Kinds::new(&mut build),
        }
    }
}

/// The overlay's backend: one [`Layer`] per kind.
pub struct Layers<'a>(std::marker::PhantomData<&'a ()>);

impl<'a> Backend for Layers<'a> {
    type Store<K: Kind> = Layer<'a, K>;
}

/// The objects of one kind: the base view's, then the ones laid under it.
pub struct Layer<'a, K> {
    base: &'a dyn Lookup<K>,
    under: &'a ObjectMap<K>,
}

struct Build<'a> {
    base: Lookups<'a>,
    under: &'a Kinds<super::memory::InMemory>,
}

impl<'a> MakeStore<Layers<'a>> for Build<'a> {
    fn make<K: Registered>(&mut self) -> Layer<'a, K> {
        Layer {
            base: *K::store(&self.base),
            under: K::store(self.under),
        }
    }
}

impl<K: Kind> Lookup<K> for Layer<'_, K> {
    fn get(&self, namespace: &str, name: &str) -> Option<Arc<K>> {
        self.base
            .get(namespace, name)
            .or_else(|| self.under.get(namespace, name))
    }

    fn list(&self, namespace: Option<&str>) -> Vec<Arc<K>> {
        let mut listed = self.base.list(namespace);
        for object in Lookup::list(self.under, namespace) {
            let meta = object.meta();
            let (ns, name) = (
                meta.namespace.as_deref().unwrap_or(""),
                meta.name.as_deref().unwrap_or(""),
            );
            if self.base.get(ns, name).is_none() {
                listed.push(object);
            }
        }
        listed
    }

    fn controlled_by(&self, namespace: &str, uid: Option<&str>) -> Vec<Arc<K>> {
        // An object the base holds is judged by the base's copy.
        let mut controlled = self.base.controlled_by(namespace, uid);
        for object in self.under.controlled_by(namespace, uid) {
            if self
                .base
                .get(namespace, object.meta().name.as_deref().unwrap_or(""))
                .is_none()
            {
                controlled.push(object);
            }
        }
        controlled
    }

    fn generation(&self) -> u64 {
        self.base
            .generation()
            .wrapping_add(Lookup::generation(self.under))
    }
}

impl<V: ClusterView> ClusterView for Overlay<'_, V> {
    fn kinds(&self) -> Lookups<'_> {
        self.kinds.lookups()
    }

    fn object(&self, group: &str, kind: &str, namespace: &str, name: &str) -> Option<Arc<Value>> {
        self.base
            .object(group, kind, namespace, name)
            .or_else(|| self.under.object(group, kind, namespace, name))
    }

    fn custom_resource_count(&self, group: &str, kind: &str) -> Option<usize> {
        self.base.custom_resource_count(group, kind)
    }

    fn active_custom_resource_count(&self, group: &str, kind: &str) -> Option<usize> {
        self.base.active_custom_resource_count(group, kind)
    }

    /// None: an index of the base kept between calls must not learn of objects that exist only here.
    fn derived(&self) -> Option<&DerivedCache> {
        None
    }

    fn own_namespace(&self) -> &str {
        self.base.own_namespace()
    }
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    fn rs(name: &str, replicas: i32) -> Value {
        json!({"apiVersion": "apps/v1", "kind": "ReplicaSet",
            "metadata": {"name": name, "namespace": "ns", "uid": format!("{name}-{replicas}")},
            "spec": {"replicas": replicas, "selector": {}}})
    }

    fn views() -> (MemoryView, MemoryView) {
        let mut base = MemoryView::default();
        base.add(rs("cached", 1)).unwrap();
        let mut under = MemoryView::default();
        under.add(rs("cached", 9)).unwrap();
        under.add(rs("read", 2)).unwrap();
        (base, under)
    }

    #[test]
    fn the_objects_read_fill_the_gaps_of_the_base_and_never_replace_it() {
        let (base, under) = views();
        let overlay = Overlay::new(&base, &under);
        let uid = |name: &str| {
            overlay
                .replica_set("ns", name)
                .and_then(|r| r.metadata.uid.clone())
        };
        assert_eq!(uid("cached").as_deref(), Some("cached-1"), "the base wins");
        assert_eq!(uid("read").as_deref(), Some("read-2"), "a gap is filled");
        assert_eq!(uid("absent"), None);
        let mut names: Vec<String> = overlay
            .kinds()
            .replica_sets
            .list(Some("ns"))
            .iter()
            .filter_map(|r| r.metadata.name.clone())
            .collect();
        names.sort();
        assert_eq!(names, ["cached", "read"], "listed once each");
        assert!(overlay.derived().is_none());
    }

    #[test]
    fn the_controller_of_an_object_in_both_is_the_base_copys() {
        let owned = |name: &str, owner: Option<&str>| {
            let mut pod =
                json!({"apiVersion": "v1", "kind": "Pod", "metadata": {"name": name, "namespace": "ns"}});
            if let Some(uid) = owner {
                pod["metadata"]["ownerReferences"] = json!([{"apiVersion": "apps/v1", "kind": "ReplicaSet",
                    "name": "rs", "uid": uid, "controller": true}]);
            }
            pod
        };
        let mut base = MemoryView::default();
        base.add(owned("released", None)).unwrap();
        base.add(owned("kept", Some("u1"))).unwrap();
        let mut under = MemoryView::default();
        under.add(owned("released", Some("u1"))).unwrap();
        under.add(owned("read", Some("u1"))).unwrap();
        under.add(owned("other", Some("u2"))).unwrap();
        let overlay = Overlay::new(&base, &under);
        let names = |uid: Option<&str>| {
            let mut names: Vec<String> = overlay
                .pods_controlled_by("ns", uid)
                .iter()
                .filter_map(|p| p.metadata.name.clone())
                .collect();
            names.sort();
            names
        };
        assert_eq!(names(Some("u1")), ["kept", "read"]);
        assert_eq!(names(None), ["released"]);
        assert_eq!(names(Some("u2")), ["other"]);
    }

    #[test]
    fn an_empty_overlay_is_its_base() {
        let (base, _) = views();
        let empty = MemoryView::default();
        let overlay = Overlay::new(&base, &empty);
        assert_eq!(overlay.kinds().replica_sets.list(None).len(), 1);
        assert_eq!(overlay.own_namespace(), base.own_namespace());
    }
}
