//! Advanced DaemonSet `apps.kruise.io/v1beta1` (the storage version).

use k8s_openapi::api::apps::v1::DaemonSetCondition;
use k8s_openapi::api::core::v1::PodTemplateSpec;
use k8s_openapi::apimachinery::pkg::apis::meta::v1::LabelSelector;
use k8s_openapi::apimachinery::pkg::util::intstr::IntOrString;
use kube::CustomResource;
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

pub use crate::apps::shared::daemonset::*;
use crate::common::Lifecycle;
use crate::serde_util::{is_false, is_zero_i32, is_zero_i64};

/// Desired state of a v1beta1 Advanced DaemonSet.
#[derive(CustomResource, Serialize, Deserialize, Clone, Debug, Default, PartialEq, JsonSchema)]
#[kube(
    group = "apps.kruise.io",
    version = "v1beta1",
    kind = "DaemonSet",
    plural = "daemonsets",
    namespaced,
    status = "DaemonSetStatus",
    derive = "PartialEq",
    derive = "Default",
    shortname = "daemon",
    shortname = "ads",
    doc = "Advanced DaemonSet: an apps/v1 DaemonSet with partition, in-place update, pause, burst and a preDelete hook.",
    printcolumn(
        name = "DESIRED",
        type_ = "integer",
        json_path = ".status.desiredNumberScheduled",
        description = "The desired number of pods."
    ),
    printcolumn(
        name = "CURRENT",
        type_ = "integer",
        json_path = ".status.currentNumberScheduled",
        description = "The current number of pods."
    ),
    printcolumn(
        name = "READY",
        type_ = "integer",
        json_path = ".status.numberReady",
        description = "The ready number of pods."
    ),
    printcolumn(
        name = "UP-TO-DATE",
        type_ = "integer",
        json_path = ".status.updatedNumberScheduled",
        description = "The updated number of pods."
    ),
    printcolumn(
        name = "AVAILABLE",
        type_ = "integer",
        json_path = ".status.numberAvailable",
        description = "The updated number of pods."
    ),
    printcolumn(
        name = "AGE",
        type_ = "date",
        json_path = ".metadata.creationTimestamp",
        description = "CreationTimestamp is a timestamp representing the server time when this object was created. It is not guaranteed to be set in happens-before order across separate operations. Clients may not set this value. It is represented in RFC3339 form and is in UTC."
    ),
    printcolumn(
        name = "CONTAINERS",
        type_ = "string",
        priority = 1,
        json_path = ".spec.template.spec.containers[*].name",
        description = "The containers of currently daemonset."
    ),
    printcolumn(
        name = "IMAGES",
        type_ = "string",
        priority = 1,
        json_path = ".spec.template.spec.containers[*].image",
        description = "The images of currently advanced daemonset."
    )
)]
#[serde(rename_all = "camelCase")]
#[schemars(transform = crate::common::Required(&["template"]))]
pub struct DaemonSetSpec {
    /// Pod selector; must match the template labels.
    #[serde(skip_serializing_if = "Option::is_none")]
    #[schemars(required)]
    pub selector: Option<LabelSelector>,
    /// Template of the pods (schemaless in the CRD).
    #[schemars(schema_with = "crate::common::preserve_unknown_object")]
    #[serde(default)]
    #[schemars(transform = crate::common::no_default)]
    pub template: PodTemplateSpec,
    /// How pods are updated.
    #[serde(default)]
    #[schemars(transform = crate::common::no_default)]
    pub update_strategy: DaemonSetUpdateStrategy,
    /// Seconds a new pod must be ready before it counts as available.
    #[serde(default, skip_serializing_if = "is_zero_i32")]
    pub min_ready_seconds: i32,
    /// Most pods created or deleted in one pass (int or percent of the desired nodes; default 250).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub burst_replicas: Option<IntOrString>,
    /// Number of old revisions kept (default 10).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub revision_history_limit: Option<i32>,
    /// Lifecycle hooks of the pods (only `preDelete` is used).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub lifecycle: Option<Lifecycle>,
    /// How pods are created on new nodes.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub scale_strategy: Option<DaemonSetScaleStrategy>,
}

/// Creation settings.
#[derive(Serialize, Deserialize, Clone, Debug, Default, PartialEq, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct DaemonSetScaleStrategy {
    /// Nodes kept old by `partition` get no pod at all until the partition is lowered.
    #[serde(default, skip_serializing_if = "is_false")]
    pub partitioned_scaling: bool,
}

/// Observed state of a v1beta1 Advanced DaemonSet.
#[derive(Serialize, Deserialize, Clone, Debug, Default, PartialEq, JsonSchema)]
#[serde(rename_all = "camelCase")]
#[schemars(transform = crate::common::Required(&["currentNumberScheduled", "desiredNumberScheduled", "numberMisscheduled", "numberReady", "updatedNumberScheduled"]))]
pub struct DaemonSetStatus {
    /// Nodes that should run a pod and run at least one.
    #[serde(default)]
    #[schemars(transform = crate::common::no_default)]
    pub current_number_scheduled: i32,
    /// Nodes that run a pod but should not.
    #[serde(default)]
    #[schemars(transform = crate::common::no_default)]
    pub number_misscheduled: i32,
    /// Nodes that should run a pod.
    #[serde(default)]
    #[schemars(transform = crate::common::no_default)]
    pub desired_number_scheduled: i32,
    /// Nodes whose pod is ready.
    #[serde(default)]
    #[schemars(transform = crate::common::no_default)]
    pub number_ready: i32,
    /// Generation last seen by the controller.
    #[serde(default, skip_serializing_if = "is_zero_i64")]
    pub observed_generation: i64,
    /// Nodes whose pod is at the update revision.
    #[serde(default)]
    #[schemars(transform = crate::common::no_default)]
    pub updated_number_scheduled: i32,
    /// Nodes whose pod is available.
    #[serde(default, skip_serializing_if = "is_zero_i32")]
    pub number_available: i32,
    /// Desired nodes without an available pod.
    #[serde(default, skip_serializing_if = "is_zero_i32")]
    pub number_unavailable: i32,
    /// Hash collision counter used to name revisions.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub collision_count: Option<i32>,
    /// Conditions (never set by the controller).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub conditions: Option<Vec<DaemonSetCondition>>,
    /// Short hash of the current template revision.
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub update_revision: String,
}
