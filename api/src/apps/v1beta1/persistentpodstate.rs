//! PersistentPodState `apps.kruise.io/v1beta1` (the storage version).

use kube::CustomResource;
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

pub use crate::apps::shared::persistentpodstate::*;
use crate::apps::shared::workloadspread::TargetReference;

/// Desired state of a v1beta1 PersistentPodState.
#[derive(CustomResource, Serialize, Deserialize, Clone, Debug, Default, PartialEq, JsonSchema)]
#[kube(
    group = "apps.kruise.io",
    version = "v1beta1",
    kind = "PersistentPodState",
    plural = "persistentpodstates",
    namespaced,
    status = "PersistentPodStateStatus",
    derive = "PartialEq",
    derive = "Default",
    shortname = "pps",
    doc = "PersistentPodState records where the pods of a StatefulSet ran, so a recreated pod goes back there.",
    printcolumn(
        name = "TARGET",
        type_ = "string",
        json_path = ".spec.targetRef.name",
        description = "The workload whose pods are recorded."
    ),
    printcolumn(
        name = "AGE",
        type_ = "date",
        json_path = ".metadata.creationTimestamp",
        description = "Time since creation."
    )
)]
#[serde(rename_all = "camelCase")]
#[schemars(transform = crate::common::Required(&["targetRef"]))]
pub struct PersistentPodStateSpec {
    /// The workload (a StatefulSet or an Advanced StatefulSet); immutable.
    #[serde(default, rename = "targetRef")]
    #[schemars(transform = crate::common::no_default)]
    pub target_ref: TargetReference,
    /// Pod annotations whose values are recorded.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub persistent_pod_annotations: Vec<PersistentPodAnnotation>,
    /// Node label keys a recreated pod must keep (injected as a node selector).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub required_persistent_topology: Option<NodeTopologyTerm>,
    /// Node label keys a recreated pod should keep (injected as preferred node affinity).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub preferred_persistent_topology: Vec<PreferredTopologyTerm>,
    /// When states of pods that are gone are dropped; unset means `WhenScaled`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub persistent_pod_state_retention_policy: Option<PersistentPodStateRetentionPolicy>,
}

/// A set of node label keys.
#[derive(Serialize, Deserialize, Clone, Debug, Default, PartialEq, Eq, JsonSchema)]
#[serde(rename_all = "camelCase")]
#[schemars(transform = crate::common::Required(&["keys"]))]
pub struct NodeTopologyTerm {
    /// The node label keys.
    #[serde(default)]
    #[schemars(transform = crate::common::no_default)]
    pub keys: Vec<String>,
}

/// Keys preferred with a weight.
#[derive(Serialize, Deserialize, Clone, Debug, Default, PartialEq, Eq, JsonSchema)]
#[serde(rename_all = "camelCase")]
#[schemars(transform = crate::common::Required(&["weight", "preference"]))]
pub struct PreferredTopologyTerm {
    /// Weight of the injected preferred term (1-100 for the pod to be valid).
    #[serde(default)]
    #[schemars(transform = crate::common::no_default, extend("minimum" = 0))]
    pub weight: i32,
    /// The keys.
    #[serde(default)]
    #[schemars(transform = crate::common::no_default)]
    pub preference: NodeTopologyTerm,
}
