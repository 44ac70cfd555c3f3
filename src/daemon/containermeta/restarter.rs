//! Restarts of containers whose env, fed from pod metadata, is stale (or that started before the
//! pod's `kubectl.kubernetes.io/restartedAt`): each waits 3 s (doubling per
//! container up to 10 min when asked again), checks that the container still runs, and stops it as
//! the ContainerRecreateRequest executor does — the preStop hook and grace restored from what kubelet
//! wrote on the container — with event `Killing`. The kubelet starts it again with fresh env.

use std::collections::{HashMap, HashSet};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use k8s_openapi::api::core::v1::{ContainerPort, ObjectReference};
use kruise_api::apps_v1beta1::CrrProbeHandler;
use kruise_cri::{Runtime, kubelet};
use kube::runtime::events::{Event, EventType, Recorder, Reporter};
use tokio::sync::{mpsc, watch};

use crate::daemon::recreate::hook;

/// First wait before a restart.
const FIRST_DELAY: Duration = Duration::from_secs(3);
/// Longest wait.
const MAX_DELAY: Duration = Duration::from_secs(600);

/// One container to restart.
#[derive(Debug, Clone)]
pub struct Restart {
    pub namespace: String,
    pub pod: String,
    pub uid: String,
    pub container: String,
    /// The runtime's bare id.
    pub id: String,
}

/// Where restarts are asked for.
#[derive(Clone)]
pub struct Handle {
    tx: mpsc::UnboundedSender<Restart>,
}

impl Handle {
    /// Asks for a restart (one at a time per container).
    pub fn restart(&self, r: Restart) {
        let _ = self.tx.send(r);
    }
}

/// The wait before the `n`th request (from 0) for one container.
pub fn delay(n: u32) -> Duration {
    FIRST_DELAY.saturating_mul(1 << n.min(16)).min(MAX_DELAY)
}

/// Starts the restarter.
pub fn start(client: kube::Client, node: String, runtime: watch::Receiver<Option<Runtime>>) -> Handle {
    let (tx, mut rx) = mpsc::unbounded_channel::<Restart>();
    let recorder = Recorder::new(
        client,
        Reporter {
            controller: "kruise-daemon-containermeta".into(),
            instance: Some(node),
        },
    );
    tokio::spawn(async move {
        let in_flight: Arc<Mutex<HashSet<String>>> = Arc::default();
        let mut asked: HashMap<String, u32> = HashMap::new();
        while let Some(r) = rx.recv().await {
            if !in_flight
                .lock()
                .map(|mut s| s.insert(r.id.clone()))
                .unwrap_or(false)
            {
                continue;
            }
            let n = asked.entry(r.id.clone()).or_insert(0);
            let wait = delay(*n);
            *n += 1;
            let (runtime, recorder, in_flight) = (runtime.clone(), recorder.clone(), in_flight.clone());
            tokio::spawn(async move {
                tokio::time::sleep(wait).await;
                let current = runtime.borrow().clone();
                if let Some(runtime) = current {
                    restart(&runtime, &recorder, &r).await;
                }
                if let Ok(mut s) = in_flight.lock() {
                    s.remove(&r.id);
                }
            });
        }
    });
    Handle { tx }
}

async fn restart(runtime: &Runtime, recorder: &Recorder, r: &Restart) {
    let status = match runtime.container_status(&r.id).await {
        Ok(s) => s,
        Err(e) if e.is_not_found() => return,
        Err(e) => {
            tracing::warn!(pod = %r.pod, container = %r.container, error = %e, "reading the container to restart");
            return;
        }
    };
    if status.state() != kruise_cri::v1::ContainerState::ContainerRunning {
        return;
    }
    let a = &status.annotations;
    let seconds = |k: &str| a.get(k).and_then(|v| v.parse::<i64>().ok());
    let grace = seconds(kubelet::POD_DELETION_GRACE_PERIOD)
        .or_else(|| seconds(kubelet::POD_TERMINATION_GRACE_PERIOD))
        .unwrap_or(2)
        .max(0);
    let pre_stop: Option<CrrProbeHandler> = a
        .get(kubelet::CONTAINER_PRE_STOP_HANDLER)
        .and_then(|j| serde_json::from_str(j).ok());
    let ports: Vec<ContainerPort> = a
        .get(kubelet::CONTAINER_PORTS)
        .and_then(|j| serde_json::from_str(j).ok())
        .unwrap_or_default();
    let full_id = format!("{}://{}", runtime.name(), r.id);
    let event = Event {
        type_: EventType::Normal,
        reason: "Killing".into(),
        note: Some(format!(
            "Stopping containerID {full_id} by container meta restarter"
        )),
        action: "Killing".into(),
        secondary: None,
    };
    let reference = ObjectReference {
        api_version: Some("v1".into()),
        kind: Some("Pod".into()),
        namespace: Some(r.namespace.clone()),
        name: Some(r.pod.clone()),
        uid: Some(r.uid.clone()),
        field_path: Some(format!("spec.containers{{{}}}", r.container)),
        ..Default::default()
    };
    if let Err(e) = recorder.publish(&event, &reference).await {
        tracing::debug!(error = %e, "could not record event Killing");
    }
    tracing::info!(namespace = %r.namespace, pod = %r.pod, container = %r.container, id = %full_id,
        "restarting the container for env fed from changed metadata or a rollout restart");
    let stop = hook::Stop {
        container: &r.container,
        grace: Duration::from_secs(grace.unsigned_abs()),
        pre_stop: pre_stop.as_ref(),
        ports: &ports,
    };
    // The hook has no pod IP here: a host-less httpGet hook fails and the stop goes on.
    if let Err(e) = hook::stop(runtime, &r.id, stop, || async { None }).await {
        tracing::warn!(pod = %r.pod, container = %r.container, error = %e, "stopping the container failed");
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn restarts_of_one_container_back_off_from_3s_to_10min() {
        assert_eq!(delay(0), Duration::from_secs(3));
        assert_eq!(delay(1), Duration::from_secs(6));
        assert_eq!(delay(7), Duration::from_secs(384));
        assert_eq!(delay(8), MAX_DELAY);
        assert_eq!(delay(40), MAX_DELAY);
    }
}
