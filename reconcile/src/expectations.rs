//! Expectations (docs/cloneset-controller.md#expectations): writes the controller made that its cache has not
//! shown yet. While any is
//! outstanding for a CloneSet, planning waits, so a stale cache never causes a second create or delete.
//!
//! The loop keeps one [`Expectations`] per CloneSet: it calls [`Expectations::expect`] for each action it
//! is about to execute (and [`Expectations::forget`] when the call failed), [`Expectations::observe`]
//! on every reconcile with the objects its cache holds, and [`Expectations::blocked`] before planning.

use std::collections::{BTreeMap, BTreeSet};
use std::time::Duration;

use k8s_openapi::api::core::v1::PersistentVolumeClaim;
use k8s_openapi::jiff::{SignedDuration, Timestamp};
use kruise_api::PodRecord;
use kruise_core::resource_version;

use crate::action::Action;

/// How long an expectation may stay unobserved before it is considered leaked (`--expectation-timeout`).
pub const EXPECTATION_TIMEOUT: Duration = Duration::from_secs(300);

/// Outstanding writes of one CloneSet.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Expectations {
    /// Pod/PVC names whose creation was sent but not yet seen.
    pub creates: BTreeSet<String>,
    /// Pod/PVC names whose deletion was sent but not yet seen gone.
    pub deletes: BTreeSet<String>,
    /// Pod name → the resourceVersion our patch returned; the cache must reach it.
    pub resource_versions: BTreeMap<String, u64>,
    /// When the oldest outstanding expectation was recorded.
    pub since: Option<Timestamp>,
}

/// Why planning must wait.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Blocked {
    /// Still within the timeout: retry after this long (or on the next watch event).
    Wait(Duration),
    /// The timeout passed: the expectations leaked (OpenKruise counts a metric and keeps waiting).
    Leaked,
}

impl Expectations {
    /// Records the scale expectation of an action about to be executed (creates and deletes of pods
    /// and PVCs); other actions need none.
    pub fn expect(&mut self, action: &Action, now: Timestamp) {
        let name = match action {
            Action::CreatePod(p) => p.metadata.name.clone(),
            Action::CreatePvc(p) => p.metadata.name.clone(),
            Action::DeletePod { name, .. } | Action::DeletePvc { name } => Some(name.clone()),
            _ => None,
        };
        let Some(name) = name else { return };
        if matches!(action, Action::CreatePod(_) | Action::CreatePvc(_)) {
            self.creates.insert(name);
        } else {
            self.deletes.insert(name);
        }
        self.since.get_or_insert(now);
    }

    /// Records the resourceVersion a pod patch returned.
    pub fn expect_resource_version(&mut self, pod: &str, resource_version: &str, now: Timestamp) {
        if let Some(rv) = kruise_core::resource_version::parse(resource_version) {
            self.resource_versions.insert(pod.to_owned(), rv);
            self.since.get_or_insert(now);
        }
    }

    /// Drops the expectation of an action whose API call failed (the cache will never show it).
    pub fn forget(&mut self, action: &Action) {
        match action {
            Action::CreatePod(p) => _ = self.creates.remove(p.metadata.name.as_deref().unwrap_or("")),
            Action::CreatePvc(p) => _ = self.creates.remove(p.metadata.name.as_deref().unwrap_or("")),
            Action::DeletePod { name, .. } | Action::DeletePvc { name } => _ = self.deletes.remove(name),
            _ => {}
        }
        self.settle();
    }

