//! What a controller's pod trigger watch saw, so that a pass decides only once the shared cache has
//! caught up. The trigger and the cache are separate watches: a pass that read the cache before it
//! showed the change that triggered it would write a stale status (say, 85 ready of 100 when all
//! are ready) and, with nothing left to trigger it, keep it until the resync.

use std::collections::HashMap;
use std::sync::Mutex;
use std::time::Duration;

use kruise_api::PodRecord;
use kruise_core::resource_version;
use kruise_webhooks::ClusterView;

/// How soon a pass that found the cache behind its trigger looks again.
pub const CACHE_RECHECK: Duration = Duration::from_millis(50);

/// Per owner (namespace, name): pod name → the highest resourceVersion the trigger watch saw.
#[derive(Debug, Default)]
pub struct PodSightings(Mutex<HashMap<(String, String), HashMap<String, u64>>>);

fn version(pod: &PodRecord) -> Option<u64> {
    resource_version::of(&pod.metadata)
}

impl PodSightings {
    /// Notes that the trigger watch saw `pod` (an update, or its deletion) on behalf of `owner`.
    pub fn saw(&self, namespace: &str, owner: &str, pod: &PodRecord) {
        let (Some(name), Some(version)) = (pod.metadata.name.clone(), version(pod)) else {
            return;
        };
        let mut all = self.0.lock().unwrap_or_else(|p| p.into_inner());
        let seen = all
            .entry((namespace.to_string(), owner.to_string()))
            .or_default()
            .entry(name)
            .or_default();
        *seen = (*seen).max(version);
    }

    /// Whether the cache shows every pod `owner`'s trigger saw, at that version or later, or no
    /// longer has it (deleted); forgets the sightings it shows.
    pub fn caught_up(&self, namespace: &str, owner: &str, view: &dyn ClusterView) -> bool {
        let key = (namespace.to_string(), owner.to_string());
        let mut all = self.0.lock().unwrap_or_else(|p| p.into_inner());
        let Some(seen) = all.get_mut(&key) else {
            return true;
        };
        seen.retain(|name, saw| {
            view.pod(namespace, name)
                .is_some_and(|cached| version(&cached).is_some_and(|v| v < *saw))
        });
        let caught_up = seen.is_empty();
        if caught_up {
            all.remove(&key);
        }
        caught_up
    }

    /// Drops the sightings of owners `keep` rejects (deleted ones).
    pub fn retain_owners(&self, keep: impl Fn(&str, &str) -> bool) {
        let mut all = self.0.lock().unwrap_or_else(|p| p.into_inner());
        all.retain(|(namespace, owner), _| keep(namespace, owner));
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use kruise_webhooks::MemoryView;
    use serde_json::json;

    fn pod_json(name: &str, version: &str) -> serde_json::Value {
        json!({"apiVersion": "v1", "kind": "Pod",
            "metadata": {"name": name, "namespace": "ns", "resourceVersion": version}})
    }

    fn pod(name: &str, version: &str) -> PodRecord {
        serde_json::from_value(pod_json(name, version)).unwrap()
    }

    /// A cache holding `pods` (name, resourceVersion).
    fn view_with(pods: &[(&str, &str)]) -> MemoryView {
        let mut view = MemoryView::default();
        for (name, version) in pods {
            view.add(pod_json(name, version)).unwrap();
        }
        view
    }

    #[test]
    fn waits_for_the_cache_to_show_what_the_trigger_saw() {
        let sightings = PodSightings::default();
        assert!(sightings.caught_up("ns", "web", &view_with(&[])), "nothing seen");
        sightings.saw("ns", "web", &pod("web-a", "7"));
        sightings.saw("ns", "web", &pod("web-a", "5"));
        assert!(!sightings.caught_up("ns", "web", &view_with(&[("web-a", "6")])));
        assert!(
            !sightings.caught_up("ns", "web", &view_with(&[("web-a", "6")])),
            "kept"
        );
        assert!(sightings.caught_up("ns", "other", &view_with(&[("web-a", "6")])));
        assert!(sightings.caught_up("ns", "web", &view_with(&[("web-a", "7")])));
        assert!(
            sightings.caught_up("ns", "web", &view_with(&[("web-a", "6")])),
            "forgotten"
        );
        // A deletion seen: caught up once the cache no longer has the pod.
        sightings.saw("ns", "web", &pod("web-b", "9"));
        assert!(!sightings.caught_up("ns", "web", &view_with(&[("web-b", "8")])));
        assert!(sightings.caught_up("ns", "web", &view_with(&[])));
        sightings.saw("ns", "gone", &pod("gone-a", "3"));
        sightings.retain_owners(|_, owner| owner != "gone");
        assert!(sightings.caught_up("ns", "gone", &view_with(&[("gone-a", "1")])));
    }
}
