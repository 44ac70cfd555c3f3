//! UnitedDeployment `apps.kruise.io/v1beta1` (the storage version).

use k8s_openapi::apimachinery::pkg::apis::meta::v1::LabelSelector;
use kube::CustomResource;
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

pub use crate::apps::shared::uniteddeployment::*;
use crate::serde_util::{is_zero_i32, is_zero_i64};

/// Desired state of a v1beta1 UnitedDeployment.
#[derive(CustomResource, Serialize, Deserialize, Clone, Debug, Default, PartialEq, JsonSchema)]
#[kube(
    group = "apps.kruise.io",
    version = "v1beta1",
    kind = "UnitedDeployment",
    plural = "uniteddeployments",
    namespaced,
    status = "UnitedDeploymentStatus",
    derive = "PartialEq",
    derive = "Default",
    shortname = "ud",
    doc = "UnitedDeployment runs one workload per subset (node pool) and spreads its replicas over them.",
    scale(
        spec_replicas_path = ".spec.replicas",
        status_replicas_path = ".status.replicas",
        label_selector_path = ".status.labelSelector"
    ),
    printcolumn(
        name = "DESIRED",
        type_ = "integer",
        json_path = ".spec.replicas",
        description = "The desired number of pods."
    ),
    printcolumn(
        name = "CURRENT",
        type_ = "integer",
        json_path = ".status.replicas",
        description = "The number of currently all pods."
    ),
    printcolumn(
        name = "UPDATED",
        type_ = "integer",
        json_path = ".status.updatedReplicas",
        description = "The number of pods updated."
    ),
    printcolumn(
        name = "READY",
        type_ = "integer",
        json_path = ".status.readyReplicas",
        description = "The number of pods ready."
    ),
    printcolumn(
        name = "AGE",
        type_ = "date",
        json_path = ".metadata.creationTimestamp",
        description = "CreationTimestamp is a timestamp representing the server time when this object was created."
    )
)]
#[serde(rename_all = "camelCase")]
pub struct UnitedDeploymentSpec {
    /// Total pods over all subsets (default 1).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub replicas: Option<i32>,
    /// Pod selector; must match the workload template's labels.
    #[serde(skip_serializing_if = "Option::is_none")]
    #[schemars(required)]
    pub selector: Option<LabelSelector>,
    /// The workload every subset runs.
    #[serde(default)]
    #[schemars(transform = crate::common::no_default)]
    pub template: SubsetTemplate,
    /// The subsets and the schedule strategy.
    #[serde(default)]
    #[schemars(transform = crate::common::no_default)]
    pub topology: Topology,
    /// How a template change reaches the subsets.
    #[serde(default)]
    #[schemars(transform = crate::common::no_default)]
    pub update_strategy: UnitedDeploymentUpdateStrategy,
    /// Old revisions kept (default 10).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub revision_history_limit: Option<i32>,
}

/// Observed state of a v1beta1 UnitedDeployment.
#[derive(Serialize, Deserialize, Clone, Debug, Default, PartialEq, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct UnitedDeploymentStatus {
    /// Generation last seen by the controller.
    #[serde(default, skip_serializing_if = "is_zero_i64")]
    pub observed_generation: i64,
    /// Ready pods over all subsets.
    #[serde(default, skip_serializing_if = "is_zero_i32")]
    pub ready_replicas: i32,
    /// Pods over all subsets, reserved ones excluded.
    #[serde(default)]
    pub replicas: i32,
    /// Pods at the update revision.
    #[serde(default)]
    pub updated_replicas: i32,
    /// Reserved pods (reservation mode).
    #[serde(default, skip_serializing_if = "is_zero_i32")]
    pub reserved_pods: i32,
    /// Ready pods at the update revision.
    #[serde(default, skip_serializing_if = "is_zero_i32")]
    pub updated_ready_replicas: i32,
    /// Hash collisions met while naming revisions.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub collision_count: Option<i32>,
    /// The revision all pods were at before the update started.
    #[serde(default)]
    pub current_revision: String,
    /// Per subset: allocation, readiness, partition, reserved pods, schedulability.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub subset_statuses: Vec<UnitedDeploymentSubsetStatus>,
    /// `UnitedDeploymentUpdated`, `SubsetProvisioned`, `SubsetUpdated`.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub conditions: Vec<UnitedDeploymentCondition>,
    /// The revision subsets are updated to.
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub updated_revision: String,
    /// The pod selector as a string (the scale subresource's selector).
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub label_selector: String,
}