    /// Clears what the cache now shows: created objects present, deleted objects absent (or
    /// terminating, for pods), and pods at or past the expected resourceVersion.
    pub fn observe(&mut self, pods: &[PodRecord], pvcs: &[PersistentVolumeClaim]) {
        let present: BTreeSet<&str> = pods
            .iter()
            .filter_map(|p| p.metadata.name.as_deref())
            .chain(pvcs.iter().filter_map(|p| p.metadata.name.as_deref()))
            .collect();
        let live: BTreeSet<&str> = pods
            .iter()
            .filter(|p| p.metadata.deletion_timestamp.is_none())
            .filter_map(|p| p.metadata.name.as_deref())
            .chain(
                pvcs.iter()
                    .filter(|p| p.metadata.deletion_timestamp.is_none())
                    .filter_map(|p| p.metadata.name.as_deref()),
            )
            .collect();
        self.creates.retain(|n| !present.contains(n.as_str()));
        self.deletes.retain(|n| live.contains(n.as_str()));
        self.resource_versions.retain(|name, want| {
            let seen = pods
                .iter()
                .find(|p| p.metadata.name.as_deref() == Some(name.as_str()));
            match seen {
                None => false,
                Some(p) => resource_version::of(&p.metadata).is_none_or(|rv| rv < *want),
            }
        });
        self.settle();
    }

    fn settle(&mut self) {
        if self.is_satisfied() {
            self.since = None;
        }
    }

    /// Nothing outstanding.
    pub fn is_satisfied(&self) -> bool {
        self.creates.is_empty() && self.deletes.is_empty() && self.resource_versions.is_empty()
    }

    /// Whether planning must wait, and for how long.
    pub fn blocked(&self, now: Timestamp) -> Option<Blocked> {
        if self.is_satisfied() {
            return None;
        }
        let since = self.since.unwrap_or(now);
        let timeout = SignedDuration::try_from(EXPECTATION_TIMEOUT).unwrap_or(SignedDuration::ZERO);
        let left = since
            .checked_add(timeout)
            .map(|at| at.duration_since(now))
            .unwrap_or(SignedDuration::ZERO);
        match Duration::try_from(left) {
            Ok(d) if !d.is_zero() => Some(Blocked::Wait(d)),
            _ => Some(Blocked::Leaked),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::pods::fixtures::{now, pod};

    fn later(secs: i64) -> Timestamp {
        now().checked_add(SignedDuration::from_secs(secs)).unwrap()
    }

    #[test]
    fn a_create_blocks_until_the_cache_shows_the_pod() {
        let mut e = Expectations::default();
        let mut created = k8s_openapi::api::core::v1::Pod::default();
        created.metadata.name = Some("demo-a".into());
        e.expect(&Action::CreatePod(Box::new(created)), now());
        assert_eq!(
            e.blocked(later(60)),
            Some(Blocked::Wait(Duration::from_secs(240)))
        );
        e.observe(&[], &[]);
        assert!(e.blocked(later(60)).is_some(), "not in the cache yet");
        assert_eq!(e.blocked(later(301)), Some(Blocked::Leaked));
        e.observe(&[pod("demo-a", "r")], &[]);
        assert_eq!(e.blocked(later(60)), None);
    }

    #[test]
    fn a_delete_blocks_until_the_pod_is_gone_or_terminating() {
        let mut e = Expectations::default();
        let action = Action::DeletePod {
            name: "demo-a".into(),
            uid: None,
        };
        e.expect(&action, now());
        e.observe(&[pod("demo-a", "r")], &[]);
        assert!(!e.is_satisfied());
        let mut terminating = pod("demo-a", "r");
        terminating.metadata.deletion_timestamp =
            Some(k8s_openapi::apimachinery::pkg::apis::meta::v1::Time(now()));
        e.observe(&[terminating], &[]);
        assert!(e.is_satisfied());
        e.expect(&action, now());
        e.forget(&action);
        assert!(
            e.is_satisfied() && e.since.is_none(),
            "a failed call is forgotten"
        );
    }

    #[test]
    fn a_patch_blocks_until_the_cache_reaches_its_resource_version() {
        let mut e = Expectations::default();
        e.expect_resource_version("demo-a", "42", now());
        let mut p = pod("demo-a", "r");
        p.metadata.resource_version = Some("41".into());
        e.observe(std::slice::from_ref(&p), &[]);
        assert!(!e.is_satisfied());
        p.metadata.resource_version = Some("42".into());
        e.observe(&[p], &[]);
        assert!(e.is_satisfied());
    }
}
