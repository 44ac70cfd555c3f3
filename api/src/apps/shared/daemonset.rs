//! Advanced DaemonSet building blocks identical in `v1alpha1` and `v1beta1`: the update strategy.

use k8s_openapi::apimachinery::pkg::apis::meta::v1::LabelSelector;
use k8s_openapi::apimachinery::pkg::util::intstr::IntOrString;
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

use crate::common::string_enum;

/// v1alpha1 annotation that turns on partitioned creation (`scaleStrategy.partitionedScaling` in v1beta1).
pub const PROGRESSIVE_CREATE_POD_ANNOTATION: &str = "daemonset.kruise.io/progressive-create-pod";
/// DaemonSet annotation that makes pods carry `pod-template-generation` (upstream's legacy hashing).
pub const DEPRECATED_TEMPLATE_GENERATION_ANNOTATION: &str = "deprecated.daemonset.template.generation";
/// Pod label with the DaemonSet's template generation (only with the annotation above).
pub const POD_TEMPLATE_GENERATION_LABEL: &str = "pod-template-generation";
/// Default `burstReplicas`.
pub const DEFAULT_BURST_REPLICAS: i32 = 250;

string_enum! {
    /// `updateStrategy.type`.
    pub enum DaemonSetUpdateStrategyType {
        /// Replace pods node by node (default).
        RollingUpdate = "RollingUpdate",
        /// Pods are only replaced when deleted by hand.
        OnDelete = "OnDelete",
    }
}

string_enum! {
    /// `rollingUpdate.rollingUpdateType`.
    pub enum RollingUpdateType {
        /// Delete and recreate (or surge) pods (default).
        Standard = "Standard",
        /// Update in place when only images or metadata changed, else recreate.
        InPlaceIfPossible = "InPlaceIfPossible",
        /// v1alpha1 only, deprecated: `Standard` with surge; converted to `Standard` in v1beta1.
        Surging = "Surging",
    }
}

/// How pods are updated.
#[derive(Serialize, Deserialize, Clone, Debug, Default, PartialEq, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct DaemonSetUpdateStrategy {
    /// `RollingUpdate` (default) or `OnDelete`.
    #[serde(rename = "type", default, skip_serializing_if = "Option::is_none")]
    pub type_: Option<DaemonSetUpdateStrategyType>,
    /// Rolling update parameters (only with `RollingUpdate`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub rolling_update: Option<RollingUpdateDaemonSet>,
}

/// Rolling update parameters.
#[derive(Serialize, Deserialize, Clone, Debug, Default, PartialEq, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct RollingUpdateDaemonSet {
    /// `Standard` (default) or `InPlaceIfPossible` (v1alpha1 also `Surging`).
    #[serde(
        rename = "rollingUpdateType",
        default,
        skip_serializing_if = "Option::is_none"
    )]
    pub type_: Option<RollingUpdateType>,
    /// Most nodes whose pod may be unavailable during the update (default 1 when maxSurge is unset).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub max_unavailable: Option<IntOrString>,
    /// Most nodes that may run an extra new pod during the update (default 0).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub max_surge: Option<IntOrString>,
    /// Only nodes with these labels are updated.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub selector: Option<LabelSelector>,
    /// Number (or percent of the desired nodes) of nodes kept at the old revision.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub partition: Option<IntOrString>,
    /// Stops the rollout (creation and deletion for eligibility carry on).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub paused: Option<bool>,
}
