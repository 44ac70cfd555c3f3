//! ContainerRecreateRequest building blocks identical in `v1alpha1` and `v1beta1`. The versions
//! differ only in the status: v1beta1 has `containerStatusSnapshot` and `conditions`, which v1alpha1
//! keeps in the annotations [`CRR_SYNC_CONTAINER_STATUSES_ANNOTATION`] and [`CRR_UNREADY_ACQUIRED_KEY`].

use k8s_openapi::api::core::v1::{ContainerPort, ExecAction, HTTPGetAction, TCPSocketAction};
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

use crate::common::string_enum;
use crate::serde_util::{is_false, is_zero_i32};

/// Label: UID of the target pod (set by the webhook; immutable).
pub const CRR_POD_UID_LABEL: &str = "crr.apps.kruise.io/pod-uid";
/// Label: the target pod's node (set by the webhook; immutable; the node agent's selector).
pub const CRR_NODE_NAME_LABEL: &str = "crr.apps.kruise.io/node-name";
/// Label: `"true"` until the request completes (set by the webhook, removed by the manager).
pub const CRR_ACTIVE_LABEL: &str = "crr.apps.kruise.io/active";
/// v1alpha1 annotation holding the manager's container status snapshot (JSON).
pub const CRR_SYNC_CONTAINER_STATUSES_ANNOTATION: &str = "crr.apps.kruise.io/sync-container-statuses";
/// v1alpha1 annotation (RFC 3339 time the pod was forced not-ready) and v1beta1 finalizer.
pub const CRR_UNREADY_ACQUIRED_KEY: &str = "crr.apps.kruise.io/unready-acquired";
/// Condition type of the unready drain; its `lastTransitionTime` starts the drain.
pub const CRR_PRE_RECREATE_GRACE: &str = "PreRecreateGrace";
/// Message of the [`CRR_PRE_RECREATE_GRACE`] condition.
pub const CRR_PRE_RECREATE_GRACE_MESSAGE: &str =
    "Pod has been forced to not-ready for unreadyGracePeriodSeconds drain";

/// One container to recreate.
#[derive(Serialize, Deserialize, Clone, Debug, Default, PartialEq, JsonSchema)]
#[serde(rename_all = "camelCase")]
#[schemars(transform = crate::common::Required(&["name"]))]
pub struct ContainerRecreateRequestContainer {
    /// Name of a container of the pod.
    #[serde(default)]
    #[schemars(transform = crate::common::no_default)]
    pub name: String,
    /// The container's preStop hook, copied from the pod by the webhook.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub pre_stop: Option<CrrProbeHandler>,
    /// The container's ports (copied for an httpGet preStop with a named port).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub ports: Vec<ContainerPort>,
    /// The container's id and restart count when the request was created (from the webhook).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub status_context: Option<ContainerRecreateRequestContainerContext>,
}

/// A preStop action: exec, httpGet or tcpSocket.
#[derive(Serialize, Deserialize, Clone, Debug, Default, PartialEq, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct CrrProbeHandler {
    /// Run a command in the container.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub exec: Option<ExecAction>,
    /// Send an HTTP GET.
    #[serde(default, rename = "httpGet", skip_serializing_if = "Option::is_none")]
    pub http_get: Option<HTTPGetAction>,
    /// Open a TCP connection.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub tcp_socket: Option<TCPSocketAction>,
}

/// The container as it was when the request was created.
#[derive(Serialize, Deserialize, Clone, Debug, Default, PartialEq, Eq, JsonSchema)]
#[serde(rename_all = "camelCase")]
#[schemars(transform = crate::common::Required(&["containerID", "restartCount"]))]
pub struct ContainerRecreateRequestContainerContext {
    /// `<runtime>://<id>`.
    #[serde(default, rename = "containerID")]
    #[schemars(transform = crate::common::no_default)]
    pub container_id: String,
    /// The restart count then.
    #[serde(default)]
    #[schemars(transform = crate::common::no_default)]
    pub restart_count: i32,
}

