//! One UnitedDeployment pass (OpenKruise's `Reconcile`; docs/uniteddeployment.md, "A pass"): the
//! revisions, the allocation, the subset workloads to create, update and delete, the status and the
//! events. The loop carries the writes out; a failed write turns the matching condition False
//! ([`failed`]) and the status is still written.

use std::collections::{BTreeMap, BTreeSet};
use std::time::Duration;

use k8s_openapi::api::apps::v1::ControllerRevision;
use k8s_openapi::apimachinery::pkg::apis::meta::v1::Time;
use k8s_openapi::jiff::Timestamp;
use kruise_api::PodRecord;
use kruise_api::apps_v1beta1::{
    CONDITION_SUBSET_FAILURE, CONDITION_SUBSET_PROVISIONED, CONDITION_SUBSET_UPDATED, CONDITION_UPDATED,
    RESERVED_POD_LABEL, REVISION_LABEL, SUBSET_NAME_LABEL, SUBSET_PATCH_ANNOTATION, SubsetKind,
    UnitedDeployment, UnitedDeploymentCondition, UnitedDeploymentStatus, UnitedDeploymentSubsetCondition,
    UnitedDeploymentSubsetStatus,
};
use kruise_core::pod_state::{is_active, is_ready};
use kruise_core::selector::Selector;

use crate::statefulset::identity::ordinal_of;
use serde_json::Value;

use super::adaptive::schedulability;
use super::allocator::{AllocError, SubsetState, allocate};
use super::reservation::{
    PodLabel, Reservation, Rollout, created_condition, just_recovered_scaled_up, max_unavailable, reservation,
};
use super::revision::{Revisions, revisions};
use super::workload::{Desired, WorkloadError, apply_subset_template, kind_of, set_max_unavailable};

/// What a pass reads.
#[derive(Debug, Clone, Copy)]
pub struct Input<'a> {
    pub ud: &'a UnitedDeployment,
    /// ControllerRevisions the UD controls.
    pub revisions: &'a [ControllerRevision],
    /// Workloads of the four kinds the UD controls (raw objects as read).
    pub workloads: &'a [Value],
    /// Pods of the UD's namespace that its selector selects.
    pub pods: &'a [&'a PodRecord],
    pub now: Timestamp,
}

/// A write to a subset workload.
#[derive(Debug, Clone, PartialEq)]
pub enum SubsetWrite {
    /// POST the body (it has `generateName`).
    Create {
        subset: String,
        kind: SubsetKind,
        body: Value,
    },
    /// PUT the body (the existing object with the UD's fields overwritten; carries its resourceVersion).
    Update {
        subset: String,
        kind: SubsetKind,
        name: String,
        body: Value,
        /// Reservation mode: the `maxUnavailable` the workload gets ([`set_max_unavailable`]).
        max_unavailable: Option<i32>,
        /// apps/v1 StatefulSet: pods to delete once the update is written ([`stuck_pods`]).
        stuck_pods: Vec<String>,
    },
    /// Delete (background propagation): a subset gone from the spec, a duplicate, or another kind.
    Delete {
        kind: SubsetKind,
        name: String,
        why: &'static str,
    },
}

/// An event on the UnitedDeployment.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Event {
    pub warning: bool,
    pub reason: &'static str,
    pub message: String,
}

/// The outcome of a pass.
#[derive(Debug, Clone, PartialEq)]
pub struct Plan {
    pub revisions: Revisions,
    /// The replicas per subset, or why they cannot be allocated (then no subset is touched).
    pub allocation: Result<BTreeMap<String, i32>, AllocError>,
    pub writes: Vec<SubsetWrite>,
    /// Reservation mode: pods whose reserved label must be written (before the subset writes).
    pub pod_labels: Vec<PodLabel>,
    /// Subsets whose workload could not be built (bad patch, foreign controller).
    pub failures: Vec<(String, WorkloadError)>,
    /// The status once every write succeeded.
    pub status: UnitedDeploymentStatus,
    pub events: Vec<Event>,
    /// When to look again (adaptive scheduling: a pending pod times out, a subset recovers).
    pub requeue_after: Option<Duration>,
}

