//! ContainerRecreateRequest `apps.kruise.io/v1alpha1` (served; the snapshot and the drain start are annotations here).

use k8s_openapi::apimachinery::pkg::apis::meta::v1::Time;
use kube::CustomResource;
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

pub use crate::apps::shared::containerrecreaterequest::*;

/// Desired state of a v1alpha1 ContainerRecreateRequest (immutable after creation).
#[derive(CustomResource, Serialize, Deserialize, Clone, Debug, Default, PartialEq, JsonSchema)]
#[kube(
    group = "apps.kruise.io",
    version = "v1alpha1",
    kind = "ContainerRecreateRequest",
    plural = "containerrecreaterequests",
    namespaced,
    status = "ContainerRecreateRequestStatus",
    derive = "PartialEq",
    derive = "Default",
    shortname = "crr",
    doc = "ContainerRecreateRequest restarts some containers of a running pod in place.",
    printcolumn(
        name = "PHASE",
        type_ = "string",
        json_path = ".status.phase",
        description = "ContainerRecreateRequestPhase of the request."
    ),
    printcolumn(
        name = "POD",
        type_ = "string",
        json_path = ".spec.podName",
        description = "The pod whose containers are recreated."
    ),
    printcolumn(
        name = "NODE",
        type_ = "string",
        json_path = ".metadata.labels.crr\\.apps\\.kruise\\.io/node-name",
        description = "The pod's node."
    ),
    printcolumn(
        name = "AGE",
        type_ = "date",
        json_path = ".metadata.creationTimestamp",
        description = "Time since creation."
    )
)]
#[serde(rename_all = "camelCase")]
#[schemars(transform = crate::common::Required(&["podName", "containers"]))]
pub struct ContainerRecreateRequestSpec {
    /// The pod, in the request's namespace.
    #[serde(default)]
    #[schemars(transform = crate::common::no_default)]
    pub pod_name: String,
    /// The containers to recreate (unique names).
    #[serde(default)]
    #[schemars(transform = crate::common::no_default)]
    pub containers: Vec<ContainerRecreateRequestContainer>,
    /// How to recreate them; the webhook sets `{}` when absent.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub strategy: Option<ContainerRecreateRequestStrategy>,
    /// Seconds after creation at which an unfinished request completes (at least 3).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(extend("minimum" = 0))]
    pub active_deadline_seconds: Option<i64>,
    /// Seconds after completion at which the request is deleted.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(extend("minimum" = 0))]
    pub ttl_seconds_after_finished: Option<i32>,
}

/// Observed state.
#[derive(Serialize, Deserialize, Clone, Debug, Default, PartialEq, JsonSchema)]
#[serde(rename_all = "camelCase")]
#[schemars(transform = crate::common::Required(&["phase"]))]
pub struct ContainerRecreateRequestStatus {
    /// Pending, Recreating or Completed.
    #[serde(default)]
    #[schemars(transform = crate::common::no_default)]
    pub phase: ContainerRecreateRequestPhase,
    /// When it completed.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub completion_time: Option<Time>,
    /// Why it completed early, if it did.
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub message: String,
    /// One entry per container.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub container_recreate_states: Vec<ContainerRecreateRequestContainerRecreateState>,
}
