//! SidecarSet `apps.kruise.io/v1beta1` (the storage version) (cluster-scoped): injects sidecar containers into
//! matching pods and upgrades them in place.

use k8s_openapi::api::core::v1::{LocalObjectReference, Volume};
use k8s_openapi::apimachinery::pkg::apis::meta::v1::LabelSelector;
use kube::CustomResource;
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

pub use crate::apps::shared::sidecarset::*;

/// Desired state of a v1beta1 SidecarSet.
#[derive(CustomResource, Serialize, Deserialize, Clone, Debug, Default, PartialEq, JsonSchema)]
#[kube(
    group = "apps.kruise.io",
    version = "v1beta1",
    kind = "SidecarSet",
    plural = "sidecarsets",
    status = "SidecarSetStatus",
    derive = "PartialEq",
    derive = "Default",
    doc = "SidecarSet injects sidecar containers into the pods it selects.",
    printcolumn(
        name = "MATCHED",
        type_ = "integer",
        json_path = ".status.matchedPods",
        description = "The number of pods matched."
    ),
    printcolumn(
        name = "UPDATED",
        type_ = "integer",
        json_path = ".status.updatedPods",
        description = "The number of pods matched and updated."
    ),
    printcolumn(
        name = "READY",
        type_ = "integer",
        json_path = ".status.readyPods",
        description = "The number of pods matched and ready."
    ),
    printcolumn(
        name = "AGE",
        type_ = "date",
        json_path = ".metadata.creationTimestamp",
        description = "CreationTimestamp is a timestamp representing the server time when this object was created. It is not guaranteed to be set in happens-before order across separate operations. Clients may not set this value. It is represented in RFC3339 form and is in UTC."
    )
)]
#[serde(rename_all = "camelCase")]
pub struct SidecarSetSpec {
    /// Pods to inject into.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub selector: Option<LabelSelector>,
    /// Only match pods in namespaces with these labels (unset: all namespaces).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub namespace_selector: Option<LabelSelector>,
    /// Init containers injected into new pods, by name in ascending order.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub init_containers: Option<Vec<SidecarContainer>>,
    /// Sidecar containers injected into pods.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub containers: Option<Vec<SidecarContainer>>,
    /// Volumes the sidecars may mount (schemaless in the CRD).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(schema_with = "crate::common::preserve_unknown_object_list")]
    pub volumes: Option<Vec<Volume>>,
    /// How injected pods are updated.
    #[serde(default)]
    #[schemars(transform = crate::common::no_default)]
    pub update_strategy: SidecarSetUpdateStrategy,
    /// How new pods are injected.
    #[serde(default)]
    #[schemars(transform = crate::common::no_default)]
    pub injection_strategy: SidecarSetInjectionStrategy,
    /// Pull secrets added to pods for the sidecar images.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub image_pull_secrets: Option<Vec<LocalObjectReference>>,
    /// Number of revisions kept (default 10).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub revision_history_limit: Option<i32>,
    /// Pod metadata injected along with the sidecars.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub patch_pod_metadata: Option<Vec<SidecarSetPatchPodMetadata>>,
    /// Custom version recorded on this SidecarSet's revisions (v1alpha1 keeps it in the
    /// `apps.kruise.io/sidecarset-custom-version` label).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub custom_version: Option<String>,
}
