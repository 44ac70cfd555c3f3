//! CloneSet `apps.kruise.io/v1beta1` (the storage version).

use k8s_openapi::api::core::v1::{PersistentVolumeClaim, PodTemplateSpec};
use k8s_openapi::apimachinery::pkg::apis::meta::v1::LabelSelector;
use k8s_openapi::apimachinery::pkg::util::intstr::IntOrString;
use kube::CustomResource;
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

pub use crate::apps::shared::cloneset::*;
use crate::common::{
    InPlaceUpdateStrategy, Lifecycle, UpdatePriorityStrategy, UpdateScatterStrategy, string_enum,
};
use crate::serde_util::{is_false, is_zero_i32};

/// Desired state of a v1beta1 CloneSet.
#[derive(CustomResource, Serialize, Deserialize, Clone, Debug, Default, PartialEq, JsonSchema)]
#[kube(
    group = "apps.kruise.io",
    version = "v1beta1",
    kind = "CloneSet",
    plural = "clonesets",
    namespaced,
    status = "CloneSetStatus",
    derive = "PartialEq",
    derive = "Default",
    shortname = "clone",
    doc = "CloneSet manages a set of identical pods, with in-place update support.",
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
        name = "UPDATED",
        type_ = "integer",
        json_path = ".status.updatedReplicas",
        description = "The number of pods updated."
    ),
    printcolumn(
        name = "UPDATED_READY",
        type_ = "integer",
        json_path = ".status.updatedReadyReplicas",
        description = "The number of pods updated and ready."
    ),
    printcolumn(
        name = "UPDATED_AVAILABLE",
        type_ = "integer",
        json_path = ".status.updatedAvailableReplicas",
        description = "The number of pods updated and available."
    ),
    printcolumn(
        name = "READY",
        type_ = "integer",
        json_path = ".status.readyReplicas",
        description = "The number of pods ready."
    ),
    printcolumn(
        name = "TOTAL",
        type_ = "integer",
        json_path = ".status.replicas",
        description = "The number of currently all pods."
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
        description = "The containers of currently cloneset."
    ),
    printcolumn(
        name = "IMAGES",
        type_ = "string",
        priority = 1,
        json_path = ".spec.template.spec.containers[*].image",
        description = "The images of currently cloneset."
    ),
    printcolumn(
        name = "SELECTOR",
        type_ = "string",
        priority = 1,
        json_path = ".status.labelSelector",
        description = "The selector of currently cloneset."
    )
)]
#[serde(rename_all = "camelCase")]
#[schemars(transform = crate::common::Required(&["template"]))]
pub struct CloneSetSpec {
    /// Desired number of pods (default 1).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub replicas: Option<i32>,
    /// Pod selector; must match the template labels.
    #[serde(skip_serializing_if = "Option::is_none")]
    #[schemars(required)]
    pub selector: Option<LabelSelector>,
    /// Template of the pods (schemaless in the CRD).
    #[schemars(schema_with = "crate::common::preserve_unknown_object")]
    #[serde(default)]
    #[schemars(transform = crate::common::no_default)]
    pub template: PodTemplateSpec,
    /// PVCs created per pod (schemaless in the CRD).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(schema_with = "crate::common::preserve_unknown_object_list")]
    pub volume_claim_templates: Option<Vec<PersistentVolumeClaim>>,
    /// How pods are created and deleted.
    #[serde(default)]
    #[schemars(transform = crate::common::no_default)]
    pub scale_strategy: CloneSetScaleStrategy,
    /// How pods are updated.
    #[serde(default)]
    #[schemars(transform = crate::common::no_default)]
    pub update_strategy: CloneSetUpdateStrategy,
    /// Number of old revisions kept (default 10).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub revision_history_limit: Option<i32>,
    /// Seconds a pod must be ready to count as available.
    #[serde(default, skip_serializing_if = "is_zero_i32")]
    pub min_ready_seconds: i32,
    /// Lifecycle hooks of the pods.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub lifecycle: Option<Lifecycle>,
    /// Seconds allowed to make progress before a ProgressDeadlineExceeded condition.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub progress_deadline_seconds: Option<i32>,
}

/// Scaling settings of a v1beta1 CloneSet.
#[derive(Serialize, Deserialize, Clone, Debug, Default, PartialEq, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct CloneSetScaleStrategy {
    /// Names of pods to delete.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub pods_to_delete: Option<Vec<String>>,
    /// Maximum unavailable pods while scaling up.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub max_unavailable: Option<IntOrString>,
    /// Reuse PVCs of deleted pods for new pods (default false).
    #[serde(default, skip_serializing_if = "is_false")]
    #[schemars(extend("default" = false))]
    #[serde(rename = "enablePVCReuse")]
    pub enable_pvc_reuse: bool,
    /// Scale counts ignore pods in PreparingDelete.
    #[serde(default, skip_serializing_if = "is_false")]
    pub exclude_preparing_delete: bool,
}

/// Update settings of a v1beta1 CloneSet.
#[derive(Serialize, Deserialize, Clone, Debug, Default, PartialEq, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct CloneSetUpdateStrategy {
    /// `RollingUpdate` (default) or `OnDelete`.
    #[serde(rename = "type", default, skip_serializing_if = "Option::is_none")]
    pub type_: Option<CloneSetUpdateStrategyType>,
    /// Rolling update parameters.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub rolling_update: Option<RollingUpdateCloneSetStrategy>,
}

string_enum! {
    /// v1beta1 CloneSet update type.
    pub enum CloneSetUpdateStrategyType {
        /// Update pods in rolling batches (default).
        RollingUpdate = "RollingUpdate",
        /// Pods are only replaced when deleted by hand.
        OnDelete = "OnDelete",
    }
}

/// Rolling update parameters of a v1beta1 CloneSet.
#[derive(Serialize, Deserialize, Clone, Debug, Default, PartialEq, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct RollingUpdateCloneSetStrategy {
    /// Number or percentage of pods kept at old revisions.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub partition: Option<IntOrString>,
    /// Maximum unavailable pods during update (default 20%).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub max_unavailable: Option<IntOrString>,
    /// Maximum extra pods during update (default 0).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub max_surge: Option<IntOrString>,
    /// `ReCreate` (default), `InPlaceIfPossible` or `InPlaceOnly`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub pod_update_policy: Option<CloneSetPodUpdateStrategyType>,
    /// Pause the update.
    #[serde(default, skip_serializing_if = "is_false")]
    pub paused: bool,
    /// Update order by priority.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub priority_strategy: Option<UpdatePriorityStrategy>,
    /// Spread pods with these labels across batches.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub scatter_strategy: Option<UpdateScatterStrategy>,
    /// In-place update settings.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub in_place_update_strategy: Option<InPlaceUpdateStrategy>,
}

string_enum! {
    /// How a single pod is updated.
    pub enum CloneSetPodUpdateStrategyType {
        /// Delete and recreate the pod (default).
        ReCreate = "ReCreate",
        /// Update in place when possible, else recreate.
        InPlaceIfPossible = "InPlaceIfPossible",
        /// Always update in place.
        InPlaceOnly = "InPlaceOnly",
    }
}
