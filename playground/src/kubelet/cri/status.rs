//! A container's status as kubelet reports it, from what the runtime says about its newest run and the
//! run before, or from why it could not be started.

use kruise_cri::kubelet;
use kruise_cri::v1::{ContainerState, ContainerStatus};
use serde_json::{Value, json};

use crate::meta;

/// Why a container is not running, shown as its `waiting` state (`ErrImagePull`, `ImagePullBackOff`,
/// `CreateContainerConfigError`, `CreateContainerError`, `RunContainerError`, `CrashLoopBackOff`).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Waiting {
    /// The reason.
    pub reason: &'static str,
    /// The message (the runtime's, for runtime errors).
    pub message: String,
}

/// `metav1.Time` of CRI nanoseconds.
fn time(nanos: i64) -> Value {
    match time::OffsetDateTime::from_unix_timestamp_nanos(i128::from(nanos)) {
        Ok(t) if nanos > 0 => json!(meta::timestamp(t)),
        _ => Value::Null,
    }
}

/// `<runtime>://<id>`, as kubelet writes container ids.
pub fn container_id(runtime: &str, id: &str) -> String {
    format!("{runtime}://{id}")
}

/// The restart count a container was created with (kubelet's annotation).
pub fn restart_count(annotations: &std::collections::HashMap<String, String>) -> u32 {
    annotations
        .get(kubelet::CONTAINER_RESTART_COUNT)
        .and_then(|n| n.parse().ok())
        .unwrap_or(0)
}

/// The `terminated` state of an exited run.
pub fn terminated(runtime: &str, s: &ContainerStatus) -> Value {
    let reason = match (s.reason.as_str(), s.exit_code) {
        ("", 0) => "Completed",
        ("", _) => "Error",
        (r, _) => r,
    };
    let mut t = json!({
        "exitCode": s.exit_code, "reason": reason,
        "startedAt": time(s.started_at), "finishedAt": time(s.finished_at),
        "containerID": container_id(runtime, &s.id),
    });
    if !s.message.is_empty() {
        t["message"] = json!(s.message);
    }
    t
}

/// The status of the container `spec`: its newest run and the one before (for `lastState`) as the
/// runtime reports them, or `waiting` when it could not be (re)started. Ready when running (no probe
/// runs in the playground).
pub fn container(
    runtime: &str,
    spec: &Value,
    newest: Option<&ContainerStatus>,
    previous: Option<&ContainerStatus>,
    waiting: Option<&Waiting>,
) -> Value {
    let name = spec["name"].as_str().unwrap_or_default();
    let image = spec["image"].as_str().unwrap_or_default();
    let restarts = newest.map_or(0, |n| restart_count(&n.annotations));
    let mut status = json!({
        "name": name, "image": image, "imageID": "", "restartCount": restarts,
        "ready": false, "started": false,
    });
    if let Some(n) = newest {
        status["containerID"] = json!(container_id(runtime, &n.id));
        status["imageID"] = json!(n.image_ref);
        // What runs is the spec's image unless the spec changed since (then: the runtime's name for it).
        let current =
            n.annotations.get(kubelet::CONTAINER_HASH) == Some(&kubelet::container_hash_hex(name, image));
        if !current && let Some(i) = n.image.as_ref().filter(|i| !i.image.is_empty()) {
            status["image"] = json!(i.image);
        }
    }
    let last = |s: &ContainerStatus| json!({"terminated": terminated(runtime, s)});
    if let Some(p) = previous.filter(|p| p.state() == ContainerState::ContainerExited) {
        status["lastState"] = last(p);
    }
    let state = newest.map(ContainerStatus::state);
    match (waiting, newest) {
        (Some(w), Some(n)) if state == Some(ContainerState::ContainerExited) => {
            // Exited and not restarted yet: the run that ended is the last state.
            status["lastState"] = last(n);
            status["state"] = json!({"waiting": {"reason": w.reason, "message": w.message}});
        }
        (Some(w), _) if state != Some(ContainerState::ContainerRunning) => {
            status["state"] = json!({"waiting": {"reason": w.reason, "message": w.message}});
        }
        (_, Some(n)) if state == Some(ContainerState::ContainerRunning) => {
            status["state"] = json!({"running": {"startedAt": time(n.started_at)}});
            status["ready"] = json!(true);
            status["started"] = json!(true);
        }
        (_, Some(n)) if state == Some(ContainerState::ContainerExited) => {
            status["state"] = json!({"terminated": terminated(runtime, n)});
        }
        _ => status["state"] = json!({"waiting": {"reason": "ContainerCreating"}}),
    }
    status
}

