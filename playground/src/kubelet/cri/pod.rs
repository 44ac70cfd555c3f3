//! One pod's task: its sandbox, its containers (started, restarted per `restartPolicy`, recreated
//! when their hash changes), its status, and its graceful end.

use std::time::{Duration, Instant};

use kruise_cri::kubelet;
use kruise_cri::v1::{Container, ContainerState, ContainerStatus, PodSandboxConfig, PodSandboxState};
use kruise_cri::{Runtime, RuntimeError};
use serde_json::Value;

use super::status::{self, Waiting};
use super::{CriKubelet, Found, POD_IP, config, lock};
use crate::api::delete::DeleteOptions;
use crate::api::{Api, UpdateMode};
use crate::kubelet::pod_status::{pod_status, restarts, strip_times};
use crate::meta;

/// The longest back-off (kubelet's).
const MAX_BACK_OFF: Duration = Duration::from_secs(300);

/// A failed (re)start of a container, shown until the next try at `retry`.
#[derive(Debug, Clone)]
pub struct Failure {
    waiting: Waiting,
    retry: Instant,
    /// Failures in a row, for the back-off.
    count: u32,
}

/// `base` doubled `n` times, at most [`MAX_BACK_OFF`].
fn back_off(base: Duration, n: u32) -> Duration {
    base.saturating_mul(1 << n.min(16)).min(MAX_BACK_OFF)
}

/// What happened to one container in this task.
enum Outcome {
    /// Nothing to report besides the runtime's state.
    Done,
    /// Not running, for this reason; try again at the instant.
    Wait(Waiting, Instant),
}

/// Brings the pod's runtime state to its spec and reports its status; returns when the pod wants a
/// task again at the latest (a back-off ending).
pub(super) async fn sync(k: &CriKubelet, api: &Api, pod: &Value, found: Found) -> Option<Instant> {
    if k.stopped() {
        return None;
    }
    if meta::is_deleting(pod) {
        terminate(k, api, pod, &found).await;
        return None;
    }
    let uid = meta::uid_of(pod);
    let ready = found
        .sandboxes
        .iter()
        .filter(|s| s.state() == PodSandboxState::SandboxReady)
        .max_by_key(|s| s.created_at);
    let (sandbox_id, sandbox_config) = match ready {
        Some(s) => {
            let attempt = s.metadata.as_ref().map_or(0, |m| m.attempt);
            (s.id.clone(), config::sandbox(pod, attempt, &k.instance))
        }
        None => {
            // A first sandbox, or a new one after the old one died (its containers go with it).
            remove(&k.runtime, &found, Duration::ZERO).await;
            let attempt = u32::try_from(found.sandboxes.len()).unwrap_or(u32::MAX);
            let config = config::sandbox(pod, attempt, &k.instance);
            match k.runtime.run_pod_sandbox(config.clone()).await {
                Ok(id) => (id, config),
                Err(e) => {
                    let waiting = Waiting {
                        reason: "ContainerCreating",
                        message: format!("Failed to create pod sandbox: {e}"),
                    };
                    report(k, api, pod, &[], Some(&waiting)).await;
                    return Some(Instant::now() + k.options.back_off);
                }
            }
        }
    };
    let mut wake: Option<Instant> = None;
    if k.stopped() {
        return None;
    }
    let specs: Vec<Value> = pod["spec"]["containers"].as_array().cloned().unwrap_or_default();
    for spec in &specs {
        let name = spec["name"].as_str().unwrap_or_default();
        let mut runs: Vec<&Container> = found
            .containers
            .iter()
            .filter(|c| {
                c.pod_sandbox_id == sandbox_id
                    && c.labels.get(kubelet::CONTAINER_NAME).map(String::as_str) == Some(name)
            })
            .collect();
        runs.sort_by_key(|c| std::cmp::Reverse(c.created_at));
        // kubelet keeps the newest run and the one before it.
        for old in runs.iter().skip(2) {
            let _ = k.runtime.remove_container(&old.id).await;
        }
        let outcome = container(k, api, pod, spec, &runs, &sandbox_id, &sandbox_config).await;
        let key = (uid.to_owned(), name.to_owned());
        match outcome {
            Outcome::Done => {
                lock(&k.state).failures.remove(&key);
            }
            Outcome::Wait(waiting, at) => {
                wake = Some(wake.map_or(at, |w| w.min(at)));
                let mut state = lock(&k.state);
                let failure = state.failures.entry(key).or_insert(Failure {
                    waiting: waiting.clone(),
                    retry: at,
                    count: 0,
                });
                failure.waiting = waiting;
                failure.retry = at;
            }
        }
    }
    let statuses = statuses(k, pod, &specs, &sandbox_id).await;
    report(k, api, pod, &statuses, None).await;
    wake
}