/// How the containers are recreated.
#[derive(Serialize, Deserialize, Clone, Debug, Default, PartialEq, Eq, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct ContainerRecreateRequestStrategy {
    /// `Fail` (default): the first failed container completes the request; `Ignore`: go on.
    #[serde(
        default,
        skip_serializing_if = "ContainerRecreateRequestFailurePolicy::is_unset"
    )]
    pub failure_policy: ContainerRecreateRequestFailurePolicy,
    /// Recreate the next container only once the previous one succeeded.
    #[serde(default, skip_serializing_if = "is_false")]
    pub ordered_recreate: bool,
    /// Stop the container even if it restarted since the request was created.
    #[serde(default, skip_serializing_if = "is_false")]
    pub force_recreate: bool,
    /// Grace of the stop; the webhook defaults it to the pod's.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(extend("minimum" = 0))]
    pub termination_grace_period_seconds: Option<i64>,
    /// Keep the pod not-ready this long before stopping.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(extend("minimum" = 0))]
    pub unready_grace_period_seconds: Option<i64>,
    /// A new container counts as recreated once it has run (and been ready) this long.
    #[serde(default, skip_serializing_if = "is_zero_i32")]
    #[schemars(extend("minimum" = 0))]
    pub min_started_seconds: i32,
}

string_enum! {
    /// What a failed container does to the request.
    pub enum ContainerRecreateRequestFailurePolicy [validated] {
        /// Complete the request at the first failure.
        Fail = "Fail",
        /// Go on with the other containers.
        Ignore = "Ignore",
    }
}

impl Default for ContainerRecreateRequestFailurePolicy {
    fn default() -> Self {
        Self::Other(String::new())
    }
}

impl ContainerRecreateRequestFailurePolicy {
    /// Unset (`""`), which means `Fail`.
    pub fn is_unset(&self) -> bool {
        self.as_str().is_empty()
    }
}

string_enum! {
    /// ContainerRecreateRequestPhase of a request (Pending, Recreating, Completed) or of one container (Pending,
    /// Recreating, Succeeded, Failed).
    pub enum ContainerRecreateRequestPhase [validated] {
        /// Waiting to start.
        Pending = "Pending",
        /// Being recreated.
        Recreating = "Recreating",
        /// The container was recreated.
        Succeeded = "Succeeded",
        /// The container could not be recreated.
        Failed = "Failed",
        /// The request is finished.
        Completed = "Completed",
    }
}

impl Default for ContainerRecreateRequestPhase {
    fn default() -> Self {
        Self::Other(String::new())
    }
}

impl ContainerRecreateRequestPhase {
    /// Not set yet (`""`): the agent has not picked the request up.
    pub fn is_unset(&self) -> bool {
        self.as_str().is_empty()
    }
}

/// Where one container is.
#[derive(Serialize, Deserialize, Clone, Debug, Default, PartialEq, Eq, JsonSchema)]
#[serde(rename_all = "camelCase")]
#[schemars(transform = crate::common::Required(&["name", "phase"]))]
pub struct ContainerRecreateRequestContainerRecreateState {
    /// Container name.
    #[serde(default)]
    #[schemars(transform = crate::common::no_default)]
    pub name: String,
    /// Pending, Recreating, Succeeded or Failed.
    #[serde(default)]
    #[schemars(transform = crate::common::no_default)]
    pub phase: ContainerRecreateRequestPhase,
    /// Why, when it failed or waits.
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub message: String,
    /// The agent stopped it for this request.
    #[serde(default, skip_serializing_if = "is_false")]
    pub is_killed: bool,
}

/// The manager's view of one container, read by the agent.
#[derive(Serialize, Deserialize, Clone, Debug, Default, PartialEq, Eq, JsonSchema)]
#[serde(rename_all = "camelCase")]
#[schemars(transform = crate::common::Required(&["name", "ready", "restartCount"]))]
pub struct ContainerRecreateRequestSyncContainerStatus {
    /// Container name.
    #[serde(default)]
    #[schemars(transform = crate::common::no_default)]
    pub name: String,
    /// Ready in the pod status.
    #[serde(default)]
    #[schemars(transform = crate::common::no_default)]
    pub ready: bool,
    /// Restart count in the pod status.
    #[serde(default)]
    #[schemars(transform = crate::common::no_default)]
    pub restart_count: i32,
    /// Container id in the pod status.
    #[serde(default, rename = "containerID", skip_serializing_if = "String::is_empty")]
    pub container_id: String,
}
