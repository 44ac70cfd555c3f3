//! The PersistentPodState planner (OpenKruise's `pkg/controller/persistentpodstate`).
//!
//! - [`plan_status`]: each Ready, scheduled pod of the target gets its node's name, that node's
//!   values of the configured topology keys and its own values of the configured annotations;
//!   unless the retention policy is `WhenDeleted`, states of pods that are gone and whose ordinal is
//!   outside the workload's live ordinals are dropped; a missing or deleting target clears every
//!   state. The status is returned only when it changed.
//! - [`plan_generated`]: the PersistentPodState a StatefulSet's `kruise.io/auto-generate-…`
//!   annotations ask for, and how to get there from what exists.

use std::collections::{BTreeMap, BTreeSet};

use k8s_openapi::api::core::v1::Node;
use k8s_openapi::apimachinery::pkg::apis::meta::v1::{ObjectMeta, OwnerReference};
use kruise_api::{
    PodRecord,
    apps_v1beta1::{
        AUTO_GENERATE_ANNOTATION, NodeTopologyTerm, PERSISTENT_POD_ANNOTATIONS_ANNOTATION,
        PREFERRED_TOPOLOGY_ANNOTATION, PersistentPodAnnotation, PersistentPodState,
        PersistentPodStateRetentionPolicy, PersistentPodStateSpec, PersistentPodStateStatus, PodState,
        PreferredTopologyTerm, REQUIRED_TOPOLOGY_ANNOTATION, TargetReference,
    },
};
use kruise_core::pod_state;
use kruise_core::selector::LabelSource;

/// What the planner needs to know of the target workload.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Target {
    /// The first ordinal (`spec.ordinals.start`, 0 without).
    pub start: i64,
    /// `spec.replicas` (1 when unset).
    pub replicas: i64,
    /// Ordinals skipped by an Advanced StatefulSet (`spec.reserveOrdinals`).
    pub reserved: BTreeSet<i64>,
    /// The workload has a deletionTimestamp.
    pub deleting: bool,
}

impl Target {
    /// The ordinals the workload's pods have: from `start` upward, skipping the reserved ones.
    fn live_ordinals(&self) -> BTreeSet<i64> {
        kruise_core::ordinals::in_range(self.start, self.replicas, &self.reserved)
            .into_iter()
            .collect()
    }
}

/// The node label keys a PersistentPodState records: its required and preferred keys.
pub fn topology_keys(spec: &PersistentPodStateSpec) -> BTreeSet<&str> {
    let required = spec.required_persistent_topology.iter().flat_map(|t| &t.keys);
    let preferred = spec
        .preferred_persistent_topology
        .iter()
        .flat_map(|t| &t.preference.keys);
    required.chain(preferred).map(String::as_str).collect()
}

/// The ordinal of a StatefulSet pod name (the number after its last `-`).
pub fn ordinal(pod_name: &str) -> Option<i64> {
    pod_name.rsplit_once('-')?.1.parse().ok()
}

/// The status a pass should write, or `None` when it equals the stored one.
///
/// `pods` are the target's active pods; `node` looks a node up by name (a pod whose node is not
/// known keeps its old state).
pub fn plan_status(
    pps: &PersistentPodState,
    target: Option<&Target>,
    pods: &[&PodRecord],
    node: impl Fn(&str) -> Option<std::sync::Arc<Node>>,
) -> Option<PersistentPodStateStatus> {
    let generation = pps.metadata.generation.unwrap_or(0);
    let status = match target {
        None => PersistentPodStateStatus {
            observed_generation: generation,
            pod_states: BTreeMap::new(),
        },
        Some(t) if t.deleting => PersistentPodStateStatus {
            observed_generation: generation,
            pod_states: BTreeMap::new(),
        },
        Some(target) => {
            let mut status = pps.status.clone().unwrap_or_default();
            status.observed_generation = generation;
            record(&pps.spec, pods, &node, &mut status.pod_states);
            if pps.spec.persistent_pod_state_retention_policy
                != Some(PersistentPodStateRetentionPolicy::WhenDeleted)
            {
                drop_gone(target, pods, &mut status.pod_states);
            }
            status
        }
    };
    (pps.status.as_ref() != Some(&status)).then_some(status)
}

/// Records the state of every Ready pod on a known node.
fn record(
    spec: &PersistentPodStateSpec,
    pods: &[&PodRecord],
    node: &impl Fn(&str) -> Option<std::sync::Arc<Node>>,
    states: &mut BTreeMap<String, PodState>,
) {
    let keys = topology_keys(spec);
    for pod in pods {
        let node_name = pod
            .spec
            .as_ref()
            .and_then(|s| s.node_name.as_deref())
            .unwrap_or("");
        if node_name.is_empty() || !pod_state::is_ready(pod) {
            continue;
        }
        let Some(node) = node(node_name) else { continue };
        let node_labels = node.metadata.labels.as_ref();
        let pod_annotations = &pod.metadata.annotations;
        let pick = |map: &dyn LabelSource, keys: &mut dyn Iterator<Item = &str>| {
            keys.filter_map(|k| map.label(k).map(|v| (k.to_string(), v.to_string())))
                .collect()
        };
        let state = PodState {
            node_name: node_name.to_string(),
            node_topology_labels: pick(&node_labels, &mut keys.iter().copied()),
            annotations: pick(
                pod_annotations,
                &mut spec.persistent_pod_annotations.iter().map(|a| a.key.as_str()),
            ),
        };
        states.insert(pod.metadata.name.clone().unwrap_or_default(), state);
    }
}

