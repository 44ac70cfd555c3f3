//! The watched objects of one kind by controller: a CloneSet's pass reads its 100 pods without walking
//! the 50,000 of its namespace. Kept by the watch task beside the store, from the same events.

use std::{
    borrow::Borrow,
    collections::{HashMap, HashSet},
    hash::{Hash, Hasher},
    sync::Arc,
};

use kruise_core::{Lenient, kind::controller_uid, kinds::Kind};
use kube::runtime::watcher;

/// The decoded objects of kind `K` by namespace and controller uid (`None`: without a controller).
pub struct OwnerIndex<K> {
    current: Buckets<K>,
    /// Built while the watch lists anew; replaces `current` when the listing is complete, as the store
    /// does.
    listing: Option<Buckets<K>>,
}

type Buckets<K> = HashMap<(String, Option<String>), HashSet<ByName<K>>>;

impl<K> Default for OwnerIndex<K> {
    fn default() -> Self {
        OwnerIndex {
            current: HashMap::new(),
            listing: None,
        }
    }
}

impl<K: Kind> OwnerIndex<K> {
    /// Applies a watch event; `previous` is the store's object before the event.
    pub fn apply(&mut self, event: &watcher::Event<Lenient<K>>, previous: Option<&Lenient<K>>) {
        match event {
            watcher::Event::Apply(object) | watcher::Event::Delete(object) => {
                for gone in previous.into_iter().chain([object]) {
                    remove(&mut self.current, gone);
                }
                if let (watcher::Event::Apply(_), Some(decoded)) = (event, object.decoded()) {
                    insert(&mut self.current, decoded.clone());
                }
            }
            watcher::Event::Init => self.listing = Some(HashMap::new()),
            watcher::Event::InitApply(object) => {
                if let (Some(listing), Some(decoded)) = (&mut self.listing, object.decoded()) {
                    insert(listing, decoded.clone());
                }
            }
            watcher::Event::InitDone => {
                if let Some(listing) = self.listing.take() {
                    self.current = listing;
                }
            }
        }
    }

    /// The objects of `namespace` whose controller has `uid` (`None`: without a controller).
    pub fn controlled_by(&self, namespace: &str, uid: Option<&str>) -> Vec<Arc<K>> {
        self.current
            .get(&(namespace.to_string(), uid.map(str::to_string)))
            .map(|bucket| bucket.iter().map(|o| o.0.clone()).collect())
            .unwrap_or_default()
    }
}

/// The bucket of an object: its namespace and its controller's uid.
fn bucket_of<K: Kind>(object: &K) -> (String, Option<String>) {
    let meta = object.meta();
    (
        meta.namespace.clone().unwrap_or_default(),
        controller_uid(meta).map(str::to_string),
    )
}

fn insert<K: Kind>(buckets: &mut Buckets<K>, object: Arc<K>) {
    buckets
        .entry(bucket_of(&*object))
        .or_default()
        .replace(ByName(object));
}

fn remove<K: Kind>(buckets: &mut Buckets<K>, object: &Lenient<K>) {
    let Some(object) = object.decoded() else {
        return;
    };
    let key = bucket_of(&**object);
    if let Some(bucket) = buckets.get_mut(&key) {
        bucket.remove(name_of(&**object));
        if bucket.is_empty() {
            buckets.remove(&key);
        }
    }
}

fn name_of<K: Kind>(object: &K) -> &str {
    object.meta().name.as_deref().unwrap_or_default()
}

/// An object keyed by its name (unique within a bucket, which is within one namespace).
struct ByName<K>(Arc<K>);

impl<K: Kind> Hash for ByName<K> {
    fn hash<H: Hasher>(&self, state: &mut H) {
        name_of(&*self.0).hash(state);
    }
}

impl<K: Kind> PartialEq for ByName<K> {
    fn eq(&self, other: &Self) -> bool {
        name_of(&*self.0) == name_of(&*other.0)
    }
}

