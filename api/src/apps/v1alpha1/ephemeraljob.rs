//! EphemeralJob `apps.kruise.io/v1alpha1`: injects the ephemeral containers of its template into the
//! pods its selector matches, through the pods' `ephemeralcontainers` subresource. Served in this
//! version only, as OpenKruise does.

use k8s_openapi::api::core::v1::EphemeralContainer;
use k8s_openapi::apimachinery::pkg::apis::meta::v1::{LabelSelector, Time};
use kube::CustomResource;
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

use crate::common::string_enum;
use crate::serde_util::is_false;

/// Env var set on every container an EphemeralJob injects, holding the job's uid: how the job
/// recognises its own containers.
pub const EPHEMERAL_CONTAINER_ENV_KEY: &str = "KRUISE_EJOB_ID";
/// Finalizer an EphemeralJob carries while it exists (`apps.kruise.io/ephemeralcontainers-cleanup`).
pub const EPHEMERAL_JOB_FINALIZER: &str = "apps.kruise.io/ephemeralcontainers-cleanup";
/// `ttlSecondsAfterFinished` when unset (OpenKruise applies it in memory, never writes it).
pub const DEFAULT_TTL_SECONDS_AFTER_FINISHED: i32 = 1800;

/// Desired state of an EphemeralJob.
#[derive(CustomResource, Serialize, Deserialize, Clone, Debug, Default, PartialEq, JsonSchema)]
#[kube(
    group = "apps.kruise.io",
    version = "v1alpha1",
    kind = "EphemeralJob",
    plural = "ephemeraljobs",
    namespaced,
    status = "EphemeralJobStatus",
    derive = "PartialEq",
    derive = "Default",
    shortname = "ejob",
    doc = "EphemeralJob: injects ephemeral (debug) containers into the pods its selector matches.",
    printcolumn(
        name = "STATUS",
        type_ = "string",
        json_path = ".status.phase",
        description = "The status of ephemeral job"
    ),
    printcolumn(
        name = "MATCH",
        type_ = "integer",
        json_path = ".status.match",
        description = "Number of ephemeral container matched by this job"
    ),
    printcolumn(
        name = "SUCCEED",
        type_ = "integer",
        json_path = ".status.succeeded",
        description = "Number of succeed ephemeral containers"
    ),
    printcolumn(
        name = "FAILED",
        type_ = "integer",
        json_path = ".status.failed",
        description = "Number of failed ephemeral containers"
    ),
    printcolumn(
        name = "RUNNING",
        type_ = "integer",
        json_path = ".status.running",
        description = "Number of running ephemeral containers"
    ),
    printcolumn(
        name = "WAITING",
        type_ = "integer",
        json_path = ".status.waiting",
        description = "Number of waiting ephemeral containers"
    ),
    printcolumn(
        name = "AGE",
        type_ = "date",
        json_path = ".metadata.creationTimestamp",
        description = "CreationTimestamp is a timestamp representing the server time when this object was created. It is not guaranteed to be set in happens-before order across separate operations. Clients may not set this value. It is represented in RFC3339 form and is in UTC."
    )
)]
#[serde(rename_all = "camelCase")]
#[schemars(transform = crate::common::Required(&["selector", "template"]))]
pub struct EphemeralJobSpec {
    /// The pods (in the job's namespace) to inject into.
    #[serde(default)]
    #[schemars(transform = crate::common::no_default)]
    pub selector: LabelSelector,
    /// How many pods to inject into; every matching pod when absent.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub replicas: Option<i32>,
    /// Most pods whose injected containers run at once (1 when absent).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub parallelism: Option<i32>,
    /// The containers to inject.
    #[serde(default)]
    #[schemars(transform = crate::common::no_default)]
    pub template: EphemeralContainerTemplateSpec,
    /// Stops injecting while true.
    #[serde(default, skip_serializing_if = "is_false")]
    pub paused: bool,
    /// Seconds after the start at which an unfinished job fails.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub active_deadline_seconds: Option<i64>,
    /// Seconds after finishing at which the job is deleted (1800 when absent).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub ttl_seconds_after_finished: Option<i32>,
}

