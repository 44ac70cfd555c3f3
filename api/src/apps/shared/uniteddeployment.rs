//! UnitedDeployment building blocks that are identical in `v1alpha1` and `v1beta1`.

use std::collections::BTreeMap;

use k8s_openapi::api::core::v1::{NodeSelectorTerm, Toleration};
use k8s_openapi::apimachinery::pkg::apis::meta::v1::{ObjectMeta, Time};
use k8s_openapi::apimachinery::pkg::util::intstr::IntOrString;
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

use crate::common::string_enum;
use crate::serde_util::is_false;

/// Label on subset workloads and their pods: the UnitedDeployment revision they were made from.
pub const REVISION_LABEL: &str = "apps.kruise.io/controller-revision-hash";
/// Label on subset workloads and their pods: the subset's name.
pub const SUBSET_NAME_LABEL: &str = "apps.kruise.io/subset-name";
/// Annotation on subset workloads: the subset's raw `patch` as applied ("" when none).
pub const SUBSET_PATCH_ANNOTATION: &str = "apps.kruise.io/subset-patch";
/// Label on pods in reservation mode: `"true"` while the pod is reserved.
pub const RESERVED_POD_LABEL: &str = "apps.kruise.io/united-deployment-reserved-pod";

/// Condition types of a UnitedDeployment.
pub const CONDITION_SUBSET_PROVISIONED: &str = "SubsetProvisioned";
/// Every existing subset was updated to the desired state.
pub const CONDITION_SUBSET_UPDATED: &str = "SubsetUpdated";
/// Defined by OpenKruise, never reported.
pub const CONDITION_SUBSET_FAILURE: &str = "SubsetFailure";
/// The update revision is (or is not yet) the current one.
pub const CONDITION_UPDATED: &str = "UnitedDeploymentUpdated";
/// The only subset condition type.
pub const SUBSET_CONDITION_SCHEDULABLE: &str = "Schedulable";

/// Default `adaptive.rescheduleCriticalSeconds`.
pub const DEFAULT_RESCHEDULE_CRITICAL_SECONDS: i32 = 30;
/// Default `adaptive.unschedulableDuration`.
pub const DEFAULT_UNSCHEDULABLE_DURATION_SECONDS: i32 = 300;

/// The workload template: exactly one of the four kinds is set.
#[derive(Serialize, Deserialize, Clone, Debug, Default, PartialEq, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct SubsetTemplate {
    /// apps/v1 StatefulSet subsets.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub stateful_set_template: Option<WorkloadTemplateSpec>,
    /// Advanced StatefulSet (`apps.kruise.io`) subsets.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub advanced_stateful_set_template: Option<WorkloadTemplateSpec>,
    /// CloneSet subsets.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub clone_set_template: Option<WorkloadTemplateSpec>,
    /// apps/v1 Deployment subsets.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub deployment_template: Option<WorkloadTemplateSpec>,
}

/// The kind of workload a template makes.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum SubsetKind {
    /// apps/v1 StatefulSet.
    StatefulSet,
    /// apps.kruise.io/v1beta1 StatefulSet.
    AdvancedStatefulSet,
    /// apps.kruise.io/v1beta1 CloneSet.
    CloneSet,
    /// apps/v1 Deployment.
    Deployment,
}

impl SubsetKind {
    /// All four, in the order the template lists them.
    pub const ALL: [SubsetKind; 4] = [
        Self::StatefulSet,
        Self::AdvancedStatefulSet,
        Self::CloneSet,
        Self::Deployment,
    ];

    /// `apiVersion` of the workload OpenKruise creates.
    pub fn api_version(self) -> &'static str {
        match self {
            Self::StatefulSet | Self::Deployment => "apps/v1",
            Self::AdvancedStatefulSet | Self::CloneSet => "apps.kruise.io/v1beta1",
        }
    }

    /// `kind` of the workload.
    pub fn kind(self) -> &'static str {
        match self {
            Self::StatefulSet | Self::AdvancedStatefulSet => "StatefulSet",
            Self::CloneSet => "CloneSet",
            Self::Deployment => "Deployment",
        }
    }

    /// The template field's name (`statefulSetTemplate`, ...).
    pub fn template_field(self) -> &'static str {
        match self {
            Self::StatefulSet => "statefulSetTemplate",
            Self::AdvancedStatefulSet => "advancedStatefulSetTemplate",
            Self::CloneSet => "cloneSetTemplate",
            Self::Deployment => "deploymentTemplate",
        }
    }
}

