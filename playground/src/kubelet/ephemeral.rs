//! The simulated kubelet's view of ephemeral containers: it starts one like any other container (after
//! the start delay, or never for an unpullable image), never restarts it and never reports it ready.

use serde_json::{Value, json};

use std::time::Duration;

use super::pod_status::{image_id, terminated, unpullable};
use crate::ephemeral::{entries, name_of};
use crate::{meta, program};

/// What the simulated kubelet knows of a container's start: whether its start delay has passed (the
/// first call starts the clock), and for how long it has run.
pub(super) trait Starts {
    fn elapsed(&self, uid: &str, name: &str, image: &str) -> bool;
    fn running_for(&self, uid: &str, name: &str, image: &str) -> Duration;
}

/// The `ephemeralContainerStatuses` the kubelet reports for `pod`.
pub(super) fn statuses(kubelet: &impl Starts, pod: &Value, now: &str) -> Vec<Value> {
    let uid = meta::uid_of(pod);
    entries(pod)
        .iter()
        .map(|spec| {
            let (name, image) = (name_of(spec), spec["image"].as_str().unwrap_or_default());
            let old = pod["status"]["ephemeralContainerStatuses"]
                .as_array()
                .into_iter()
                .flatten()
                .find(|s| s["name"] == name);
            if let Some(old) = old {
                if old["state"]["terminated"].is_object() {
                    return old.clone();
                }
                if old["state"]["running"].is_object() {
                    return match program::exit_of(spec) {
                        Some(exit) if kubelet.running_for(uid, name, image) >= exit.runs => {
                            terminated(old, exit.exit_code, now)
                        }
                        _ => old.clone(),
                    };
                }
            }
            let mut status = json!({"name": name, "image": image, "imageID": "", "restartCount": 0,
                "ready": false, "started": false});
            if let Some(message) = unpullable(image) {
                status["state"] = json!({"waiting": {"reason": "ImagePullBackOff", "message": message}});
            } else if !kubelet.elapsed(uid, name, image) {
                status["state"] = json!({"waiting": {"reason": "ContainerCreating"}});
            } else {
                let id = meta::uid().replace('-', "");
                status["containerID"] = json!(format!("containerd://{id}"));
                status["imageID"] = json!(image_id(image));
                status["state"] = json!({"running": {"startedAt": now}});
                status["started"] = json!(true);
            }
            status
        })
        .collect()
}

/// Whether every ephemeral container has ended (so its status will not change on its own).
pub(super) fn all_ended(pod: &Value) -> bool {
    let statuses = pod["status"]["ephemeralContainerStatuses"].as_array();
    entries(pod).iter().all(|c| {
        statuses.into_iter().flatten().any(|s| {
            s["name"] == name_of(c) && (s["state"]["terminated"].is_object() || unpullable_waiting(s))
        })
    })
}

fn unpullable_waiting(s: &Value) -> bool {
    s["state"]["waiting"]["reason"] == "ImagePullBackOff"
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Every container past its start delay and running for an hour.
    struct Started;

    impl Starts for Started {
        fn elapsed(&self, _: &str, _: &str, _: &str) -> bool {
            true
        }

        fn running_for(&self, _: &str, _: &str, _: &str) -> Duration {
            Duration::from_secs(3600)
        }
    }

    fn pod(ephemeral: Value) -> Value {
        json!({"metadata": {"name": "p", "uid": "u1"}, "spec": {
            "containers": [{"name": "app", "image": "nginx"}],
            "ephemeralContainers": ephemeral}})
    }

    #[test]
    fn statuses_start_run_and_end() {
        let kubelet = Started;
        let mut p = pod(json!([
            {"name": "quick", "image": "busybox", "command": ["sh", "-c", "exit 3"]},
            {"name": "forever", "image": "busybox"},
            {"name": "bad", "image": "registry.invalid/x:1"},
        ]));
        let first = statuses(&kubelet, &p, "t1");
        assert!(first[0]["state"]["running"].is_object(), "{first:?}");
        assert_eq!(first[0]["ready"], false);
        assert_eq!(first[2]["state"]["waiting"]["reason"], "ImagePullBackOff");
        p["status"]["ephemeralContainerStatuses"] = json!(first);
        assert!(!all_ended(&p));
        let second = statuses(&kubelet, &p, "t2");
        assert_eq!(second[0]["state"]["terminated"]["exitCode"], 3);
        assert_eq!(second[0]["state"]["terminated"]["reason"], "Error");
        assert!(second[1]["state"]["running"].is_object());
        p["status"]["ephemeralContainerStatuses"] = json!(second);
        // A terminated ephemeral container is never restarted.
        let third = statuses(&kubelet, &p, "t3");
        assert_eq!(third[0], p["status"]["ephemeralContainerStatuses"][0]);
    }
}
