//! WorkloadSpread building blocks that are identical in `v1alpha1` and `v1beta1`.

use k8s_openapi::apimachinery::pkg::apis::meta::v1::LabelSelector;
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

use crate::common::string_enum;
use crate::serde_util::is_false;

/// Pod annotation recording the WorkloadSpread and subset a pod was assigned to.
pub const MATCHED_WORKLOADSPREAD_ANNOTATION: &str = "apps.kruise.io/matched-workloadspread";
/// Subset condition type telling whether the subset can take more pods.
pub const SUBSET_SCHEDULABLE: &str = "Schedulable";

/// The workload whose pods are spread.
#[derive(Serialize, Deserialize, Clone, Debug, Default, PartialEq, Eq, JsonSchema)]
#[serde(rename_all = "camelCase")]
#[schemars(transform = crate::common::Required(&["apiVersion", "kind", "name"]))]
pub struct TargetReference {
    /// API version of the workload.
    #[serde(default)]
    #[schemars(transform = crate::common::no_default)]
    pub api_version: String,
    /// Kind of the workload.
    #[serde(default)]
    #[schemars(transform = crate::common::no_default)]
    pub kind: String,
    /// Name of the workload.
    #[serde(default)]
    #[schemars(transform = crate::common::no_default)]
    pub name: String,
}

/// Restricts the WorkloadSpread to part of the workload's pods.
#[derive(Serialize, Deserialize, Clone, Debug, Default, PartialEq, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct TargetFilter {
    /// Only pods matching this selector are managed.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub selector: Option<LabelSelector>,
    /// Dot-separated paths in the workload whose integer values add up to the replica count.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub replicas_path_list: Option<Vec<String>>,
}

string_enum! {
    /// Scheduling strategy across subsets.
    pub enum WorkloadSpreadScheduleStrategyType [validated] {
        /// Pods that cannot be scheduled may be moved to another subset.
        Adaptive = "Adaptive",
        /// Subsets are fixed; no rescheduling (default).
        Fixed = "Fixed",
        /// Unset (treated as Fixed).
        Unset = "",
    }
}

/// How pods are scheduled across subsets.
#[derive(Serialize, Deserialize, Clone, Debug, Default, PartialEq, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct WorkloadSpreadScheduleStrategy {
    /// `Fixed` (default) or `Adaptive`.
    #[serde(rename = "type", default, skip_serializing_if = "Option::is_none")]
    pub type_: Option<WorkloadSpreadScheduleStrategyType>,
    /// Parameters of the Adaptive strategy.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub adaptive: Option<AdaptiveWorkloadSpreadStrategy>,
}

/// Parameters of the Adaptive strategy.
#[derive(Serialize, Deserialize, Clone, Debug, Default, PartialEq, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct AdaptiveWorkloadSpreadStrategy {
    /// Skip the webhook's simple fit check of nodes in a subset.
    #[serde(default, skip_serializing_if = "is_false")]
    pub disable_simulation_schedule: bool,
    /// Seconds a pod may stay unschedulable before it is moved to another subset.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub reschedule_critical_seconds: Option<i32>,
}