/// The containers an EphemeralJob injects.
#[derive(Serialize, Deserialize, Clone, Debug, Default, PartialEq, JsonSchema)]
#[serde(rename_all = "camelCase")]
#[schemars(transform = crate::common::Required(&["ephemeralContainers"]))]
pub struct EphemeralContainerTemplateSpec {
    /// Ephemeral containers, as in a pod's `spec.ephemeralContainers` (schemaless in the CRD).
    #[serde(default)]
    #[schemars(schema_with = "crate::common::preserve_unknown_object_list")]
    pub ephemeral_containers: Vec<EphemeralContainer>,
}

/// Observed state of an EphemeralJob.
#[derive(Serialize, Deserialize, Clone, Debug, Default, PartialEq, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct EphemeralJobStatus {
    /// `Initialized`, `MatchedEmpty`, `JobSucceeded`, `JobFailed`, `JobError`.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub conditions: Vec<EphemeralJobCondition>,
    /// When the controller first saw the job.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub start_time: Option<Time>,
    /// When the job finished.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub completion_time: Option<Time>,
    /// Phase of the job.
    #[serde(default)]
    #[schemars(transform = crate::common::no_default)]
    pub phase: EphemeralJobPhase,
    /// Target pods (JSON `match`, as OpenKruise names it).
    #[serde(default, rename = "match")]
    #[schemars(transform = crate::common::no_default)]
    pub matches: i32,
    /// Target pods whose injected containers run.
    #[serde(default)]
    #[schemars(transform = crate::common::no_default)]
    pub running: i32,
    /// Target pods whose injected containers all exited 0.
    #[serde(default)]
    #[schemars(transform = crate::common::no_default)]
    pub succeeded: i32,
    /// Target pods whose injected containers wait to start.
    #[serde(default)]
    #[schemars(transform = crate::common::no_default)]
    pub waiting: i32,
    /// Target pods whose injected containers failed.
    #[serde(default)]
    #[schemars(transform = crate::common::no_default)]
    pub failed: i32,
}

string_enum! {
    /// Phase of an EphemeralJob.
    pub enum EphemeralJobPhase {
        /// Every target's containers exited 0.
        Succeeded = "Succeeded",
        /// Every target failed, or the deadline passed.
        Failed = "Failed",
        /// No target yet, or every target waits.
        Waiting = "Waiting",
        /// Injected containers run.
        Running = "Running",
        /// `spec.paused`.
        Paused = "Paused",
        /// The template has no container.
        Error = "Error",
        /// None of the above.
        Unknown = "Unknown",
    }
}

impl Default for EphemeralJobPhase {
    fn default() -> Self {
        Self::Other(String::new())
    }
}

string_enum! {
    /// Condition types of an EphemeralJob.
    pub enum EphemeralJobConditionType {
        /// The job succeeded.
        JobSucceeded = "JobSucceeded",
        /// The job (or an injection) failed.
        JobFailed = "JobFailed",
        /// The job's spec cannot be run.
        JobError = "JobError",
        /// The controller saw the job.
        Initialized = "Initialized",
        /// No pod matched.
        MatchedEmpty = "MatchedEmpty",
    }
}

impl Default for EphemeralJobConditionType {
    fn default() -> Self {
        Self::Other(String::new())
    }
}

/// A condition of an EphemeralJob.
#[derive(Serialize, Deserialize, Clone, Debug, Default, PartialEq, JsonSchema)]
#[serde(rename_all = "camelCase")]
#[schemars(transform = crate::common::Required(&["status", "type"]))]
pub struct EphemeralJobCondition {
    /// The condition type.
    #[serde(default, rename = "type")]
    #[schemars(transform = crate::common::no_default)]
    pub type_: EphemeralJobConditionType,
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
