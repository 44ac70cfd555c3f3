//! The pure half of the agent's env-from-metadata work (docs/env-from-metadata.md): which pods it
//! looks at and when, the `apps.kruise.io/runtime-containers-meta` report it builds from the runtime's
//! containers, and which containers must restart.

use k8s_openapi::api::core::v1::{Container, EnvVar, Pod, PodSpec};
use k8s_openapi::apimachinery::pkg::apis::meta::v1::ObjectMeta;
use kruise_api::common::IN_PLACE_UPDATE_READY;
use kruise_core::containermeta::{
    self, RuntimeContainerHashes, RuntimeContainerMeta, RuntimeContainerMetaSet,
};

/// The SidecarSet hash annotation: a pod carrying it is watched even when no kruise workload owns it.
const SIDECARSET_HASH: &str = "kruise.io/sidecarset-hash";

/// One of the pod's runtime containers (the newest of its name), as kubelet labelled it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct CriContainer {
    /// Container name (label `io.kubernetes.container.name`).
    pub name: String,
    /// The runtime's bare id.
    pub id: String,
    /// It is running.
    pub running: bool,
    /// Annotation `io.kubernetes.container.restartCount`.
    pub restart_count: i32,
    /// Annotation `io.kubernetes.container.hash`, parsed from hex (0 when absent).
    pub plain_hash: u64,
}

/// One entry of the report being built.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Entry {
    /// The reported entry.
    pub meta: RuntimeContainerMeta,
    /// The runtime's bare id.
    pub id: String,
    /// The current env hash must be read from the container (`env` through CRI exec).
    pub needs_exec: bool,
}

/// Pods the agent reports on: controlled by an `apps.kruise.io` workload, or injected by a SidecarSet.
pub fn watched(pod: &Pod) -> bool {
    let kruise_owner = pod
        .metadata
        .owner_references
        .iter()
        .flatten()
        .any(|o| o.controller == Some(true) && o.api_version.split('/').next() == Some("apps.kruise.io"));
    kruise_owner
        || pod
            .metadata
            .annotations
            .as_ref()
            .is_some_and(|a| a.contains_key(SIDECARSET_HASH))
}

fn env_of(c: &Container) -> &[EnvVar] {
    c.env.as_deref().unwrap_or_default()
}

fn expected(pod: &Pod, c: &Container) -> u64 {
    containermeta::expected_hash(env_of(c), &pod.metadata.labels, &pod.metadata.annotations)
}

fn spec_containers(pod: &Pod) -> &[Container] {
    pod.spec
        .as_ref()
        .map(|s| s.containers.as_slice())
        .unwrap_or_default()
}

/// Should a change from `old` to `new` sync the pod (OpenKruise's event filter): a watched pod, not
/// deleting, with container statuses, whose container count changed, whose containers differ from
/// the report, or (with the gate) whose expected env hashes or `kubectl.kubernetes.io/restartedAt`
/// differ from the report or from `old`'s.
pub fn wanted(old: Option<&Pod>, new: &Pod, gate: bool) -> bool {
    if !watched(new) || new.metadata.deletion_timestamp.is_some() {
        return false;
    }
    let statuses = new
        .status
        .as_ref()
        .and_then(|s| s.container_statuses.as_deref())
        .unwrap_or_default();
    if statuses.is_empty() {
        return false;
    }
    if old.is_some_and(|o| spec_containers(o).len() != spec_containers(new).len()) {
        return true;
    }
    if gate && old.is_some_and(|o| restarted_at(o) != restarted_at(new)) {
        return true;
    }
    let meta = RuntimeContainerMetaSet::of(&new.metadata.annotations);
    for (i, s) in statuses.iter().enumerate() {
        if s.container_id.as_deref().unwrap_or_default().is_empty() {
            continue;
        }
        let Some(meta) = meta.as_ref().filter(|m| m.containers.len() == statuses.len()) else {
            return true;
        };
        if meta.containers[i].container_id != s.container_id.as_deref().unwrap_or_default() {
            return true;
        }
        if gate && let Some(c) = spec_containers(new).get(i) {
            let hash = expected(new, c);
            if hash != meta.containers[i].hashes.extracted_env_from_metadata_hash
                || !meta.containers[i].restarted_for(&new.metadata.annotations)
            {
                return true;
            }
            if let Some(o) = old
                && spec_containers(o)
                    .get(i)
                    .is_some_and(|oc| expected(o, oc) != hash)
            {
                return true;
            }
        }
    }
    false
}

