//! WorkloadSpread rules read by both pod webhooks and the WorkloadSpread planner: the version a pod is
//! counted under (OpenKruise `pkg/util/workloadspread` `GetPodVersion`), a version's subset statuses
//! before any is recorded, and how admission records one pod in a subset.

use std::{collections::BTreeMap, time::Duration};

use k8s_openapi::apimachinery::pkg::apis::meta::v1::Time;
use k8s_openapi::jiff::{SignedDuration, Timestamp};
use kruise_api::apps_v1beta1::{WorkloadSpread, WorkloadSpreadStatus, WorkloadSpreadSubsetStatus};

use crate::{
    intstr::{self, Round},
    names::{CONTROLLER_REVISION_HASH_LABEL, POD_TEMPLATE_HASH_LABEL},
    selector::LabelSource,
};

/// How long a `creatingPods` record waits for its pod (OpenKruise's controller drops it after).
pub const CREATE_POD_TIMEOUT: Duration = Duration::from_secs(30);
/// How long a `deletingPods` record waits for its pod to go.
pub const DELETE_POD_TIMEOUT: Duration = Duration::from_secs(15);

/// The version of pods whose workload keeps no versioned subset statuses.
pub const VERSION_IGNORED: &str = "versionIgnored";

/// Controller kinds (lower case) whose pods are counted per version: OpenKruise's default
/// `--ws-enabled-versioned-status=deployment` (which adds `replicaset`).
const VERSIONED_KINDS: [&str; 2] = ["deployment", "replicaset"];

/// The version a pod with controller kind `controller_kind` and `labels` is counted under: for pods of
/// Deployments and ReplicaSets its `pod-template-hash`, else the short hash (after the last `-`) of its
/// `controller-revision-hash`; [`VERSION_IGNORED`] otherwise.
pub fn pod_version<'a>(controller_kind: Option<&str>, labels: &'a impl LabelSource) -> &'a str {
    let versioned =
        controller_kind.is_some_and(|k| VERSIONED_KINDS.contains(&k.to_ascii_lowercase().as_str()));
    if !versioned {
        return VERSION_IGNORED;
    }
    if let Some(hash) = labels.label(POD_TEMPLATE_HASH_LABEL) {
        return hash;
    }
    if let Some(hash) = labels.label(CONTROLLER_REVISION_HASH_LABEL) {
        return hash.rsplit('-').next().unwrap_or(hash);
    }
    VERSION_IGNORED
}

/// A version's subset statuses before any is recorded: one per spec subset, `missingReplicas` =
/// `maxReplicas` scaled (round up) against the workload's `replicas`, or `-1` when unlimited.
pub fn initial_subset_statuses(ws: &WorkloadSpread, replicas: i32) -> Vec<WorkloadSpreadSubsetStatus> {
    ws.spec
        .subsets
        .iter()
        .map(|subset| WorkloadSpreadSubsetStatus {
            name: subset.name.clone(),
            // OpenKruise ignores the error (the value counts 0) and narrows to int32.
            missing_replicas: subset.max_replicas.as_ref().map_or(-1, |max| {
                intstr::scaled(max, i64::from(replicas), Round::Up).unwrap_or(0) as i32
            }),
            ..WorkloadSpreadSubsetStatus::default()
        })
        .collect()
}

/// Whether a recorded pod is being created or deleted.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum SubsetEvent {
    /// Kept in `creatingPods`; takes one of the subset's `missingReplicas`.
    Creating,
    /// Kept in `deletingPods`; gives one back.
    Deleting,
}

/// One pod recorded by admission in subset `subset` of the statuses of `version`, at `at`.
#[derive(Clone, Debug, PartialEq)]
pub struct SubsetRecord {
    pub version: String,
    /// The version's statuses when none were recorded yet ([`initial_subset_statuses`]).
    pub initial: Option<Vec<WorkloadSpreadSubsetStatus>>,
    pub subset: String,
    /// The pod's name (or the uid generated for a pod that has only `generateName`).
    pub pod: String,
    pub event: SubsetEvent,
    pub at: Time,
}