/// One container: started when it has no run, recreated when its hash changed, restarted after its
/// back-off when it exited and `restartPolicy` says so. `runs` are its runs in this sandbox, newest
/// first.
async fn container(
    k: &CriKubelet,
    api: &Api,
    pod: &Value,
    spec: &Value,
    runs: &[&Container],
    sandbox_id: &str,
    sandbox_config: &PodSandboxConfig,
) -> Outcome {
    // A new run replaces the one before the newest, so that kubelet's two runs stay two.
    let before = runs.get(1).map(|c| c.id.as_str());
    let name = spec["name"].as_str().unwrap_or_default();
    let image = spec["image"].as_str().unwrap_or_default();
    let key = (meta::uid_of(pod).to_owned(), name.to_owned());
    let failed = lock(&k.state).failures.get(&key).cloned();
    let Some(newest) = runs.first() else {
        return start(k, api, pod, spec, 0, None, sandbox_id, sandbox_config, failed).await;
    };
    let count = status::restart_count(&newest.annotations);
    let current =
        newest.annotations.get(kubelet::CONTAINER_HASH) == Some(&kubelet::container_hash_hex(name, image));
    match newest.state() {
        ContainerState::ContainerRunning if current => Outcome::Done,
        ContainerState::ContainerRunning => {
            // The spec changed (an in-place image update): stop, then run the new spec.
            let grace = Duration::from_secs(config::termination_grace(pod).unsigned_abs());
            if let Err(e) = k.runtime.stop_container(&newest.id, grace).await {
                let waiting = Waiting {
                    reason: "ContainerCreating",
                    message: format!("cannot stop the old container: {e}"),
                };
                return Outcome::Wait(waiting, Instant::now() + k.options.back_off);
            }
            start(
                k,
                api,
                pod,
                spec,
                count + 1,
                before,
                sandbox_id,
                sandbox_config,
                failed,
            )
            .await
        }
        ContainerState::ContainerExited => {
            let Ok(exited) = k.runtime.container_status(&newest.id).await else {
                return Outcome::Done;
            };
            if current && !restarts(pod, i64::from(exited.exit_code)) {
                return Outcome::Done;
            }
            if failed.is_some() {
                // A restart that failed (a pull, say) retries on its own back-off.
                return start(
                    k,
                    api,
                    pod,
                    spec,
                    count + 1,
                    before,
                    sandbox_id,
                    sandbox_config,
                    failed,
                )
                .await;
            }
            let delay = if current {
                back_off(k.options.back_off, count)
            } else {
                Duration::ZERO
            };
            let finished =
                std::time::UNIX_EPOCH + Duration::from_nanos(exited.finished_at.max(0).unsigned_abs());
            let waited = std::time::SystemTime::now()
                .duration_since(finished)
                .unwrap_or_default();
            if waited < delay {
                let waiting = Waiting {
                    reason: "CrashLoopBackOff",
                    message: format!(
                        "back-off {}s restarting failed container={name} pod={}_{}({})",
                        delay.as_secs(),
                        meta::name(pod),
                        meta::namespace(pod),
                        meta::uid_of(pod)
                    ),
                };
                return Outcome::Wait(waiting, Instant::now() + (delay - waited));
            }
            start(
                k,
                api,
                pod,
                spec,
                count + 1,
                before,
                sandbox_id,
                sandbox_config,
                None,
            )
            .await
        }
        // Created but never started (a start that failed), or unknown: run it again.
        _ => {
            let _ = k.runtime.remove_container(&newest.id).await;
            start(k, api, pod, spec, count, None, sandbox_id, sandbox_config, failed).await
        }
    }
}

