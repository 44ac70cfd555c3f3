//! Advanced StatefulSet building blocks that are identical in `v1alpha1` and `v1beta1`: the update
//! strategy and the condition type.

use k8s_openapi::apimachinery::pkg::apis::meta::v1::Time;
use k8s_openapi::apimachinery::pkg::util::intstr::IntOrString;
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

use crate::common::{InPlaceUpdateStrategy, UpdatePriorityStrategy, string_enum};
use crate::serde_util::is_false;

/// Largest `rollingUpdate.minReadySeconds` the validation accepts.
pub const MAX_MIN_READY_SECONDS: i32 = 300;
/// Condition type: creating a pod failed in the last pass.
pub const FAILED_CREATE_POD: &str = "FailedCreatePod";
/// Condition type: updating a pod failed in the last pass.
pub const FAILED_UPDATE_POD: &str = "FailedUpdatePod";
/// Pod label naming the pod (`<set>-<ordinal>`), as apps/v1 StatefulSets set it.
pub const STATEFULSET_POD_NAME_LABEL: &str = "statefulset.kubernetes.io/pod-name";
/// Pod label carrying the ordinal (`PodIndexLabel`).
pub const POD_INDEX_LABEL: &str = "apps.kubernetes.io/pod-index";
/// PVC annotation naming the set that resized it.
pub const OWNED_BY_ASTS_ANNOTATION: &str = "apps.kruise.io/owned-by-asts";

string_enum! {
    /// How pods are created and deleted: one at a time in ordinal order, or all at once.
    pub enum PodManagementPolicyType {
        /// Create in increasing, delete in decreasing ordinal order, one ready pod at a time (default).
        OrderedReady = "OrderedReady",
        /// Create and delete without waiting.
        Parallel = "Parallel",
    }
}

string_enum! {
    /// `updateStrategy.type`.
    pub enum StatefulSetUpdateStrategyType {
        /// Replace pods in descending ordinal order (default).
        RollingUpdate = "RollingUpdate",
        /// Pods are only replaced when deleted by hand.
        OnDelete = "OnDelete",
    }
}

string_enum! {
    /// How a single pod is updated.
    pub enum PodUpdateStrategyType {
        /// Delete and recreate the pod (default).
        ReCreate = "ReCreate",
        /// Update in place when possible, else recreate.
        InPlaceIfPossible = "InPlaceIfPossible",
        /// Always update in place.
        InPlaceOnly = "InPlaceOnly",
    }
}

/// How pods are updated.
#[derive(Serialize, Deserialize, Clone, Debug, Default, PartialEq, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct StatefulSetUpdateStrategy {
    /// `RollingUpdate` (default) or `OnDelete`.
    #[serde(rename = "type", default, skip_serializing_if = "Option::is_none")]
    pub type_: Option<StatefulSetUpdateStrategyType>,
    /// Rolling update parameters (only with `RollingUpdate`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub rolling_update: Option<RollingUpdateStatefulSetStrategy>,
}

/// Rolling update parameters.
#[derive(Serialize, Deserialize, Clone, Debug, Default, PartialEq, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct RollingUpdateStatefulSetStrategy {
    /// Pods with an ordinal at or above it are updated (default 0).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub partition: Option<i32>,
    /// Most pods unavailable during the update (default 1; other than 1 only with `Parallel`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub max_unavailable: Option<IntOrString>,
    /// `ReCreate` (default), `InPlaceIfPossible` or `InPlaceOnly`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub pod_update_policy: Option<PodUpdateStrategyType>,
    /// Pause the update.
    #[serde(default, skip_serializing_if = "is_false")]
    pub paused: bool,
    /// Update pods in priority order rather than by ordinal (`Parallel` only).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub unordered_update: Option<UnorderedUpdateStrategy>,
    /// In-place update settings.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub in_place_update_strategy: Option<InPlaceUpdateStrategy>,
    /// Seconds an updated pod must be ready before the next one is updated (0-300, default 0).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub min_ready_seconds: Option<i32>,
}

/// Update order for `Parallel` sets.
#[derive(Serialize, Deserialize, Clone, Debug, Default, PartialEq, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct UnorderedUpdateStrategy {
    /// Priorities of the pods.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub priority_strategy: Option<UpdatePriorityStrategy>,
}

/// A condition of a StatefulSet (apps/v1's shape).
#[derive(Serialize, Deserialize, Clone, Debug, Default, PartialEq, JsonSchema)]
#[serde(rename_all = "camelCase")]
#[schemars(transform = crate::common::Required(&["type", "status"]))]
pub struct StatefulSetCondition {
    /// Condition type, e.g. `FailedCreatePod`.
    #[serde(default, rename = "type")]
    #[schemars(transform = crate::common::no_default)]
    pub type_: String,
    /// `True`, `False` or `Unknown`.
    #[serde(default)]
    #[schemars(transform = crate::common::no_default)]
    pub status: String,
    /// Last time the status changed.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub last_transition_time: Option<Time>,
    /// Machine-readable reason of the last transition.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub reason: Option<String>,
    /// Human-readable details.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub message: Option<String>,
}

/// Annotation in which a `v1alpha1` StatefulSet keeps the `v1beta1`-only fields (JSON
/// `{"spec":{…},"status":{…}}`), so a v1alpha1 read-modify-write does not erase them. kruise-rs's own;
/// OpenKruise drops these fields on the way down.
pub const V1BETA1_FIELDS_ANNOTATION: &str = "kruise-rs.io/statefulset-v1beta1-fields";
/// `spec` fields that only `v1beta1` has.
pub const V1BETA1_ONLY_SPEC_FIELDS: [&str; 6] = [
    "reserveOrdinals",
    "lifecycle",
    "scaleStrategy",
    "persistentVolumeClaimRetentionPolicy",
    "ordinals",
    "volumeClaimUpdateStrategy",
];
/// `status` fields that only `v1beta1` has.
pub const V1BETA1_ONLY_STATUS_FIELDS: [&str; 3] =
    ["updatedReadyReplicas", "updatedAvailableReplicas", "volumeClaims"];
