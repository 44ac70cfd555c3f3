//! Pod creates and deletes sent but not yet shown by the cache, keyed by node (creates) and pod name
//! (deletes): BroadcastJob pods get generated names, so a create is known by its node. Unlike
//! OpenKruise (openkruise/kruise#1289), an expectation older than [`EXPECTATION_TIMEOUT`] is dropped
//! and planning carries on from what the cache shows.

use std::collections::BTreeMap;
use std::time::Duration;

use k8s_openapi::jiff::{SignedDuration, Timestamp};
use kruise_api::PodRecord;

pub use crate::expectations::EXPECTATION_TIMEOUT;

use super::pod::assigned_node;
use crate::action::Action;

/// Outstanding writes of one BroadcastJob.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct NodeExpectations {
    /// Node → when a pod create for it was sent.
    pub creates: BTreeMap<String, Timestamp>,
    /// Pod name → when its deletion was sent.
    pub deletes: BTreeMap<String, Timestamp>,
}

impl NodeExpectations {
    /// Records the expectation of an action about to be executed.
    pub fn expect(&mut self, action: &Action, now: Timestamp) {
        match action {
            Action::CreatePodOnNode { node, .. } => _ = self.creates.insert(node.clone(), now),
            Action::DeletePod { name, .. } => _ = self.deletes.insert(name.clone(), now),
            _ => {}
        }
    }

    /// Drops the expectation of an action whose call failed.
    pub fn forget(&mut self, action: &Action) {
        match action {
            Action::CreatePodOnNode { node, .. } => _ = self.creates.remove(node),
            Action::DeletePod { name, .. } => _ = self.deletes.remove(name),
            _ => {}
        }
    }

    /// Clears what `pods` (the job's pods in the cache) show, and what timed out by `now`.
    pub fn observe(&mut self, pods: &[PodRecord], now: Timestamp) {
        self.creates
            .retain(|node, _| !pods.iter().any(|p| assigned_node(p) == Some(node.as_str())));
        self.deletes.retain(|name, _| {
            pods.iter().any(|p| {
                p.metadata.name.as_deref() == Some(name.as_str()) && p.metadata.deletion_timestamp.is_none()
            })
        });
        let fresh = |since: &mut Timestamp| left(*since, now).is_some();
        self.creates.retain(|_, since| fresh(since));
        self.deletes.retain(|_, since| fresh(since));
    }

    /// How long until the oldest outstanding expectation times out; `None` when nothing is outstanding.
    pub fn wait(&self, now: Timestamp) -> Option<Duration> {
        self.creates
            .values()
            .chain(self.deletes.values())
            .filter_map(|since| left(*since, now))
            .min()
    }
}

/// Time left before an expectation recorded at `since` times out.
fn left(since: Timestamp, now: Timestamp) -> Option<Duration> {
    let timeout = SignedDuration::try_from(EXPECTATION_TIMEOUT).unwrap_or(SignedDuration::ZERO);
    let at = since.checked_add(timeout).ok()?;
    Duration::try_from(at.duration_since(now))
        .ok()
        .filter(|d| !d.is_zero())
}