impl<K: Kind> Eq for ByName<K> {}

impl<K: Kind> Borrow<str> for ByName<K> {
    fn borrow(&self) -> &str {
        name_of(&*self.0)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use kruise_api::PodRecord;

    fn pod(name: &str, owner: Option<&str>) -> Lenient<PodRecord> {
        let owners = owner.map(|uid| {
            serde_json::json!([{"apiVersion": "apps.kruise.io/v1alpha1", "kind": "CloneSet", "name": "web",
                "uid": uid, "controller": true}])
        });
        let mut value = serde_json::json!({"apiVersion": "v1", "kind": "Pod",
            "metadata": {"name": name, "namespace": "default"}});
        if let Some(owners) = owners {
            value["metadata"]["ownerReferences"] = owners;
        }
        Lenient::decode(value)
    }

    fn names(index: &OwnerIndex<PodRecord>, uid: Option<&str>) -> Vec<String> {
        let mut names: Vec<_> = index
            .controlled_by("default", uid)
            .iter()
            .map(|p| name_of(&**p).to_string())
            .collect();
        names.sort();
        names
    }

    #[test]
    fn an_object_moves_between_controllers_and_leaves_on_deletion() {
        let mut index = OwnerIndex::default();
        index.apply(&watcher::Event::Apply(pod("a", Some("u1"))), None);
        index.apply(&watcher::Event::Apply(pod("b", None)), None);
        assert_eq!(names(&index, Some("u1")), ["a"]);
        assert_eq!(names(&index, None), ["b"]);

        // Released by u1, adopted by u2: the previous copy says where it was.
        let released = pod("a", None);
        index.apply(
            &watcher::Event::Apply(released.clone()),
            Some(&pod("a", Some("u1"))),
        );
        assert!(names(&index, Some("u1")).is_empty());
        index.apply(&watcher::Event::Apply(pod("a", Some("u2"))), Some(&released));
        assert_eq!(names(&index, Some("u2")), ["a"]);
        assert_eq!(names(&index, None), ["b"]);

        index.apply(
            &watcher::Event::Delete(pod("a", Some("u2"))),
            Some(&pod("a", Some("u2"))),
        );
        assert!(names(&index, Some("u2")).is_empty());
        assert!(
            index.current.keys().all(|(_, uid)| uid.is_none()),
            "empty buckets are dropped"
        );
    }

    #[test]
    fn a_controller_with_an_empty_uid_is_still_a_controller() {
        let mut index = OwnerIndex::default();
        index.apply(&watcher::Event::Apply(pod("a", Some(""))), None);
        assert!(names(&index, None).is_empty(), "not an orphan to adopt");
        assert_eq!(names(&index, Some("")), ["a"]);
    }

    #[test]
    fn a_listing_replaces_the_index_only_when_complete() {
        let mut index = OwnerIndex::default();
        index.apply(&watcher::Event::Apply(pod("old", Some("u1"))), None);
        index.apply(&watcher::Event::Init, None);
        index.apply(&watcher::Event::InitApply(pod("new", Some("u1"))), None);
        assert_eq!(
            names(&index, Some("u1")),
            ["old"],
            "the listing is not complete yet"
        );
        index.apply(&watcher::Event::InitDone, None);
        assert_eq!(names(&index, Some("u1")), ["new"]);
    }

    #[test]
    fn an_object_that_does_not_decode_is_not_indexed() {
        let mut index = OwnerIndex::default();
        index.apply(&watcher::Event::Apply(pod("a", Some("u1"))), None);
        let broken = Lenient::<PodRecord>::decode(serde_json::json!({"apiVersion": "v1", "kind": "Pod",
            "metadata": {"name": "a", "namespace": "default"}, "spec": {"containers": 7}}));
        assert!(broken.decoded().is_none());
        index.apply(&watcher::Event::Apply(broken), Some(&pod("a", Some("u1"))));
        assert!(names(&index, Some("u1")).is_empty());
    }
}
