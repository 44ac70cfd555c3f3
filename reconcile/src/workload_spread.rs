//! The WorkloadSpread status and pod deletion cost planner (OpenKruise's `pkg/controller/workloadspread`).
//! The pod webhook assigns subsets at admission and books them in the status (`creatingPods`,
//! `deletingPods`, `missingReplicas`); a pass recounts each subset from the pods and expires bookings
//! the cluster never confirmed:
//!
//! - pods created before the WorkloadSpread are adopted (`adopt`) into the subset that fits their node
//!   best, and patched with the matched annotation and the subset patch's metadata; pods that are not
//!   scheduled, or fit no subset, are in no subset (and are scaled down first);
//! - `missingReplicas` starts at `maxReplicas` scaled to the workload (rounded up; −1 when unlimited);
//!   every active pod of the subset takes one (floored at 0);
//! - a `deletingPods` record of a still-active pod is kept for 15s ([`DELETE_POD_TIMEOUT`]) and gives
//!   the replica back meanwhile; a `creatingPods` record no pod has shown up for is kept for 30s
//!   ([`CREATE_POD_TIMEOUT`]) and holds a replica meanwhile;
//! - the same is done per pod version (`versionedSubsetStatuses`), keeping versions that still book
//!   something;
//! - for CloneSet, Deployment and ReplicaSet targets, `controller.kubernetes.io/pod-deletion-cost` makes
//!   the workload scale down the last subsets (and the excess of over-full subsets) first;
//! - with Adaptive rescheduling (`reschedule`), pods stuck unschedulable in a subset (but the last) are
//!   deleted and the subset is `Schedulable=False` for five minutes, so the webhook places their
//!   replacements elsewhere.

use std::{
    collections::{BTreeMap, BTreeSet},
    sync::Arc,
    time::Duration,
};

use k8s_openapi::{
    api::{
        apps::v1::{Deployment, ReplicaSet},
        core::v1::{Node, PodTemplateSpec},
    },
    apimachinery::pkg::apis::meta::v1::{OwnerReference, Time},
    jiff::{SignedDuration, Timestamp},
};
use kruise_api::{
    PodRecord,
    apps_v1beta1::{
        MATCHED_WORKLOADSPREAD_ANNOTATION, WorkloadSpread, WorkloadSpreadStatus, WorkloadSpreadSubsetStatus,
    },
};
use serde_json::Value;

use crate::{
    int_or_percent::{InvalidIntOrPercent, scaled_i32},
    pods,
};

pub mod adopt;
mod deletion_cost;
pub mod reschedule;

pub use kruise_core::workload_spread::{CREATE_POD_TIMEOUT, DELETE_POD_TIMEOUT};
/// Pods matching no subset of the spec.
pub const FAKE_SUBSET: &str = "kruise.io/workloadspread-fake-subset-name";
/// The version of pods whose workload has no versioned status.
pub use kruise_core::workload_spread::VERSION_IGNORED;
pub const DELETION_COST_ANNOTATION: &str = "controller.kubernetes.io/pod-deletion-cost";

/// Why a WorkloadSpread cannot be planned.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum PlanError {
    #[error(transparent)]
    IntOrPercent(#[from] InvalidIntOrPercent),
    #[error("subset {0}: negative maxReplicas")]
    NegativeMaxReplicas(String),
}

/// A subset's `maxReplicas` scaled to the workload's replicas (rounded up); `None` when unlimited.
fn max_replicas(
    subset: &kruise_api::apps_v1beta1::WorkloadSpreadSubset,
    replicas: i32,
) -> Result<Option<i32>, PlanError> {
    let Some(max) = &subset.max_replicas else {
        return Ok(None);
    };
    let max = scaled_i32(max, replicas, true, "maxReplicas")?;
    if max < 0 {
        return Err(PlanError::NegativeMaxReplicas(subset.name.clone()));
    }
    Ok(Some(max))
}

/// The matched-workloadspread annotation.
#[derive(Debug, Clone, PartialEq, serde::Deserialize)]
pub struct Injected {
    pub name: String,
    pub subset: String,
    #[serde(default)]
    pub uid: String,
}

