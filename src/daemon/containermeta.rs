//! The agent's env-from-metadata worker (docs/env-from-metadata.md): watches the pods of its node, reports
//! what it sees of their runtime containers in `apps.kruise.io/runtime-containers-meta` (written
//! through `pods/status`), and restarts the containers whose env, fed from pod labels/annotations, no
//! longer matches the pod while an in-place update runs. The workload planners complete such an update
//! only when that report shows the new values.
//!
//! Unlike OpenKruise, a pod is synced on every watch event that asks for it, including the first
//! listing (OpenKruise skips pods without a report there until they change), and every sync reads the
//! pod fresh, so the agent's own write is never judged from a stale copy. Pods are synced one at a
//! time; the restarts run beside them.

use std::collections::HashMap;
use std::time::Duration;

use futures::StreamExt as _;
use k8s_openapi::api::core::v1::Pod;
use kruise_core::containermeta::{RUNTIME_CONTAINERS_META_KEY, RuntimeContainerMetaSet};
use kruise_cri::{Runtime, kubelet};
use kube::api::{Api, Patch, PatchParams};
use kube::runtime::watcher::{self, Event};
use serde_json::json;
use tokio::sync::watch;
use tokio::time::Instant;

pub mod plan;
mod restarter;

use plan::CriContainer;

/// A pod: namespace and name.
type PodKey = (String, String);

/// Delay between an event and the sync it asks for (as OpenKruise), so bursts fold into one.
const EVENT_DELAY: Duration = Duration::from_secs(1);
/// Retry after a failed `env` exec.
const EXEC_RETRY: Duration = Duration::from_secs(3);
/// How long `env` may run.
const EXEC_TIMEOUT: Duration = Duration::from_secs(3);
/// Back-off after an error.
const ERROR_BACKOFF: Duration = Duration::from_secs(1);
/// Sleep when nothing is due.
const IDLE: Duration = Duration::from_secs(60);

/// What a sync needs.
#[derive(Clone)]
struct Env {
    client: kube::Client,
    runtime: watch::Receiver<Option<Runtime>>,
    /// Gate `InPlaceUpdateEnvFromMetadata`.
    gate: bool,
    restarter: restarter::Handle,
}

/// Runs until the task is dropped. `gate` is `InPlaceUpdateEnvFromMetadata`: without it only the
/// containers are reported, no env hash is read and nothing is restarted.
pub async fn run(client: kube::Client, node: String, runtime: watch::Receiver<Option<Runtime>>, gate: bool) {
    let api: Api<Pod> = Api::all(client.clone());
    let config = watcher::Config::default().fields(&format!("spec.nodeName={node}"));
    let mut events = watcher::watcher(api, config).boxed();
    let env = Env {
        restarter: restarter::start(client.clone(), node, runtime.clone()),
        client,
        runtime,
        gate,
    };
    let mut known: HashMap<PodKey, Pod> = HashMap::new();
    let mut due: HashMap<PodKey, Instant> = HashMap::new();
    loop {
        let next = due
            .values()
            .min()
            .copied()
            .unwrap_or_else(|| Instant::now() + IDLE);
        tokio::select! {
            event = events.next() => match event {
                Some(Ok(Event::Apply(pod) | Event::InitApply(pod))) => {
                    let key = key_of(&pod);
                    let old = known.get(&key);
                    if plan::wanted(old, &pod, env.gate) {
                        let at = Instant::now() + EVENT_DELAY;
                        due.entry(key.clone()).and_modify(|d| *d = (*d).min(at)).or_insert(at);
                    }
                    known.insert(key, plan::kept(pod));
                }
                Some(Ok(Event::Delete(pod))) => {
                    let key = key_of(&pod);
                    known.remove(&key);
                    due.remove(&key);
                }
                Some(Ok(Event::Init | Event::InitDone)) => {}
                Some(Err(e)) => {
                    tracing::warn!(error = %e, "watching this node's pods");
                    tokio::time::sleep(ERROR_BACKOFF).await;
                }
                None => return,
            },
            () = tokio::time::sleep_until(next) => {}
        }
        let now = Instant::now();
        let ready: Vec<PodKey> = due
            .iter()
            .filter(|(_, at)| **at <= now)
            .map(|(k, _)| k.clone())
            .collect();
        for key in ready {
            due.remove(&key);
            if let Some(after) = sync(&env, &key).await {
                let at = Instant::now() + after;
                due.entry(key).and_modify(|d| *d = (*d).min(at)).or_insert(at);
            }
        }
    }
}

fn key_of(pod: &Pod) -> PodKey {
    (
        pod.metadata.namespace.clone().unwrap_or_default(),
        pod.metadata.name.clone().unwrap_or_default(),
    )
}