/// A subset workload as read.
#[derive(Debug, Clone)]
struct Existing<'a> {
    kind: SubsetKind,
    name: &'a str,
    object: &'a Value,
}

fn int(v: &Value) -> i32 {
    v.as_i64().and_then(|n| i32::try_from(n).ok()).unwrap_or(0)
}

fn label<'a>(object: &'a Value, key: &str) -> Option<&'a str> {
    object["metadata"]["labels"][key].as_str()
}

/// The partition a workload holds (0 where the kind or its strategy has none).
fn partition_of(object: &Value) -> i32 {
    int(&object["spec"]["updateStrategy"]["rollingUpdate"]["partition"])
}

/// Plans one pass.
pub fn plan(input: Input<'_>) -> Plan {
    let ud = input.ud;
    let revs = revisions(ud, input.revisions);
    let Some((kind, _)) = ud.spec.template.first() else {
        let mut plan = empty_plan(input, revs, Err(AllocError::Unspecified));
        plan.events.clear();
        return plan;
    };
    let mut writes = Vec::new();
    // Subset workloads by subset; the rest deleted.
    let mut by_subset: BTreeMap<&str, Existing<'_>> = BTreeMap::new();
    let mut sorted: Vec<&Value> = input.workloads.iter().collect();
    sorted.sort_by_key(|w| {
        (
            w["metadata"]["creationTimestamp"].as_str().unwrap_or(""),
            w["metadata"]["name"].as_str().unwrap_or(""),
        )
    });
    for object in sorted {
        let (Some(k), Some(name)) = (kind_of(object), object["metadata"]["name"].as_str()) else {
            continue;
        };
        if k != kind {
            writes.push(SubsetWrite::Delete {
                kind: k,
                name: name.into(),
                why: "another template kind",
            });
            continue;
        }
        let Some(subset) = label(object, SUBSET_NAME_LABEL) else {
            continue;
        };
        if by_subset.contains_key(subset) {
            writes.push(SubsetWrite::Delete {
                kind: k,
                name: name.into(),
                why: "duplicate",
            });
        } else {
            by_subset.insert(
                subset,
                Existing {
                    kind: k,
                    name,
                    object,
                },
            );
        }
    }
    let strategy = &ud.spec.topology.schedule_strategy;
    // Adaptive scheduling: which subsets cannot schedule their pods, in the default mode or with
    // reserved pods.
    let reserving = strategy.is_adaptive() && strategy.reserves_unschedulable_pods();
    let adaptive = strategy.is_adaptive() && !reserving;
    let old_status = ud.status.clone().unwrap_or_default();
    let mut requeue: Option<i64> = None;
    let mut subset_conditions = stored_subset_conditions(ud, &old_status, reserving, input.now);
    let rollout = Rollout {
        revision: &revs.update,
        updating_since: updating_since(&old_status, &revs, input.now),
    };
    let mut reservations: BTreeMap<String, Reservation> = BTreeMap::new();
    let mut states: BTreeMap<String, SubsetState> = BTreeMap::new();
    for (subset, e) in &by_subset {
        let mut state = SubsetState {
            spec_replicas: int(&e.object["spec"]["replicas"]),
            ready_replicas: int(&e.object["status"]["readyReplicas"]),
            ..SubsetState::default()
        };
        let pods: Vec<&PodRecord> = input
            .pods
            .iter()
            .copied()
            .filter(|p| subset_of(p) == Some(subset))
            .collect();
        if reserving && let Some(conditions) = subset_conditions.get(*subset) {
            let r = reservation(strategy, conditions.clone(), &pods, rollout, input.now);
            state.unschedulable = r.unschedulable;
            state.marked_unschedulable = r.marked_unschedulable;
            state.reserved_pods = r.reserved_pods;
            if let Some(after) = r.requeue_after {
                requeue = Some(requeue.map_or(after, |q| q.min(after)));
            }
            reservations.insert(subset.to_string(), r);
        }
        let old = old_status.subset_statuses.iter().find(|s| s.name == *subset);
        if adaptive && let Some(old) = old {
            let replicas = int(&e.object["status"]["replicas"]);
            let s = schedulability(
                strategy,
                old.conditions.clone(),
                replicas,
                state.ready_replicas,
                &pods,
                input.now,
            );
            state.unschedulable = s.unschedulable;
            if let Some(after) = s.requeue_after {
                requeue = Some(requeue.map_or(after, |r| r.min(after)));
            }
            subset_conditions.insert(subset.to_string(), s.conditions);
        }
        states.insert(subset.to_string(), state);
    }
    let allocation = match allocate(&ud.spec, &states) {
        Ok(a) => a,
        Err(e) => return empty_plan(input, revs, Err(e)),
    };
    for (subset, r) in &mut reservations {
        let spec_replicas = states.get(subset).map_or(0, |s| s.spec_replicas);
        let allocated = allocation.get(subset).copied().unwrap_or(0);
        just_recovered_scaled_up(r, spec_replicas, allocated, input.now);
        subset_conditions.insert(subset.clone(), r.conditions.clone());
    }
    let partitions = ud
        .spec
        .update_strategy
        .manual_update
        .as_ref()
        .map(|m| &m.partitions);
    let next_partition = |subset: &str| {
        let want = partitions.and_then(|p| p.get(subset)).copied().unwrap_or(0);
        want.min(allocation.get(subset).copied().unwrap_or(0))
    };
    let in_spec: BTreeSet<&str> = ud.spec.topology.subsets.iter().map(|s| s.name.as_str()).collect();
    for (subset, e) in &by_subset {
        if !in_spec.contains(subset) {
            writes.push(SubsetWrite::Delete {
                kind: e.kind,
                name: e.name.into(),
                why: "subset removed",
            });
        }
    }
    let mut failures = Vec::new();
    let (mut created, mut updated) = (0, 0);
    for subset in &ud.spec.topology.subsets {
        let name = subset.name.as_str();
        let desired = Desired {
            subset: name,
            revision: &revs.update,
            replicas: allocation.get(name).copied().unwrap_or(0),
            partition: next_partition(name),
        };
        let existing = by_subset.get(name);
        if let Some(e) = existing
            && !needs_update(e.object, &desired, subset.patch.as_ref(), input.pods)
        {
            continue;
        }
        match apply_subset_template(ud, desired, existing.map(|e| e.object)) {
            Ok(mut body) => {
                // Reservation: an unschedulable subset may replace its old reserved pods.
                let unavailable = existing.and_then(|e| {
                    let r = reservations.get(name).filter(|r| r.unschedulable)?;
                    let ready = int(&e.object["status"]["readyReplicas"]);
                    Some(max_unavailable(int(&e.object["spec"]["replicas"]), ready, r))
                });
                if let Some(pods) = unavailable {
                    set_max_unavailable(&mut body, kind, pods);
                }
                match existing {
                    None => {
                        created += 1;
                        writes.push(SubsetWrite::Create {
                            subset: name.into(),
                            kind,
                            body,
                        });
                    }
                    Some(e) if body != *e.object => {
                        updated += 1;
                        let stuck = stuck_pods(kind, e.object, &desired, input.pods);
                        writes.push(SubsetWrite::Update {
                            subset: name.into(),
                            kind,
                            name: e.name.into(),
                            body,
                            max_unavailable: unavailable,
                            stuck_pods: stuck,
                        });
                    }
                    Some(_) => {}
                }
            }
            Err(error) => failures.push((name.to_string(), error)),
        }
    }
    let mut events = Vec::new();
    let deleted = writes
        .iter()
        .filter(|w| matches!(w, SubsetWrite::Delete { .. }))
        .count();
    if created > 0 {
        events.push(normal(
            "SuccessfulUpdateSubset",
            format!("Create {created} Subset ({})", kind.kind()),
        ));
    }
    if deleted > 0 {
        events.push(normal(
            "SuccessfulUpdateSubset",
            format!("Delete {deleted} Subset ({})", kind.kind()),
        ));
    }
    let now = Time(Timestamp::from_second(input.now.as_second()).unwrap_or(input.now));
    if adaptive && created > 0 {
        let critical = i64::from(strategy.reschedule_critical_seconds());
        requeue = Some(requeue.map_or(critical, |r| r.min(critical)));
    }
    let mut status = status(input, &revs, &allocation, &next_partition, &by_subset, &now);
    for s in &mut status.subset_statuses {
        if let Some(conditions) = subset_conditions.remove(&s.name) {
            s.conditions = conditions;
        }
        if let Some(r) = reservations.get(&s.name) {
            s.reserved_pods = r.reserved_pods;
            status.reserved_pods += r.reserved_pods;
        }
    }
    if reserving {
        // Reserved pods are not counted; an HPA reading the scale subresource counts the others.
        status.replicas -= status.reserved_pods;
        status
            .label_selector
            .push_str(&format!(",{RESERVED_POD_LABEL}=false"));
    }
    let pod_labels = reservations.into_values().flat_map(|r| r.labels).collect();
    if created + deleted > 0 {
        set_condition(
            &mut status.conditions,
            CONDITION_SUBSET_PROVISIONED,
            "True",
            "",
            "",
            &now,
        );
    }
    if updated > 0 {
        set_condition(
            &mut status.conditions,
            CONDITION_SUBSET_UPDATED,
            "True",
            "",
            "",
            &now,
        );
    }
    for (subset, error) in &failures {
        let message = format!(
            "Error updating PodSet ({}) {subset} when updating: {error}",
            kind.kind()
        );
        set_condition(
            &mut status.conditions,
            CONDITION_SUBSET_UPDATED,
            "False",
            "Error",
            &message,
            &now,
        );
        events.push(warning("FailedUpdateSubset", message));
    }
    let requeue_after = requeue.map(|s| Duration::from_secs(s.max(1).unsigned_abs()));
    Plan {
        revisions: revs,
        allocation: Ok(allocation),
        writes,
        pod_labels,
        failures,
        status,
        events,
        requeue_after,
    }
}

