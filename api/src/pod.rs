//! [`PodRecord`]: a pod as kruise-rs keeps it in memory — the fields its webhooks and controllers read,
//! and nothing else.
//!
//! k8s-openapi's `Pod` is 2.4 KB before any string, plus 2.3 KB per container, 750 B per container
//! status and 360 B per env entry, all inline. A view of 10,000 pods spends most of its memory there.
//! `PodRecord` deserialises from the same JSON (unknown fields are skipped) and keeps:
//!
//! - `metadata` whole, except `managedFields` (never read, often the largest part), with the labels and
//!   annotations interned ([`PodMeta`]);
//! - `spec`: `nodeName`, `restartPolicy`, `terminationGracePeriodSeconds`, per ephemeral container what
//!   is kept per container, `readinessGates`, the node a daemon pod's affinity pins it to, and per
//!   container `name`, `image`, `lifecycle.preStop`, `ports` and only the env entries named in
//!   [`RECORDED_ENV`] or fed from a pod label or annotation;
//! - `status`: `phase`, `conditions` (without `lastProbeTime` and `observedGeneration`), and per
//!   container status `name`, `image`, `imageID`, `ready`, `restartCount`, `started`, `containerID`,
//!   `state`; per ephemeral container status `name` and `state`.
//!
//! Parts present on few pods are boxed (a container's `lifecycle`, a terminated or waiting state): every
//! pod pays only a pointer for them. k8s-openapi's `LifecycleHandler` is 232 B and `ContainerState` 208 B
//! inline, `PodCondition` 160 B against [`PodConditionRecord`]'s 120 B (benches/README.md, "Where a
//! cached pod's bytes go").
//!
//! A field joins the record when a webhook or controller starts reading it.
//!
//! It is a `k8s_openapi::Resource` of kind `v1/Pod`, so kube-runtime watchers and reflectors list and
//! watch it from the pods endpoint directly. It is never written back: writes to pods are patches.

use k8s_openapi::{
    api::core::v1::{
        ContainerPort, ContainerStateRunning, ContainerStateTerminated, ContainerStateWaiting, EnvVar,
        LifecycleHandler, PodReadinessGate,
    },
    apimachinery::pkg::apis::meta::v1::{ObjectMeta, Time},
};
use serde::{Deserialize, Deserializer, Serialize};

mod interned;
mod meta;

pub use interned::{Interned, InternedMap};
pub use meta::{LabelledMeta, PodMeta};

/// The env entries a [`ContainerRecord`] keeps: the SidecarSet marker, the launch-priority envs and
/// the EphemeralJob marker.
pub const RECORDED_ENV: &[&str] = &[
    "IS_INJECTED",
    "KRUISE_CONTAINER_PRIORITY",
    "KRUISE_CONTAINER_BARRIER",
    "KRUISE_EJOB_ID",
];

/// A pod, reduced to what kruise-rs reads (see the module documentation).
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct PodRecord {
    /// The pod's metadata, without `managedFields`.
    #[serde(default)]
    pub metadata: PodMeta,
    /// The recorded part of the spec.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub spec: Option<PodRecordSpec>,
    /// The recorded part of the status.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub status: Option<PodRecordStatus>,
}

impl PodRecord {
    /// `spec.containers` (empty without a spec).
    pub fn containers(&self) -> &[ContainerRecord] {
        self.spec
            .as_ref()
            .map(|s| s.containers.as_slice())
            .unwrap_or_default()
    }

    /// `status.containerStatuses` (empty without them).
    pub fn container_statuses(&self) -> &[ContainerStatusRecord] {
        self.status
            .as_ref()
            .and_then(|s| s.container_statuses.as_deref())
            .unwrap_or_default()
    }
}

/// The recorded part of a pod's spec.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct PodRecordSpec {
    /// `spec.containers`.
    #[serde(default)]
    pub containers: Vec<ContainerRecord>,
    /// `spec.ephemeralContainers` (EphemeralJob recognises its own by their env).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub ephemeral_containers: Option<Vec<ContainerRecord>>,
    /// `spec.nodeName`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub node_name: Option<String>,
    /// `spec.restartPolicy` (BroadcastJob counts restarts of `OnFailure` pods).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub restart_policy: Option<String>,
    /// `spec.terminationGracePeriodSeconds` (a ContainerRecreateRequest's default grace).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub termination_grace_period_seconds: Option<i64>,
    /// `spec.readinessGates`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub readiness_gates: Option<Vec<PodReadinessGate>>,
    /// The `persistentVolumeClaim` entries of `spec.volumes`, each reduced to its name and claim (the
    /// Advanced StatefulSet compares them with its volumeClaimTemplates); `None` when there are none.
    #[serde(
        default,
        deserialize_with = "claim_volumes",
        skip_serializing_if = "Option::is_none"
    )]
    pub volumes: Option<Vec<VolumeRecord>>,
    /// The node a daemon pod is pinned to: the single `metadata.name` value of the `matchFields` of
    /// `spec.affinity`'s required node affinity (how DaemonSet controllers place pods before the
    /// scheduler binds them); `None` for any other affinity. Serialised back in that form.
    #[serde(
        default,
        rename = "affinity",
        deserialize_with = "pinned_node",
        serialize_with = "pinned_node_affinity",
        skip_serializing_if = "Option::is_none"
    )]
    pub pinned_node: Option<String>,
}

