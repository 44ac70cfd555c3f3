//! SidecarSet building blocks that are identical in `v1alpha1` and `v1beta1`.

use std::collections::BTreeMap;
use std::ops::{Deref, DerefMut};

use k8s_openapi::api::core::v1::{Container, ObjectFieldSelector};
use k8s_openapi::apimachinery::pkg::apis::meta::v1::{LabelSelector, Time};
use k8s_openapi::apimachinery::pkg::util::intstr::IntOrString;
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

use crate::common::{UpdatePriorityStrategy, UpdateScatterStrategy, string_enum};
use crate::serde_util::{is_false, is_zero_i32, is_zero_i64};

/// Label (v1alpha1) recording the custom version of a SidecarSet and its revisions.
pub const SIDECARSET_CUSTOM_VERSION_LABEL: &str = "apps.kruise.io/sidecarset-custom-version";
/// Annotation marking a SidecarSet as the canary of a base SidecarSet (`"true"`).
pub const SIDECARSET_CANARY_ANNOTATION: &str = "apps.kruise.io/sidecarset-canary";
/// Annotation naming the base SidecarSet of a canary SidecarSet.
pub const SIDECARSET_BASE_ANNOTATION: &str = "apps.kruise.io/sidecarset-base";
/// Standard namespace label used to turn v1alpha1 `spec.namespace` into a namespace selector.
pub const LABEL_METADATA_NAME: &str = "kubernetes.io/metadata.name";

/// A container to inject: a full Kubernetes container plus injection settings.
///
/// The container part is schemaless in the CRD, like in OpenKruise.
#[derive(Serialize, Deserialize, Clone, Debug, Default, PartialEq, JsonSchema)]
#[serde(rename_all = "camelCase")]
#[schemars(extend("x-kubernetes-preserve-unknown-fields" = true))]
pub struct SidecarContainer {
    /// The container definition (name, image, env, ...), inlined.
    #[serde(flatten)]
    #[schemars(skip)]
    pub container: Container,
    /// Put the sidecar before or after the app containers (containers only).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub pod_inject_policy: Option<PodInjectPolicyType>,
    /// Cold or hot upgrade of this sidecar.
    #[serde(default)]
    #[schemars(transform = crate::common::no_default)]
    pub upgrade_strategy: SidecarContainerUpgradeStrategy,
    /// Whether the sidecar also mounts the volume mounts of the app containers.
    #[serde(default)]
    #[schemars(transform = crate::common::no_default)]
    pub share_volume_policy: ShareVolumePolicy,
    /// Whether the sidecar also gets the volume devices of the app containers.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub share_volume_device_policy: Option<ShareVolumePolicy>,
    /// Environment variables copied from other containers of the pod.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub transfer_env: Option<Vec<TransferEnvVar>>,
    /// Resources computed from the pod's other containers at creation time.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub resources_policy: Option<ResourcesPolicy>,
}

impl Deref for SidecarContainer {
    type Target = Container;

    fn deref(&self) -> &Container {
        &self.container
    }
}

impl DerefMut for SidecarContainer {
    fn deref_mut(&mut self) -> &mut Container {
        &mut self.container
    }
}

string_enum! {
    /// Where a sidecar is placed relative to the app containers.
    pub enum PodInjectPolicyType {
        /// In front of the app containers (default for containers).
        BeforeAppContainer = "BeforeAppContainer",
        /// Behind the app containers.
        AfterAppContainer = "AfterAppContainer",
    }
}

/// Whether volume sharing is on.
#[derive(Serialize, Deserialize, Clone, Debug, Default, PartialEq, JsonSchema)]
pub struct ShareVolumePolicy {
    /// `enabled` or `disabled`.
    #[serde(rename = "type", default, skip_serializing_if = "Option::is_none")]
    pub type_: Option<ShareVolumePolicyType>,
}

string_enum! {
    /// Volume sharing switch.
    pub enum ShareVolumePolicyType {
        /// Share the app containers' mounts.
        Enabled = "enabled",
        /// Do not share.
        Disabled = "disabled",
    }
}

/// One environment variable (or several) copied from another container.
#[derive(Serialize, Deserialize, Clone, Debug, Default, PartialEq, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct TransferEnvVar {
    /// Name of the container to copy from.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub source_container_name: Option<String>,
    /// Take the source container name from a pod field instead.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub source_container_name_from: Option<SourceContainerNameSource>,
    /// Name of the variable to copy.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub env_name: Option<String>,
    /// Names of several variables to copy.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub env_names: Option<Vec<String>>,
}

