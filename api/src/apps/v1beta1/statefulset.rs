//! Advanced StatefulSet `apps.kruise.io/v1beta1` (the storage version).

use k8s_openapi::api::core::v1::{PersistentVolumeClaim, PodTemplateSpec};
use k8s_openapi::apimachinery::pkg::apis::meta::v1::LabelSelector;
use k8s_openapi::apimachinery::pkg::util::intstr::IntOrString;
use kube::CustomResource;
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

pub use crate::apps::shared::statefulset::*;
use crate::common::{Lifecycle, string_enum};
use crate::serde_util::{is_zero_i32, is_zero_i64};

/// Desired state of a v1beta1 Advanced StatefulSet.
#[derive(CustomResource, Serialize, Deserialize, Clone, Debug, Default, PartialEq, JsonSchema)]
#[kube(
    group = "apps.kruise.io",
    version = "v1beta1",
    kind = "StatefulSet",
    plural = "statefulsets",
    namespaced,
    status = "StatefulSetStatus",
    derive = "PartialEq",
    derive = "Default",
    shortname = "sts",
    shortname = "asts",
    doc = "Advanced StatefulSet: an apps/v1 StatefulSet with in-place update, partition, parallel updates, reserved ordinals and lifecycle hooks.",
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
        description = "CreationTimestamp is a timestamp representing the server time when this object was created. It is not guaranteed to be set in happens-before order across separate operations. Clients may not set this value. It is represented in RFC3339 form and is in UTC."
    ),
    printcolumn(
        name = "CONTAINERS",
        type_ = "string",
        priority = 1,
        json_path = ".spec.template.spec.containers[*].name",
        description = "The containers of currently advanced statefulset."
    ),
    printcolumn(
        name = "IMAGES",
        type_ = "string",
        priority = 1,
        json_path = ".spec.template.spec.containers[*].image",
        description = "The images of currently advanced statefulset."
    )
)]
#[serde(rename_all = "camelCase")]
#[schemars(transform = crate::common::Required(&["template"]))]
pub struct StatefulSetSpec {
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
    /// PVCs created per pod, named `<template>-<set>-<ordinal>` (schemaless in the CRD).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(schema_with = "crate::common::preserve_unknown_object_list")]
    pub volume_claim_templates: Option<Vec<PersistentVolumeClaim>>,
    /// When PVCs are resized to follow their template (gate `StatefulSetAutoResizePVCGate`).
    #[serde(default)]
    #[schemars(transform = crate::common::no_default)]
    pub volume_claim_update_strategy: VolumeClaimUpdateStrategy,
    /// Headless service giving the pods their network identity.
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub service_name: String,
    /// `OrderedReady` (default) or `Parallel`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub pod_management_policy: Option<PodManagementPolicyType>,
    /// How pods are updated.
    #[serde(default)]
    #[schemars(transform = crate::common::no_default)]
    pub update_strategy: StatefulSetUpdateStrategy,
    /// Number of old revisions kept (default 10).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub revision_history_limit: Option<i32>,
    /// Ordinals left out of the range: integers, or `"a-b"` for an inclusive range.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub reserve_ordinals: Option<Vec<IntOrString>>,
    /// Lifecycle hooks of the pods.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub lifecycle: Option<Lifecycle>,
    /// How pods are created while scaling.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub scale_strategy: Option<StatefulSetScaleStrategy>,
    /// What happens to the PVCs when the set is deleted or scaled down.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub persistent_volume_claim_retention_policy: Option<StatefulSetPersistentVolumeClaimRetentionPolicy>,
    /// Numbering of the pods (gate `StatefulSetStartOrdinal`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub ordinals: Option<StatefulSetOrdinals>,
}

string_enum! {
    /// `volumeClaimUpdateStrategy.type`.
    pub enum VolumeClaimUpdateStrategyType {
        /// PVCs follow their template only when recreated (default).
        OnDelete = "OnDelete",
        /// PVCs are resized as their pod is rolled.
        OnPodRollingUpdate = "OnPodRollingUpdate",
    }
}

/// When PVCs follow a changed volumeClaimTemplate.
#[derive(Serialize, Deserialize, Clone, Debug, Default, PartialEq, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct VolumeClaimUpdateStrategy {
    /// `OnDelete` or `OnPodRollingUpdate`.
    #[serde(rename = "type", default, skip_serializing_if = "Option::is_none")]
    pub type_: Option<VolumeClaimUpdateStrategyType>,
}

