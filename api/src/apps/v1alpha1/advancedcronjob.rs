//! AdvancedCronJob `apps.kruise.io/v1alpha1`: a cron schedule creating Jobs or BroadcastJobs.
//! kruise-rs serves this version only (OpenKruise's v1beta1 adds the ImageListPullJob template).

use k8s_openapi::api::batch::v1::JobTemplateSpec;
use k8s_openapi::api::core::v1::ObjectReference;
use k8s_openapi::apimachinery::pkg::apis::meta::v1::{ObjectMeta, Time};
use kube::CustomResource;
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

use super::broadcastjob::BroadcastJobSpec;
use crate::common::string_enum;

/// Annotation on a child recording the schedule time it was created for (RFC 3339).
pub const SCHEDULED_AT_ANNOTATION: &str = "apps.kruise.io/scheduled-at";

/// Desired state of an AdvancedCronJob.
#[derive(CustomResource, Serialize, Deserialize, Clone, Debug, Default, PartialEq, JsonSchema)]
#[kube(
    group = "apps.kruise.io",
    version = "v1alpha1",
    kind = "AdvancedCronJob",
    plural = "advancedcronjobs",
    namespaced,
    status = "AdvancedCronJobStatus",
    derive = "PartialEq",
    derive = "Default",
    shortname = "acj",
    doc = "AdvancedCronJob: creates Jobs or BroadcastJobs on a cron schedule.",
    printcolumn(
        name = "Schedule",
        type_ = "string",
        json_path = ".spec.schedule",
        description = "The schedule of advanced cron job."
    ),
    printcolumn(
        name = "Type",
        type_ = "string",
        json_path = ".status.type",
        description = "Type of cron job."
    ),
    printcolumn(
        name = "LastScheduleTime",
        type_ = "date",
        json_path = ".status.lastScheduleTime",
        description = "The last time at which job was scheduled."
    ),
    printcolumn(
        name = "AGE",
        type_ = "date",
        json_path = ".metadata.creationTimestamp",
        description = "CreationTimestamp is a timestamp representing the server time when this object was created. It is not guaranteed to be set in happens-before order across separate operations. Clients may not set this value. It is represented in RFC3339 form and is in UTC."
    )
)]
#[serde(rename_all = "camelCase")]
#[schemars(transform = crate::common::Required(&["schedule", "template"]))]
pub struct AdvancedCronJobSpec {
    /// Cron schedule, as a Kubernetes CronJob accepts it.
    #[serde(default)]
    #[schemars(transform = crate::common::no_default)]
    pub schedule: String,
    /// IANA time zone of the schedule.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub time_zone: Option<String>,
    /// A run missed by more than this many seconds is skipped.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub starting_deadline_seconds: Option<i64>,
    /// `Allow` (default), `Forbid` or `Replace`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub concurrency_policy: Option<ConcurrencyPolicy>,
    /// Stops scheduling while true.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub paused: Option<bool>,
    /// Finished successful children kept (default 3).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub successful_jobs_history_limit: Option<i32>,
    /// Finished failed children kept (default 1).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub failed_jobs_history_limit: Option<i32>,
    /// What each run creates.
    #[serde(default)]
    #[schemars(transform = crate::common::no_default)]
    pub template: CronJobTemplate,
}

/// The child an AdvancedCronJob creates: exactly one of the two.
#[derive(Serialize, Deserialize, Clone, Debug, Default, PartialEq, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct CronJobTemplate {
    /// A `batch/v1` Job (schemaless in the CRD).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(schema_with = "crate::common::preserve_unknown_object")]
    pub job_template: Option<JobTemplateSpec>,
    /// A BroadcastJob.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub broadcast_job_template: Option<BroadcastJobTemplateSpec>,
}

/// Metadata and spec of the BroadcastJobs an AdvancedCronJob creates.
#[derive(Serialize, Deserialize, Clone, Debug, Default, PartialEq, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct BroadcastJobTemplateSpec {
    /// Labels and annotations of the children.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(schema_with = "metadata_schema")]
    pub metadata: Option<ObjectMeta>,
    /// Spec of the children.
    #[serde(default)]
    #[schemars(transform = crate::common::no_default)]
    pub spec: BroadcastJobSpec,
}

/// The children's metadata: kept as written (labels, annotations), never pruned by the API server.
fn metadata_schema(_: &mut schemars::SchemaGenerator) -> schemars::Schema {
    schemars::json_schema!({ "type": "object", "x-kubernetes-preserve-unknown-fields": true })
}

string_enum! {
    /// How runs of an AdvancedCronJob may overlap.
    pub enum ConcurrencyPolicy [validated] {
        /// Runs may overlap.
        Allow = "Allow",
        /// A run is skipped while the previous one is active.
        Forbid = "Forbid",
        /// A new run replaces the active ones.
        Replace = "Replace",
    }
}

string_enum! {
    /// Kind of child an AdvancedCronJob creates.
    pub enum TemplateKind {
        /// `batch/v1` Job.
        Job = "Job",
        /// BroadcastJob.
        BroadcastJob = "BroadcastJob",
    }
}

/// Observed state of an AdvancedCronJob.
#[derive(Serialize, Deserialize, Clone, Debug, Default, PartialEq, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct AdvancedCronJobStatus {
    /// `Job` or `BroadcastJob`.
    #[serde(default, rename = "type", skip_serializing_if = "Option::is_none")]
    pub type_: Option<TemplateKind>,
    /// Children not finished yet.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub active: Vec<ObjectReference>,
    /// Latest schedule time a child was created for.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub last_schedule_time: Option<Time>,
}
