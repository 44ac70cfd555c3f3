//! PodProbeMarker and NodePodProbe `apps.kruise.io/v1alpha1` (the only version served, as OpenKruise).
//!
//! A PodProbeMarker names probes to run in the containers of the pods its selector matches and what
//! to mark on a pod (a condition, labels, annotations) from each probe's result. The manager copies
//! the probes into one NodePodProbe per node (named after the node); that node's agent runs them and
//! writes the results to the NodePodProbe's status (`docs/podprobemarker.md`).

use std::collections::BTreeMap;

use k8s_openapi::api::core::v1::Probe;
use k8s_openapi::apimachinery::pkg::apis::meta::v1::{LabelSelector, Time};
use kube::CustomResource;
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

use crate::common::string_enum;

/// Finalizer a PodProbeMarker carries so its probes leave the NodePodProbes before it goes.
pub const POD_PROBE_MARKER_FINALIZER: &str = "kruise.io/node-pod-probe-cleanup";
/// Separator of a NodePodProbe probe name: `<podprobemarker>#<probe>`.
pub const PROBE_NAME_SEPARATOR: char = '#';

/// Desired state of a PodProbeMarker.
#[derive(CustomResource, Serialize, Deserialize, Clone, Debug, Default, PartialEq, JsonSchema)]
#[kube(
    group = "apps.kruise.io",
    version = "v1alpha1",
    kind = "PodProbeMarker",
    plural = "podprobemarkers",
    namespaced,
    status = "PodProbeMarkerStatus",
    derive = "PartialEq",
    derive = "Default",
    doc = "PodProbeMarker: custom probes run by the node agent, whose results mark the matching pods."
)]
#[serde(rename_all = "camelCase")]
#[schemars(transform = crate::common::Required(&["selector", "probes"]))]
pub struct PodProbeMarkerSpec {
    /// The pods (in the marker's namespace) to probe; immutable.
    #[serde(default)]
    #[schemars(transform = crate::common::no_default)]
    pub selector: Option<LabelSelector>,
    /// The probes, unique by name.
    #[serde(default)]
    #[schemars(transform = crate::common::no_default)]
    pub probes: Vec<PodContainerProbe>,
}

/// One probe of a PodProbeMarker and what its result marks on the pod.
#[derive(Serialize, Deserialize, Clone, Debug, Default, PartialEq, JsonSchema)]
#[serde(rename_all = "camelCase")]
#[schemars(transform = crate::common::Required(&["name", "containerName", "probe"]))]
pub struct PodContainerProbe {
    /// Probe name, unique in the marker.
    #[serde(default)]
    #[schemars(transform = crate::common::no_default)]
    pub name: String,
    /// The container the probe runs against.
    #[serde(default)]
    #[schemars(transform = crate::common::no_default)]
    pub container_name: String,
    /// The probe: exactly one of exec, httpGet, tcpSocket, and its timing.
    #[serde(default)]
    #[schemars(schema_with = "crate::common::preserve_unknown_object")]
    pub probe: Probe,
    /// Labels and annotations to set for a result.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub marker_policy: Vec<ProbeMarkerPolicy>,
    /// Pod condition type set True when the probe succeeds, False otherwise.
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub pod_condition_type: String,
}

/// Labels and annotations set on the pod while a probe is in one state.
#[derive(Serialize, Deserialize, Clone, Debug, Default, PartialEq, JsonSchema)]
#[serde(rename_all = "camelCase")]
#[schemars(transform = crate::common::Required(&["state"]))]
pub struct ProbeMarkerPolicy {
    /// Succeeded or Failed.
    #[serde(default)]
    #[schemars(transform = crate::common::no_default)]
    pub state: ProbeState,
    /// Labels to set.
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub labels: BTreeMap<String, String>,
    /// Annotations to set.
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub annotations: BTreeMap<String, String>,
}

/// Observed state of a PodProbeMarker.
#[derive(Serialize, Deserialize, Clone, Debug, Default, PartialEq, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct PodProbeMarkerStatus {
    /// Generation the status describes.
    #[serde(default)]
    pub observed_generation: i64,
    /// Pods the marker's probes were placed for.
    #[serde(default, skip_serializing_if = "is_zero")]
    pub matched_pods: i64,
}

fn is_zero(n: &i64) -> bool {
    *n == 0
}

string_enum! {
    /// Result of a probe.
    pub enum ProbeState {
        /// The probe passed.
        Succeeded = "Succeeded",
        /// The probe failed.
        Failed = "Failed",
        /// No result yet (or the container changed).
        Unknown = "Unknown",
    }
}