/// Pulls (per `imagePullPolicy`), creates and starts a run of `spec`, removing the run it `retires`
/// first; a failure becomes the container's `waiting` reason until a retry after its back-off.
#[allow(clippy::too_many_arguments)]
async fn start(
    k: &CriKubelet,
    api: &Api,
    pod: &Value,
    spec: &Value,
    restart_count: u32,
    retires: Option<&str>,
    sandbox_id: &str,
    sandbox_config: &PodSandboxConfig,
    failed: Option<Failure>,
) -> Outcome {
    let now = Instant::now();
    if let Some(f) = &failed
        && f.retry > now
    {
        return Outcome::Wait(f.waiting.clone(), f.retry);
    }
    let fails = failed.as_ref().map_or(0, |f| f.count);
    let retry = now + back_off(k.options.back_off, fails);
    let fail = |reason: &'static str, message: String| {
        let key = (
            meta::uid_of(pod).to_owned(),
            spec["name"].as_str().unwrap_or_default().to_owned(),
        );
        let mut state = lock(&k.state);
        let entry = state.failures.entry(key).or_insert(Failure {
            waiting: Waiting {
                reason,
                message: message.clone(),
            },
            retry,
            count: fails,
        });
        entry.count = fails + 1;
        Outcome::Wait(Waiting { reason, message }, retry)
    };
    let image = spec["image"].as_str().unwrap_or_default();
    if let Err((reason, message)) = pull(k, spec, image, sandbox_config, failed.as_ref()).await {
        return fail(reason, message);
    }
    let config = match config::container(api, pod, spec, restart_count, &k.instance) {
        Ok(c) => c,
        Err(message) => return fail("CreateContainerConfigError", message),
    };
    if let Some(old) = retires {
        let _ = k.runtime.remove_container(old).await;
    }
    let id = match k
        .runtime
        .create_container(sandbox_id, config, sandbox_config.clone())
        .await
    {
        Ok(id) => id,
        Err(e) => return fail("CreateContainerError", runtime_message(&e)),
    };
    if let Err(e) = k.runtime.start_container(&id).await {
        let _ = k.runtime.remove_container(&id).await;
        return fail("RunContainerError", runtime_message(&e));
    }
    Outcome::Done
}

fn runtime_message(e: &RuntimeError) -> String {
    match e {
        RuntimeError::Call { message, .. } => message.clone(),
        other => other.to_string(),
    }
}

/// Pulls `image` as `imagePullPolicy` says (unset: `Always` for `:latest` or no tag, else
/// `IfNotPresent`); the waiting reason and message when it fails.
async fn pull(
    k: &CriKubelet,
    spec: &Value,
    image: &str,
    sandbox_config: &PodSandboxConfig,
    failed: Option<&Failure>,
) -> Result<(), (&'static str, String)> {
    let tag_latest = {
        let last = image.rsplit('/').next().unwrap_or(image);
        !image.contains('@') && last.rsplit_once(':').is_none_or(|(_, t)| t == "latest")
    };
    let policy =
        spec["imagePullPolicy"]
            .as_str()
            .unwrap_or(if tag_latest { "Always" } else { "IfNotPresent" });
    let present = matches!(k.runtime.image_id(image).await, Ok(Some(_)));
    match policy {
        "Never" if present => Ok(()),
        "Never" => Err((
            "ErrImageNeverPull",
            format!("Container image \"{image}\" is not present with pull policy of Never"),
        )),
        "IfNotPresent" if present => Ok(()),
        _ => {
            let result = k
                .runtime
                .pull_image_in(image, None, Some(sandbox_config.clone()), k.options.pull_timeout)
                .await;
            result.map(drop).map_err(|e| {
                // The first failure is ErrImagePull; the ones after it, while retrying, ImagePullBackOff.
                let again =
                    failed.is_some_and(|f| matches!(f.waiting.reason, "ErrImagePull" | "ImagePullBackOff"));
                if again {
                    (
                        "ImagePullBackOff",
                        format!("Back-off pulling image \"{image}\": {e}"),
                    )
                } else {
                    ("ErrImagePull", e.to_string())
                }
            })
        }
    }
}