pub fn injected(pod: &PodRecord) -> Option<Injected> {
    serde_json::from_str(pods::annotation(pod, MATCHED_WORKLOADSPREAD_ANNOTATION)?).ok()
}

/// The version a pod is counted under ([`kruise_core::workload_spread::pod_version`]).
pub fn pod_version(pod: &PodRecord) -> String {
    let kind = controller_of(pod.metadata.owner_references.as_deref()).map(|o| o.kind.as_str());
    kruise_core::workload_spread::pod_version(kind, &pod.metadata.labels).to_string()
}

fn name(ws: &WorkloadSpread) -> &str {
    ws.metadata.name.as_deref().unwrap_or("")
}

fn namespace(ws: &WorkloadSpread) -> &str {
    ws.metadata.namespace.as_deref().unwrap_or("")
}

/// The controller owner reference of an object.
fn controller_of(owners: Option<&[OwnerReference]>) -> Option<&OwnerReference> {
    owners?.iter().find(|o| o.controller == Some(true))
}

/// Whether `ws` targets the workload `kind` `name` of `namespace`.
pub fn targets(ws: &WorkloadSpread, namespace: &str, kind: &str, name: &str) -> bool {
    ws.metadata.namespace.as_deref() == Some(namespace)
        && ws
            .spec
            .target_reference
            .as_ref()
            .is_some_and(|t| t.kind == kind && t.name == name)
}

/// The version of a Deployment's current template: the `pod-template-hash` of the one of
/// `replica_sets` (those its pods belong to) that the Deployment controls, is not being deleted and
/// has the Deployment's template (the hash label aside).
pub fn latest_deployment_version<'a>(
    deployment: &Deployment,
    replica_sets: impl IntoIterator<Item = &'a ReplicaSet>,
) -> Option<String> {
    let strip = |template: &PodTemplateSpec| {
        let mut t = template.clone();
        if let Some(labels) = t.metadata.as_mut().and_then(|m| m.labels.as_mut()) {
            labels.remove("pod-template-hash");
        }
        t
    };
    let wanted = strip(&deployment.spec.template);
    replica_sets.into_iter().find_map(|rs| {
        let owned = controller_of(rs.metadata.owner_references.as_deref())
            .is_some_and(|o| Some(&o.uid) == deployment.metadata.uid.as_ref());
        let template = rs.spec.template.as_ref()?;
        (owned && rs.metadata.deletion_timestamp.is_none() && strip(template) == wanted)
            .then(|| rs.metadata.labels.as_ref()?.get("pod-template-hash").cloned())
            .flatten()
    })
}

/// The names of the ReplicaSets that control some of `pods`, in name order.
pub fn replica_sets_of(pods: &[Arc<PodRecord>]) -> BTreeSet<String> {
    pods.iter()
        .filter_map(|p| controller_of(p.metadata.owner_references.as_deref()))
        .filter(|o| o.kind == "ReplicaSet")
        .map(|o| o.name.clone())
        .collect()
}

/// Whether deletion cost is managed for this target kind.
pub fn manages_deletion_cost(kind: &str) -> bool {
    matches!(kind, "ReplicaSet" | "Deployment" | "CloneSet")
}

/// The outcome of one pass.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct Plan {
    pub status: WorkloadSpreadStatus,
    /// Whether `status` differs from the WorkloadSpread's.
    pub changed: bool,
    /// Deletion-cost annotations to write: (pod, value).
    pub deletion_costs: Vec<(String, String)>,
    /// When the earliest kept record expires.
    pub recheck_after: Option<Duration>,
    /// Events, `Reason: message` (warnings `CreatePodFailed`, `DeletePodFailed`; `RecoverSchedulable`).
    pub events: Vec<String>,
    /// Pods to delete: pending unschedulable for longer than `rescheduleCriticalSeconds` in a subset that is
    /// not the last one (Adaptive rescheduling); deleted after the status is written.
    pub unschedulable: Vec<String>,
    /// Pods created before the WorkloadSpread, adopted into a subset: (pod, merge patch of the matched
    /// annotation and the subset patch's metadata).
    pub adoptions: Vec<(String, Value)>,
}