impl Default for ProbeState {
    fn default() -> Self {
        Self::Other(String::new())
    }
}

/// The probes of one node's pods (cluster-scoped, named after the node).
#[derive(CustomResource, Serialize, Deserialize, Clone, Debug, Default, PartialEq, JsonSchema)]
#[kube(
    group = "apps.kruise.io",
    version = "v1alpha1",
    kind = "NodePodProbe",
    plural = "nodepodprobes",
    status = "NodePodProbeStatus",
    derive = "PartialEq",
    derive = "Default",
    doc = "NodePodProbe: the PodProbeMarker probes of the pods of one node, and their results."
)]
#[serde(rename_all = "camelCase")]
pub struct NodePodProbeSpec {
    /// One entry per pod.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub pod_probes: Vec<PodProbe>,
}

/// The probes of one pod.
#[derive(Serialize, Deserialize, Clone, Debug, Default, PartialEq, JsonSchema)]
#[serde(rename_all = "camelCase")]
#[schemars(transform = crate::common::Required(&["name", "namespace", "uid", "IP"]))]
pub struct PodProbe {
    /// Pod name.
    #[serde(default)]
    #[schemars(transform = crate::common::no_default)]
    pub name: String,
    /// Pod namespace.
    #[serde(default)]
    #[schemars(transform = crate::common::no_default)]
    pub namespace: String,
    /// Pod uid.
    #[serde(default)]
    #[schemars(transform = crate::common::no_default)]
    pub uid: String,
    /// Pod IP (target of tcpSocket and httpGet probes).
    #[serde(default, rename = "IP")]
    #[schemars(transform = crate::common::no_default)]
    pub ip: String,
    /// The probes, named `<podprobemarker>#<probe>`.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub probes: Vec<ContainerProbe>,
}

/// One probe of one container.
#[derive(Serialize, Deserialize, Clone, Debug, Default, PartialEq, JsonSchema)]
#[serde(rename_all = "camelCase")]
#[schemars(transform = crate::common::Required(&["name", "containerName", "probe"]))]
pub struct ContainerProbe {
    /// `<podprobemarker>#<probe>`.
    #[serde(default)]
    #[schemars(transform = crate::common::no_default)]
    pub name: String,
    /// The container.
    #[serde(default)]
    #[schemars(transform = crate::common::no_default)]
    pub container_name: String,
    /// The probe, named ports resolved to numbers.
    #[serde(default)]
    #[schemars(schema_with = "crate::common::preserve_unknown_object")]
    pub probe: Probe,
}

/// Results of the probes of a node's pods.
#[derive(Serialize, Deserialize, Clone, Debug, Default, PartialEq, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct NodePodProbeStatus {
    /// One entry per pod.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub pod_probe_statuses: Vec<PodProbeStatus>,
}

/// Results of the probes of one pod.
#[derive(Serialize, Deserialize, Clone, Debug, Default, PartialEq, JsonSchema)]
#[serde(rename_all = "camelCase")]
#[schemars(transform = crate::common::Required(&["name", "namespace", "uid"]))]
pub struct PodProbeStatus {
    /// Pod name.
    #[serde(default)]
    #[schemars(transform = crate::common::no_default)]
    pub name: String,
    /// Pod namespace.
    #[serde(default)]
    #[schemars(transform = crate::common::no_default)]
    pub namespace: String,
    /// Pod uid.
    #[serde(default)]
    #[schemars(transform = crate::common::no_default)]
    pub uid: String,
    /// One entry per probe with a result.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub probe_states: Vec<ContainerProbeState>,
}

/// The published result of one probe.
#[derive(Serialize, Deserialize, Clone, Debug, Default, PartialEq, JsonSchema)]
#[serde(rename_all = "camelCase")]
#[schemars(transform = crate::common::Required(&["name", "state"]))]
pub struct ContainerProbeState {
    /// `<podprobemarker>#<probe>`.
    #[serde(default)]
    #[schemars(transform = crate::common::no_default)]
    pub name: String,
    /// Succeeded, Failed or Unknown.
    #[serde(default)]
    #[schemars(transform = crate::common::no_default)]
    pub state: ProbeState,
    /// When the probe last ran.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub last_probe_time: Option<Time>,
    /// When the state last changed.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub last_transition_time: Option<Time>,
    /// The probe's output or error, at most 1024 bytes.
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub message: String,
}