/// What the agent keeps of a pod between its watch events: only what [`wanted`] reads of the old
/// pod — labels, annotations and the containers' names and env. The rest (status, managedFields, the
/// other container fields) is dropped; each sync reads the pod fresh.
pub fn kept(pod: Pod) -> Pod {
    let Pod { metadata, spec, .. } = pod;
    let containers = spec.map(|s| {
        let containers = s.containers.into_iter().map(|c| Container {
            name: c.name,
            env: c.env,
            ..Container::default()
        });
        PodSpec {
            containers: containers.collect(),
            ..PodSpec::default()
        }
    });
    Pod {
        metadata: ObjectMeta {
            labels: metadata.labels,
            annotations: metadata.annotations,
            ..ObjectMeta::default()
        },
        spec: containers,
        status: None,
    }
}

/// The report for `pod` from its runtime containers (per status, in status order, those with a
/// runtime container and a spec): an entry the old report has for the same containerID is kept;
/// otherwise a fresh one with kubelet's hash and the pod's `kubectl.kubernetes.io/restartedAt` copied
/// (as is that value into a kept entry without one, when no in-place update runs: it was written by an
/// agent that did not record it). With the gate, a running container whose env hash is unknown gets it
/// now when none of its env reads metadata, else it `needs_exec`.
pub fn build(
    pod: &Pod,
    runtime: &str,
    cri: &[CriContainer],
    old: Option<&RuntimeContainerMetaSet>,
    gate: bool,
) -> Vec<Entry> {
    let statuses = pod
        .status
        .as_ref()
        .and_then(|s| s.container_statuses.as_deref())
        .unwrap_or_default();
    let now = restarted_at(pod).map(str::to_owned);
    let updating = updating(pod);
    let mut out = Vec::with_capacity(statuses.len());
    for s in statuses {
        let Some(c) = cri.iter().find(|c| c.name == s.name) else {
            continue;
        };
        let Some(spec) = spec_containers(pod).iter().find(|sc| sc.name == s.name) else {
            continue;
        };
        let container_id = format!("{runtime}://{}", c.id);
        let mut meta = old
            .and_then(|o| o.containers.iter().find(|m| m.container_id == container_id))
            .cloned()
            .unwrap_or_else(|| RuntimeContainerMeta {
                name: c.name.clone(),
                container_id,
                restart_count: c.restart_count,
                hashes: RuntimeContainerHashes {
                    plain_hash: c.plain_hash,
                    extracted_env_from_metadata_hash: 0,
                },
                restarted_at: now.clone(),
            });
        if meta.restarted_at.is_none() && !updating {
            meta.restarted_at.clone_from(&now);
        }
        let mut needs_exec = false;
        if gate && meta.hashes.extracted_env_from_metadata_hash == 0 && c.running {
            if env_of(spec)
                .iter()
                .any(|e| containermeta::reads_metadata(e).is_some())
            {
                needs_exec = true;
            } else {
                meta.hashes.extracted_env_from_metadata_hash = containermeta::current_hash(env_of(spec), "");
            }
        }
        out.push(Entry {
            meta,
            id: c.id.clone(),
            needs_exec,
        });
    }
    out
}

/// The current env hash of `pod`'s container `name` from its `env` output.
pub fn current_hash(pod: &Pod, name: &str, env_output: &str) -> u64 {
    spec_containers(pod)
        .iter()
        .find(|c| c.name == name)
        .map_or(0, |c| containermeta::current_hash(env_of(c), env_output))
}

/// An in-place update runs: condition `InPlaceUpdateReady` is False.
fn updating(pod: &Pod) -> bool {
    pod.status
        .as_ref()
        .and_then(|s| s.conditions.as_ref())
        .and_then(|c| c.iter().find(|c| c.type_ == IN_PLACE_UPDATE_READY))
        .is_some_and(|c| c.status == "False")
}

/// The pod's `kubectl.kubernetes.io/restartedAt`.
fn restarted_at(pod: &Pod) -> Option<&str> {
    containermeta::restarted_at(&pod.metadata.annotations)
}

/// The containers to restart: only while an in-place update runs (`InPlaceUpdateReady` False), those
/// whose known env hash differs from what the pod's metadata gives now, or that were started before
/// the pod's current `kubectl.kubernetes.io/restartedAt`.
pub fn restarts<'e>(pod: &Pod, entries: &'e [Entry]) -> Vec<&'e Entry> {
    if !updating(pod) {
        return Vec::new();
    }
    let annotations = &pod.metadata.annotations;
    entries
        .iter()
        .filter(|e| {
            let hash = e.meta.hashes.extracted_env_from_metadata_hash;
            let stale_env = hash > 0
                && spec_containers(pod)
                    .iter()
                    .find(|c| c.name == e.meta.name)
                    .is_some_and(|c| expected(pod, c) != hash);
            stale_env || !e.meta.restarted_for(annotations)
        })
        .collect()
}

/// The report as the annotation carries it.
pub fn report(entries: &[Entry]) -> RuntimeContainerMetaSet {
    RuntimeContainerMetaSet {
        containers: entries.iter().map(|e| e.meta.clone()).collect(),
    }
}

#[cfg(test)]
mod tests;
