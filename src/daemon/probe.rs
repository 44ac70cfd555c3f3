//! The agent's PodProbeMarker prober (docs/podprobemarker.md, "How it works"): watches its own node's
//! NodePodProbe (field selector on the name), runs one worker per (pod, probe) ([`worker`]) and
//! writes the results to the NodePodProbe's status in batches ([`writer`]).
//!
//! The bookkeeping — thresholds, results per probe, the status, which changes are announced — is
//! the pure [`kruise_reconcile::node_pod_probe::agent`]. A worker whose probe, container, pod or IP
//! changes in the spec is restarted; one whose probe left the spec is stopped and its result dropped.

use std::collections::HashMap;
use std::sync::{Arc, Mutex, MutexGuard};
use std::time::Duration;

use futures::StreamExt as _;
use kruise_api::apps_v1alpha1::{NodePodProbe, NodePodProbeSpec};
use kruise_cri::Runtime;
use kruise_reconcile::node_pod_probe::agent::{ProbeKey, Results};
use kube::api::Api;
use kube::runtime::watcher::{self, Event};
use tokio::sync::{Notify, watch};
use tokio::task::AbortHandle;

mod check;
mod worker;
mod writer;

/// Back-off after a watch error.
const ERROR_BACKOFF: Duration = Duration::from_secs(1);

/// What the workers and the writer share.
#[derive(Clone)]
pub struct Shared {
    /// The published results.
    pub results: Arc<Mutex<Results>>,
    /// Wakes the writer.
    pub changed: Arc<Notify>,
}

impl Shared {
    /// The results; a poisoned lock is taken over (every change is a few field writes).
    pub fn results(&self) -> MutexGuard<'_, Results> {
        self.results.lock().unwrap_or_else(|p| p.into_inner())
    }
}

/// Runs until the task is dropped.
pub async fn run(client: kube::Client, node: String, runtime: watch::Receiver<Option<Runtime>>) {
    let api: Api<NodePodProbe> = Api::all(client.clone());
    let config = watcher::Config::default().fields(&format!("metadata.name={node}"));
    let mut events = watcher::watcher(api, config).boxed();
    let shared = Shared {
        results: Arc::default(),
        changed: Arc::new(Notify::new()),
    };
    let (spec_tx, spec_rx) = watch::channel(NodePodProbeSpec::default());
    let writer = tokio::spawn(writer::run(client, node.clone(), shared.clone(), spec_rx));
    let mut workers: HashMap<ProbeKey, (worker::Target, AbortHandle)> = HashMap::new();
    loop {
        let spec = match events.next().await {
            Some(Ok(Event::Apply(npp) | Event::InitApply(npp))) => npp.spec,
            Some(Ok(Event::Delete(_))) => NodePodProbeSpec::default(),
            Some(Ok(Event::Init | Event::InitDone)) => continue,
            Some(Err(e)) => {
                tracing::warn!(error = %e, "watching this node's NodePodProbe");
                tokio::time::sleep(ERROR_BACKOFF).await;
                continue;
            }
            None => break,
        };
        let wanted = worker::targets(&spec);
        workers.retain(|key, (target, handle)| {
            let keep = wanted.get(key) == Some(target);
            if !keep {
                handle.abort();
            }
            keep
        });
        for (key, target) in wanted {
            if workers.contains_key(&key) {
                continue;
            }
            let task = tokio::spawn(worker::run(
                key.clone(),
                target.clone(),
                runtime.clone(),
                shared.clone(),
            ));
            workers.insert(key, (target, task.abort_handle()));
        }
        shared.results().retain(&spec);
        spec_tx.send_replace(spec);
        shared.changed.notify_one();
    }
    for (_, handle) in workers.values() {
        handle.abort();
    }
    writer.abort();
}
