//! Indexes derived from one kind (e.g. the webhooks' SidecarSet injection index), kept by the view (in
//! its [`DerivedCache`]) and rebuilt when that kind's [generation](crate::Lookup::generation) moves.
//!
//! The view does not know the index types: whoever needs one implements [`Derived`] and calls [`get`].

use std::sync::Arc;

pub use crate::view::DerivedCache;
use crate::{kinds::Registered, view::ClusterView};

/// An index built from every object of one kind.
pub trait Derived: Send + Sync + Sized + 'static {
    /// The kind it is built from.
    type From: Registered;
    /// Builds it. `own_namespace` is the namespace kruise-rs runs in.
    fn derive(objects: Vec<Arc<Self::From>>, own_namespace: &str) -> Self;
}

/// The index `D` of `view`: the kept one while its kind has not changed, else built (and kept, when
/// the view keeps indexes).
pub fn get<D: Derived>(view: &(impl ClusterView + ?Sized)) -> Arc<D> {
    let kinds = view.kinds();
    let lookup = kinds.of::<D::From>();
    // Read before listing: an event in between makes the next call rebuild, never miss a change.
    let generation = lookup.generation();
    let build = || Arc::new(D::derive(lookup.list(None), view.own_namespace()));
    match view.derived() {
        Some(cache) => cache.get_or_build(generation, build),
        None => build(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::MemoryView;
    use kruise_api::apps_v1beta1::SidecarSet;
    use serde_json::json;

    /// Counts how often it is built.
    struct Names(Vec<String>);

    static BUILT: std::sync::atomic::AtomicUsize = std::sync::atomic::AtomicUsize::new(0);

    impl Derived for Names {
        type From = SidecarSet;
        fn derive(objects: Vec<Arc<SidecarSet>>, _: &str) -> Self {
            BUILT.fetch_add(1, std::sync::atomic::Ordering::SeqCst);
            Names(objects.iter().filter_map(|s| s.metadata.name.clone()).collect())
        }
    }

    fn sidecar_set(name: &str) -> serde_json::Value {
        json!({"apiVersion": "apps.kruise.io/v1beta1", "kind": "SidecarSet", "metadata": {"name": name},
            "spec": {"containers": []}})
    }

    #[test]
    fn an_index_is_rebuilt_only_when_its_kind_changes() {
        let mut view = MemoryView::default();
        view.add(sidecar_set("a")).unwrap();
        let before = BUILT.load(std::sync::atomic::Ordering::SeqCst);
        assert_eq!(get::<Names>(&view).0, ["a"]);
        assert_eq!(get::<Names>(&view).0, ["a"]);
        view.add(json!({"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "p", "namespace": "x"}}))
            .unwrap();
        assert_eq!(get::<Names>(&view).0, ["a"]);
        assert_eq!(BUILT.load(std::sync::atomic::Ordering::SeqCst) - before, 1);
        view.add(sidecar_set("b")).unwrap();
        assert_eq!(get::<Names>(&view).0, ["a", "b"]);
        assert_eq!(BUILT.load(std::sync::atomic::Ordering::SeqCst) - before, 2);
    }
}
