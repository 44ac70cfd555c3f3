//! Advanced StatefulSet `apps.kruise.io/v1alpha1`: served and converted; it lacks `reserveOrdinals`,
//! `lifecycle`, `scaleStrategy`, `persistentVolumeClaimRetentionPolicy`, `ordinals`,
//! `volumeClaimUpdateStrategy` and three status fields, which conversion keeps in an annotation.

use k8s_openapi::api::core::v1::{PersistentVolumeClaim, PodTemplateSpec};
use k8s_openapi::apimachinery::pkg::apis::meta::v1::LabelSelector;
use kube::CustomResource;
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

pub use crate::apps::shared::statefulset::*;
use crate::serde_util::is_zero_i64;

/// Desired state of a v1alpha1 Advanced StatefulSet.
#[derive(CustomResource, Serialize, Deserialize, Clone, Debug, Default, PartialEq, JsonSchema)]
#[kube(
    group = "apps.kruise.io",
    version = "v1alpha1",
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
}

/// Observed state of a v1alpha1 Advanced StatefulSet.
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
}