/// Inputs of [`plan`] besides the WorkloadSpread.
pub struct Observed<'a> {
    /// The workload's pods (active or not), before `targetFilter`.
    pub pods: &'a [Arc<PodRecord>],
    /// The workload's desired replicas.
    pub replicas: i32,
    /// The version of the workload's current template; `None` when not known.
    pub latest_version: Option<&'a str>,
    /// The nodes of the pods (pods on other nodes are not adopted).
    pub nodes: &'a BTreeMap<String, Arc<Node>>,
    pub now: Timestamp,
}

type PodsBySubset = BTreeMap<String, Vec<Arc<PodRecord>>>;

fn after(time: &Time, delay: Duration) -> Timestamp {
    time.0 + SignedDuration::try_from(delay).unwrap_or_default()
}

fn until(at: Timestamp, now: Timestamp) -> Duration {
    Duration::try_from(at.duration_since(now)).unwrap_or_default()
}

struct SubsetPass<'a> {
    now: Timestamp,
    recheck: &'a mut Option<Duration>,
    events: &'a mut Vec<String>,
    /// Pods that stayed unschedulable too long in an Adaptive subset.
    unschedulable: Vec<String>,
}

impl SubsetPass<'_> {
    fn recheck(&mut self, at: Timestamp) {
        let wait = until(at, self.now);
        *self.recheck = Some(self.recheck.map_or(wait, |r| r.min(wait)));
    }

    /// One subset's status from its pods and its previous status.
    fn subset(
        &mut self,
        ws: &WorkloadSpread,
        index: usize,
        pods: &[Arc<PodRecord>],
        old: Option<&WorkloadSpreadSubsetStatus>,
        replicas: i32,
    ) -> Result<WorkloadSpreadSubsetStatus, PlanError> {
        let subset = &ws.spec.subsets[index];
        let max = max_replicas(subset, replicas)?.unwrap_or(-1);
        let mut missing = max;
        let mut creating = old.and_then(|o| o.creating_pods.clone()).unwrap_or_default();
        let old_deleting = old.and_then(|o| o.deleting_pods.clone()).unwrap_or_default();
        let mut deleting = BTreeMap::new();
        let mut active = 0;
        for pod in pods {
            match injected(pod).filter(|i| !i.uid.is_empty()) {
                Some(i) => creating.remove(&i.uid),
                None => creating.remove(pods::name(pod)),
            };
            if !pods::is_active(pod) {
                continue;
            }
            active += 1;
            if missing > 0 {
                missing -= 1;
            }
            if let Some(at) = old_deleting.get(pods::name(pod)) {
                let expiry = after(at, DELETE_POD_TIMEOUT);
                if expiry < self.now {
                    self.events.push(format!(
                        "DeletePodFailed: Pod {}/{} was expected to be deleted but it wasn't",
                        namespace(ws),
                        pods::name(pod)
                    ));
                } else {
                    deleting.insert(pods::name(pod).to_string(), at.clone());
                    if missing < max {
                        missing += 1;
                    }
                    self.recheck(expiry);
                }
            }
        }
        let mut kept_creating = BTreeMap::new();
        for (id, at) in creating {
            let expiry = after(&at, CREATE_POD_TIMEOUT);
            if expiry < self.now {
                self.events.push(format!(
                    "CreatePodFailed: Pod {}/{id} was expected to be created but it wasn't",
                    namespace(ws)
                ));
            } else {
                if missing > 0 {
                    missing -= 1;
                }
                kept_creating.insert(id, at);
                self.recheck(expiry);
            }
        }
        let old_conditions = old.and_then(|o| o.conditions.clone()).unwrap_or_default();
        let conditions = match reschedule::critical_duration(ws) {
            None => Vec::new(),
            Some(_) if index + 1 == ws.spec.subsets.len() => {
                reschedule::last_subset(&old_conditions, self.now)
            }
            Some(critical) => {
                let mut stuck = Vec::new();
                for pod in pods {
                    match reschedule::pending_timed_out(pod, critical, self.now) {
                        Ok(true) => stuck.push(pods::name(pod).to_string()),
                        Ok(false) => {}
                        Err(at) => self.recheck(at),
                    }
                }
                let outcome = reschedule::rescheduled(&old_conditions, !stuck.is_empty(), self.now);
                if let Some(at) = outcome.recheck_at {
                    self.recheck(at);
                }
                if outcome.recovered {
                    self.events.push(format!(
                        "RecoverSchedulable: Subset {} of WorkloadSpread {}/{} is recovered from unschedulable \
                         to schedulable",
                        subset.name,
                        namespace(ws),
                        name(ws)
                    ));
                }
                self.unschedulable.extend(stuck);
                outcome.conditions
            }
        };
        Ok(WorkloadSpreadSubsetStatus {
            name: subset.name.clone(),
            replicas: active,
            conditions: Some(conditions).filter(|c| !c.is_empty()),
            missing_replicas: missing,
            creating_pods: Some(kept_creating).filter(|m| !m.is_empty()),
            deleting_pods: Some(deleting).filter(|m| !m.is_empty()),
        })
    }

    fn subsets(
        &mut self,
        ws: &WorkloadSpread,
        old: Option<&Vec<WorkloadSpreadSubsetStatus>>,
        by_subset: &PodsBySubset,
        replicas: i32,
    ) -> Result<Vec<WorkloadSpreadSubsetStatus>, PlanError> {
        (0..ws.spec.subsets.len())
            .map(|i| {
                let name = &ws.spec.subsets[i].name;
                let previous = old.and_then(|o| o.iter().find(|s| &s.name == name));
                let pods = by_subset.get(name).map(Vec::as_slice).unwrap_or_default();
                self.subset(ws, i, pods, previous, replicas)
            })
            .collect()
    }
}