/// Scaling settings.
#[derive(Serialize, Deserialize, Clone, Debug, Default, PartialEq, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct StatefulSetScaleStrategy {
    /// Most pods unavailable while scaling (`Parallel` only).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub max_unavailable: Option<IntOrString>,
}

string_enum! {
    /// What happens to a PVC.
    pub enum PersistentVolumeClaimRetentionPolicyType {
        /// Keep it (default).
        Retain = "Retain",
        /// Delete it.
        Delete = "Delete",
    }
}

/// PVC retention when the set is deleted or scaled down.
#[derive(Serialize, Deserialize, Clone, Debug, Default, PartialEq, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct StatefulSetPersistentVolumeClaimRetentionPolicy {
    /// On deletion of the set.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub when_deleted: Option<PersistentVolumeClaimRetentionPolicyType>,
    /// On scale-down (the pod's ordinal leaves the range).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub when_scaled: Option<PersistentVolumeClaimRetentionPolicyType>,
}

/// Numbering of the pods.
#[derive(Serialize, Deserialize, Clone, Debug, Default, PartialEq, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct StatefulSetOrdinals {
    /// Ordinal of the first pod (default 0).
    #[serde(default)]
    pub start: i32,
}

/// Observed state of a v1beta1 Advanced StatefulSet.
#[derive(Serialize, Deserialize, Clone, Debug, Default, PartialEq, JsonSchema)]
#[serde(rename_all = "camelCase")]
#[schemars(transform = crate::common::Required(&["replicas", "readyReplicas", "availableReplicas", "currentReplicas", "updatedReplicas"]))]
pub struct StatefulSetStatus {
    /// Generation last seen by the controller.
    #[serde(default, skip_serializing_if = "is_zero_i64")]
    pub observed_generation: i64,
    /// Pods created by the controller (terminating and condemned ones included).
    #[serde(default)]
    #[schemars(transform = crate::common::no_default)]
    pub replicas: i32,
    /// Pods running and ready.
    #[serde(default)]
    #[schemars(transform = crate::common::no_default)]
    pub ready_replicas: i32,
    /// Pods ready for at least `minReadySeconds`.
    #[serde(default)]
    #[schemars(transform = crate::common::no_default)]
    pub available_replicas: i32,
    /// Pods at the current revision.
    #[serde(default)]
    #[schemars(transform = crate::common::no_default)]
    pub current_replicas: i32,
    /// Pods at the update revision.
    #[serde(default)]
    #[schemars(transform = crate::common::no_default)]
    pub updated_replicas: i32,
    /// Pods at the update revision that are ready.
    #[serde(default, skip_serializing_if = "is_zero_i32")]
    pub updated_ready_replicas: i32,
    /// Pods at the update revision that are available.
    #[serde(default, skip_serializing_if = "is_zero_i32")]
    pub updated_available_replicas: i32,
    /// Revision the pods below the partition are at.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub current_revision: Option<String>,
    /// Revision of the current template.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub update_revision: Option<String>,
    /// Hash collision counter used to name revisions.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub collision_count: Option<i32>,
    /// Failures of the last pass (`FailedCreatePod`, `FailedUpdatePod`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub conditions: Option<Vec<StatefulSetCondition>>,
    /// Pod selector in string form, for the scale subresource (HPA).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub label_selector: Option<String>,
    /// Per volumeClaimTemplate, how many pods have a compatible PVC.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub volume_claims: Option<Vec<VolumeClaimStatus>>,
}

/// PVC compatibility of one volumeClaimTemplate.
#[derive(Serialize, Deserialize, Clone, Debug, Default, PartialEq, JsonSchema)]
#[serde(rename_all = "camelCase")]
#[schemars(transform = crate::common::Required(&["volumeClaimName", "compatibleReplicas", "compatibleReadyReplicas"]))]
pub struct VolumeClaimStatus {
    /// Name of the volumeClaimTemplate.
    #[serde(default)]
    #[schemars(transform = crate::common::no_default)]
    pub volume_claim_name: String,
    /// In-range pods whose PVC matches the template and requests at least its size.
    #[serde(default)]
    #[schemars(transform = crate::common::no_default)]
    pub compatible_replicas: i32,
    /// Those whose PVC capacity reached the request.
    #[serde(default)]
    #[schemars(transform = crate::common::no_default)]
    pub compatible_ready_replicas: i32,
}