#[cfg(test)]
mod tests {
    use super::*;
    use kruise_cri::v1::ImageSpec;

    fn run(id: &str, state: ContainerState, restarts: u32, exit: i32, image: &str) -> ContainerStatus {
        ContainerStatus {
            id: id.into(),
            state: state.into(),
            started_at: 1_700_000_000_000_000_000,
            finished_at: if state == ContainerState::ContainerExited {
                1_700_000_005_000_000_000
            } else {
                0
            },
            exit_code: exit,
            image: Some(ImageSpec {
                image: image.into(),
                ..ImageSpec::default()
            }),
            image_ref: "sha256:abc".into(),
            annotations: [
                (kubelet::CONTAINER_RESTART_COUNT.to_owned(), restarts.to_string()),
                (
                    kubelet::CONTAINER_HASH.to_owned(),
                    kubelet::container_hash_hex("main", image),
                ),
            ]
            .into_iter()
            .collect(),
            ..ContainerStatus::default()
        }
    }

    #[test]
    fn a_running_container_after_a_failed_run() {
        let spec = json!({"name": "main", "image": "img:1"});
        let new = run("b", ContainerState::ContainerRunning, 1, 0, "img:1");
        let old = run("a", ContainerState::ContainerExited, 0, 1, "img:1");
        let s = container("containerd", &spec, Some(&new), Some(&old), None);
        assert_eq!(s["containerID"], "containerd://b");
        assert_eq!(s["imageID"], "sha256:abc");
        assert_eq!(s["restartCount"], 1);
        assert_eq!(
            (s["ready"].clone(), s["started"].clone()),
            (json!(true), json!(true))
        );
        assert_eq!(s["state"]["running"]["startedAt"], "2023-11-14T22:13:20Z");
        assert_eq!(s["lastState"]["terminated"]["exitCode"], 1);
        assert_eq!(s["lastState"]["terminated"]["reason"], "Error");
        assert_eq!(s["lastState"]["terminated"]["containerID"], "containerd://a");
    }

    #[test]
    fn an_exited_container_waiting_to_restart_shows_its_run_as_last_state() {
        let spec = json!({"name": "main", "image": "img:1"});
        let ended = run("a", ContainerState::ContainerExited, 2, 0, "img:1");
        let back_off = Waiting {
            reason: "CrashLoopBackOff",
            message: "back-off".into(),
        };
        let s = container("containerd", &spec, Some(&ended), None, Some(&back_off));
        assert_eq!(s["state"]["waiting"]["reason"], "CrashLoopBackOff");
        assert_eq!(s["lastState"]["terminated"]["reason"], "Completed");
        assert_eq!(s["restartCount"], 2);
        assert_eq!(s["ready"], false);
        let done = container("containerd", &spec, Some(&ended), None, None);
        assert_eq!(done["state"]["terminated"]["exitCode"], 0);
        assert_eq!(done["state"]["terminated"]["finishedAt"], "2023-11-14T22:13:25Z");
    }

    #[test]
    fn a_container_that_could_not_start_is_waiting_with_the_reason() {
        let spec = json!({"name": "main", "image": "img:9"});
        let pull = Waiting {
            reason: "ErrImagePull",
            message: "not found".into(),
        };
        let s = container("containerd", &spec, None, None, Some(&pull));
        assert_eq!(
            s["state"],
            json!({"waiting": {"reason": "ErrImagePull", "message": "not found"}})
        );
        assert_eq!(
            (s["image"].clone(), s["imageID"].clone()),
            (json!("img:9"), json!(""))
        );
        // The old run keeps running (and shows its own image) while the new image cannot be pulled.
        let old = run("a", ContainerState::ContainerRunning, 0, 0, "img:1");
        let s = container("containerd", &spec, Some(&old), None, Some(&pull));
        assert!(s["state"]["running"].is_object());
        assert_eq!(s["image"], "img:1");
        let none = container("containerd", &spec, None, None, None);
        assert_eq!(none["state"]["waiting"]["reason"], "ContainerCreating");
    }
}