/// The recorded part of a volume.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct VolumeRecord {
    /// `name`.
    #[serde(default)]
    pub name: String,
    /// `persistentVolumeClaim`, when the volume is a claim.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub persistent_volume_claim: Option<ClaimRecord>,
}

/// The recorded part of a `persistentVolumeClaim` volume source.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct ClaimRecord {
    /// `claimName`.
    #[serde(default)]
    pub claim_name: String,
}

/// The recorded part of a container.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct ContainerRecord {
    /// `name`.
    #[serde(default)]
    pub name: String,
    /// `image`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub image: Option<String>,
    /// The entries of `env` named in [`RECORDED_ENV`]; `None` when there are none.
    #[serde(
        default,
        deserialize_with = "recorded_env",
        skip_serializing_if = "Option::is_none"
    )]
    pub env: Option<Vec<EnvVar>>,
    /// `lifecycle`, reduced to `preStop` (a ContainerRecreateRequest runs it before the stop).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub lifecycle: Option<Box<LifecycleRecord>>,
    /// `ports` (an httpGet preStop may name one).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub ports: Option<Vec<ContainerPort>>,
}

/// The recorded part of a container's `lifecycle`.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct LifecycleRecord {
    /// `preStop`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub pre_stop: Option<LifecycleHandler>,
}

/// The recorded part of a pod's status.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct PodRecordStatus {
    /// `phase`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub phase: Option<String>,
    /// `conditions`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub conditions: Option<Vec<PodConditionRecord>>,
    /// `containerStatuses`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub container_statuses: Option<Vec<ContainerStatusRecord>>,
    /// `ephemeralContainerStatuses`, reduced to name and state (EphemeralJob counts them).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub ephemeral_container_statuses: Option<Vec<EphemeralStatusRecord>>,
    /// `podIP`: where PodProbeMarker tcpSocket and httpGet probes connect.
    #[serde(default, rename = "podIP", skip_serializing_if = "Option::is_none")]
    pub pod_ip: Option<String>,
}

/// The recorded part of a pod condition: all but `lastProbeTime` and `observedGeneration`.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct PodConditionRecord {
    /// `type`.
    #[serde(default, rename = "type")]
    pub type_: String,
    /// `status`.
    #[serde(default)]
    pub status: String,
    /// `reason`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub reason: Option<String>,
    /// `message`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub message: Option<String>,
    /// `lastTransitionTime`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub last_transition_time: Option<Time>,
}

impl From<PodConditionRecord> for k8s_openapi::api::core::v1::PodCondition {
    fn from(c: PodConditionRecord) -> Self {
        k8s_openapi::api::core::v1::PodCondition {
            type_: c.type_,
            status: c.status,
            reason: c.reason,
            message: c.message,
            last_transition_time: c.last_transition_time,
            ..Default::default()
        }
    }
}

/// A container's `state`, its rarer shapes boxed.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct ContainerStateRecord {
    /// `running`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub running: Option<ContainerStateRunning>,
    /// `terminated`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub terminated: Option<Box<ContainerStateTerminated>>,
    /// `waiting`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub waiting: Option<Box<ContainerStateWaiting>>,
}

/// The recorded part of an ephemeral container's status.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct EphemeralStatusRecord {
    /// `name`.
    #[serde(default)]
    pub name: String,
    /// `state`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub state: Option<k8s_openapi::api::core::v1::ContainerState>,
}

/// The recorded part of a container status.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct ContainerStatusRecord {
    /// `name`.
    #[serde(default)]
    pub name: String,
    /// `image`.
    #[serde(default)]
    pub image: String,
    /// `imageID`.
    #[serde(default, rename = "imageID")]
    pub image_id: String,
    /// `ready`.
    #[serde(default)]
    pub ready: bool,
    /// `restartCount`.
    #[serde(default)]
    pub restart_count: i32,
    /// `started`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub started: Option<bool>,
    /// `containerID`.
    #[serde(default, rename = "containerID", skip_serializing_if = "Option::is_none")]
    pub container_id: Option<String>,
    /// `state` (a ContainerRecreateRequest reads when the running container started).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub state: Option<ContainerStateRecord>,
}

