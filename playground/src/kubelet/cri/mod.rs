//! The CRI runtime: each pod bound to a node becomes a host-network pod sandbox with its containers in
//! one containerd (which every node of the playground shares), labelled as kubelet labels them, and
//! its status is what the runtime reports (docs/playground.md, "Real containers").
//!
//! Each pass lists the playground's sandboxes and containers (two calls) and hands every pod whose
//! object or runtime state changed — or whose back-off ended — to a task of its own ([`pod`]), one at
//! a time per pod, so slow pulls and graceful stops never hold the other controllers up. Sandboxes whose
//! pod is gone are removed. What one playground created carries its [`config::INSTANCE`] label: it
//! is removed when the playground stops, and a later playground removes the leftovers of a crashed
//! one ([`config::PID`]).

pub mod config;
mod pod;
pub mod status;

use std::collections::{HashMap, HashSet};
use std::hash::{Hash as _, Hasher as _};
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use kruise_cri::v1::{Container, PodSandbox};
use kruise_cri::{ConnectError, Runtime, kubelet};
use serde_json::Value;

use crate::api::Api;
use crate::meta;
use crate::store::ResKey;

/// The address of every pod and node: sandboxes share the host's network, and the playground's
/// containers run on this host.
pub const POD_IP: &str = "127.0.0.1";

/// How to reach the runtime and how it restarts.
#[derive(Debug, Clone)]
pub struct CriOptions {
    /// The runtime's socket.
    pub socket: PathBuf,
    /// The first back-off after a container exits or an image pull fails, doubled on each repeat up
    /// to 5 minutes (kubelet: 10 s).
    pub back_off: Duration,
    /// How long one image pull may take.
    pub pull_timeout: Duration,
}

impl CriOptions {
    /// The runtime at `socket` (a path, or a `unix://` URL), with kubelet's 10 s back-off.
    pub fn new(socket: &str) -> Self {
        CriOptions {
            socket: socket_path(socket),
            back_off: Duration::from_secs(10),
            pull_timeout: Duration::from_secs(120),
        }
    }
}

/// A socket given as a path or a `unix://` URL.
pub fn socket_path(socket: &str) -> PathBuf {
    PathBuf::from(socket.strip_prefix("unix://").unwrap_or(socket))
}

/// What the runtime holds for one pod.
#[derive(Debug, Clone, Default)]
pub(crate) struct Found {
    sandboxes: Vec<PodSandbox>,
    containers: Vec<Container>,
}

#[derive(Debug, Default)]
struct State {
    /// Pods with a task running.
    busy: HashSet<String>,
    /// Per pod: what its last task saw, and when it wants to run again at the latest.
    done: HashMap<String, (u64, Option<Instant>)>,
    /// Per pod and container: a failed start, shown until the next try.
    failures: HashMap<(String, String), pod::Failure>,
}

/// The kubelet of every node, on a real runtime.
#[derive(Debug)]
pub struct CriKubelet {
    runtime: Runtime,
    options: CriOptions,
    instance: String,
    state: Mutex<State>,
    /// Set once the playground stops: no task creates anything any more.
    stopped: std::sync::atomic::AtomicBool,
}

/// Locks, whether or not a task panicked while holding it.
fn lock<T>(m: &Mutex<T>) -> std::sync::MutexGuard<'_, T> {
    m.lock().unwrap_or_else(|e| e.into_inner())
}

impl CriKubelet {
    /// Connects to the runtime and removes the sandboxes a crashed playground left.
    pub async fn start(options: CriOptions) -> Result<Arc<CriKubelet>, ConnectError> {
        let runtime = Runtime::connect(&options.socket, Duration::from_secs(10)).await?;
        remove_leftovers(&runtime).await;
        Ok(Arc::new(CriKubelet {
            runtime,
            options,
            instance: meta::uid(),
            state: Mutex::default(),
            stopped: std::sync::atomic::AtomicBool::new(false),
        }))
    }

    /// The runtime's socket.
    pub fn socket(&self) -> &Path {
        &self.options.socket
    }

    /// The value of this playground's [`config::INSTANCE`] label.
    pub fn instance(&self) -> &str {
        &self.instance
    }

    fn ours(&self) -> [(&str, &str); 1] {
        [(config::INSTANCE, self.instance.as_str())]
    }

