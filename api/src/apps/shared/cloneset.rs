//! CloneSet building blocks that are identical in `v1alpha1` and `v1beta1`.

use k8s_openapi::apimachinery::pkg::apis::meta::v1::Time;
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

use crate::common::string_enum;
use crate::serde_util::{is_zero_i32, is_zero_i64};

/// Label carrying the instance id shared by a CloneSet pod and its PVCs.
pub const CLONESET_INSTANCE_ID: &str = "apps.kruise.io/cloneset-instance-id";
/// Default `maxUnavailable` of the CloneSet update strategy.
pub const DEFAULT_CLONESET_MAX_UNAVAILABLE: &str = "20%";
/// Label (`"true"`) making scaling ignore pods in PreparingDelete (v1alpha1 form of
/// `scaleStrategy.excludePreparingDelete`).
pub const CLONESET_SCALING_EXCLUDE_PREPARING_DELETE_KEY: &str =
    "apps.kruise.io/cloneset-scaling-exclude-preparing-delete";
/// Annotation (v1alpha1) for image pre-download parallelism.
pub const IMAGE_PRE_DOWNLOAD_PARALLELISM_KEY: &str = "apps.kruise.io/image-predownload-parallelism";
/// Annotation (v1alpha1) for the image pre-download timeout in seconds.
pub const IMAGE_PRE_DOWNLOAD_TIMEOUT_SECONDS_KEY: &str = "apps.kruise.io/image-predownload-timeout-seconds";
/// Annotation (v1alpha1) for the minimum updated ready pods before pre-downloading.
pub const IMAGE_PRE_DOWNLOAD_MIN_UPDATED_READY_PODS_KEY: &str =
    "apps.kruise.io/image-predownload-min-updated-ready-pods";

/// Condition reason: no progress within `progressDeadlineSeconds`.
pub const CLONESET_PROGRESS_DEADLINE_EXCEEDED: &str = "ProgressDeadlineExceeded";
/// Condition reason: the CloneSet is paused.
pub const CLONESET_PROGRESS_PAUSED: &str = "CloneSetPaused";
/// Condition reason: the CloneSet is updated.
pub const CLONESET_PROGRESS_UPDATED: &str = "CloneSetUpdated";
/// Condition reason: stopped at the partition with the updated pods available.
pub const CLONESET_PROGRESS_PARTITION_AVAILABLE: &str = "ProgressPartitionAvailable";
/// Condition reason: the CloneSet is available.
pub const CLONESET_AVAILABLE: &str = "CloneSetAvailable";

/// Observed state of a CloneSet.
#[derive(Serialize, Deserialize, Clone, Debug, Default, PartialEq, JsonSchema)]
#[serde(rename_all = "camelCase")]
#[schemars(transform = crate::common::Required(&["replicas", "readyReplicas", "availableReplicas", "updatedReplicas", "updatedReadyReplicas"]))]
pub struct CloneSetStatus {
    /// Generation last seen by the controller.
    #[serde(default, skip_serializing_if = "is_zero_i64")]
    pub observed_generation: i64,
    /// Pods created by the controller.
    #[serde(default)]
    #[schemars(transform = crate::common::no_default)]
    pub replicas: i32,
    /// Pods that are ready.
    #[serde(default)]
    #[schemars(transform = crate::common::no_default)]
    pub ready_replicas: i32,
    /// Pods ready for at least `minReadySeconds`.
    #[serde(default)]
    #[schemars(transform = crate::common::no_default)]
    pub available_replicas: i32,
    /// Pods at the update revision.
    #[serde(default)]
    #[schemars(transform = crate::common::no_default)]
    pub updated_replicas: i32,
    /// Pods at the update revision that are ready.
    #[serde(default)]
    #[schemars(transform = crate::common::no_default)]
    pub updated_ready_replicas: i32,
    /// Pods at the update revision that are available.
    #[serde(default, skip_serializing_if = "is_zero_i32")]
    pub updated_available_replicas: i32,
    /// Pods that should be updated (replicas minus partition).
    #[serde(default, skip_serializing_if = "is_zero_i32")]
    pub expected_updated_replicas: i32,
    /// Latest revision name.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub update_revision: Option<String>,
    /// Current revision name.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub current_revision: Option<String>,
    /// Hash collision counter used to name revisions.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub collision_count: Option<i32>,
    /// Latest observations of the CloneSet's state.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub conditions: Option<Vec<CloneSetCondition>>,
    /// Pod selector in string form, for the scale subresource (HPA).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub label_selector: Option<String>,
}

string_enum! {
    /// CloneSet condition types.
    pub enum CloneSetConditionType {
        /// Creating or deleting pods or PVCs failed.
        FailedScale = "FailedScale",
        /// Updating pods failed.
        FailedUpdate = "FailedUpdate",
        /// Progress of the rollout.
        Progressing = "Progressing",
    }
}

/// Go's zero value: the empty string (a condition stored without a type).
impl Default for CloneSetConditionType {
    fn default() -> Self {
        Self::Other(String::new())
    }
}

/// A condition of a CloneSet.
#[derive(Serialize, Deserialize, Clone, Debug, PartialEq, JsonSchema)]
#[serde(rename_all = "camelCase")]
#[schemars(transform = crate::common::Required(&["type", "status"]))]
pub struct CloneSetCondition {
    /// Condition type.
    #[serde(default, rename = "type")]
    #[schemars(transform = crate::common::no_default)]
    pub type_: CloneSetConditionType,
    /// `True`, `False` or `Unknown`.
    #[serde(default)]
    #[schemars(transform = crate::common::no_default)]
    pub status: String,
    /// Last time the condition was updated.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub last_update_time: Option<Time>,
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
