//! BroadcastJob `apps.kruise.io/v1alpha1`: a pod per eligible node, run to completion. kruise-rs
//! serves this version only (OpenKruise's v1beta1 twin has the same fields).

use k8s_openapi::api::core::v1::PodTemplateSpec;
use k8s_openapi::apimachinery::pkg::apis::meta::v1::Time;
use k8s_openapi::apimachinery::pkg::util::intstr::IntOrString;
use kube::CustomResource;
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

use crate::common::string_enum;
use crate::serde_util::{is_false, is_zero_i32};

/// Label on a BroadcastJob's pods naming the job.
pub const BROADCAST_JOB_NAME_LABEL: &str = "broadcastjob-name";
/// Label on a BroadcastJob's pods holding the job's uid.
pub const BROADCAST_JOB_CONTROLLER_UID_LABEL: &str = "broadcastjob-controller-uid";

/// Desired state of a BroadcastJob.
#[derive(CustomResource, Serialize, Deserialize, Clone, Debug, Default, PartialEq, JsonSchema)]
#[kube(
    group = "apps.kruise.io",
    version = "v1alpha1",
    kind = "BroadcastJob",
    plural = "broadcastjobs",
    namespaced,
    status = "BroadcastJobStatus",
    derive = "PartialEq",
    derive = "Default",
    shortname = "bcj",
    doc = "BroadcastJob: runs a pod to completion on every eligible node, like a DaemonSet for batch work.",
    printcolumn(
        name = "Desired",
        type_ = "integer",
        json_path = ".status.desired",
        description = "The desired number of pods. This is typically equal to the number of nodes satisfied to run pods."
    ),
    printcolumn(
        name = "Active",
        type_ = "integer",
        json_path = ".status.active",
        description = "The number of actively running pods."
    ),
    printcolumn(
        name = "Succeeded",
        type_ = "integer",
        json_path = ".status.succeeded",
        description = "The number of pods which reached phase Succeeded."
    ),
    printcolumn(
        name = "Failed",
        type_ = "integer",
        json_path = ".status.failed",
        description = "The number of pods which reached phase Failed."
    ),
    printcolumn(
        name = "AGE",
        type_ = "date",
        json_path = ".metadata.creationTimestamp",
        description = "CreationTimestamp is a timestamp representing the server time when this object was created. It is not guaranteed to be set in happens-before order across separate operations. Clients may not set this value. It is represented in RFC3339 form and is in UTC."
    )
)]
#[serde(rename_all = "camelCase")]
#[schemars(transform = crate::common::Required(&["template"]))]
pub struct BroadcastJobSpec {
    /// Most pods running at once: a number or a percent of the desired pods (rounded up);
    /// unbounded when absent.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub parallelism: Option<IntOrString>,
    /// Template of the pods (schemaless in the CRD).
    #[schemars(schema_with = "crate::common::preserve_unknown_object")]
    #[serde(default)]
    #[schemars(transform = crate::common::no_default)]
    pub template: PodTemplateSpec,
    /// When the job counts as finished.
    #[serde(default)]
    #[schemars(transform = crate::common::no_default)]
    pub completion_policy: CompletionPolicy,
    /// Stops creating pods while true.
    #[serde(default, skip_serializing_if = "is_false")]
    pub paused: bool,
    /// What a failed pod does to the job.
    #[serde(default)]
    #[schemars(transform = crate::common::no_default)]
    pub failure_policy: FailurePolicy,
}

/// When a BroadcastJob is finished.
#[derive(Serialize, Deserialize, Clone, Debug, Default, PartialEq, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct CompletionPolicy {
    /// `Always` (default): finished once every desired node ran a pod; `Never`: runs on forever,
    /// following new nodes.
    #[serde(default, rename = "type", skip_serializing_if = "Option::is_none")]
    pub type_: Option<CompletionPolicyType>,
    /// Seconds after the start at which an `Always` job fails if not complete.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub active_deadline_seconds: Option<i64>,
    /// Seconds after finishing at which an `Always` job is deleted.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub ttl_seconds_after_finished: Option<i32>,
}