/// Keeps the volumes that are claims.
fn claim_volumes<'de, D: Deserializer<'de>>(d: D) -> Result<Option<Vec<VolumeRecord>>, D::Error> {
    let volumes = Option::<Vec<VolumeRecord>>::deserialize(d)?.unwrap_or_default();
    let kept: Vec<VolumeRecord> = volumes
        .into_iter()
        .filter(|v| v.persistent_volume_claim.is_some())
        .collect();
    Ok((!kept.is_empty()).then_some(kept))
}

/// The node named by a required node affinity of exactly one term whose `matchFields` is
/// `metadata.name In [<node>]` (every other term and shape: `None`).
fn pinned_node<'de, D: Deserializer<'de>>(d: D) -> Result<Option<String>, D::Error> {
    use k8s_openapi::api::core::v1::Affinity;
    let affinity = Option::<Affinity>::deserialize(d)?;
    let terms = affinity
        .and_then(|a| a.node_affinity)
        .and_then(|n| n.required_during_scheduling_ignored_during_execution)
        .map(|r| r.node_selector_terms)
        .unwrap_or_default();
    let [term] = terms.as_slice() else {
        return Ok(None);
    };
    let fields = term.match_fields.as_deref().unwrap_or_default();
    Ok(fields.iter().find_map(|f| {
        let values = f.values.as_deref().unwrap_or_default();
        match values {
            [node] if f.key == "metadata.name" && f.operator == "In" => Some(node.clone()),
            _ => None,
        }
    }))
}

fn pinned_node_affinity<S: serde::Serializer>(node: &Option<String>, s: S) -> Result<S::Ok, S::Error> {
    serde_json::json!({"nodeAffinity": {"requiredDuringSchedulingIgnoredDuringExecution": {
        "nodeSelectorTerms": [{"matchFields": [{"key": "metadata.name", "operator": "In", "values": [node]}]}]
    }}})
    .serialize(s)
}

/// An entry fed from a pod label or annotation (`fieldRef` `metadata.labels[…]`/`metadata.annotations[…]`):
/// kept for the env-from-metadata hash (`kruise_core::containermeta` decides which of them count).
fn reads_pod_metadata(e: &EnvVar) -> bool {
    e.value_from
        .as_ref()
        .and_then(|v| v.field_ref.as_ref())
        .is_some_and(|f| {
            f.field_path.starts_with("metadata.labels[") || f.field_path.starts_with("metadata.annotations[")
        })
}

/// Deserialises every entry of `env` (so a malformed one is still an error) and keeps the recorded ones.
fn recorded_env<'de, D: Deserializer<'de>>(d: D) -> Result<Option<Vec<EnvVar>>, D::Error> {
    let env = Option::<Vec<EnvVar>>::deserialize(d)?.unwrap_or_default();
    let kept: Vec<EnvVar> = env
        .into_iter()
        .filter(|e| RECORDED_ENV.contains(&e.name.as_str()) || reads_pod_metadata(e))
        .collect();
    Ok((!kept.is_empty()).then_some(kept))
}

impl k8s_openapi::Resource for PodRecord {
    const API_VERSION: &'static str = "v1";
    const GROUP: &'static str = "";
    const KIND: &'static str = "Pod";
    const VERSION: &'static str = "v1";
    const URL_PATH_SEGMENT: &'static str = "pods";
    type Scope = k8s_openapi::NamespaceResourceScope;
}

impl k8s_openapi::Metadata for PodRecord {
    type Ty = ObjectMeta;

    /// Everything but the labels and annotations, which are `None` here: read them from
    /// [`PodMeta::labels`] and [`PodMeta::annotations`].
    fn metadata(&self) -> &ObjectMeta {
        self.metadata.rest()
    }

    fn metadata_mut(&mut self) -> &mut ObjectMeta {
        self.metadata.rest_mut()
    }
}

