//! WorkloadSpread rules read by both pod webhooks and the WorkloadSpread planner: the version a pod is
//! counted under (OpenKruise `pkg/util/workloadspread` `GetPodVersion`), a version's subset statuses
//! before any is recorded, and how admission records one pod in a subset.

use std::collections::BTreeMap;

use k8s_openapi::apimachinery::pkg::apis::meta::v1::Time;
use kruise_api::apps_v1beta1::{WorkloadSpread, WorkloadSpreadStatus, WorkloadSpreadSubsetStatus};

use crate::{
    intstr::{self, Round},
    names::{CONTROLLER_REVISION_HASH_LABEL, POD_TEMPLATE_HASH_LABEL},
    selector::LabelSource,
};

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
}
