//! NodeImage, ImagePullJob and ImageListPullJob building blocks, identical in `v1alpha1` and
//! `v1beta1` (v1alpha1 has no `ReferenceObject.mode`; the conversion drops it).

use std::collections::BTreeMap;

use k8s_openapi::api::core::v1::ObjectReference;
use k8s_openapi::apimachinery::pkg::apis::meta::v1::{LabelSelector, Time};
use k8s_openapi::apimachinery::pkg::util::intstr::IntOrString;
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

pub use crate::apps::v1alpha1::broadcastjob::{CompletionPolicy, CompletionPolicyType};
use crate::common::string_enum;
use crate::serde_util::is_zero_i64;

/// `ReferenceObject.mode` of pull secrets that the ImagePullJob controller copied.
pub const REFERENCE_MODE_BATCH: &str = "batch";
/// Sandbox annotation set on every pull the agent makes.
pub const PULLING_IMAGE_BY_ANNOTATION: &str = "apps.kruise.io/pulling-image-by";
/// NodeImages with this label are not deleted with their node.
pub const FAKE_NODE_IMAGE_LABEL: &str = "apps.kruise.io/fake-nodeimage";

string_enum! {
    /// When the agent pulls an image that is already present.
    pub enum ImagePullPolicy {
        /// Pull every time.
        Always = "Always",
        /// Pull only when the runtime does not list it.
        IfNotPresent = "IfNotPresent",
    }
}

string_enum! {
    /// Phase of one tag on one node.
    pub enum ImagePullPhase {
        /// Accepted, not started.
        Waiting = "Waiting",
        /// Being pulled.
        Pulling = "Pulling",
        /// Present on the node.
        Succeeded = "Succeeded",
        /// Every attempt failed.
        Failed = "Failed",
    }
}

impl Default for ImagePullPhase {
    fn default() -> Self {
        Self::Other(String::new())
    }
}

/// Labels and annotations of the sandbox config passed with a pull.
#[derive(Serialize, Deserialize, Clone, Debug, Default, PartialEq, Eq, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct SandboxConfig {
    /// Sandbox labels.
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub labels: BTreeMap<String, String>,
    /// Sandbox annotations.
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub annotations: BTreeMap<String, String>,
}

/// A secret reference in a NodeImage.
#[derive(Serialize, Deserialize, Clone, Debug, Default, PartialEq, Eq, PartialOrd, Ord, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct ReferenceObject {
    /// Namespace of the secret.
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub namespace: String,
    /// Name of the secret.
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub name: String,
    /// `batch` for copies made by the ImagePullJob controller (v1beta1 only).
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub mode: String,
}

/// One image (familiar name without tag) in a NodeImage spec.
#[derive(Serialize, Deserialize, Clone, Debug, Default, PartialEq, JsonSchema)]
#[serde(rename_all = "camelCase")]
#[schemars(transform = crate::common::Required(&["tags"]))]
pub struct ImageSpec {
    /// Secrets to authenticate with.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub pull_secrets: Vec<ReferenceObject>,
    /// Tags (or `sha256:` digests) to pull, sorted by tag.
    #[serde(default)]
    #[schemars(transform = crate::common::no_default)]
    pub tags: Vec<ImageTagSpec>,
    /// Sandbox config sent with the pull.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub sandbox_config: Option<SandboxConfig>,
}

/// One tag of an image in a NodeImage spec.
#[derive(Serialize, Deserialize, Clone, Debug, Default, PartialEq, JsonSchema)]
#[serde(rename_all = "camelCase")]
#[schemars(transform = crate::common::Required(&["tag"]))]
pub struct ImageTagSpec {
    /// The tag, or a digest `sha256:…`.
    #[serde(default)]
    #[schemars(transform = crate::common::no_default)]
    pub tag: String,
    /// When the request was written (defaulted to now).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub created_at: Option<Time>,
    /// Timeouts, retries and lifetime of the pull.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub pull_policy: Option<ImageTagPullPolicy>,
    /// The objects (usually ImagePullJobs) that asked for this tag.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub owner_references: Vec<ObjectReference>,
    /// Bumped to ask for a fresh pull.
    #[serde(default, skip_serializing_if = "is_zero_i64")]
    pub version: i64,
    /// `Always` or `IfNotPresent`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub image_pull_policy: Option<ImagePullPolicy>,
}

