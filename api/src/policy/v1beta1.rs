//! PodUnavailableBudget `policy.kruise.io/v1beta1` (the storage version).

use std::collections::BTreeMap;

use k8s_openapi::apimachinery::pkg::apis::meta::v1::{LabelSelector, Time};
use k8s_openapi::apimachinery::pkg::util::intstr::IntOrString;
use kube::CustomResource;
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

pub use super::shared::*;
use crate::serde_util::is_zero_i64;

/// Desired state of a v1beta1 PodUnavailableBudget.
#[derive(CustomResource, Serialize, Deserialize, Clone, Debug, Default, PartialEq, JsonSchema)]
#[kube(
    group = "policy.kruise.io",
    version = "v1beta1",
    kind = "PodUnavailableBudget",
    plural = "podunavailablebudgets",
    namespaced,
    status = "PodUnavailableBudgetStatus",
    derive = "PartialEq",
    derive = "Default",
    shortname = "pub",
    doc = "PodUnavailableBudget limits how many selected pods may be unavailable at once.",
    printcolumn(
        name = "Allowed",
        type_ = "integer",
        json_path = ".status.unavailableAllowed",
        description = "UnavailableAllowed number of pod unavailable that are currently allowed"
    ),
    printcolumn(
        name = "Current",
        type_ = "integer",
        json_path = ".status.currentAvailable",
        description = "CurrentAvailable current number of available pods"
    ),
    printcolumn(
        name = "Desired",
        type_ = "integer",
        json_path = ".status.desiredAvailable",
        description = "DesiredAvailable minimum desired number of available pods"
    ),
    printcolumn(
        name = "Total",
        type_ = "integer",
        json_path = ".status.totalReplicas",
        description = "TotalReplicas total number of pods counted by this budget"
    )
)]
#[serde(rename_all = "camelCase")]
pub struct PodUnavailableBudgetSpec {
    /// Pods covered by the budget (exclusive with `targetRef`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub selector: Option<LabelSelector>,
    /// Workload whose pods are covered (exclusive with `selector`; wins if both are set).
    #[serde(rename = "targetRef", default, skip_serializing_if = "Option::is_none")]
    pub target_reference: Option<TargetReference>,
    /// Most pods that may be unavailable (wins over `minAvailable`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub max_unavailable: Option<IntOrString>,
    /// Fewest pods that must stay available.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub min_available: Option<IntOrString>,
    /// Operations guarded by the budget (empty: DELETE, UPDATE and EVICT).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub protect_operations: Option<Vec<PubOperation>>,
    /// Expected replica count, for pods without a scalable workload.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(extend("minimum" = 1))]
    pub protect_total_replicas: Option<i32>,
    /// Pods matching this selector are never protected.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub ignored_pod_selector: Option<LabelSelector>,
}

/// The workload whose pods a budget covers.
#[derive(Serialize, Deserialize, Clone, Debug, Default, PartialEq, Eq, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct TargetReference {
    /// API version of the workload.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub api_version: Option<String>,
    /// Kind of the workload.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub kind: Option<String>,
    /// Name of the workload.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub name: Option<String>,
}

/// Observed state of a PodUnavailableBudget.
#[derive(Serialize, Deserialize, Clone, Debug, Default, PartialEq, JsonSchema)]
#[serde(rename_all = "camelCase")]
#[schemars(transform = crate::common::Required(&["unavailableAllowed", "currentAvailable", "desiredAvailable", "totalReplicas"]))]
pub struct PodUnavailableBudgetStatus {
    /// Generation last seen by the controller; the other fields are valid only when it is current.
    #[serde(default, skip_serializing_if = "is_zero_i64")]
    pub observed_generation: i64,
    /// Pods whose disruption was admitted but not yet observed, with the time.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub disrupted_pods: Option<BTreeMap<String, Time>>,
    /// Pods updated in place and not yet available again, with the time.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub unavailable_pods: Option<BTreeMap<String, Time>>,
    /// Number of further pod disruptions currently allowed.
    #[serde(default)]
    #[schemars(transform = crate::common::no_default)]
    pub unavailable_allowed: i32,
    /// Pods currently available.
    #[serde(default)]
    #[schemars(transform = crate::common::no_default)]
    pub current_available: i32,
    /// Minimum pods that must stay available.
    #[serde(default)]
    #[schemars(transform = crate::common::no_default)]
    pub desired_available: i32,
    /// Pods counted by this budget.
    #[serde(default)]
    #[schemars(transform = crate::common::no_default)]
    pub total_replicas: i32,
}
