//! WorkloadSpread `apps.kruise.io/v1beta1` (the storage version).

use std::collections::BTreeMap;

use k8s_openapi::api::core::v1::{NodeSelectorTerm, PreferredSchedulingTerm, Toleration};
use k8s_openapi::apimachinery::pkg::apis::meta::v1::{Condition, Time};
use k8s_openapi::apimachinery::pkg::util::intstr::IntOrString;
use kube::CustomResource;
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

pub use crate::apps::shared::workloadspread::*;
use crate::serde_util::is_zero_i64;

/// Desired state of a v1beta1 WorkloadSpread.
#[derive(CustomResource, Serialize, Deserialize, Clone, Debug, Default, PartialEq, JsonSchema)]
#[kube(
    group = "apps.kruise.io",
    version = "v1beta1",
    kind = "WorkloadSpread",
    plural = "workloadspreads",
    namespaced,
    status = "WorkloadSpreadStatus",
    derive = "PartialEq",
    derive = "Default",
    shortname = "ws",
    doc = "WorkloadSpread constrains how a workload's pods are spread over subsets of nodes.",
    printcolumn(name = "WorkloadName", type_ = "string", json_path = ".spec.targetRef.name"),
    printcolumn(name = "WorkloadKind", type_ = "string", json_path = ".spec.targetRef.kind"),
    printcolumn(
        name = "Adaptive",
        type_ = "boolean",
        json_path = ".spec.scheduleStrategy.type[?(@ == \"Adaptive\")]",
        description = "Whether use the adaptive reschedule strategy"
    ),
    printcolumn(name = "Age", type_ = "date", json_path = ".metadata.creationTimestamp")
)]
#[serde(rename_all = "camelCase")]
#[schemars(transform = crate::common::Required(&["subsets"]))]
pub struct WorkloadSpreadSpec {
    /// The workload to spread.
    #[serde(rename = "targetRef", skip_serializing_if = "Option::is_none")]
    #[schemars(required)]
    pub target_reference: Option<TargetReference>,
    /// Manage only part of the workload's pods.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub target_filter: Option<TargetFilter>,
    /// The subsets, in priority order.
    #[serde(default)]
    #[schemars(transform = crate::common::no_default)]
    pub subsets: Vec<WorkloadSpreadSubset>,
    /// Scheduling strategy across subsets.
    #[serde(default)]
    #[schemars(transform = crate::common::no_default)]
    pub schedule_strategy: WorkloadSpreadScheduleStrategy,
}

/// One subset of a v1beta1 WorkloadSpread.
#[derive(Serialize, Deserialize, Clone, Debug, Default, PartialEq, JsonSchema)]
#[serde(rename_all = "camelCase")]
#[schemars(transform = crate::common::Required(&["name"]))]
pub struct WorkloadSpreadSubset {
    /// Unique name of the subset.
    #[serde(default)]
    #[schemars(transform = crate::common::no_default)]
    pub name: String,
    /// Required node selector term of the subset (v1alpha1: `requiredNodeSelectorTerm`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub required_node_selector: Option<NodeSelectorTerm>,
    /// Preferred node selector terms of the subset (v1alpha1: `preferredNodeSelectorTerms`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub preferred_node_selector: Option<Vec<PreferredSchedulingTerm>>,
    /// Tolerations added to the subset's pods.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub tolerations: Option<Vec<Toleration>>,
    /// Maximum pods in the subset, a number or a percentage (unset: unlimited).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub max_replicas: Option<IntOrString>,
    /// Strategic-merge patch applied to the subset's pods (kept as raw JSON).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(schema_with = "crate::common::preserve_unknown_object")]
    pub patch: Option<serde_json::Value>,
}

/// Observed state of a v1beta1 WorkloadSpread.
#[derive(Serialize, Deserialize, Clone, Debug, Default, PartialEq, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct WorkloadSpreadStatus {
    /// Generation last seen by the controller.
    #[serde(default, skip_serializing_if = "is_zero_i64")]
    pub observed_generation: i64,
    /// Status of each subset.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub subset_statuses: Option<Vec<WorkloadSpreadSubsetStatus>>,
    /// Subset statuses per workload version, for rolling updates.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub versioned_subset_statuses: Option<BTreeMap<String, Vec<WorkloadSpreadSubsetStatus>>>,
}

/// Observed state of one subset.
#[derive(Serialize, Deserialize, Clone, Debug, Default, PartialEq, JsonSchema)]
#[serde(rename_all = "camelCase")]
#[schemars(transform = crate::common::Required(&["name", "replicas", "missingReplicas"]))]
pub struct WorkloadSpreadSubsetStatus {
    /// Subset name.
    #[serde(default)]
    #[schemars(transform = crate::common::no_default)]
    pub name: String,
    /// Active pods in the subset.
    #[serde(default)]
    #[schemars(transform = crate::common::no_default)]
    pub replicas: i32,
    /// Subset conditions (standard Kubernetes conditions, keyed by type).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(extend("x-kubernetes-list-type" = "map", "x-kubernetes-list-map-keys" = ["type"]))]
    pub conditions: Option<Vec<Condition>>,
    /// Pods still missing to reach maxReplicas (-1: unlimited).
    #[serde(default)]
    #[schemars(transform = crate::common::no_default)]
    pub missing_replicas: i32,
    /// Pods assigned by the webhook but not yet seen by the controller, with the time.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub creating_pods: Option<BTreeMap<String, Time>>,
    /// Pods whose deletion was admitted but not yet seen by the controller, with the time.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub deleting_pods: Option<BTreeMap<String, Time>>,
}
