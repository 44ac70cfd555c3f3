//! What triggers a controller's passes: the watch of its own objects, and watches of related kinds whose
//! changes map to those objects ([`Triggers`]). Pod changes come from the shared cache's pod watch, told
//! once the cache shows them, so a pass always reads at least the pod versions that triggered it.

use std::{fmt::Debug, sync::Arc};

use futures::{StreamExt as _, TryStreamExt as _};
use kruise_api::PodRecord;
use kube::{
    Api, Resource,
    runtime::{
        Controller, WatchStreamExt as _,
        controller::Config,
        reflector::{self, ObjectRef, Store},
        watcher,
    },
};
use serde::{Serialize, de::DeserializeOwned};

use super::{Context, ControllerView};
use crate::cluster::Change;

/// A kind a controller reconciles (namespaced, or cluster-scoped like SidecarSet).
pub trait Object:
    Resource<DynamicType = ()> + Clone + DeserializeOwned + Serialize + Debug + Send + Sync + 'static
{
}

impl<K> Object for K where
    K: Resource<DynamicType = ()> + Clone + DeserializeOwned + Serialize + Debug + Send + Sync + 'static
{
}

/// The objects the controller knows (its watch's store), and the shared cache, for trigger mappers.
pub struct Known<K: Object> {
    store: Store<K>,
    view: Arc<dyn ControllerView>,
}

impl<K: Object> Known<K> {
    /// The references of the known objects `wanted` picks.
    pub fn refs(&self, wanted: impl Fn(&K) -> bool) -> Vec<ObjectRef<K>> {
        self.store
            .state()
            .into_iter()
            .filter(|k| wanted(k))
            .map(|k| ObjectRef::from_obj(&*k))
            .collect()
    }

    /// The shared cluster cache.
    pub fn view(&self) -> &dyn ControllerView {
        self.view.as_ref()
    }

    /// The known object `r` refers to.
    pub(super) fn get(&self, r: &ObjectRef<K>) -> Option<Arc<K>> {
        self.store.get(r)
    }
}

/// The watches that trigger passes of `K`.
pub struct Triggers<K: Object> {
    controller: Controller<K>,
    client: kube::Client,
    known: Arc<Known<K>>,
    /// Turns true once the controller's own watch has listed its objects.
    listed: tokio::sync::watch::Receiver<bool>,
}

/// A controller's own objects from a cache another part of the process keeps: their changes and the
/// store (so they are not watched and held a second time).
pub struct Source<K: Object> {
    pub objects: futures::stream::BoxStream<'static, K>,
    pub store: Store<K>,
}

/// Watches of any semantic: served from the API server's watch cache.
fn watch_config() -> watcher::Config {
    watcher::Config::default().any_semantic()
}

impl<K: Object> Triggers<K> {
    /// The controller of `K` over its own watch, or over `source` (`config` its runner's), with no
    /// other trigger yet.
    pub(super) fn new(context: &Context, config: Config, source: Option<Source<K>>) -> Self {
        let client = context.client.clone();
        let (controller, listed) = match source {
            Some(source) => {
                let (_, listed) = tokio::sync::watch::channel(true);
                let objects = source.objects.map(Ok);
                (Controller::for_stream(objects, source.store), listed)
            }
            None => {
                // `Controller::new`'s own watch, plus the signal that it has listed (the store's
                // `wait_until_ready` wakes only one of several waiters, and the controller's runner is
                // one).
                let writer = reflector::store::Writer::<K>::default();
                let store = writer.as_reader();
                let (listed_tx, listed) = tokio::sync::watch::channel(false);
                let objects =
                    reflector::reflector(writer, watcher(Api::<K>::all(client.clone()), watch_config()))
                        .inspect_ok(move |event| {
                            if matches!(event, watcher::Event::InitDone) {
                                listed_tx.send_replace(true);
                            }
                        })
                        .applied_objects();
                (Controller::for_stream(objects, store), listed)
            }
        };
        let controller = controller.with_config(config);
        let known = Arc::new(Known {
            store: controller.store(),
            view: context.view.clone(),
        });
        Triggers {
            controller,
            client,
            known,
            listed,
        }
    }

