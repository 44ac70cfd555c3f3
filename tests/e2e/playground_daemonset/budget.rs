//! A pod watch through the playground's kubeconfig that records, over every state it sees, the most
//! eligible nodes at once without a ready pod, and the most pods on one node.

use std::{
    collections::BTreeMap,
    path::Path,
    sync::{Arc, Mutex},
};

use futures::StreamExt as _;
use k8s_openapi::api::core::v1::Pod;
use kube::{
    Api, Client, Config,
    config::{KubeConfigOptions, Kubeconfig},
    runtime::watcher,
};

/// What the watch saw.
#[derive(Debug, Default, Clone)]
pub struct Seen {
    /// The most of the watched nodes at once without a ready, live pod.
    pub unavailable: usize,
    /// The most live pods on one node at once.
    pub per_node: usize,
}

/// A running watch of the pods labelled `selector` in `namespace` on `nodes`.
pub struct Watch {
    seen: Arc<Mutex<Seen>>,
    stop: Option<tokio::sync::oneshot::Sender<()>>,
    thread: Option<std::thread::JoinHandle<()>>,
}

impl Watch {
    /// Starts watching (returns once the initial list is in).
    pub fn start(kubeconfig: &Path, namespace: &str, selector: &str, nodes: &[&str]) -> Watch {
        let seen = Arc::new(Mutex::new(Seen::default()));
        let (stop, stopped) = tokio::sync::oneshot::channel();
        let (ready_tx, ready_rx) = std::sync::mpsc::channel();
        let (kubeconfig, namespace, selector) =
            (kubeconfig.to_owned(), namespace.to_owned(), selector.to_owned());
        let nodes: Vec<String> = nodes.iter().map(|n| n.to_string()).collect();
        let record = seen.clone();
        let thread = std::thread::spawn(move || {
            let rt = tokio::runtime::Builder::new_current_thread()
                .enable_all()
                .build()
                .unwrap();
            rt.block_on(async move {
                let config = Kubeconfig::read_from(&kubeconfig).unwrap();
                let config = Config::from_custom_kubeconfig(config, &KubeConfigOptions::default())
                    .await
                    .unwrap();
                let pods: Api<Pod> = Api::namespaced(Client::try_from(config).unwrap(), &namespace);
                let mut events = std::pin::pin!(watcher(pods, watcher::Config::default().labels(&selector)));
                let mut current: BTreeMap<String, (String, bool)> = BTreeMap::new();
                // States are counted from the end of the initial list on (during it the map is partial).
                let mut listed = false;
                let watching = async {
                    while let Some(event) = events.next().await {
                        match event {
                            Ok(watcher::Event::Apply(pod) | watcher::Event::InitApply(pod)) => {
                                let name = pod.metadata.name.clone().unwrap_or_default();
                                if pod.metadata.deletion_timestamp.is_some() {
                                    current.remove(&name);
                                } else {
                                    current.insert(name, (node_of(&pod), ready(&pod)));
                                }
                            }
                            Ok(watcher::Event::Delete(pod)) => {
                                current.remove(&pod.metadata.name.unwrap_or_default());
                            }
                            Ok(watcher::Event::InitDone) => {
                                listed = true;
                                let _ = ready_tx.send(());
                            }
                            Ok(watcher::Event::Init) | Err(_) => continue,
                        }
                        if !listed {
                            continue;
                        }
                        let mut s = record.lock().unwrap();
                        let unavailable = nodes
                            .iter()
                            .filter(|n| !current.values().any(|(on, ready)| on == *n && *ready))
                            .count();
                        s.unavailable = s.unavailable.max(unavailable);
                        let mut per_node: BTreeMap<&str, usize> = BTreeMap::new();
                        for (on, _) in current.values() {
                            *per_node.entry(on.as_str()).or_default() += 1;
                        }
                        s.per_node = s.per_node.max(per_node.values().copied().max().unwrap_or(0));
                    }
                };
                tokio::select! {
                    () = watching => {}
                    _ = stopped => {}
                }
            });
        });
        ready_rx
            .recv_timeout(std::time::Duration::from_secs(30))
            .expect("the pod watch lists the pods");
        Watch {
            seen,
            stop: Some(stop),
            thread: Some(thread),
        }
    }

    /// What was seen so far.
    pub fn seen(&self) -> Seen {
        self.seen.lock().unwrap().clone()
    }
}

impl Drop for Watch {
    fn drop(&mut self) {
        if let Some(stop) = self.stop.take() {
            let _ = stop.send(());
        }
        if let Some(t) = self.thread.take() {
            let _ = t.join();
        }
    }
}

/// The node a pod runs on or is pinned to.
fn node_of(pod: &Pod) -> String {
    let spec = pod.spec.as_ref();
    spec.and_then(|s| s.node_name.clone())
        .or_else(|| {
            let terms = &spec?
                .affinity
                .as_ref()?
                .node_affinity
                .as_ref()?
                .required_during_scheduling_ignored_during_execution
                .as_ref()?
                .node_selector_terms;
            terms
                .first()?
                .match_fields
                .as_ref()?
                .first()?
                .values
                .as_ref()?
                .first()
                .cloned()
        })
        .unwrap_or_default()
}

fn ready(pod: &Pod) -> bool {
    pod.status
        .as_ref()
        .and_then(|s| s.conditions.as_ref())
        .is_some_and(|c| c.iter().any(|c| c.type_ == "Ready" && c.status == "True"))
}
