//! What triggers a controller's passes: the watch of its own objects, and watches of related kinds whose
//! changes map to those objects ([`Triggers`]). Pod changes are noted in [`PodSightings`], so that a pass
//! waits until the shared cache shows them.

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

use super::{Context, ControllerView, sightings::PodSightings};

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

    fn has(&self, namespace: &str, name: &str) -> bool {
        self.store.get(&ObjectRef::new(name).within(namespace)).is_some()
    }
}

/// The watches that trigger passes of `K`.
pub struct Triggers<K: Object> {
    controller: Controller<K>,
    client: kube::Client,
    known: Arc<Known<K>>,
    /// Turns true once the controller's own watch has listed its objects.
    listed: tokio::sync::watch::Receiver<bool>,
    sightings: Arc<PodSightings>,
}

/// Watches of any semantic: served from the API server's watch cache.
fn watch_config() -> watcher::Config {
    watcher::Config::default().any_semantic()
}

impl<K: Object> Triggers<K> {
    /// The controller of `K` over its own watch (`config` its runner's), with no other trigger yet.
    pub(super) fn new(context: &Context, sightings: Arc<PodSightings>, config: Config) -> Self {
        let client = context.client.clone();
        // `Controller::new`'s own watch, plus the signal that it has listed (the store's
        // `wait_until_ready` wakes only one of several waiters, and the controller's runner is one).
        let writer = reflector::store::Writer::<K>::default();
        let store = writer.as_reader();
        let (listed_tx, listed) = tokio::sync::watch::channel(false);
        let objects = reflector::reflector(writer, watcher(Api::<K>::all(client.clone()), watch_config()))
            .inspect_ok(move |event| {
                if matches!(event, watcher::Event::InitDone) {
                    listed_tx.send_replace(true);
                }
            })
            .applied_objects();
        let controller = Controller::for_stream(objects, store).with_config(config);
        let known = Arc::new(Known {
            store: controller.store(),
            view: context.view.clone(),
        });
        Triggers {
            controller,
            client,
            known,
            listed,
            sightings,
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

    /// Pod changes trigger the objects `owners` names; their passes wait until the cache shows the
    /// pod as this watch saw it.
    pub fn pods(
        self,
        owners: impl Fn(&PodRecord, &Known<K>) -> Vec<ObjectRef<K>> + Send + Sync + 'static,
    ) -> Self {
        let sightings = self.sightings.clone();
        self.watch(move |pod: &PodRecord, known: &Known<K>| {
            let mut refs: Vec<ObjectRef<K>> = Vec::new();
            for r in owners(pod, known) {
                if !refs.contains(&r) {
                    refs.push(r);
                }
            }
            for r in &refs {
                sightings.saw(r.namespace.as_deref().unwrap_or(""), &r.name, pod);
            }
            sightings.retain_owners(|namespace, name| known.has(namespace, name));
            refs
        })
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
        // The watch starts once the controller's own objects are listed. Before that, a change would
        // map to no object (a selector selects nothing yet, a pod's sighting is dropped as its owner's
        // is unknown), and the pass the listing brings could decide from a cache older than the change:
        // after a new leader starts on caches an API server outage left behind, nothing would correct it.
        let mut listed = self.listed.clone();
        let trigger = futures::stream::once(async move { listed.wait_for(|l| *l).await.is_ok() })
            .filter(|listed| std::future::ready(*listed))
            .flat_map(move |_| watcher(api.clone(), config.clone()).touched_objects());
        self.controller = self
            .controller
            .watches_stream(trigger, move |w: W| owners(&w, &known));
        self
    }
}
