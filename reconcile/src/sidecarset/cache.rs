//! The facts of a SidecarSet's pods kept across passes (docs/sidecarset-controller.md, "Facts per pod
//! version"): a pod's facts are derived again only when its `resourceVersion` or the SidecarSet's
//! [`SetKey`] moved; pods no longer among the candidates are dropped, so the cache never holds more
//! than the last pass's pods.

use std::sync::Arc;

use foldhash::HashMap;

use kruise_api::PodRecord;
use kruise_api::apps_v1beta1::SidecarSet;

use super::derived::{Deriver, PodFacts, SetKey};

#[derive(Debug)]
struct Entry {
    facts: Arc<PodFacts>,
    /// The refresh that last asked for this pod.
    seen: u64,
}

/// Facts by pod UID for one SidecarSet (UIDs come from the API server: a fast hash is enough).
#[derive(Debug, Default)]
pub struct FactsCache {
    key: Option<SetKey>,
    pods: HashMap<String, Entry>,
    refreshes: u64,
    derived: usize,
}

impl FactsCache {
    /// The facts of `pods` (in their order) for `set`: kept ones where the pod's UID and
    /// resourceVersion and the SidecarSet's key are unchanged, derived otherwise. Pods without a UID or a
    /// resourceVersion are derived every time and not kept.
    pub fn refresh(&mut self, set: &SidecarSet, pods: &[&PodRecord]) -> Vec<Arc<PodFacts>> {
        let deriver = Deriver::new(set);
        let key = deriver.key();
        if self.key.as_ref() != Some(&key) {
            self.pods.clear();
            self.key = Some(key);
        }
        self.refreshes += 1;
        let now = self.refreshes;
        self.derived = 0;
        let mut out = Vec::with_capacity(pods.len());
        let mut marked = 0;
        for pod in pods {
            let (Some(uid), Some(version)) = (
                pod.metadata.uid.as_deref(),
                pod.metadata.resource_version.as_deref(),
            ) else {
                self.derived += 1;
                out.push(Arc::new(deriver.pod(pod)));
                continue;
            };
            match self.pods.get_mut(uid) {
                Some(entry) if entry.facts.resource_version == version => {
                    entry.seen = now;
                    marked += 1;
                    out.push(entry.facts.clone());
                }
                _ => {
                    self.derived += 1;
                    let facts = Arc::new(deriver.pod(pod));
                    self.pods.insert(
                        uid.to_string(),
                        Entry {
                            facts: facts.clone(),
                            seen: now,
                        },
                    );
                    marked += 1;
                    out.push(facts);
                }
            }
        }
        // Entries of pods gone since the last refresh.
        if self.pods.len() != marked {
            self.pods.retain(|_, e| e.seen == now);
        }
        out
    }

    /// How many pods the cache holds.
    pub fn len(&self) -> usize {
        self.pods.len()
    }

    /// Whether the cache holds no pod.
    pub fn is_empty(&self) -> bool {
        self.pods.is_empty()
    }

    /// How many pods the last refresh derived (the others were kept).
    pub fn derived(&self) -> usize {
        self.derived
    }
}

#[cfg(test)]
mod tests;