/// The subsets' conditions as stored; under reservation, a subset added to a UD that already had
/// subsets starts marked unschedulable (OpenKruise's `initStatus`).
fn stored_subset_conditions(
    ud: &UnitedDeployment,
    old: &UnitedDeploymentStatus,
    reserving: bool,
    now: Timestamp,
) -> BTreeMap<String, Vec<UnitedDeploymentSubsetCondition>> {
    let had_subsets = !old.subset_statuses.is_empty();
    ud.spec
        .topology
        .subsets
        .iter()
        .map(|subset| {
            let conditions = match old.subset_statuses.iter().find(|s| s.name == subset.name) {
                Some(s) => s.conditions.clone(),
                None if reserving && had_subsets => vec![created_condition(now)],
                None => Vec::new(),
            };
            (subset.name.clone(), conditions)
        })
        .collect()
}

/// When the UD began updating to its update revision (its `UnitedDeploymentUpdated` condition turned
/// False), or `None` when it is not updating.
fn updating_since(old: &UnitedDeploymentStatus, revs: &Revisions, now: Timestamp) -> Option<Timestamp> {
    if revs.current == revs.update {
        return None;
    }
    let stored = old
        .conditions
        .iter()
        .find(|c| c.type_ == CONDITION_UPDATED && c.status == "False");
    Some(
        stored
            .and_then(|c| c.last_transition_time.as_ref())
            .map_or(now, |t| t.0),
    )
}