string_enum! {
    /// Completion policy of a BroadcastJob.
    pub enum CompletionPolicyType {
        /// Finished once every desired node ran its pod.
        Always = "Always",
        /// Never finished.
        Never = "Never",
    }
}

/// What failed pods do to a BroadcastJob.
#[derive(Serialize, Deserialize, Clone, Debug, Default, PartialEq, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct FailurePolicy {
    /// `FailFast` (default), `Continue` or `Pause`.
    #[serde(default, rename = "type", skip_serializing_if = "Option::is_none")]
    pub type_: Option<FailurePolicyType>,
    /// Container restarts (summed over a pod) after which an `OnFailure` pod counts as failed.
    #[serde(default, skip_serializing_if = "is_zero_i32")]
    pub restart_limit: i32,
}

string_enum! {
    /// Failure policy of a BroadcastJob.
    pub enum FailurePolicyType {
        /// Keep going.
        Continue = "Continue",
        /// The first failed pod fails the job.
        FailFast = "FailFast",
        /// The first failed pod pauses the job.
        Pause = "Pause",
    }
}

/// Observed state of a BroadcastJob.
#[derive(Serialize, Deserialize, Clone, Debug, Default, PartialEq, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct BroadcastJobStatus {
    /// `Complete` or `Failed` once finished.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub conditions: Vec<JobCondition>,
    /// When the controller first saw the job.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub start_time: Option<Time>,
    /// When the job finished.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub completion_time: Option<Time>,
    /// Pods running or pending.
    #[serde(default)]
    #[schemars(transform = crate::common::no_default)]
    pub active: i32,
    /// Pods that succeeded.
    #[serde(default)]
    #[schemars(transform = crate::common::no_default)]
    pub succeeded: i32,
    /// Pods that failed.
    #[serde(default)]
    #[schemars(transform = crate::common::no_default)]
    pub failed: i32,
    /// Nodes that should run a pod.
    #[serde(default)]
    #[schemars(transform = crate::common::no_default)]
    pub desired: i32,
    /// `running`, `paused`, `completed` or `failed`.
    #[serde(default)]
    #[schemars(transform = crate::common::no_default)]
    pub phase: BroadcastJobPhase,
}

string_enum! {
    /// Phase of a BroadcastJob (lower case, as OpenKruise writes it).
    pub enum BroadcastJobPhase {
        /// Every desired node ran its pod.
        Completed = "completed",
        /// Pods are being run.
        Running = "running",
        /// Paused by the user or by the `Pause` failure policy.
        Paused = "paused",
        /// Failed (failed pod under `FailFast`, or deadline passed).
        Failed = "failed",
    }
}

impl Default for BroadcastJobPhase {
    fn default() -> Self {
        Self::Other(String::new())
    }
}

string_enum! {
    /// Condition types of a BroadcastJob.
    pub enum JobConditionType {
        /// The job completed.
        Complete = "Complete",
        /// The job failed.
        Failed = "Failed",
    }
}

impl Default for JobConditionType {
    fn default() -> Self {
        Self::Other(String::new())
    }
}

/// A condition of a BroadcastJob.
#[derive(Serialize, Deserialize, Clone, Debug, PartialEq, JsonSchema)]
#[serde(rename_all = "camelCase")]
#[schemars(transform = crate::common::Required(&["status", "type"]))]
pub struct JobCondition {
    /// `Complete` or `Failed`.
    #[serde(default, rename = "type")]
    #[schemars(transform = crate::common::no_default)]
    pub type_: JobConditionType,
    /// `True`, `False` or `Unknown`.
    #[serde(default)]
    #[schemars(transform = crate::common::no_default)]
    pub status: String,
    /// Last time the condition was checked.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub last_probe_time: Option<Time>,
    /// Last time the condition changed.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub last_transition_time: Option<Time>,
    /// Machine-readable reason.
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub reason: String,
    /// Human-readable message.
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub message: String,
}