/// How one tag is pulled on a node.
#[derive(Serialize, Deserialize, Clone, Debug, Default, PartialEq, Eq, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct ImageTagPullPolicy {
    /// Seconds per attempt (default 600).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub timeout_seconds: Option<i32>,
    /// Retries after the first attempt (default 3).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub backoff_limit: Option<i32>,
    /// Seconds after completion at which the tag leaves the spec.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub ttl_seconds_after_finished: Option<i32>,
    /// Seconds after the start at which the pull fails.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub active_deadline_seconds: Option<i64>,
}

/// Observed state of a NodeImage, written by the node's agent.
#[derive(Serialize, Deserialize, Clone, Debug, Default, PartialEq, JsonSchema)]
#[serde(rename_all = "camelCase")]
#[schemars(transform = crate::common::Required(&["desired", "succeeded", "failed", "pulling", "waiting"]))]
pub struct NodeImageStatus {
    /// Tags in the spec.
    #[serde(default)]
    #[schemars(transform = crate::common::no_default)]
    pub desired: i32,
    /// Tags pulled.
    #[serde(default)]
    #[schemars(transform = crate::common::no_default)]
    pub succeeded: i32,
    /// Tags failed.
    #[serde(default)]
    #[schemars(transform = crate::common::no_default)]
    pub failed: i32,
    /// Tags being pulled.
    #[serde(default)]
    #[schemars(transform = crate::common::no_default)]
    pub pulling: i32,
    /// Tags waiting.
    #[serde(default)]
    #[schemars(transform = crate::common::no_default)]
    pub waiting: i32,
    /// Per image, the tags' states.
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub image_statuses: BTreeMap<String, ImageStatus>,
    /// Declared by OpenKruise, never written.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub first_sync_status: Option<SyncStatus>,
}

/// The tags' states of one image.
#[derive(Serialize, Deserialize, Clone, Debug, Default, PartialEq, JsonSchema)]
#[serde(rename_all = "camelCase")]
#[schemars(transform = crate::common::Required(&["tags"]))]
pub struct ImageStatus {
    /// One entry per tag, sorted by tag.
    #[serde(default)]
    #[schemars(transform = crate::common::no_default)]
    pub tags: Vec<ImageTagStatus>,
}

/// State of one tag on one node.
#[derive(Serialize, Deserialize, Clone, Debug, Default, PartialEq, JsonSchema)]
#[serde(rename_all = "camelCase")]
#[schemars(transform = crate::common::Required(&["tag", "phase"]))]
pub struct ImageTagStatus {
    /// The tag or digest.
    #[serde(default)]
    #[schemars(transform = crate::common::no_default)]
    pub tag: String,
    /// Waiting, Pulling, Succeeded or Failed.
    #[serde(default)]
    #[schemars(transform = crate::common::no_default)]
    pub phase: ImagePullPhase,
    /// 0–100.
    #[serde(default, skip_serializing_if = "crate::serde_util::is_zero_i32")]
    pub progress: i32,
    /// When the pull started.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub start_time: Option<Time>,
    /// When the pull finished.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub completion_time: Option<Time>,
    /// The spec version this state answers.
    #[serde(default, skip_serializing_if = "is_zero_i64")]
    pub version: i64,
    /// `<name>@<runtime image id>`.
    #[serde(default, rename = "imageID", skip_serializing_if = "String::is_empty")]
    pub image_id: String,
    /// Why it failed.
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub message: String,
}

/// Declared by OpenKruise (never written).
#[derive(Serialize, Deserialize, Clone, Debug, Default, PartialEq, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct SyncStatus {
    /// When.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub sync_at: Option<Time>,
    /// `Succeeded` or `Failed`.
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub status: String,
    /// Why.
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub message: String,
}

/// Per-attempt timeout and retries of an ImagePullJob.
#[derive(Serialize, Deserialize, Clone, Debug, Default, PartialEq, Eq, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct PullPolicy {
    /// Seconds per attempt (default 600).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub timeout_seconds: Option<i32>,
    /// Retries after the first attempt (default 3).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub backoff_limit: Option<i32>,
}