    /// One pass (see the module's documentation).
    pub async fn sync(self: &Arc<Self>, api: &Arc<Api>) {
        if self.stopped() {
            return;
        }
        let ours = self.ours();
        let listed = tokio::try_join!(
            self.runtime.list_pod_sandboxes(&ours),
            self.runtime.list_containers(&ours, None)
        );
        let (sandboxes, containers) = match listed {
            Ok(listed) => listed,
            Err(e) => {
                tracing::warn!(error = %e, "the runtime cannot list the playground's containers");
                return;
            }
        };
        let mut found: HashMap<String, Found> = HashMap::new();
        for s in sandboxes {
            let uid = s.labels.get(kubelet::POD_UID).cloned().unwrap_or_default();
            found.entry(uid).or_default().sandboxes.push(s);
        }
        for c in containers {
            let uid = c.labels.get(kubelet::POD_UID).cloned().unwrap_or_default();
            found.entry(uid).or_default().containers.push(c);
        }
        let (pods, _) = api.store.list_shared(&ResKey::new("", "pods"), None);
        let now = Instant::now();
        let mut state = lock(&self.state);
        let mut live = HashSet::new();
        for pod in pods {
            let bound = pod["spec"]["nodeName"].as_str().is_some_and(|n| !n.is_empty());
            let finished = matches!(pod["status"]["phase"].as_str(), Some("Succeeded" | "Failed"));
            let uid = meta::uid_of(&pod).to_owned();
            if !bound || (finished && !meta::is_deleting(&pod)) {
                // A finished pod keeps its exited containers until it is deleted.
                live.insert(uid);
                continue;
            }
            live.insert(uid.clone());
            let entry = found.remove(&uid).unwrap_or_default();
            let seen = fingerprint(&pod, &entry);
            let due = match state.done.get(&uid) {
                Some((last, wake)) => *last != seen || wake.is_some_and(|w| w <= now),
                None => true,
            };
            if !due || !state.busy.insert(uid.clone()) {
                continue;
            }
            let (kubelet, api) = (self.clone(), api.clone());
            tokio::spawn(async move {
                let wake = pod::sync(&kubelet, &api, &pod, entry).await;
                let mut state = lock(&kubelet.state);
                state.busy.remove(&uid);
                state.done.insert(uid, (seen, wake));
            });
        }
        for (uid, entry) in found {
            if live.contains(&uid) || !state.busy.insert(uid.clone()) {
                continue;
            }
            let kubelet = self.clone();
            tokio::spawn(async move {
                pod::remove(&kubelet.runtime, &entry, Duration::ZERO).await;
                lock(&kubelet.state).busy.remove(&uid);
            });
        }
        state.done.retain(|uid, _| live.contains(uid));
        state.failures.retain(|(uid, _), _| live.contains(uid));
    }

    /// Whether the playground stopped.
    fn stopped(&self) -> bool {
        self.stopped.load(std::sync::atomic::Ordering::SeqCst)
    }

    /// Stops and removes every sandbox this playground created (best effort), once the pods' tasks
    /// finished (at most 10 s).
    pub async fn clean_up(&self) {
        self.stopped.store(true, std::sync::atomic::Ordering::SeqCst);
        let deadline = Instant::now() + Duration::from_secs(10);
        while !lock(&self.state).busy.is_empty() && Instant::now() < deadline {
            tokio::time::sleep(Duration::from_millis(20)).await;
        }
        let ours = self.ours();
        match self.runtime.list_pod_sandboxes(&ours).await {
            Ok(sandboxes) => remove_sandboxes(&self.runtime, &sandboxes).await,
            Err(e) => tracing::warn!(error = %e, "cannot list the playground's sandboxes to remove them"),
        }
    }

    /// [`CriKubelet::clean_up`] from a thread of its own with a fresh connection, waiting for it: for
    /// a playground dropped without an async shutdown.
    pub fn clean_up_blocking(&self) {
        self.stopped.store(true, std::sync::atomic::Ordering::SeqCst);
        let (socket, instance) = (self.options.socket.clone(), self.instance.clone());
        let thread = std::thread::spawn(move || {
            let Ok(rt) = tokio::runtime::Builder::new_current_thread().enable_all().build() else {
                return;
            };
            rt.block_on(async {
                let Ok(runtime) = Runtime::connect(&socket, Duration::from_secs(5)).await else {
                    return;
                };
                if let Ok(sandboxes) = runtime.list_pod_sandboxes(&[(config::INSTANCE, &instance)]).await {
                    remove_sandboxes(&runtime, &sandboxes).await;
                }
            });
        });
        let _ = thread.join();
    }
}

/// What decides whether a pod needs a task: its resourceVersion and its sandboxes' and containers'
/// ids and states.
fn fingerprint(pod: &Value, found: &Found) -> u64 {
    let mut h = std::collections::hash_map::DefaultHasher::new();
    meta::resource_version(pod).hash(&mut h);
    let mut parts: Vec<(&str, i32)> = found
        .sandboxes
        .iter()
        .map(|s| (s.id.as_str(), s.state))
        .chain(found.containers.iter().map(|c| (c.id.as_str(), c.state)))
        .collect();
    parts.sort_unstable();
    parts.hash(&mut h);
    h.finish()
}

async fn remove_sandboxes(runtime: &Runtime, sandboxes: &[PodSandbox]) {
    for s in sandboxes {
        if let Err(e) = runtime.stop_pod_sandbox(&s.id).await {
            tracing::warn!(sandbox = %s.id, error = %e, "cannot stop a sandbox");
        }
        if let Err(e) = runtime.remove_pod_sandbox(&s.id).await {
            tracing::warn!(sandbox = %s.id, error = %e, "cannot remove a sandbox");
        }
    }
}

/// Removes the sandboxes of playgrounds whose process is gone.
async fn remove_leftovers(runtime: &Runtime) {
    let Ok(all) = runtime.list_pod_sandboxes(&[]).await else {
        return;
    };
    let stale: Vec<PodSandbox> = all
        .into_iter()
        .filter(|s| {
            s.labels
                .get(config::PID)
                .and_then(|pid| pid.parse::<u32>().ok())
                .is_some_and(|pid| !Path::new(&format!("/proc/{pid}")).exists())
        })
        .collect();
    if !stale.is_empty() {
        tracing::info!(
            count = stale.len(),
            "removing sandboxes left by an earlier playground"
        );
        remove_sandboxes(runtime, &stale).await;
    }
}