impl SubsetTemplate {
    /// The templates that are set, with their kind.
    pub fn set(&self) -> Vec<(SubsetKind, &WorkloadTemplateSpec)> {
        [
            (SubsetKind::StatefulSet, &self.stateful_set_template),
            (
                SubsetKind::AdvancedStatefulSet,
                &self.advanced_stateful_set_template,
            ),
            (SubsetKind::CloneSet, &self.clone_set_template),
            (SubsetKind::Deployment, &self.deployment_template),
        ]
        .into_iter()
        .filter_map(|(kind, t)| t.as_ref().map(|t| (kind, t)))
        .collect()
    }

    /// The first template set (validation requires exactly one).
    pub fn first(&self) -> Option<(SubsetKind, &WorkloadTemplateSpec)> {
        self.set().into_iter().next()
    }
}

/// Metadata of the subset workloads and their spec (the kind's own spec, kept as JSON; the webhook
/// validates it against the kind).
#[derive(Serialize, Deserialize, Clone, Debug, Default, PartialEq, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct WorkloadTemplateSpec {
    /// Labels and annotations of the workload (schemaless in the CRD).
    #[serde(default)]
    #[schemars(schema_with = "crate::common::preserve_unknown_object")]
    #[schemars(transform = crate::common::no_default)]
    pub metadata: ObjectMeta,
    /// The workload's spec (schemaless in the CRD).
    #[serde(default)]
    #[schemars(schema_with = "crate::common::preserve_unknown_object")]
    #[schemars(transform = crate::common::no_default)]
    pub spec: serde_json::Value,
}

string_enum! {
    /// How the subsets are updated; `Manual` is the only value.
    pub enum UpdateStrategyType [validated] {
        /// Per-subset partitions.
        Manual = "Manual",
        /// Unset (defaulted to Manual).
        Unset = "",
    }
}

/// How a template change reaches the subsets.
#[derive(Serialize, Deserialize, Clone, Debug, Default, PartialEq, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct UnitedDeploymentUpdateStrategy {
    /// `Manual` (default).
    #[serde(default, rename = "type", skip_serializing_if = "Option::is_none")]
    pub type_: Option<UpdateStrategyType>,
    /// Parameters of `Manual`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub manual_update: Option<ManualUpdate>,
}

/// Pods of each subset held at the old revision.
#[derive(Serialize, Deserialize, Clone, Debug, Default, PartialEq, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct ManualUpdate {
    /// Subset name → partition (pods kept at the old revision).
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub partitions: BTreeMap<String, i32>,
}

/// Where the subsets are and how pods are spread over them.
#[derive(Serialize, Deserialize, Clone, Debug, Default, PartialEq, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct Topology {
    /// The subsets, in order (min/max allocation fills them in this order).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub subsets: Vec<Subset>,
    /// `Fixed` or `Adaptive`.
    #[serde(default)]
    #[schemars(transform = crate::common::no_default)]
    pub schedule_strategy: UnitedDeploymentScheduleStrategy,
}

/// One subset: a node pool and its share of the replicas.
#[derive(Serialize, Deserialize, Clone, Debug, Default, PartialEq, JsonSchema)]
#[serde(rename_all = "camelCase")]
#[schemars(transform = crate::common::Required(&["name"]))]
pub struct Subset {
    /// DNS label, unique in the UnitedDeployment.
    #[serde(default)]
    #[schemars(transform = crate::common::no_default)]
    pub name: String,
    /// Node requirements appended to every required node-affinity term of the pods.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub node_selector_term: Option<NodeSelectorTerm>,
    /// Tolerations appended to the pods'.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub tolerations: Vec<Toleration>,
    /// Fixed share: a number or a percentage of `spec.replicas`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub replicas: Option<IntOrString>,
    /// Elastic share: at least this many.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub min_replicas: Option<IntOrString>,
    /// Elastic share: at most this many.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub max_replicas: Option<IntOrString>,
    /// Strategic-merge patch of the pod template (schemaless).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(schema_with = "crate::common::preserve_unknown_object")]
    pub patch: Option<serde_json::Value>,
}

string_enum! {
    /// `Fixed` keeps pods in their subset; `Adaptive` moves pending pods elsewhere.
    pub enum ScheduleStrategyType [validated] {
        /// Pods may move to other subsets when they cannot be scheduled.
        Adaptive = "Adaptive",
        /// Pods stay in their subset (default).
        Fixed = "Fixed",
        /// Unset (Fixed).
        Unset = "",
    }
}

