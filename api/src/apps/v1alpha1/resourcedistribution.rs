//! ResourceDistribution `apps.kruise.io/v1alpha1`.

use k8s_openapi::apimachinery::pkg::apis::meta::v1::{LabelSelector, Time};
use kube::CustomResource;
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

pub use crate::apps::shared::resourcedistribution::*;
use crate::serde_util::{is_false, is_zero_i32, is_zero_i64};

/// Desired state of a v1alpha1 ResourceDistribution.
#[derive(CustomResource, Serialize, Deserialize, Clone, Debug, Default, PartialEq, JsonSchema)]
#[kube(
    group = "apps.kruise.io",
    version = "v1alpha1",
    kind = "ResourceDistribution",
    plural = "resourcedistributions",
    status = "ResourceDistributionStatus",
    derive = "PartialEq",
    derive = "Default",
    shortname = "distributor",
    doc = "ResourceDistribution copies one Secret or ConfigMap into a set of namespaces and keeps the copies in sync.",
    printcolumn(
        name = "TOTAL",
        type_ = "integer",
        json_path = ".status.desired",
        description = "The desired number of desired distribution and syncs."
    ),
    printcolumn(
        name = "SUCCEED",
        type_ = "integer",
        json_path = ".status.succeeded",
        description = "The number of successful distribution and syncs."
    ),
    printcolumn(
        name = "FAILED",
        type_ = "integer",
        json_path = ".status.failed",
        description = "The number of failed distributions and syncs."
    )
)]
#[serde(rename_all = "camelCase")]
#[schemars(transform = crate::common::Required(&["resource", "targets"]))]
pub struct ResourceDistributionSpec {
    /// The whole object to distribute (a `v1` Secret or ConfigMap), kept as raw JSON.
    #[serde(default)]
    #[schemars(schema_with = "crate::common::embedded_resource")]
    pub resource: serde_json::Value,
    /// Where to distribute it.
    #[serde(default)]
    #[schemars(transform = crate::common::no_default)]
    pub targets: ResourceDistributionTargets,
}

/// The namespaces a v1alpha1 ResourceDistribution targets.
#[derive(Serialize, Deserialize, Clone, Debug, Default, PartialEq, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct ResourceDistributionTargets {
    /// Every namespace but the system ones.
    #[serde(default, skip_serializing_if = "is_false")]
    #[schemars(transform = crate::common::no_default)]
    pub all_namespaces: bool,
    /// Namespaces never targeted.
    #[serde(default)]
    #[schemars(transform = crate::common::no_default)]
    pub excluded_namespaces: ResourceDistributionTargetNamespaces,
    /// Namespaces always targeted (even before they exist).
    #[serde(default)]
    #[schemars(transform = crate::common::no_default)]
    pub included_namespaces: ResourceDistributionTargetNamespaces,
    /// Namespaces whose labels match (v1beta1: `namespaceSelector`).
    #[serde(default)]
    #[schemars(transform = crate::common::no_default)]
    pub namespace_label_selector: LabelSelector,
}

/// Observed state of a v1alpha1 ResourceDistribution.
#[derive(Serialize, Deserialize, Clone, Debug, Default, PartialEq, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct ResourceDistributionStatus {
    /// Namespaces the resource should be in.
    #[serde(default, skip_serializing_if = "is_zero_i32")]
    pub desired: i32,
    /// Namespaces whose copy is in sync.
    #[serde(default, skip_serializing_if = "is_zero_i32")]
    pub succeeded: i32,
    /// `desired - succeeded`.
    #[serde(default, skip_serializing_if = "is_zero_i32")]
    pub failed: i32,
    /// Generation last seen by the controller.
    #[serde(default, skip_serializing_if = "is_zero_i64")]
    pub observed_generation: i64,
    /// The six conditions, one per failure kind.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub conditions: Vec<ResourceDistributionCondition>,
}

/// One failure kind and the namespaces it hit.
#[derive(Serialize, Deserialize, Clone, Debug, Default, PartialEq, JsonSchema)]
#[serde(rename_all = "camelCase")]
#[schemars(transform = crate::common::Required(&["status", "type"]))]
pub struct ResourceDistributionCondition {
    /// One of [`CONDITION_TYPES`].
    #[serde(default, rename = "type")]
    #[schemars(transform = crate::common::no_default)]
    pub type_: String,
    /// `True` when some namespace failed this way.
    #[serde(default)]
    #[schemars(transform = crate::common::no_default)]
    pub status: String,
    /// When `status` last changed.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub last_transition_time: Option<Time>,
    /// `Succeeded`, or the last error met.
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub reason: String,
    /// The namespaces that failed this way (v1beta1: `failedNamespaces`).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    #[serde(rename = "failedNamespace")]
    pub failed_namespaces: Vec<String>,
}
