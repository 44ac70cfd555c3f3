//! Env fed from pod metadata (docs/env-from-metadata.md): which container env entries read a label or
//! an annotation, the hash of their values that the node agent reports and the workload planners
//! compare (OpenKruise `pkg/util/containermeta/env_hash.go`), and the `apps.kruise.io/runtime-containers-meta`
//! annotation that carries it. One place for both sides: the agent computes the *current* hash from the
//! running container's env, the planners the *expected* one from the pod's metadata.

use std::collections::BTreeMap;

use k8s_openapi::api::core::v1::EnvVar;
use serde::{Deserialize, Serialize};

use crate::selector::LabelSource;

pub use kruise_api::common::RUNTIME_CONTAINERS_META_KEY;

/// Env entries never counted (the SidecarSet version envs, which read annotations but change on every
/// sidecar update and are handled by SidecarSet itself).
const EXCLUDED: [&str; 2] = ["SIDECARSET_VERSION", "SIDECARSET_VERSION_ALT"];

/// Which part of the metadata an env entry reads.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum MetaField {
    /// `metadata.labels['k']`.
    Labels,
    /// `metadata.annotations['k']`.
    Annotations,
}

/// The metadata field and key an env entry reads, when it is one that counts: no literal value, a
/// `fieldRef` of `metadata.labels['k']` or `metadata.annotations['k']`, not a SidecarSet version env.
pub fn reads_metadata(env: &EnvVar) -> Option<(MetaField, &str)> {
    if env.value.as_deref().is_some_and(|v| !v.is_empty()) || EXCLUDED.contains(&env.name.as_str()) {
        return None;
    }
    let path = &env.value_from.as_ref()?.field_ref.as_ref()?.field_path;
    let (field, key) = split_subscript(path)?;
    match field {
        "metadata.labels" => Some((MetaField::Labels, key)),
        "metadata.annotations" => Some((MetaField::Annotations, key)),
        _ => None,
    }
}

/// `a.b['k']` → (`a.b`, `k`) as apimachinery's `SplitMaybeSubscriptedPath`.
fn split_subscript(path: &str) -> Option<(&str, &str)> {
    let inner = path.strip_suffix("']")?;
    let (field, key) = inner.split_once("['")?;
    (!field.is_empty()).then_some((field, key))
}

/// Does any entry of `env` read `field['key']`?
pub fn env_reads(env: &[EnvVar], field: MetaField, key: &str) -> bool {
    env.iter().any(|e| reads_metadata(e) == Some((field, key)))
}

/// The template annotation `kubectl kruise rollout restart` sets (as `kubectl rollout restart` does on
/// a Deployment): every container reads it, so a change restarts them all.
pub const RESTARTED_AT_KEY: &str = "kubectl.kubernetes.io/restartedAt";

/// Does a change of `field['key']` restart a container whose env is `env`: its env reads the key, or
/// the key is [`RESTARTED_AT_KEY`]. The one rule of the planners, the agent and the completion check.
pub fn key_restarts(env: &[EnvVar], field: MetaField, key: &str) -> bool {
    (field == MetaField::Annotations && key == RESTARTED_AT_KEY) || env_reads(env, field, key)
}

/// The pod's [`RESTARTED_AT_KEY`] annotation, if set.
pub fn restarted_at(annotations: &impl LabelSource) -> Option<&str> {
    annotations.label(RESTARTED_AT_KEY)
}

/// The expected hash: the counted entries resolved from the pod's labels and annotations (a missing
/// key resolves to "", as kubelet does).
pub fn expected_hash(env: &[EnvVar], labels: &impl LabelSource, annotations: &impl LabelSource) -> u64 {
    hash_with(env, |_, field, key| {
        let value = match field {
            MetaField::Labels => labels.label(key),
            MetaField::Annotations => annotations.label(key),
        };
        value.unwrap_or_default().to_owned()
    })
}

/// The current hash: the counted entries with the values the running container has, from `env`'s
/// output (`K=V` lines; a missing variable counts as "").
pub fn current_hash(env: &[EnvVar], env_output: &str) -> u64 {
    let values = parse_env_output(env_output);
    hash_with(env, |name, _, _| {
        values.get(name).map(|v| (*v).to_owned()).unwrap_or_default()
    })
}