impl SubsetRecord {
    /// The record still holds on `status`, as the webhook would decide on it: the pod is recorded in no
    /// subset of its version, its subset exists and, for a creation, still misses a replica. A grouped
    /// write checks each record against the status the records before it made. (A deletion recorded
    /// meanwhile may have given an earlier subset room again; the pod keeps the subset it was given,
    /// which is within its limit.)
    pub fn holds(&self, status: &WorkloadSpreadStatus) -> bool {
        let recorded = status
            .versioned_subset_statuses
            .as_ref()
            .and_then(|v| v.get(&self.version))
            .filter(|list| !list.is_empty());
        let statuses = recorded.or(self.initial.as_ref()).map_or(&[][..], Vec::as_slice);
        let has = |m: &Option<BTreeMap<String, Time>>| m.as_ref().is_some_and(|m| m.contains_key(&self.pod));
        if statuses
            .iter()
            .any(|s| has(&s.creating_pods) || has(&s.deleting_pods))
        {
            return false;
        }
        let Some(subset) = statuses.iter().find(|s| s.name == self.subset) else {
            return false;
        };
        match self.event {
            SubsetEvent::Creating => subset.missing_replicas > 0 || subset.missing_replicas == -1,
            SubsetEvent::Deleting => true,
        }
    }

    /// Records the pod in `status`; touches only its subset's entry, whatever else is recorded.
    pub fn apply(&self, status: &mut WorkloadSpreadStatus) {
        let statuses = status
            .versioned_subset_statuses
            .get_or_insert_with(BTreeMap::new)
            .entry(self.version.clone())
            .or_default();
        if statuses.is_empty()
            && let Some(initial) = &self.initial
        {
            statuses.clone_from(initial);
        }
        let Some(subset) = statuses.iter_mut().find(|s| s.name == self.subset) else {
            return;
        };
        match self.event {
            SubsetEvent::Creating => {
                let pods = subset.creating_pods.get_or_insert_with(BTreeMap::new);
                pods.insert(self.pod.clone(), self.at.clone());
                if subset.missing_replicas > 0 {
                    subset.missing_replicas -= 1;
                }
            }
            SubsetEvent::Deleting => {
                let pods = subset.deleting_pods.get_or_insert_with(BTreeMap::new);
                pods.insert(self.pod.clone(), self.at.clone());
                if subset.missing_replicas >= 0 {
                    subset.missing_replicas += 1;
                }
            }
        }
    }
}

/// True when `at` is more than `timeout` before `now`.
pub(crate) fn past(at: &Time, timeout: Duration, now: Timestamp) -> bool {
    at.0.checked_add(SignedDuration::try_from(timeout).unwrap_or(SignedDuration::MAX))
        .is_ok_and(|expiry| expiry < now)
}

/// Drops the records admission made that are past their timeout and gives back what each took: what
/// the controller's pass does to them when their pods never show up or go. Standalone `kruise serve`
/// has no controller and its pods never change, so it runs this instead. Returns how many it dropped.
pub fn expire_records(status: &mut WorkloadSpreadStatus, now: Timestamp) -> usize {
    let mut dropped = 0;
    let versions = status
        .versioned_subset_statuses
        .iter_mut()
        .flat_map(|v| v.values_mut());
    for subset in versions.flatten() {
        if let Some(creating) = &mut subset.creating_pods {
            let before = creating.len();
            creating.retain(|_, at| !past(at, CREATE_POD_TIMEOUT, now));
            let gone = (before - creating.len()) as i32;
            if subset.missing_replicas >= 0 {
                subset.missing_replicas += gone;
            }
            dropped += before - creating.len();
        }
        if let Some(deleting) = &mut subset.deleting_pods {
            let before = deleting.len();
            deleting.retain(|_, at| !past(at, DELETE_POD_TIMEOUT, now));
            let gone = (before - deleting.len()) as i32;
            if subset.missing_replicas >= 0 {
                subset.missing_replicas = (subset.missing_replicas - gone).max(0);
            }
            dropped += before - deleting.len();
        }
    }
    dropped
}

/// True when [`expire_records`] would drop something.
pub fn has_expired_records(status: &WorkloadSpreadStatus, now: Timestamp) -> bool {
    let versions = status.versioned_subset_statuses.iter().flat_map(|v| v.values());
    versions.flatten().any(|s| {
        let any = |m: &Option<BTreeMap<String, Time>>, timeout| {
            m.iter().flatten().any(|(_, at)| past(at, timeout, now))
        };
        any(&s.creating_pods, CREATE_POD_TIMEOUT) || any(&s.deleting_pods, DELETE_POD_TIMEOUT)
    })
}

#[cfg(test)]
mod tests {
    use std::collections::BTreeMap;

    use super::*;