/// OpenKruise's work-around for the apps/v1 StatefulSet rolling update that never proceeds past a
/// broken pod (kubernetes/kubernetes#67250): after a `RollingUpdate` StatefulSet subset is updated, its
/// pods at or above the partition that are not at the update revision and not Ready are deleted, so
/// the StatefulSet recreates them at the new revision.
pub fn stuck_pods(
    kind: SubsetKind,
    workload: &Value,
    desired: &Desired<'_>,
    pods: &[&PodRecord],
) -> Vec<String> {
    let on_delete = workload["spec"]["updateStrategy"]["type"] == "OnDelete";
    if kind != SubsetKind::StatefulSet || on_delete {
        return Vec::new();
    }
    let set = workload["metadata"]["name"].as_str().unwrap_or_default();
    pods.iter()
        .filter(|p| subset_of(p) == Some(desired.subset))
        .filter(|p| {
            let name = p.metadata.name.as_deref().unwrap_or_default();
            ordinal_of(set, name).is_some_and(|o| o >= i64::from(desired.partition))
                && revision_of(p) != Some(desired.revision)
                && !is_ready(p)
        })
        .filter_map(|p| p.metadata.name.clone())
        .collect()
}

/// OpenKruise's update triggers: another revision, replicas, partition or patch, or pods of the
/// subset not yet at the update revision — not counting the pods the partition holds back (OpenKruise
/// rewrites a partitioned subset on every pass).
fn needs_update(object: &Value, desired: &Desired<'_>, patch: Option<&Value>, pods: &[&PodRecord]) -> bool {
    let patch_text = patch.map(Value::to_string).unwrap_or_default();
    let updated = pods
        .iter()
        .filter(|p| {
            subset_of(p) == Some(desired.subset) && is_active(p) && revision_of(p) == Some(desired.revision)
        })
        .count();
    label(object, REVISION_LABEL) != Some(desired.revision)
        || int(&object["spec"]["replicas"]) != desired.replicas
        || partition_of(object) != desired.partition
        || object["metadata"]["annotations"][SUBSET_PATCH_ANNOTATION].as_str() != Some(patch_text.as_str())
        || (updated as i64) < i64::from(int(&object["status"]["replicas"]) - desired.partition)
}