impl k8s_openapi::ListableResource for PodRecord {
    const LIST_KIND: &'static str = "PodList";
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn full_pod() -> serde_json::Value {
        json!({
            "apiVersion": "v1", "kind": "Pod",
            "metadata": {"name": "p", "namespace": "ns", "labels": {"app": "a"},
                "managedFields": [{"manager": "kubectl", "operation": "Update"}]},
            "spec": {
                "nodeName": "n1",
                "readinessGates": [{"conditionType": "KruisePodReady"}],
                "initContainers": [{"name": "proxy", "image": "envoy:1", "restartPolicy": "Always"}],
                "containers": [{
                    "name": "app", "image": "app:1",
                    "env": [{"name": "A", "value": "1"}, {"name": "IS_INJECTED", "value": "true"},
                            {"name": "KRUISE_CONTAINER_BARRIER", "valueFrom": {"configMapKeyRef":
                                {"name": "p-barrier", "key": "p_1000"}}},
                            {"name": "N", "valueFrom": {"fieldRef": {"fieldPath": "metadata.name"}}},
                            {"name": "T", "valueFrom": {"fieldRef": {"fieldPath": "metadata.labels['t']"}}}],
                    "resources": {"requests": {"cpu": "100m"}},
                    "livenessProbe": {"exec": {"command": ["true"]}},
                    "lifecycle": {"postStart": {"exec": {"command": ["true"]}},
                        "preStop": {"httpGet": {"path": "/quit", "port": "http"}}},
                    "ports": [{"name": "http", "containerPort": 80}],
                    "volumeMounts": [{"name": "v", "mountPath": "/v"}]
                }],
                "terminationGracePeriodSeconds": 20,
                "volumes": [{"name": "v", "emptyDir": {}},
                    {"name": "data", "persistentVolumeClaim": {"claimName": "data-p", "readOnly": true}}],
                "unknownField": {"kept": false}
            },
            "status": {"phase": "Running", "podIP": "10.0.0.1",
                "conditions": [{"type": "Ready", "status": "True"}],
                "containerStatuses": [{"name": "app", "image": "app:1", "imageID": "docker://sha256:1",
                    "containerID": "containerd://c1", "ready": true, "restartCount": 2, "started": true,
                    "state": {"running": {"startedAt": "2026-01-01T00:00:00Z"}}}]}
        })
    }

    #[test]
    fn a_pod_keeps_exactly_the_recorded_fields() {
        let record: PodRecord = serde_json::from_value(full_pod()).unwrap();
        assert_eq!(
            serde_json::to_value(&record).unwrap(),
            json!({
                "metadata": {"name": "p", "namespace": "ns", "labels": {"app": "a"}},
                "spec": {
                    "nodeName": "n1",
                    "readinessGates": [{"conditionType": "KruisePodReady"}],
                    "containers": [{
                        "name": "app", "image": "app:1",
                        "env": [{"name": "IS_INJECTED", "value": "true"},
                                {"name": "KRUISE_CONTAINER_BARRIER", "valueFrom": {"configMapKeyRef":
                                    {"name": "p-barrier", "key": "p_1000"}}},
                                {"name": "T", "valueFrom": {"fieldRef": {"fieldPath": "metadata.labels['t']"}}}],
                        "lifecycle": {"preStop": {"httpGet": {"path": "/quit", "port": "http"}}},
                        "ports": [{"name": "http", "containerPort": 80}]
                    }],
                    "terminationGracePeriodSeconds": 20,
                    "volumes": [{"name": "data", "persistentVolumeClaim": {"claimName": "data-p"}}]
                },
                "status": {"phase": "Running", "podIP": "10.0.0.1", "conditions": [{"type": "Ready", "status": "True"}],
                    "containerStatuses": [{"name": "app", "image": "app:1", "imageID": "docker://sha256:1",
                        "containerID": "containerd://c1", "ready": true, "restartCount": 2,
                        "started": true, "state": {"running": {"startedAt": "2026-01-01T00:00:00Z"}}}]}
            })
        );
    }

    #[test]
    fn a_daemon_pod_keeps_the_node_its_affinity_pins_it_to() {
        let pinned = json!({"nodeAffinity": {"requiredDuringSchedulingIgnoredDuringExecution": {
            "nodeSelectorTerms": [{"matchFields": [{"key": "metadata.name", "operator": "In", "values": ["n7"]}]}]
        }}});
        let mut pod = full_pod();
        pod["spec"]["affinity"] = pinned.clone();
        let record: PodRecord = serde_json::from_value(pod).unwrap();
        assert_eq!(record.spec.as_ref().unwrap().pinned_node.as_deref(), Some("n7"));
        assert_eq!(serde_json::to_value(&record).unwrap()["spec"]["affinity"], pinned);
        let mut other = full_pod();
        other["spec"]["affinity"] = json!({"nodeAffinity": {"requiredDuringSchedulingIgnoredDuringExecution": {
            "nodeSelectorTerms": [{"matchExpressions": [{"key": "zone", "operator": "In", "values": ["a"]}]}]
        }}});
        let record: PodRecord = serde_json::from_value(other).unwrap();
        assert_eq!(record.spec.unwrap().pinned_node, None);
    }

    #[test]
    fn a_malformed_pod_is_an_error_even_in_a_skipped_field_type() {
        let mut pod = full_pod();
        pod["spec"]["containers"][0]["env"][0]["value"] = json!(7);
        assert!(serde_json::from_value::<PodRecord>(pod).is_err());
        let mut pod = full_pod();
        pod["status"]["containerStatuses"][0]["restartCount"] = json!("two");
        assert!(serde_json::from_value::<PodRecord>(pod).is_err());
    }
}