/// Pod field that names the source container.
#[derive(Serialize, Deserialize, Clone, Debug, Default, PartialEq, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct SourceContainerNameSource {
    /// `metadata.name`, `metadata.labels['k']` or `metadata.annotations['k']`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub field_ref: Option<ObjectFieldSelector>,
}

/// Computes sidecar resources from the pod's other containers when the pod is created.
///
/// Both `targetContainersMode` and `resourcesExpr` are required by the CRD schema but decode
/// leniently (defaults when absent), as Go does.
#[derive(Serialize, Deserialize, Clone, Debug, Default, PartialEq, JsonSchema)]
#[serde(rename_all = "camelCase")]
#[schemars(extend("required" = ["resourcesExpr", "targetContainersMode"]))]
pub struct ResourcesPolicy {
    /// How the target containers' resources are aggregated: `sum` or `max`.
    #[serde(default)]
    #[schemars(transform = crate::common::no_default)]
    pub target_containers_mode: TargetContainersModeType,
    /// Regular expression selecting the target containers by name.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(extend("default" = ".*"))]
    pub target_containers_name_regex: Option<String>,
    /// Expressions giving the sidecar's limits and requests.
    #[serde(default)]
    #[schemars(transform = crate::common::no_default)]
    pub resources_expr: ResourcesExpr,
}

string_enum! {
    /// Aggregation of target container resources.
    pub enum TargetContainersModeType [validated] {
        /// Add them up.
        Sum = "sum",
        /// Take the largest.
        Max = "max",
    }
}

#[allow(clippy::derivable_impls)] // the enum comes from a macro that does not derive Default
impl Default for TargetContainersModeType {
    fn default() -> Self {
        Self::Sum
    }
}

/// Resource expressions for limits and requests.
#[derive(Serialize, Deserialize, Clone, Debug, Default, PartialEq, JsonSchema)]
pub struct ResourcesExpr {
    /// Expressions for limits.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub limits: Option<ResourceExprLimits>,
    /// Expressions for requests.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub requests: Option<ResourceExprRequests>,
}

/// Limit expressions (`+ - * /`, `max()`, `min()`, variables `cpu` / `memory`).
#[derive(Serialize, Deserialize, Clone, Debug, Default, PartialEq, JsonSchema)]
pub struct ResourceExprLimits {
    /// CPU limit expression.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cpu: Option<String>,
    /// Memory limit expression.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub memory: Option<String>,
}

/// Request expressions (`+ - * /`, `max()`, `min()`, variables `cpu` / `memory`).
#[derive(Serialize, Deserialize, Clone, Debug, Default, PartialEq, JsonSchema)]
pub struct ResourceExprRequests {
    /// CPU request expression.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cpu: Option<String>,
    /// Memory request expression.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub memory: Option<String>,
}

string_enum! {
    /// How a sidecar container is upgraded.
    pub enum SidecarContainerUpgradeType {
        /// Restart the container with the new image (default).
        ColdUpgrade = "ColdUpgrade",
        /// Run two containers and hand over between them.
        HotUpgrade = "HotUpgrade",
    }
}

/// Upgrade settings of one sidecar container.
#[derive(Serialize, Deserialize, Clone, Debug, Default, PartialEq, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct SidecarContainerUpgradeStrategy {
    /// `ColdUpgrade` (default) or `HotUpgrade`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub upgrade_type: Option<SidecarContainerUpgradeType>,
    /// Idle image run in the standby container during a hot upgrade.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub hot_upgrade_empty_image: Option<String>,
}

/// Controls injection into new pods.
#[derive(Serialize, Deserialize, Clone, Debug, Default, PartialEq, JsonSchema)]
pub struct SidecarSetInjectionStrategy {
    /// Stop injecting into new pods (injected pods keep being updated).
    #[serde(default, skip_serializing_if = "is_false")]
    pub paused: bool,
    /// Inject a specific historic revision instead of the current spec.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub revision: Option<SidecarSetInjectRevision>,
}

/// Which historic revision to inject.
#[derive(Serialize, Deserialize, Clone, Debug, Default, PartialEq, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct SidecarSetInjectRevision {
    /// Custom version of the wanted revision.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub custom_version: Option<String>,
    /// Name of the wanted ControllerRevision.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub revision_name: Option<String>,
    /// `Always` (default) or `Partial`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(extend("default" = "Always"))]
    pub policy: Option<SidecarSetInjectRevisionPolicy>,
}

string_enum! {
    /// How the pinned revision is used for new pods.
    pub enum SidecarSetInjectRevisionPolicy [validated] {
        /// Always inject the pinned revision.
        Always = "Always",
        /// Inject the pinned or the latest revision according to the update strategy.
        Partial = "Partial",
    }
}