fn books_nothing(statuses: &[WorkloadSpreadSubsetStatus]) -> bool {
    statuses.iter().all(|s| {
        s.replicas == 0
            && s.creating_pods.as_ref().is_none_or(BTreeMap::is_empty)
            && s.deleting_pods.as_ref().is_none_or(BTreeMap::is_empty)
    })
}

fn normalized(status: &WorkloadSpreadStatus) -> WorkloadSpreadStatus {
    let clean = |s: &WorkloadSpreadSubsetStatus| WorkloadSpreadSubsetStatus {
        conditions: s.conditions.clone().filter(|c| !c.is_empty()),
        creating_pods: s.creating_pods.clone().filter(|m| !m.is_empty()),
        deleting_pods: s.deleting_pods.clone().filter(|m| !m.is_empty()),
        ..s.clone()
    };
    WorkloadSpreadStatus {
        observed_generation: status.observed_generation,
        subset_statuses: status
            .subset_statuses
            .as_ref()
            .map(|v| v.iter().map(clean).collect::<Vec<_>>())
            .filter(|v| !v.is_empty()),
        versioned_subset_statuses: status
            .versioned_subset_statuses
            .as_ref()
            .map(|m| {
                m.iter()
                    .map(|(k, v)| (k.clone(), v.iter().map(clean).collect()))
                    .collect::<BTreeMap<_, _>>()
            })
            .filter(|m| !m.is_empty()),
    }
}

