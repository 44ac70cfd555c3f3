//! The agent's ContainerRecreateRequest executor (docs/containerrecreaterequest.md#the-agent): watches
//! the active requests of its own node (label selector `crr.apps.kruise.io/node-name=<node>,
//! crr.apps.kruise.io/active=true`) and works per pod through the pure steps of
//! [`kruise_reconcile::container_recreate_request::agent`]: requests on disjoint containers together,
//! Pending (with a message naming the request waited for) for one naming a container of an earlier
//! one, Recreating for the picked ones, the unready drain, then per sync and request one state write
//! or one stop (preStop hook, then `StopContainer` with the grace, recorded as events; the kubelet
//! starts the container again) or the completion.
//!
//! Unlike OpenKruise, a completion syncs the pod again at once, so the next request of the pod starts
//! without waiting for an unrelated event (openkruise/kruise#1626, #2474). Every sync reads the pod's
//! requests fresh from the API server, so a write of the previous sync is never missed. Runtime and API
//! errors are logged and retried with a back-off; nothing here panics on them.

use std::collections::{BTreeMap, HashMap, HashSet};
use std::time::Duration;

use futures::StreamExt as _;
use kruise_api::apps_v1beta1::{CRR_ACTIVE_LABEL, CRR_NODE_NAME_LABEL, ContainerRecreateRequest};
use kruise_cri::Runtime;
use kube::api::Api;
use kube::runtime::watcher::{self, Event};
use tokio::sync::watch;
use tokio::task::JoinSet;
use tokio::time::Instant;

mod events;
pub(crate) mod hook;
mod sync;

/// A pod: namespace and name.
pub type PodKey = (String, String);

/// Back-off after an error.
const ERROR_BACKOFF: Duration = Duration::from_secs(1);
/// How often a pod with a request at work is looked at (the runtime is polled, not watched).
const BUSY_TICK: Duration = Duration::from_secs(1);
/// How long the loop sleeps when nothing is due.
const IDLE: Duration = Duration::from_secs(60);

/// Runs until the task is dropped.
pub async fn run(client: kube::Client, node: String, runtime: watch::Receiver<Option<Runtime>>) {
    let api: Api<ContainerRecreateRequest> = Api::all(client.clone());
    let selector = format!("{CRR_NODE_NAME_LABEL}={node},{CRR_ACTIVE_LABEL}=true");
    let mut events = watcher::watcher(api, watcher::Config::default().labels(&selector)).boxed();
    let mut pods_of: BTreeMap<PodKey, HashSet<String>> = BTreeMap::new();
    let mut due: HashMap<PodKey, Instant> = HashMap::new();
    let mut running: HashSet<PodKey> = HashSet::new();
    let mut tasks: JoinSet<(PodKey, Option<Duration>)> = JoinSet::new();
    let env = sync::Env {
        client,
        node,
        runtime,
    };
    loop {
        let next_due = due
            .values()
            .min()
            .copied()
            .unwrap_or_else(|| Instant::now() + IDLE);
        tokio::select! {
            event = events.next() => match event {
                Some(Ok(Event::Apply(crr) | Event::InitApply(crr))) => {
                    let key = pod_key(&crr);
                    pods_of.entry(key.clone()).or_default().insert(crr.metadata.name.clone().unwrap_or_default());
                    due.insert(key, Instant::now());
                }
                Some(Ok(Event::Delete(crr))) => {
                    // Hidden (completed) or deleted: the pod's next request may start now.
                    let key = pod_key(&crr);
                    if let Some(names) = pods_of.get_mut(&key) {
                        names.remove(crr.metadata.name.as_deref().unwrap_or_default());
                    }
                    due.insert(key, Instant::now());
                }
                Some(Ok(Event::Init | Event::InitDone)) => {}
                Some(Err(e)) => {
                    tracing::warn!(error = %e, "watching this node's ContainerRecreateRequests");
                    tokio::time::sleep(ERROR_BACKOFF).await;
                }
                None => return,
            },
            Some(done) = tasks.join_next(), if !tasks.is_empty() => {
                match done {
                    Ok((key, again)) => {
                        running.remove(&key);
                        if let Some(after) = again {
                            let at = Instant::now() + after;
                            due.entry(key).and_modify(|d| *d = (*d).min(at)).or_insert(at);
                        }
                    }
                    Err(e) => tracing::error!(error = %e, "a ContainerRecreateRequest sync task failed"),
                }
            }
            () = tokio::time::sleep_until(next_due) => {}
        }
        let now = Instant::now();
        let ready: Vec<PodKey> = due
            .iter()
            .filter(|(k, at)| **at <= now && !running.contains(*k))
            .map(|(k, _)| k.clone())
            .collect();
        for key in ready {
            due.remove(&key);
            if pods_of.get(&key).is_none_or(HashSet::is_empty) {
                pods_of.remove(&key);
                continue;
            }
            running.insert(key.clone());
            let env = env.clone();
            tasks.spawn(async move {
                let again = sync::pod(&env, &key).await;
                (key, again)
            });
        }
    }
}

fn pod_key(crr: &ContainerRecreateRequest) -> PodKey {
    (
        crr.metadata.namespace.clone().unwrap_or_default(),
        crr.spec.pod_name.clone(),
    )
}