    /// The objects the controller knows.
    pub(super) fn known(&self) -> Arc<Known<K>> {
        self.known.clone()
    }

    /// The controller, with every trigger added.
    pub(super) fn into_controller(self) -> Controller<K> {
        self.controller
    }

    /// Pod changes trigger the objects `owners` names (a pod's deletion too); when changes may have gone
    /// untold, every known object is passed. They come from the shared cache's pod watch; a view
    /// without one triggers nothing.
    pub fn pods(
        mut self,
        owners: impl Fn(&PodRecord, &Known<K>) -> Vec<ObjectRef<K>> + Send + Sync + 'static,
    ) -> Self {
        let Some(pods) = self.known.view().watched_pods().cloned() else {
            return self;
        };
        let known = self.known.clone();
        let refs = self.once_listed(move || pods.changes()).flat_map(move |change| {
            let mut refs: Vec<ObjectRef<K>> = Vec::new();
            match change {
                Change::Applied(pod) | Change::Deleted(pod) => {
                    for r in owners(&pod, &known) {
                        if !refs.contains(&r) {
                            refs.push(r);
                        }
                    }
                }
                Change::Relisted => refs = known.refs(|_| true),
            }
            futures::stream::iter(refs)
        });
        self.controller = self.controller.reconcile_on(refs);
        self
    }

    /// `start()`'s stream, started once the controller's own objects are listed. Before that, a change
    /// would map to no object (a selector selects nothing yet, a pod's owner is unknown), and the pass
    /// the listing brings could decide from a cache older than the change: after a new leader starts on
    /// caches an API server outage left behind, nothing would correct it.
    fn once_listed<S: futures::Stream + Send + 'static>(
        &self,
        start: impl FnOnce() -> S + Send + 'static,
    ) -> impl futures::Stream<Item = S::Item> + Send + 'static {
        let mut listed = self.listed.clone();
        futures::stream::once(async move { listed.wait_for(|l| *l).await.is_ok().then(start) })
            .filter_map(std::future::ready)
            .flatten()
    }

    /// Every known object is passed each time `ticks` yields (a clock jumped forward).
    pub fn all_on(mut self, ticks: impl futures::Stream<Item = ()> + Send + 'static) -> Self {
        self.controller = self.controller.reconcile_all_on(ticks);
        self
    }

    /// Changes of `W` trigger the objects `owners` names.
    pub fn watch<W>(self, owners: impl Fn(&W, &Known<K>) -> Vec<ObjectRef<K>> + Send + Sync + 'static) -> Self
    where
        W: Resource<DynamicType = ()> + Clone + DeserializeOwned + Debug + Send + 'static,
    {
        self.watch_with(watch_config(), owners)
    }

    /// Changes of the `W` objects carrying label `selector` (a label selector string) trigger the
    /// objects `owners` names: only those objects cross the wire (a change that removes the label
    /// arrives as a deletion).
    pub fn watch_labelled<W>(
        self,
        selector: &str,
        owners: impl Fn(&W, &Known<K>) -> Vec<ObjectRef<K>> + Send + Sync + 'static,
    ) -> Self
    where
        W: Resource<DynamicType = ()> + Clone + DeserializeOwned + Debug + Send + 'static,
    {
        self.watch_with(watch_config().labels(selector), owners)
    }

    fn watch_with<W>(
        mut self,
        config: watcher::Config,
        owners: impl Fn(&W, &Known<K>) -> Vec<ObjectRef<K>> + Send + Sync + 'static,
    ) -> Self
    where
        W: Resource<DynamicType = ()> + Clone + DeserializeOwned + Debug + Send + 'static,
    {
        let known = self.known.clone();
        let api = Api::<W>::all(self.client.clone());
        let trigger = self.once_listed(move || watcher(api, config).touched_objects());
        self.controller = self
            .controller
            .watches_stream(trigger, move |w: W| owners(&w, &known));
        self
    }
}