/// Drops states of pods that are gone and whose ordinal the workload no longer has. Names without
/// an ordinal are kept.
fn drop_gone(target: &Target, pods: &[&PodRecord], states: &mut BTreeMap<String, PodState>) {
    let live = target.live_ordinals();
    let present: BTreeSet<&str> = pods.iter().filter_map(|p| p.metadata.name.as_deref()).collect();
    states
        .retain(|name, _| present.contains(name.as_str()) || ordinal(name).is_none_or(|o| live.contains(&o)));
}

/// The workload whose annotations may ask for a PersistentPodState.
#[derive(Clone, Copy, Debug)]
pub struct Workload<'a> {
    /// `apps/v1` or `apps.kruise.io/v1beta1`.
    pub api_version: &'a str,
    /// `StatefulSet`.
    pub kind: &'a str,
    pub metadata: &'a ObjectMeta,
}

/// What to do about a workload's generated PersistentPodState.
#[derive(Clone, Debug, PartialEq)]
pub enum Generated {
    /// Nothing.
    Keep,
    /// Create this object.
    Create(Box<PersistentPodState>),
    /// Replace the existing object's spec with this one.
    UpdateSpec(Box<PersistentPodStateSpec>),
    /// Delete the existing object (it is controlled by the workload).
    Delete,
}

/// Comma-separated keys of an annotation, trimmed, empty entries skipped.
fn keys_of(value: &str) -> Vec<String> {
    value
        .split(',')
        .map(str::trim)
        .filter(|k| !k.is_empty())
        .map(String::from)
        .collect()
}

/// The spec the workload's annotations ask for, or `None` when they ask for none: the auto-generate
/// annotation is not `"true"`, or neither topology annotation has a key.
pub fn generated_spec(workload: Workload<'_>) -> Option<PersistentPodStateSpec> {
    let annotations = workload.metadata.annotations.as_ref()?;
    if annotations.get(AUTO_GENERATE_ANNOTATION).map(String::as_str) != Some("true") {
        return None;
    }
    let get = |k: &str| keys_of(annotations.get(k).map(String::as_str).unwrap_or(""));
    let (required, preferred) = (
        get(REQUIRED_TOPOLOGY_ANNOTATION),
        get(PREFERRED_TOPOLOGY_ANNOTATION),
    );
    if required.is_empty() && preferred.is_empty() {
        return None;
    }
    Some(PersistentPodStateSpec {
        target_ref: TargetReference {
            api_version: workload.api_version.to_string(),
            kind: workload.kind.to_string(),
            name: workload.metadata.name.clone().unwrap_or_default(),
        },
        persistent_pod_annotations: get(PERSISTENT_POD_ANNOTATIONS_ANNOTATION)
            .into_iter()
            .map(|key| PersistentPodAnnotation { key })
            .collect(),
        required_persistent_topology: (!required.is_empty()).then_some(NodeTopologyTerm { keys: required }),
        preferred_persistent_topology: if preferred.is_empty() {
            Vec::new()
        } else {
            vec![PreferredTopologyTerm {
                weight: 100,
                preference: NodeTopologyTerm { keys: preferred },
            }]
        },
        persistent_pod_state_retention_policy: None,
    })
}

/// True when `pps` is controlled by the workload (its uid).
fn controlled_by(pps: &PersistentPodState, workload: Workload<'_>) -> bool {
    let uid = workload.metadata.uid.as_deref().unwrap_or("");
    !uid.is_empty()
        && pps
            .metadata
            .owner_references
            .iter()
            .flatten()
            .any(|o| o.controller == Some(true) && o.uid == uid)
}

/// What to do about the PersistentPodState named after `workload`, given the one that exists.
/// Objects not controlled by the workload are never changed or deleted.
pub fn plan_generated(workload: Workload<'_>, existing: Option<&PersistentPodState>) -> Generated {
    if workload.metadata.deletion_timestamp.is_some() {
        return Generated::Keep;
    }
    match (generated_spec(workload), existing) {
        (Some(spec), None) => Generated::Create(Box::new(new_generated(workload, spec))),
        (Some(spec), Some(pps)) if controlled_by(pps, workload) && pps.spec != spec => {
            Generated::UpdateSpec(Box::new(spec))
        }
        (None, Some(pps)) if controlled_by(pps, workload) && pps.metadata.deletion_timestamp.is_none() => {
            Generated::Delete
        }
        _ => Generated::Keep,
    }
}

fn new_generated(workload: Workload<'_>, spec: PersistentPodStateSpec) -> PersistentPodState {
    let meta = workload.metadata;
    let mut pps = PersistentPodState::new(meta.name.as_deref().unwrap_or(""), spec);
    pps.metadata.namespace = meta.namespace.clone();
    pps.metadata.owner_references = Some(vec![OwnerReference {
        api_version: workload.api_version.to_string(),
        kind: workload.kind.to_string(),
        name: meta.name.clone().unwrap_or_default(),
        uid: meta.uid.clone().unwrap_or_default(),
        controller: Some(true),
        block_owner_deletion: None,
    }]);
    pps
}

#[cfg(test)]
mod tests;
