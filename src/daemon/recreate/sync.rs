//! One sync of one pod's requests: read them fresh, pick, and carry out one step.

use std::time::Duration;

use k8s_openapi::api::core::v1::Pod;
use k8s_openapi::jiff::Timestamp;
use kruise_api::apps_v1beta1::{
    CRR_ACTIVE_LABEL, CRR_NODE_NAME_LABEL, CRR_POD_UID_LABEL, ContainerRecreateRequest,
    ContainerRecreateRequestContainerRecreateState as State, ContainerRecreateRequestPhase as Phase,
};
use kruise_cri::{Runtime, kubelet};
use kruise_reconcile::container_recreate_request::agent::{self, RuntimeContainer, Step};
use kruise_reconcile::rfc3339::rfc3339;
use kube::api::{Api, ListParams, Patch, PatchParams};
use serde_json::{Value, json};
use tokio::sync::watch;

use super::events::{self, Happened};
use super::{BUSY_TICK, ERROR_BACKOFF, PodKey, hook};

/// What every sync needs.
#[derive(Clone)]
pub struct Env {
    /// The API client.
    pub client: kube::Client,
    /// This node.
    pub node: String,
    /// The runtime, while one answers.
    pub runtime: watch::Receiver<Option<Runtime>>,
}

/// Why a sync stopped early.
#[derive(Debug, thiserror::Error)]
enum SyncError {
    #[error("API: {0}")]
    Api(#[from] kube::Error),
    #[error("runtime: {0}")]
    Runtime(#[from] kruise_cri::RuntimeError),
}

/// Syncs the pod's requests; returns when to look again (`None`: on the next change).
pub async fn pod(env: &Env, key: &PodKey) -> Option<Duration> {
    match sync(env, key).await {
        Ok(again) => again,
        Err(SyncError::Api(kube::Error::Api(s))) if s.code == 409 => Some(Duration::from_millis(100)),
        Err(e) => {
            tracing::warn!(namespace = %key.0, pod = %key.1, error = %e, "ContainerRecreateRequest sync failed; retrying");
            Some(ERROR_BACKOFF)
        }
    }
}

async fn sync(env: &Env, (namespace, pod_name): &PodKey) -> Result<Option<Duration>, SyncError> {
    let api: Api<ContainerRecreateRequest> = Api::namespaced(env.client.clone(), namespace);
    let selector = format!("{CRR_NODE_NAME_LABEL}={},{CRR_ACTIVE_LABEL}=true", env.node);
    let mut requests: Vec<ContainerRecreateRequest> = api
        .list(&ListParams::default().labels(&selector))
        .await?
        .items
        .into_iter()
        .filter(|c| &c.spec.pod_name == pod_name)
        .collect();
    agent::order(&mut requests);
    let picked = agent::pick(&requests);
    for (i, message) in &picked.wait {
        write(
            &api,
            &requests[*i],
            json!({"phase": "Pending", "message": message}),
        )
        .await?;
        tracing::info!(namespace = %namespace, crr = ?requests[*i].metadata.name, pod = %pod_name, %message, "pending");
    }
    // Requests on disjoint containers, one step each; the pod is looked at again at the soonest.
    let mut again: Option<Duration> = None;
    for i in picked.work {
        if let Some(after) = step(env, &api, &requests[i]).await? {
            again = Some(again.map_or(after, |a| a.min(after)));
        }
    }
    Ok(again)
}

/// One step of one picked request; returns when to look again.
async fn step(
    env: &Env,
    api: &Api<ContainerRecreateRequest>,
    crr: &ContainerRecreateRequest,
) -> Result<Option<Duration>, SyncError> {
    let (namespace, pod_name) = (
        crr.metadata.namespace.as_deref().unwrap_or_default(),
        &crr.spec.pod_name,
    );
    let name = crr.metadata.name.clone().unwrap_or_default();
    let status = crr.status.clone().unwrap_or_default();
    if status.phase != Phase::Recreating {
        write(api, crr, json!({"phase": "Recreating", "message": ""})).await?;
        tracing::info!(namespace = %namespace, crr = %name, pod = %pod_name, "recreating");
        return Ok(Some(Duration::ZERO));
    }
    let now = Timestamp::now();
    match agent::drain_left(crr, now) {
        Some(None) => return Ok(Some(BUSY_TICK)),
        Some(Some(left)) => return Ok(Some(left)),
        None => {}
    }
    let Some(runtime) = env.runtime.borrow().clone() else {
        return Ok(Some(ERROR_BACKOFF));
    };
    if let Some(why) = agent::runtime_mismatch(crr, runtime.name()) {
        complete(
            api,
            crr,
            &status.container_recreate_states,
            &format!("failed to find runtime service: {why}"),
        )
        .await?;
        return Ok(Some(Duration::ZERO));
    }
    let uid = crr
        .metadata
        .labels
        .as_ref()
        .and_then(|l| l.get(CRR_POD_UID_LABEL))
        .cloned()
        .unwrap_or_default();
    let containers = runtime_containers(&runtime, &uid).await?;
    match agent::next(crr, &containers, now) {
        Step::States(states) => {
            write(
                api,
                crr,
                json!({"phase": "Recreating", "containerRecreateStates": states}),
            )
            .await?;
            Ok(Some(Duration::ZERO))
        }
        Step::Kill {
            index,
            id,
            mut states,
        } => {
            let container = &crr.spec.containers[index];
            tracing::info!(namespace = %namespace, crr = %name, container = %container.name, id = %id,
                "stopping the container; the kubelet starts it again");
            if let Err(e) = kill(env, &runtime, crr, index, &id).await {
                tracing::warn!(namespace = %namespace, crr = %name, container = %container.name, error = %e,
                    "stopping the container failed");
                states = agent::kill_failed(states, index, &e.to_string());
            }
            write(
                api,
                crr,
                json!({"phase": "Recreating", "containerRecreateStates": states}),
            )
            .await?;
            Ok(Some(Duration::ZERO))
        }
        Step::Complete(states, message) => {
            complete(api, crr, &states, &message).await?;
            tracing::info!(namespace = %namespace, crr = %name, message = %message, "completed");
            // The pod's next request, if any, starts now.
            Ok(Some(Duration::ZERO))
        }
        Step::Wait(after) => Ok(Some(after.unwrap_or(BUSY_TICK).min(BUSY_TICK))),
    }
}

/// A merge patch of the status, conditional on the resourceVersion read.
async fn write(
    api: &Api<ContainerRecreateRequest>,
    crr: &ContainerRecreateRequest,
    status: Value,
) -> Result<(), kube::Error> {
    let patch = json!({"metadata": {"resourceVersion": crr.metadata.resource_version}, "status": status});
    api.patch_status(
        crr.metadata.name.as_deref().unwrap_or_default(),
        &PatchParams::default(),
        &Patch::Merge(&patch),
    )
    .await
    .map(drop)
}

async fn complete(
    api: &Api<ContainerRecreateRequest>,
    crr: &ContainerRecreateRequest,
    states: &[State],
    message: &str,
) -> Result<(), kube::Error> {
    let status = json!({"phase": "Completed", "completionTime": rfc3339(Timestamp::now()),
        "message": message, "containerRecreateStates": states});
    write(api, crr, status).await
}

/// The pod's containers in the runtime: per name the newest, with its run number and state.
async fn runtime_containers(runtime: &Runtime, uid: &str) -> Result<Vec<RuntimeContainer>, SyncError> {
    use kruise_cri::v1::ContainerState;
    let listed = runtime.list_containers(&[(kubelet::POD_UID, uid)], None).await?;
    let mut newest: std::collections::BTreeMap<String, kruise_cri::v1::Container> = Default::default();
    for c in listed {
        let Some(name) = c.labels.get(kubelet::CONTAINER_NAME).cloned() else {
            continue;
        };
        if newest.get(&name).is_none_or(|n| n.created_at < c.created_at) {
            newest.insert(name, c);
        }
    }
    let prefix = runtime.name().to_owned();
    let mut out = Vec::new();
    for (name, c) in newest {
        let running = c.state() == ContainerState::ContainerRunning;
        let started_at = if running {
            match runtime.container_status(&c.id).await {
                Ok(s) => Timestamp::from_nanosecond(i128::from(s.started_at)).ok(),
                Err(e) if e.is_not_found() => None,
                Err(e) => return Err(e.into()),
            }
        } else {
            None
        };
        out.push(RuntimeContainer {
            name,
            id: format!("{prefix}://{}", c.id),
            restart_count: c
                .annotations
                .get(kubelet::CONTAINER_RESTART_COUNT)
                .and_then(|v| v.parse().ok())
                .unwrap_or(0),
            exited: c.state() == ContainerState::ContainerExited,
            started_at,
        });
    }
    Ok(out)
}

/// Why a stop failed.
#[derive(Debug, thiserror::Error)]
enum KillError {
    #[error("{0}")]
    Runtime(#[from] kruise_cri::RuntimeError),
}

/// Records `Killing`, runs the container's preStop hook within the grace (its failure is recorded as
/// `FailedPreStopHook`, not fatal), then stops it with what is left of the grace, at least 2 s.
async fn kill(
    env: &Env,
    runtime: &Runtime,
    crr: &ContainerRecreateRequest,
    index: usize,
    id: &str,
) -> Result<(), KillError> {
    let container = &crr.spec.containers[index];
    let bare = id.split_once("://").map_or(id, |(_, bare)| bare);
    let grace_seconds = crr
        .spec
        .strategy
        .as_ref()
        .and_then(|s| s.termination_grace_period_seconds)
        .unwrap_or(30)
        .max(0);
    let stop = hook::Stop {
        container: &container.name,
        grace: Duration::from_secs(grace_seconds.unsigned_abs()),
        pre_stop: container.pre_stop.as_ref(),
        ports: &container.ports,
    };
    events::record(
        &env.client,
        &env.node,
        crr,
        Happened::Killing {
            container: &container.name,
        },
    )
    .await;
    if let Some(failure) = hook::stop(runtime, bare, stop, || pod_ip(env, crr)).await?
        && let Some(handler) = container.pre_stop.as_ref()
    {
        let uid = crr
            .metadata
            .labels
            .as_ref()
            .and_then(|l| l.get(CRR_POD_UID_LABEL));
        let pod = format!(
            "{}_{}({})",
            crr.spec.pod_name,
            crr.metadata.namespace.as_deref().unwrap_or_default(),
            uid.map(String::as_str).unwrap_or_default()
        );
        let error = failure.message(handler, &container.name, &pod);
        let what = Happened::FailedPreStopHook {
            container: &container.name,
            error: &error,
        };
        events::record(&env.client, &env.node, crr, what).await;
    }
    Ok(())
}

/// The pod's IP, for an httpGet or tcpSocket hook without a host (OpenKruise's agent has none).
async fn pod_ip(env: &Env, crr: &ContainerRecreateRequest) -> Option<String> {
    let pods: Api<Pod> = Api::namespaced(
        env.client.clone(),
        crr.metadata.namespace.as_deref().unwrap_or_default(),
    );
    match pods.get(&crr.spec.pod_name).await {
        Ok(p) => p.status.and_then(|s| s.pod_ip).filter(|ip| !ip.is_empty()),
        Err(e) => {
            tracing::warn!(error = %e, "reading the pod's IP for its preStop hook");
            None
        }
    }
}
