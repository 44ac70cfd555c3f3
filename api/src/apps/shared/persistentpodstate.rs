//! PersistentPodState building blocks that are identical in `v1alpha1` and `v1beta1`.

use std::collections::BTreeMap;

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

use crate::common::string_enum;

/// StatefulSet annotation: `"true"` asks for a PersistentPodState of the same name.
pub const AUTO_GENERATE_ANNOTATION: &str = "kruise.io/auto-generate-persistent-pod-state";
/// StatefulSet annotation: comma-separated node label keys the pods must keep.
pub const REQUIRED_TOPOLOGY_ANNOTATION: &str = "kruise.io/required-persistent-topology";
/// StatefulSet annotation: comma-separated node label keys the pods should keep (weight 100).
pub const PREFERRED_TOPOLOGY_ANNOTATION: &str = "kruise.io/preferred-persistent-topology";
/// StatefulSet annotation: comma-separated pod annotation keys to record.
pub const PERSISTENT_POD_ANNOTATIONS_ANNOTATION: &str = "kruise.io/persistent-pod-annotations";
/// Pod annotation set by the pod webhook: the PersistentPodState whose state was injected.
pub const INJECTED_ANNOTATION: &str = "kruise.io/injected-persistent-pod-state";

/// A pod annotation whose value is recorded.
#[derive(Serialize, Deserialize, Clone, Debug, Default, PartialEq, Eq, JsonSchema)]
#[serde(rename_all = "camelCase")]
#[schemars(transform = crate::common::Required(&["key"]))]
pub struct PersistentPodAnnotation {
    /// The annotation key.
    #[serde(default)]
    #[schemars(transform = crate::common::no_default)]
    pub key: String,
}

string_enum! {
    /// When recorded states of pods that are gone are dropped.
    pub enum PersistentPodStateRetentionPolicy [validated] {
        /// Dropped once the pod's ordinal is outside the workload's replicas (the default).
        WhenScaled = "WhenScaled",
        /// Kept until the workload is deleted.
        WhenDeleted = "WhenDeleted",
    }
}

/// Observed state: one entry per pod name.
#[derive(Serialize, Deserialize, Clone, Debug, Default, PartialEq, Eq, JsonSchema)]
#[serde(rename_all = "camelCase")]
#[schemars(transform = crate::common::Required(&["observedGeneration"]))]
pub struct PersistentPodStateStatus {
    /// Generation last seen by the controller.
    #[serde(default)]
    #[schemars(transform = crate::common::no_default)]
    pub observed_generation: i64,
    /// What was recorded for each pod, by pod name.
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub pod_states: BTreeMap<String, PodState>,
}

/// What was recorded for one pod while it was Ready on a node.
#[derive(Serialize, Deserialize, Clone, Debug, Default, PartialEq, Eq, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct PodState {
    /// The node the pod ran on.
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub node_name: String,
    /// That node's values of the configured topology keys.
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub node_topology_labels: BTreeMap<String, String>,
    /// The pod's values of the configured annotation keys.
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub annotations: BTreeMap<String, String>,
}