/// How injected pods are updated.
#[derive(Serialize, Deserialize, Clone, Debug, Default, PartialEq, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct SidecarSetUpdateStrategy {
    /// `RollingUpdate` (default) or `NotUpdate`.
    #[serde(rename = "type", default, skip_serializing_if = "Option::is_none")]
    pub type_: Option<SidecarSetUpdateStrategyType>,
    /// Pause updating already injected pods.
    #[serde(default, skip_serializing_if = "is_false")]
    pub paused: bool,
    /// Only update pods matching this selector.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub selector: Option<LabelSelector>,
    /// Number or percentage of pods kept at old revisions.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub partition: Option<IntOrString>,
    /// Maximum unavailable pods during the update (default 1).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub max_unavailable: Option<IntOrString>,
    /// Update order by priority.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub priority_strategy: Option<UpdatePriorityStrategy>,
    /// Spread pods with these labels across batches.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub scatter_strategy: Option<UpdateScatterStrategy>,
}

string_enum! {
    /// Update strategy type of a SidecarSet.
    pub enum SidecarSetUpdateStrategyType {
        /// Only inject into new pods, never update existing ones.
        NotUpdate = "NotUpdate",
        /// Update existing pods in rolling batches (default).
        RollingUpdate = "RollingUpdate",
    }
}

/// Pod annotations injected (and updated in place) by the SidecarSet.
#[derive(Serialize, Deserialize, Clone, Debug, Default, PartialEq, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct SidecarSetPatchPodMetadata {
    /// Annotations to set on the pod.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub annotations: Option<BTreeMap<String, String>>,
    /// `Retain` (default), `Overwrite` or `MergePatchJson`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub patch_policy: Option<SidecarSetPatchPolicyType>,
}

string_enum! {
    /// Conflict policy for patched pod metadata.
    pub enum SidecarSetPatchPolicyType {
        /// Keep the pod's existing value; inject only.
        Retain = "Retain",
        /// Overwrite the pod's value; also on in-place update.
        Overwrite = "Overwrite",
        /// JSON merge-patch the value into the pod's value.
        MergePatchJson = "MergePatchJson",
    }
}

/// Observed state of a SidecarSet.
#[derive(Serialize, Deserialize, Clone, Debug, Default, PartialEq, JsonSchema)]
#[serde(rename_all = "camelCase")]
#[schemars(transform = crate::common::Required(&["matchedPods", "updatedPods", "readyPods"]))]
pub struct SidecarSetStatus {
    /// Generation last seen by the controller.
    #[serde(default, skip_serializing_if = "is_zero_i64")]
    pub observed_generation: i64,
    /// Pods matched by the selector.
    #[serde(default)]
    #[schemars(transform = crate::common::no_default)]
    pub matched_pods: i32,
    /// Matched pods running the latest sidecars.
    #[serde(default)]
    #[schemars(transform = crate::common::no_default)]
    pub updated_pods: i32,
    /// Matched pods that are ready.
    #[serde(default)]
    #[schemars(transform = crate::common::no_default)]
    pub ready_pods: i32,
    /// Matched pods that are updated and ready.
    #[serde(default, skip_serializing_if = "is_zero_i32")]
    pub updated_ready_pods: i32,
    /// Name of the latest ControllerRevision.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub latest_revision: Option<String>,
    /// Hash collision counter used to name revisions.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub collision_count: Option<i32>,
    /// kruise-rs only: active pods the SidecarSet selects that lack its sidecars (not injected).
    #[serde(default, skip_serializing_if = "is_zero_i32")]
    pub uninjected_pods: i32,
    /// kruise-rs only (OpenKruise writes none): `Progressing` says whether the rollout moves and, when
    /// it does not, why.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub conditions: Option<Vec<SidecarSetCondition>>,
}

/// The condition type kruise-rs reports the rollout of a SidecarSet under.
pub const SIDECARSET_PROGRESSING: &str = "Progressing";

/// A condition of a SidecarSet (kruise-rs).
#[derive(Serialize, Deserialize, Clone, Debug, Default, PartialEq, JsonSchema)]
#[serde(rename_all = "camelCase")]
#[schemars(transform = crate::common::Required(&["type", "status"]))]
pub struct SidecarSetCondition {
    /// Condition type.
    #[serde(default, rename = "type")]
    #[schemars(transform = crate::common::no_default)]
    pub type_: String,
    /// `True`, `False` or `Unknown`.
    #[serde(default)]
    #[schemars(transform = crate::common::no_default)]
    pub status: String,
    /// Last time the status or reason changed.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub last_transition_time: Option<Time>,
    /// Machine-readable reason.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub reason: Option<String>,
    /// Human-readable details.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub message: Option<String>,
}