    #[test]
    fn versions_follow_the_controller_kind_and_the_hash_labels() {
        let labels = |pairs: &[(&str, &str)]| -> BTreeMap<String, String> {
            pairs
                .iter()
                .map(|(k, v)| (k.to_string(), v.to_string()))
                .collect()
        };
        let both = labels(&[
            ("pod-template-hash", "abc"),
            ("controller-revision-hash", "web-7f9c"),
        ]);
        let revision = labels(&[("controller-revision-hash", "web-7f9c")]);
        let cases = [
            (Some("ReplicaSet"), &both, "abc"),
            (Some("Deployment"), &revision, "7f9c"),
            (Some("replicaset"), &labels(&[]), VERSION_IGNORED),
            (Some("CloneSet"), &both, VERSION_IGNORED),
            (None, &both, VERSION_IGNORED),
        ];
        for (kind, labels, want) in cases {
            assert_eq!(pod_version(kind, labels), want, "{kind:?} {labels:?}");
        }
    }

    #[test]
    fn a_record_takes_or_gives_back_one_replica_of_its_subset_only() {
        let at = Time(k8s_openapi::jiff::Timestamp::from_second(1_700_000_000).unwrap());
        let subset = |name: &str, missing: i32| WorkloadSpreadSubsetStatus {
            name: name.into(),
            missing_replicas: missing,
            ..Default::default()
        };
        let record = |pod: &str, event, initial: Option<Vec<_>>| SubsetRecord {
            version: "v1".into(),
            initial,
            subset: "a".into(),
            pod: pod.into(),
            event,
            at: at.clone(),
        };
        let mut status = WorkloadSpreadStatus::default();
        // No statuses of the version yet: the initial ones are recorded first.
        record(
            "p0",
            SubsetEvent::Creating,
            Some(vec![subset("a", 2), subset("b", -1)]),
        )
        .apply(&mut status);
        record("p1", SubsetEvent::Creating, None).apply(&mut status);
        record("p2", SubsetEvent::Creating, None).apply(&mut status);
        let list = &status.versioned_subset_statuses.as_ref().unwrap()["v1"];
        assert_eq!(list[0].missing_replicas, 0, "never below 0");
        assert_eq!(list[0].creating_pods.as_ref().unwrap().len(), 3);
        assert_eq!(list[1], subset("b", -1), "the other subset untouched");
        record("p0", SubsetEvent::Deleting, None).apply(&mut status);
        let list = &status.versioned_subset_statuses.as_ref().unwrap()["v1"];
        assert_eq!(list[0].missing_replicas, 1);
        assert_eq!(list[0].deleting_pods.as_ref().unwrap()["p0"], at);
    }

    #[test]
    fn expired_records_give_back_what_they_took() {
        let now = Timestamp::from_second(1_700_000_100).unwrap();
        let ago = |s: i64| Time(Timestamp::from_second(1_700_000_100 - s).unwrap());
        let subset = WorkloadSpreadSubsetStatus {
            name: "a".into(),
            missing_replicas: 1,
            creating_pods: Some(BTreeMap::from([("old".into(), ago(31)), ("new".into(), ago(29))])),
            deleting_pods: Some(BTreeMap::from([
                ("gone".into(), ago(16)),
                ("going".into(), ago(14)),
            ])),
            ..Default::default()
        };
        let unlimited = WorkloadSpreadSubsetStatus {
            name: "b".into(),
            missing_replicas: -1,
            ..Default::default()
        };
        let mut status = WorkloadSpreadStatus {
            versioned_subset_statuses: Some(BTreeMap::from([("v1".into(), vec![subset, unlimited])])),
            ..Default::default()
        };
        assert!(has_expired_records(&status, now));
        assert_eq!(expire_records(&mut status, now), 2);
        let list = &status.versioned_subset_statuses.as_ref().unwrap()["v1"];
        // +1 for the booking that never showed, −1 for the deletion that never happened.
        assert_eq!(list[0].missing_replicas, 1);
        assert_eq!(
            list[0].creating_pods.as_ref().unwrap().keys().collect::<Vec<_>>(),
            ["new"]
        );
        assert_eq!(
            list[0].deleting_pods.as_ref().unwrap().keys().collect::<Vec<_>>(),
            ["going"]
        );
        assert_eq!(list[1].missing_replicas, -1);
        assert!(!has_expired_records(&status, now));
        assert_eq!(expire_records(&mut status, now), 0);
    }
}