/// `env` output as a map: each trimmed line split at its first `=`.
pub fn parse_env_output(text: &str) -> BTreeMap<&str, &str> {
    text.lines().filter_map(|l| l.trim().split_once('=')).collect()
}

/// The hash of the counted entries of `env`, each valued by `value(name, field, key)`.
fn hash_with(env: &[EnvVar], value: impl Fn(&str, MetaField, &str) -> String) -> u64 {
    hash_entries(
        env.iter()
            .filter_map(|e| reads_metadata(e).map(|(f, k)| (e.name.clone(), value(&e.name, f, k))))
            .collect(),
    )
}

/// D.3: the entries as Go marshals `[]EnvVar` (sorted by name, stably; an empty value omitted; no
/// entries is `null`), rendered as spew renders a byte slice, hashed with FNV-1a 32.
fn hash_entries(mut entries: Vec<(String, String)>) -> u64 {
    entries.sort_by(|a, b| a.0.cmp(&b.0));
    let mut json = String::new();
    if entries.is_empty() {
        json.push_str("null");
    } else {
        json.push('[');
        for (i, (name, value)) in entries.iter().enumerate() {
            if i > 0 {
                json.push(',');
            }
            json.push_str("{\"name\":");
            crate::go::json_string(name, &mut json);
            if !value.is_empty() {
                json.push_str(",\"value\":");
                crate::go::json_string(value, &mut json);
            }
            json.push('}');
        }
        json.push(']');
    }
    u64::from(crate::go::deep_hash_json(json.as_bytes()))
}

/// The `apps.kruise.io/runtime-containers-meta` annotation (OpenKruise `RuntimeContainerMetaSet`).
#[derive(Debug, Clone, PartialEq, Eq, Default, Serialize, Deserialize)]
pub struct RuntimeContainerMetaSet {
    /// One entry per container status, in status order.
    #[serde(default)]
    pub containers: Vec<RuntimeContainerMeta>,
}

/// What the agent saw of one runtime container.
#[derive(Debug, Clone, PartialEq, Eq, Default, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct RuntimeContainerMeta {
    /// Container name.
    #[serde(default)]
    pub name: String,
    /// `<runtime>://<id>`, as kubelet writes it in the container status.
    #[serde(rename = "containerID", default)]
    pub container_id: String,
    /// The runtime's restart count of this container.
    #[serde(default)]
    pub restart_count: i32,
    /// Its hashes.
    #[serde(default)]
    pub hashes: RuntimeContainerHashes,
    /// The pod's [`RESTARTED_AT_KEY`] when the agent first recorded this container (a kruise-rs
    /// addition; OpenKruise ignores it).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub restarted_at: Option<String>,
}

impl RuntimeContainerMeta {
    /// This container was started for the pod's current [`RESTARTED_AT_KEY`] (or the pod has none).
    pub fn restarted_for(&self, annotations: &impl LabelSource) -> bool {
        restarted_at(annotations).is_none_or(|now| self.restarted_at.as_deref() == Some(now))
    }
}

/// The hashes of one runtime container.
#[derive(Debug, Clone, PartialEq, Eq, Default, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct RuntimeContainerHashes {
    /// Kubelet's container hash, copied from the runtime container (never recomputed).
    #[serde(default)]
    pub plain_hash: u64,
    /// The current hash of env fed from metadata; 0 (omitted) while unknown.
    #[serde(default, skip_serializing_if = "is_zero")]
    pub extracted_env_from_metadata_hash: u64,
}

fn is_zero(v: &u64) -> bool {
    *v == 0
}

impl RuntimeContainerMetaSet {
    /// The annotation of a pod, if present and readable.
    pub fn of(annotations: &impl LabelSource) -> Option<Self> {
        serde_json::from_str(annotations.label(RUNTIME_CONTAINERS_META_KEY)?).ok()
    }

    /// The compact JSON written to the annotation.
    pub fn to_json(&self) -> String {
        serde_json::to_string(self).unwrap_or_default()
    }

    /// The entry of container `name`.
    pub fn get(&self, name: &str) -> Option<&RuntimeContainerMeta> {
        self.containers.iter().find(|c| c.name == name)
    }
}

#[cfg(test)]
mod tests;