/// Recounts `ws` from what was observed.
pub fn plan(ws: &WorkloadSpread, observed: &Observed<'_>) -> Result<Plan, PlanError> {
    let ws_name = name(ws);
    let subset_names: BTreeSet<&str> = ws.spec.subsets.iter().map(|s| s.name.as_str()).collect();
    let filter = ws.spec.target_filter.as_ref().and_then(|f| f.selector.as_ref());
    // Group by version, then by subset; pods of no subset of this WorkloadSpread are adopted by version,
    // each version's subsets taking its pods up to their maxReplicas first.
    let mut by_version: BTreeMap<String, Vec<&Arc<PodRecord>>> = BTreeMap::new();
    for pod in observed.pods {
        if filter
            .is_some_and(|f| !kruise_core::selector::selects(Some(f), &pod.metadata.labels).unwrap_or(false))
        {
            continue;
        }
        by_version.entry(pod_version(pod)).or_default().push(pod);
    }
    let mut versioned: BTreeMap<String, PodsBySubset> = BTreeMap::new();
    let mut all: PodsBySubset = BTreeMap::new();
    let mut adoptions = Vec::new();
    for (version, version_pods) in by_version {
        let mut missing = BTreeMap::new();
        for subset in &ws.spec.subsets {
            let max = match &subset.max_replicas {
                None => i64::from(i32::MAX),
                Some(m) => i64::from(scaled_i32(m, observed.replicas, true, "maxReplicas")?),
            };
            missing.insert(subset.name.clone(), max);
        }
        for pod in &version_pods {
            if let Some(m) = injected(pod)
                .filter(|i| i.name == ws_name)
                .and_then(|i| missing.get_mut(&i.subset))
            {
                *m -= 1;
            }
        }
        for pod in version_pods {
            let subset = match injected(pod).filter(|i| i.name == ws_name) {
                Some(i) if subset_names.contains(i.subset.as_str()) => i.subset,
                Some(_) => FAKE_SUBSET.to_string(),
                None => {
                    let node = pod
                        .spec
                        .as_ref()
                        .and_then(|s| s.node_name.as_deref())
                        .filter(|n| !n.is_empty())
                        .and_then(|n| observed.nodes.get(n));
                    match node.and_then(|node| adopt::choose(ws, pod, node, &missing)) {
                        Some(i) => {
                            let subset = &ws.spec.subsets[i];
                            adoptions.push((pods::name(pod).to_string(), adopt::adoption_patch(ws, subset)));
                            if let Some(m) = missing.get_mut(&subset.name) {
                                *m -= 1;
                            }
                            subset.name.clone()
                        }
                        None => FAKE_SUBSET.to_string(),
                    }
                }
            };
            versioned
                .entry(version.clone())
                .or_default()
                .entry(subset.clone())
                .or_default()
                .push(pod.clone());
            all.entry(subset).or_default().push(pod.clone());
        }
    }

    let mut deletion = Vec::new();
    if ws
        .spec
        .target_reference
        .as_ref()
        .is_some_and(|t| manages_deletion_cost(&t.kind))
    {
        for (version, by_subset) in &versioned {
            let reverse = observed.latest_version != Some(version.as_str());
            deletion.extend(deletion_cost::deletion_costs(
                ws,
                by_subset,
                observed.replicas,
                reverse,
            )?);
        }
    }

    let old = ws.status.clone().unwrap_or_default();
    let mut recheck = None;
    let mut events = Vec::new();
    let mut pass = SubsetPass {
        now: observed.now,
        recheck: &mut recheck,
        events: &mut events,
        unschedulable: Vec::new(),
    };
    let subset_statuses = pass.subsets(ws, old.subset_statuses.as_ref(), &all, observed.replicas)?;
    // Only the overall pass deletes: the versioned passes see the same pods.
    let unschedulable = std::mem::take(&mut pass.unschedulable);
    let old_versioned = old.versioned_subset_statuses.clone().unwrap_or_default();
    let mut versioned_statuses = BTreeMap::new();
    for (version, by_subset) in &versioned {
        let statuses = pass.subsets(ws, old_versioned.get(version), by_subset, observed.replicas)?;
        versioned_statuses.insert(version.clone(), statuses);
    }
    // Versions without pods (yet) stay while they book something: the webhook may have admitted a pod
    // the cache has not shown yet.
    for (version, statuses) in &old_versioned {
        if versioned.contains_key(version) {
            continue;
        }
        let statuses = pass.subsets(ws, Some(statuses), &BTreeMap::new(), observed.replicas)?;
        if !books_nothing(&statuses) {
            versioned_statuses.insert(version.clone(), statuses);
        }
    }
    let status = normalized(&WorkloadSpreadStatus {
        observed_generation: ws.metadata.generation.unwrap_or(0),
        subset_statuses: Some(subset_statuses),
        versioned_subset_statuses: Some(versioned_statuses),
    });
    Ok(Plan {
        changed: status != normalized(&old),
        status,
        deletion_costs: deletion,
        recheck_after: recheck,
        events,
        unschedulable,
        adoptions,
    })
}

/// Sum of the integers at `paths` (dotted, e.g. `spec.replicas`) of a workload object.
pub fn replicas_from_paths(object: &Value, paths: &[String]) -> i32 {
    paths
        .iter()
        .map(|path| {
            path.split('.')
                .filter(|s| !s.is_empty())
                .try_fold(object, |v, key| v.get(key))
                .and_then(Value::as_i64)
                .unwrap_or(0) as i32
        })
        .sum()
}

#[cfg(test)]
mod tests;