/// Why a sync stopped.
#[derive(Debug, thiserror::Error)]
enum SyncError {
    #[error("API: {0}")]
    Api(#[from] kube::Error),
    #[error("runtime: {0}")]
    Runtime(#[from] kruise_cri::RuntimeError),
}

/// Syncs one pod; returns when to sync it again, if ever.
async fn sync(env: &Env, key: &PodKey) -> Option<Duration> {
    match sync_pod(env, key).await {
        Ok(again) => again,
        Err(SyncError::Api(kube::Error::Api(s))) if s.code == 404 => None,
        Err(e) => {
            tracing::warn!(namespace = %key.0, pod = %key.1, error = %e, "runtime-containers-meta sync failed; retrying");
            Some(ERROR_BACKOFF)
        }
    }
}

async fn sync_pod(env: &Env, (namespace, name): &PodKey) -> Result<Option<Duration>, SyncError> {
    let pods: Api<Pod> = Api::namespaced(env.client.clone(), namespace);
    let pod = pods.get(name).await?;
    let Some(runtime) = env.runtime.borrow().clone() else {
        return Ok(Some(ERROR_BACKOFF));
    };
    let statuses = pod
        .status
        .as_ref()
        .and_then(|s| s.container_statuses.as_deref())
        .unwrap_or_default();
    if !plan::watched(&pod) || pod.metadata.deletion_timestamp.is_some() || statuses.is_empty() {
        return Ok(None);
    }
    // The pod's runtime is the scheme of its first container id; another runtime's pod is not ours.
    let Some(scheme) = statuses[0]
        .container_id
        .as_deref()
        .and_then(|id| id.split_once("://"))
        .map(|(s, _)| s)
    else {
        return Ok(None);
    };
    if scheme != runtime.name() {
        return Ok(None);
    }
    let uid = pod.metadata.uid.clone().unwrap_or_default();
    let cri = runtime_containers(&runtime, &uid).await?;
    let old = RuntimeContainerMetaSet::of(&pod.metadata.annotations);
    let mut entries = plan::build(&pod, runtime.name(), &cri, old.as_ref(), env.gate);
    let mut again = None;
    for e in entries.iter_mut().filter(|e| e.needs_exec) {
        match runtime.exec_sync(&e.id, &["env"], EXEC_TIMEOUT).await {
            Ok(out) if out.exit_code == 0 => {
                let text = String::from_utf8_lossy(&out.stdout);
                e.meta.hashes.extracted_env_from_metadata_hash =
                    plan::current_hash(&pod, &e.meta.name, &text);
            }
            Ok(out) => {
                tracing::warn!(pod = %name, container = %e.meta.name, code = out.exit_code, "`env` failed in the container");
                again = Some(EXEC_RETRY);
            }
            Err(err) => {
                tracing::warn!(pod = %name, container = %e.meta.name, error = %err, "`env` failed in the container");
                again = Some(EXEC_RETRY);
            }
        }
    }
    if env.gate {
        for e in plan::restarts(&pod, &entries) {
            env.restarter.restart(restarter::Restart {
                namespace: namespace.clone(),
                pod: name.clone(),
                uid: uid.clone(),
                container: e.meta.name.clone(),
                id: e.id.clone(),
            });
        }
    }
    let report = plan::report(&entries);
    if old.as_ref() != Some(&report) {
        let patch = json!({"metadata": {"annotations": {RUNTIME_CONTAINERS_META_KEY: report.to_json()}}});
        pods.patch_status(name, &PatchParams::default(), &Patch::Strategic(&patch))
            .await?;
        tracing::debug!(namespace = %namespace, pod = %name, "runtime-containers-meta reported");
    }
    Ok(again)
}

/// The pod's runtime containers, the newest per name.
async fn runtime_containers(runtime: &Runtime, uid: &str) -> Result<Vec<CriContainer>, SyncError> {
    use kruise_cri::v1::ContainerState;
    let listed = runtime.list_containers(&[(kubelet::POD_UID, uid)], None).await?;
    let mut newest: HashMap<String, kruise_cri::v1::Container> = HashMap::new();
    for c in listed {
        let Some(name) = c.labels.get(kubelet::CONTAINER_NAME).cloned() else {
            continue;
        };
        if newest.get(&name).is_none_or(|n| n.created_at < c.created_at) {
            newest.insert(name, c);
        }
    }
    Ok(newest
        .into_iter()
        .map(|(name, c)| CriContainer {
            running: c.state() == ContainerState::ContainerRunning,
            restart_count: c
                .annotations
                .get(kubelet::CONTAINER_RESTART_COUNT)
                .and_then(|v| v.parse().ok())
                .unwrap_or(0),
            plain_hash: c
                .annotations
                .get(kubelet::CONTAINER_HASH)
                .and_then(|h| u64::from_str_radix(h, 16).ok())
                .unwrap_or(0),
            id: c.id,
            name,
        })
        .collect())
}