fn subset_of(pod: &PodRecord) -> Option<&str> {
    pod.metadata.labels.get(SUBSET_NAME_LABEL)
}

fn revision_of(pod: &PodRecord) -> Option<&str> {
    pod.metadata.labels.get(REVISION_LABEL)
}

fn normal(reason: &'static str, message: String) -> Event {
    Event {
        warning: false,
        reason,
        message,
    }
}

fn warning(reason: &'static str, message: String) -> Event {
    Event {
        warning: true,
        reason,
        message,
    }
}

/// A plan that touches no subset: the allocation failed (or there is no template).
fn empty_plan(
    input: Input<'_>,
    revs: Revisions,
    allocation: Result<BTreeMap<String, i32>, AllocError>,
) -> Plan {
    let mut status = input.ud.status.clone().unwrap_or_default();
    status.observed_generation = input.ud.metadata.generation.unwrap_or(0);
    let events = match &allocation {
        Err(e) => vec![warning(
            "Failed SpecifySubsetReplicas",
            format!("Specified subset replicas is ineffective: {e}"),
        )],
        Ok(_) => Vec::new(),
    };
    Plan {
        revisions: revs,
        allocation,
        writes: Vec::new(),
        pod_labels: Vec::new(),
        failures: Vec::new(),
        status,
        events,
        requeue_after: None,
    }
}