/// Which NodeImages an ImagePullJob targets: names, or a label selector, not both.
#[derive(Serialize, Deserialize, Clone, Debug, Default, PartialEq, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct ImagePullJobNodeSelector {
    /// NodeImage (node) names.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub names: Vec<String>,
    /// Labels of the NodeImages (which mirror their node's labels).
    #[serde(flatten)]
    pub label_selector: LabelSelector,
}

/// The pods whose nodes an ImagePullJob targets.
#[derive(Serialize, Deserialize, Clone, Debug, Default, PartialEq, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct ImagePullJobPodSelector {
    /// Labels of the pods, in the job's namespace.
    #[serde(flatten)]
    pub label_selector: LabelSelector,
}

/// Everything of an ImagePullJob but its image (shared with ImageListPullJob).
#[derive(Serialize, Deserialize, Clone, Debug, Default, PartialEq, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct ImagePullJobTemplate {
    /// Secret names in the job's namespace (immutable).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub pull_secrets: Vec<String>,
    /// NodeImages to target (nil: all).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub selector: Option<ImagePullJobNodeSelector>,
    /// Nodes of matching pods (exclusive with `selector`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub pod_selector: Option<ImagePullJobPodSelector>,
    /// Nodes pulling at once: an integer (default 1; 0 pauses).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub parallelism: Option<IntOrString>,
    /// Timeout and retries per node.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub pull_policy: Option<PullPolicy>,
    /// When the job is finished.
    #[serde(default)]
    #[schemars(transform = crate::common::no_default)]
    pub completion_policy: CompletionPolicy,
    /// Sandbox config sent with the pulls.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub sandbox_config: Option<SandboxConfig>,
    /// `Always` or `IfNotPresent` (default).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub image_pull_policy: Option<ImagePullPolicy>,
}

/// Observed state of an ImagePullJob.
#[derive(Serialize, Deserialize, Clone, Debug, Default, PartialEq, JsonSchema)]
#[serde(rename_all = "camelCase")]
#[schemars(transform = crate::common::Required(&["desired"]))]
pub struct ImagePullJobStatus {
    /// When the controller first saw the job.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub start_time: Option<Time>,
    /// When the job finished.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub completion_time: Option<Time>,
    /// NodeImages matched.
    #[serde(default)]
    #[schemars(transform = crate::common::no_default)]
    pub desired: i32,
    /// Nodes pulling.
    #[serde(default)]
    pub active: i32,
    /// Nodes that pulled the image.
    #[serde(default)]
    pub succeeded: i32,
    /// Nodes that failed.
    #[serde(default)]
    pub failed: i32,
    /// Progress or outcome in words.
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub message: String,
    /// Nodes that failed, sorted.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub failed_nodes: Vec<String>,
}

/// Observed state of an ImageListPullJob.
#[derive(Serialize, Deserialize, Clone, Debug, Default, PartialEq, JsonSchema)]
#[serde(rename_all = "camelCase")]
#[schemars(transform = crate::common::Required(&["desired"]))]
pub struct ImageListPullJobStatus {
    /// When the controller first saw the job.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub start_time: Option<Time>,
    /// When the job finished.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub completion_time: Option<Time>,
    /// Images.
    #[serde(default)]
    #[schemars(transform = crate::common::no_default)]
    pub desired: i32,
    /// Children still pulling.
    #[serde(default)]
    pub active: i32,
    /// Children finished.
    #[serde(default)]
    pub completed: i32,
    /// Children that succeeded on every node.
    #[serde(default)]
    pub succeeded: i32,
    /// Children with failed nodes.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub failed_image_statuses: Vec<FailedImageStatus>,
}

/// One image of an ImageListPullJob that failed somewhere.
#[derive(Serialize, Deserialize, Clone, Debug, Default, PartialEq, Eq, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct FailedImageStatus {
    /// The child ImagePullJob.
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub image_pull_job: String,
    /// The image.
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub name: String,
    /// Where to look.
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub message: String,
}