/// The schedule strategy.
#[derive(Serialize, Deserialize, Clone, Debug, Default, PartialEq, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct UnitedDeploymentScheduleStrategy {
    /// `Fixed` (default) or `Adaptive`.
    #[serde(default, rename = "type", skip_serializing_if = "Option::is_none")]
    pub type_: Option<ScheduleStrategyType>,
    /// Parameters of `Adaptive`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub adaptive: Option<AdaptiveUnitedDeploymentStrategy>,
}

impl UnitedDeploymentScheduleStrategy {
    /// `type: Adaptive`.
    pub fn is_adaptive(&self) -> bool {
        self.type_ == Some(ScheduleStrategyType::Adaptive)
    }

    /// Adaptive with `reserveUnschedulablePods`.
    pub fn reserves_unschedulable_pods(&self) -> bool {
        self.is_adaptive()
            && self
                .adaptive
                .as_ref()
                .is_some_and(|a| a.reserve_unschedulable_pods)
    }

    /// `rescheduleCriticalSeconds` or its default.
    pub fn reschedule_critical_seconds(&self) -> i32 {
        self.adaptive
            .as_ref()
            .and_then(|a| a.reschedule_critical_seconds)
            .unwrap_or(DEFAULT_RESCHEDULE_CRITICAL_SECONDS)
    }

    /// `unschedulableDuration` or its default.
    pub fn unschedulable_duration_seconds(&self) -> i32 {
        self.adaptive
            .as_ref()
            .and_then(|a| a.unschedulable_duration)
            .unwrap_or(DEFAULT_UNSCHEDULABLE_DURATION_SECONDS)
    }
}

/// Parameters of the Adaptive strategy.
#[derive(Serialize, Deserialize, Clone, Debug, Default, PartialEq, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct AdaptiveUnitedDeploymentStrategy {
    /// Seconds a pod may stay unschedulable before its subset counts as unschedulable (default 30).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub reschedule_critical_seconds: Option<i32>,
    /// Seconds a subset stays unschedulable before it is tried again (default 300).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub unschedulable_duration: Option<i32>,
    /// Keep pending pods (reserved) and add temporary pods elsewhere, instead of moving them.
    #[serde(default, skip_serializing_if = "is_false")]
    pub reserve_unschedulable_pods: bool,
}

/// A condition of the UnitedDeployment.
#[derive(Serialize, Deserialize, Clone, Debug, Default, PartialEq, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct UnitedDeploymentCondition {
    /// `SubsetProvisioned`, `SubsetUpdated`, `SubsetFailure` or `UnitedDeploymentUpdated`.
    #[serde(default, rename = "type", skip_serializing_if = "String::is_empty")]
    pub type_: String,
    /// `True`, `False` or `Unknown`.
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub status: String,
    /// When `status` last changed.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub last_transition_time: Option<Time>,
    /// Machine-readable reason.
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub reason: String,
    /// Human-readable details.
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub message: String,
}

/// The observed state of one subset.
#[derive(Serialize, Deserialize, Clone, Debug, Default, PartialEq, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct UnitedDeploymentSubsetStatus {
    /// The subset's name.
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub name: String,
    /// Replicas allocated to the subset.
    #[serde(default, skip_serializing_if = "crate::serde_util::is_zero_i32")]
    pub replicas: i32,
    /// Ready pods of the subset's workload.
    #[serde(default, skip_serializing_if = "crate::serde_util::is_zero_i32")]
    pub ready_replicas: i32,
    /// Partition applied to the subset's workload.
    #[serde(default, skip_serializing_if = "crate::serde_util::is_zero_i32")]
    pub partition: i32,
    /// Reserved pods of the subset (reservation mode).
    #[serde(default, skip_serializing_if = "crate::serde_util::is_zero_i32")]
    pub reserved_pods: i32,
    /// `Schedulable`.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub conditions: Vec<UnitedDeploymentSubsetCondition>,
}

/// A subset condition (`Schedulable`).
#[derive(Serialize, Deserialize, Clone, Debug, Default, PartialEq, JsonSchema)]
#[serde(rename_all = "camelCase")]
#[schemars(transform = crate::common::Required(&["status", "type"]))]
pub struct UnitedDeploymentSubsetCondition {
    /// `Schedulable`.
    #[serde(default, rename = "type")]
    #[schemars(transform = crate::common::no_default)]
    pub type_: String,
    /// `True` or `False`.
    #[serde(default)]
    #[schemars(transform = crate::common::no_default)]
    pub status: String,
    /// When `status` last changed.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub last_transition_time: Option<Time>,
    /// Machine-readable reason.
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub reason: String,
    /// Human-readable details.
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub message: String,
}