/// Sets a condition; `lastTransitionTime` moves only when the status flips.
pub fn set_condition(
    conditions: &mut Vec<UnitedDeploymentCondition>,
    type_: &str,
    status: &str,
    reason: &str,
    message: &str,
    now: &Time,
) {
    match conditions.iter_mut().find(|c| c.type_ == type_) {
        Some(c) => {
            if c.status != status {
                c.last_transition_time = Some(now.clone());
            }
            c.status = status.into();
            c.reason = reason.into();
            c.message = message.into();
        }
        None => conditions.push(UnitedDeploymentCondition {
            type_: type_.into(),
            status: status.into(),
            last_transition_time: Some(now.clone()),
            reason: reason.into(),
            message: message.into(),
        }),
    }
}

/// The status after a write of `condition` (`SubsetProvisioned` or `SubsetUpdated`) failed: False,
/// reason `Error` (persisted, where OpenKruise returns before its status write).
pub fn failed(status: &mut UnitedDeploymentStatus, condition: &str, message: &str, now: Timestamp) {
    let now = Time(Timestamp::from_second(now.as_second()).unwrap_or(now));
    set_condition(&mut status.conditions, condition, "False", "Error", message, &now);
}

fn status(
    input: Input<'_>,
    revs: &Revisions,
    allocation: &BTreeMap<String, i32>,
    next_partition: &dyn Fn(&str) -> i32,
    existing: &BTreeMap<&str, Existing<'_>>,
    now: &Time,
) -> UnitedDeploymentStatus {
    let ud = input.ud;
    let old = ud.status.clone().unwrap_or_default();
    let mut s = UnitedDeploymentStatus {
        observed_generation: ud.metadata.generation.unwrap_or(0),
        collision_count: revs.collision_count,
        updated_revision: revs.update.clone(),
        current_revision: old.current_revision.clone(),
        conditions: old.conditions.clone(),
        label_selector: Selector::parse(ud.spec.selector.as_ref())
            .to_selector_string()
            .unwrap_or_default(),
        ..UnitedDeploymentStatus::default()
    };
    for subset in &ud.spec.topology.subsets {
        let workload = existing.get(subset.name.as_str());
        let ready = workload.map_or(0, |e| int(&e.object["status"]["readyReplicas"]));
        s.replicas += workload.map_or(0, |e| int(&e.object["status"]["replicas"]));
        s.ready_replicas += ready;
        let conditions = old
            .subset_statuses
            .iter()
            .find(|o| o.name == subset.name)
            .map(|o| o.conditions.clone())
            .unwrap_or_default();
        s.subset_statuses.push(UnitedDeploymentSubsetStatus {
            name: subset.name.clone(),
            replicas: allocation.get(&subset.name).copied().unwrap_or(0),
            ready_replicas: ready,
            partition: next_partition(&subset.name),
            reserved_pods: 0,
            conditions,
        });
    }
    let in_spec = |p: &PodRecord| subset_of(p).is_some_and(|n| existing.contains_key(n));
    for pod in input.pods.iter().filter(|p| in_spec(p) && is_active(p)) {
        if revision_of(pod) == Some(revs.update.as_str()) {
            s.updated_replicas += 1;
            s.updated_ready_replicas += i32::from(is_ready(pod));
        }
    }
    if s.current_revision.is_empty() {
        s.current_revision = revs.current.clone();
    }
    if s.updated_revision != s.current_revision && s.updated_ready_replicas >= s.replicas {
        s.current_revision = s.updated_revision.clone();
    }
    let (flag, reason, message) = if s.current_revision != s.updated_revision {
        (
            "False",
            "UnitedDeploymentRevisionUpdating",
            format!("updating to revision {}", s.updated_revision),
        )
    } else {
        (
            "True",
            "UnitedDeploymentRevisionUpdated",
            format!("updated to revision {}", s.updated_revision),
        )
    };
    if s.conditions
        .iter()
        .find(|c| c.type_ == CONDITION_UPDATED)
        .map(|c| c.status.as_str())
        != Some(flag)
    {
        set_condition(&mut s.conditions, CONDITION_UPDATED, flag, reason, &message, now);
    }
    s.conditions.retain(|c| c.type_ != CONDITION_SUBSET_FAILURE);
    s
}
