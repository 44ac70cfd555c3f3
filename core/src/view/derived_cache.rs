//! [`DerivedCache`]: where a view keeps the indexes derived from its kinds ([`crate::derived`]).

use std::{
    any::{Any, TypeId},
    collections::HashMap,
    sync::{Arc, Mutex},
};

/// One built index and the generation of its kind it was built at.
type Built = (u64, Arc<dyn Any + Send + Sync>);

/// Built indexes, by type, with the generation of their kind each was built at. A clone starts empty.
#[derive(Default)]
pub struct DerivedCache(Mutex<HashMap<TypeId, Built>>);

impl DerivedCache {
    /// The kept `D` when it was built at `generation`, else `build()`'s, kept. Built under the cache's
    /// lock, so concurrent callers build it once.
    pub fn get_or_build<D: Send + Sync + 'static>(
        &self,
        generation: u64,
        build: impl FnOnce() -> Arc<D>,
    ) -> Arc<D> {
        let mut built = self.0.lock().unwrap_or_else(|p| p.into_inner());
        if let Some((at, index)) = built.get(&TypeId::of::<D>())
            && *at == generation
            && let Ok(index) = index.clone().downcast::<D>()
        {
            return index;
        }
        let index = build();
        built.insert(TypeId::of::<D>(), (generation, index.clone()));
        index
    }
}

impl Clone for DerivedCache {
    fn clone(&self) -> Self {
        DerivedCache::default()
    }
}

impl std::fmt::Debug for DerivedCache {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let built = self.0.lock().map_or(0, |m| m.len());
        write!(f, "DerivedCache({built} built)")
    }
}