/// The container statuses of the pod's sandbox, in spec order.
async fn statuses(k: &CriKubelet, pod: &Value, specs: &[Value], sandbox_id: &str) -> Vec<Value> {
    let uid = meta::uid_of(pod);
    let runs = k
        .runtime
        .list_containers(&[(kubelet::POD_UID, uid)], Some(sandbox_id))
        .await
        .unwrap_or_default();
    let mut out = vec![];
    for spec in specs {
        let name = spec["name"].as_str().unwrap_or_default();
        let mut mine: Vec<&Container> = runs
            .iter()
            .filter(|c| c.labels.get(kubelet::CONTAINER_NAME).map(String::as_str) == Some(name))
            .collect();
        mine.sort_by_key(|c| std::cmp::Reverse(c.created_at));
        let mut got: Vec<ContainerStatus> = vec![];
        for c in mine.iter().take(2) {
            if let Ok(s) = k.runtime.container_status(&c.id).await {
                got.push(s);
            }
        }
        let waiting = lock(&k.state)
            .failures
            .get(&(uid.to_owned(), name.to_owned()))
            .map(|f| f.waiting.clone());
        out.push(status::container(
            k.runtime.name(),
            spec,
            got.first(),
            got.get(1),
            waiting.as_ref(),
        ));
    }
    out
}

/// Writes the pod's status when it changed (all containers `waiting` with `all_waiting` when given).
async fn report(k: &CriKubelet, api: &Api, pod: &Value, containers: &[Value], all_waiting: Option<&Waiting>) {
    let containers: Vec<Value> = match all_waiting {
        Some(w) => pod["spec"]["containers"]
            .as_array()
            .into_iter()
            .flatten()
            .map(|spec| status::container(k.runtime.name(), spec, None, None, Some(w)))
            .collect(),
        None => containers.to_vec(),
    };
    let status = pod_status(pod, containers, &meta::now(), POD_IP, POD_IP);
    if strip_times(&status) == strip_times(&pod["status"]) {
        return;
    }
    let Some(def) = api.registry.find("", "v1", "pods") else {
        return;
    };
    let mut next = pod.clone();
    next["status"] = status;
    if let Err(e) = api
        .update(
            &def,
            meta::namespace(pod),
            meta::name(pod),
            next,
            UpdateMode::Status,
            false,
        )
        .await
    {
        tracing::debug!(error = %e, "kubelet status update failed");
    }
}

/// A deleted pod: every running container stopped within what is left of the grace period (SIGTERM,
/// then SIGKILL), the sandbox removed, then the pod object removed (the kubelet's final delete).
async fn terminate(k: &CriKubelet, api: &Api, pod: &Value, found: &Found) {
    let grace = pod["metadata"]["deletionGracePeriodSeconds"]
        .as_i64()
        .unwrap_or(0)
        .max(0);
    let deadline = pod["metadata"]["deletionTimestamp"]
        .as_str()
        .and_then(meta::parse_time);
    let left = deadline.map_or(Duration::from_secs(grace.unsigned_abs()), |d| {
        let left = d - time::OffsetDateTime::now_utc();
        Duration::from_secs(left.whole_seconds().max(0).unsigned_abs())
    });
    remove(&k.runtime, found, left).await;
    if let Some(def) = api.registry.find("", "v1", "pods") {
        let opts = DeleteOptions {
            grace_period_seconds: Some(0),
            precondition_uid: Some(meta::uid_of(pod).to_owned()),
            ..DeleteOptions::default()
        };
        if let Err(e) = api
            .delete(&def, meta::namespace(pod), meta::name(pod), &opts)
            .await
        {
            tracing::debug!(error = %e, "kubelet final delete failed");
        }
    }
}

/// Stops the running containers (all at once, each within `grace`), then stops and removes the
/// sandboxes.
pub(super) async fn remove(runtime: &Runtime, found: &Found, grace: Duration) {
    let stops = found
        .containers
        .iter()
        .filter(|c| c.state() == ContainerState::ContainerRunning)
        .map(|c| runtime.stop_container(&c.id, grace));
    for result in futures::future::join_all(stops).await {
        if let Err(e) = result {
            tracing::warn!(error = %e, "cannot stop a container");
        }
    }
    super::remove_sandboxes(runtime, &found.sandboxes).await;
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn back_off_doubles_up_to_five_minutes() {
        let base = Duration::from_secs(10);
        assert_eq!(back_off(base, 0), base);
        assert_eq!(back_off(base, 3), Duration::from_secs(80));
        assert_eq!(back_off(base, 9), MAX_BACK_OFF);
        assert_eq!(back_off(base, 40), MAX_BACK_OFF);
    }
}
