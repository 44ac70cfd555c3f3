//! The simulated runtime (the default): no container runs; pods bound to a node get the status a
//! kubelet would report.
//!
//! - each container starts `delay` after it was first seen (or its image changed): `running`,
//!   `started`, `ready`, `imageID` `<image>@sha256:<sha256 of the image name>`; until then it is
//!   `waiting` (`ContainerCreating`);
//! - an image change in place restarts the container: new imageID, `restartCount + 1`,
//!   `lastState.terminated`, ready again after the delay;
//! - a container whose image lives on a registry in the `.invalid` domain (`registry.invalid/app:1`) is never
//!   pulled: it stays `waiting` (`ImagePullBackOff`); an in-place change to such an image stops the old one;
//! - a container whose env takes a non-optional `configMapKeyRef` that does not exist stays
//!   `waiting` with reason `CreateContainerConfigError` until the key exists;
//! - a container whose command ends (`program` module: `true`, `false`, `exit N`, `sleep N`, `sh -c`
//!   scripts of those) terminates that long after it started (`Completed` for 0, else `Error`);
//!   `restartPolicy` restarts it (Always; OnFailure for non-zero codes) with `restartCount + 1`
//!   after `CrashLoopBackOff` for the start delay, or leaves it ended;
//! - conditions, phase and IPs as [`super::pod_status`] makes them (`hostIP` 172.18.0.N+1 for node N,
//!   `podIP` in 10.244.N.0/24);
//! - ephemeral containers get `ephemeralContainerStatuses` the same way, never restarted or ready
//!   (`ephemeral` module).

use std::collections::HashMap;
use std::sync::Mutex;
use std::time::{Duration, Instant};

use serde_json::{Value, json};

use crate::api::{Api, UpdateMode};
use crate::store::ResKey;
use crate::{meta, program};

use super::pod_status::{image_id, pod_status, restarts, strip_times, terminated, unpullable};

/// The kubelets of every node, with when each container (by pod uid, name, image) was first seen.
#[derive(Debug, Default)]
pub struct Simulated {
    /// Time from a container's (re)creation to running and ready.
    pub delay: Duration,
    seen: Mutex<HashMap<(String, String, String), Instant>>,
    /// Pods (uid → resourceVersion) whose every container runs its image and whose status was
    /// already reported: nothing to do until the pod changes.
    settled: Mutex<HashMap<String, String>>,
}

/// The message of a missing ConfigMap key, as the kubelet's.
pub(super) fn missing_config(api: &Api, ns: &str, container: &Value) -> Option<String> {
    for env in container["env"].as_array().into_iter().flatten() {
        let r = &env["valueFrom"]["configMapKeyRef"];
        if !r.is_object() || r["optional"].as_bool() == Some(true) {
            continue;
        }
        let (name, key) = (
            r["name"].as_str().unwrap_or_default(),
            r["key"].as_str().unwrap_or_default(),
        );
        match api.store.get(&ResKey::new("", "configmaps"), ns, name) {
            None => return Some(format!("configmap \"{name}\" not found")),
            Some(cm) if cm["data"].get(key).is_none() && cm["binaryData"].get(key).is_none() => {
                return Some(format!("couldn't find key {key} in ConfigMap {ns}/{name}"));
            }
            Some(_) => {}
        }
    }
    None
}

impl Simulated {
    /// A kubelet starting containers after `delay`.
    pub fn new(delay: Duration) -> Self {
        Simulated {
            delay,
            seen: Mutex::default(),
            settled: Mutex::default(),
        }
    }

    pub(crate) fn elapsed(&self, uid: &str, name: &str, image: &str) -> bool {
        let mut seen = self.seen.lock().unwrap_or_else(|e| e.into_inner());
        let key = (uid.to_string(), name.to_string(), image.to_string());
        seen.entry(key).or_insert_with(Instant::now).elapsed() >= self.delay
    }

    /// How long a container has been running (its start delay after it was last (re)created).
    pub(crate) fn running_for(&self, uid: &str, name: &str, image: &str) -> Duration {
        let seen = self.seen.lock().unwrap_or_else(|e| e.into_inner());
        let key = (uid.to_string(), name.to_string(), image.to_string());
        seen.get(&key)
            .map_or(Duration::ZERO, |t| t.elapsed().saturating_sub(self.delay))
    }

    /// A terminated container the restart policy restarts: created again (the start delay starts
    /// over), `restartCount + 1`, the last run in `lastState`; `CrashLoopBackOff` until it runs.
    fn restart(&self, uid: &str, name: &str, image: &str, old: &Value) -> Value {
        let mut seen = self.seen.lock().unwrap_or_else(|e| e.into_inner());
        seen.insert(
            (uid.to_string(), name.to_string(), image.to_string()),
            Instant::now(),
        );
        let restarts = old["restartCount"].as_i64().unwrap_or(0) + 1;
        let message = format!("back-off 10s restarting failed container={name} pod={uid}");
        let mut status = old.clone();
        status["restartCount"] = json!(restarts);
        status["lastState"] = json!({"terminated": old["state"]["terminated"].clone()});
        status["state"] = json!({"waiting": {"reason": "CrashLoopBackOff", "message": message}});
        status
    }

    /// One container's status.
    fn container(&self, api: &Api, pod: &Value, spec: &Value, now: &str) -> Value {
        let name = spec["name"].as_str().unwrap_or_default();
        let image = spec["image"].as_str().unwrap_or_default();
        let old = pod["status"]["containerStatuses"]
            .as_array()
            .into_iter()
            .flatten()
            .find(|s| s["name"] == name)
            .cloned();
        if let Some(old) = &old
            && old["image"] == image
        {
            let uid = meta::uid_of(pod);
            if old["state"]["running"].is_object() {
                return match program::exit_of(spec) {
                    Some(exit) if self.running_for(uid, name, image) >= exit.runs => {
                        terminated(old, exit.exit_code, now)
                    }
                    _ => old.clone(),
                };
            }
            if let Some(code) = old["state"]["terminated"]["exitCode"].as_i64() {
                if !restarts(pod, code) {
                    return old.clone();
                }
                return self.restart(uid, name, image, old);
            }
            if old["state"]["waiting"]["reason"] == "CrashLoopBackOff" && !self.elapsed(uid, name, image) {
                return old.clone();
            }
        }
        let restarts = old
            .as_ref()
            .map_or(0, |o| o["restartCount"].as_i64().unwrap_or(0));
        let was_running = old.as_ref().is_some_and(|o| o["state"]["running"].is_object());
        let mut status = json!({
            "name": name, "image": image, "imageID": "", "restartCount": restarts,
            "ready": false, "started": false,
        });
        if let Some(last) = old
            .as_ref()
            .map(|o| o["lastState"].clone())
            .filter(Value::is_object)
        {
            status["lastState"] = last;
        }
        if let Some(message) = missing_config(api, meta::namespace(pod), spec) {
            status["state"] =
                json!({"waiting": {"reason": "CreateContainerConfigError", "message": message}});
            return status;
        }
        if let Some(message) = unpullable(image) {
            if was_running && let Some(old) = &old {
                // The old container is stopped for the new image, which never arrives.
                status["lastState"] = json!({"terminated": {
                    "exitCode": 0, "reason": "Completed", "containerID": old["containerID"],
                    "startedAt": old["state"]["running"]["startedAt"], "finishedAt": now,
                }});
            }
            status["state"] = json!({"waiting": {"reason": "ImagePullBackOff", "message": message}});
            return status;
        }
        if !self.elapsed(meta::uid_of(pod), name, image) {
            if was_running && let Some(old) = &old {
                // Being restarted with the new image: the old one runs, not ready.
                let mut old = old.clone();
                old["ready"] = json!(false);
                return old;
            }
            status["state"] = json!({"waiting": {"reason": "ContainerCreating"}});
            return status;
        }
        if was_running && let Some(old) = &old {
            status["restartCount"] = json!(restarts + 1);
            status["lastState"] = json!({"terminated": {
                "exitCode": 0, "reason": "Completed", "containerID": old["containerID"],
                "startedAt": old["state"]["running"]["startedAt"], "finishedAt": now,
            }});
        }
        let id = meta::uid();
        status["containerID"] = json!(format!("containerd://{}", id.replace('-', "")));
        status["imageID"] = json!(image_id(image));
        status["state"] = json!({"running": {"startedAt": now}});
        status["ready"] = json!(true);
        status["started"] = json!(true);
        status
    }

    /// The status this kubelet reports for `pod`.
    pub fn status(&self, api: &Api, pod: &Value) -> Value {
        let now = meta::now();
        let containers: Vec<Value> = pod["spec"]["containers"]
            .as_array()
            .into_iter()
            .flatten()
            .map(|c| self.container(api, pod, c, &now))
            .collect();
        let node = pod["spec"]["nodeName"].as_str().unwrap_or_default();
        let index = node.rsplit('-').next().unwrap_or("1");
        let host_ip = format!("172.18.0.{}", index.parse::<u32>().unwrap_or(1) + 1);
        let n: u32 = meta::uid_of(pod).bytes().map(u32::from).sum();
        let pod_ip = format!("10.244.{index}.{}", n % 250 + 2);
        let mut status = pod_status(pod, containers, &now, &host_ip, &pod_ip);
        if pod["spec"]["ephemeralContainers"]
            .as_array()
            .is_some_and(|e| !e.is_empty())
        {
            status["ephemeralContainerStatuses"] = json!(super::ephemeral::statuses(self, pod, &now));
        }
        status
    }

    /// Reports the status of every pod bound to a node.
    pub async fn sync(&self, api: &Api) {
        let Some(def) = api.registry.find("", "v1", "pods") else {
            return;
        };
        let (pods, _) = api.store.list_shared(&ResKey::new("", "pods"), None);
        {
            // Forget the pods that are gone.
            let uids: std::collections::HashSet<&str> = pods.iter().map(|p| meta::uid_of(p)).collect();
            let mut seen = self.seen.lock().unwrap_or_else(|e| e.into_inner());
            seen.retain(|(uid, _, _), _| uids.contains(uid.as_str()));
            let mut settled = self.settled.lock().unwrap_or_else(|e| e.into_inner());
            settled.retain(|uid, _| uids.contains(uid.as_str()));
        }
        for pod in pods {
            let bound = pod["spec"]["nodeName"].as_str().is_some_and(|n| !n.is_empty());
            let finished = matches!(pod["status"]["phase"].as_str(), Some("Succeeded" | "Failed"));
            if !bound || finished || meta::is_deleting(&pod) || self.is_settled(&pod) {
                continue;
            }
            let status = self.status(api, &pod);
            if strip_times(&status) == strip_times(&pod["status"]) {
                self.mark_settled(&pod);
                continue;
            }
            let mut next = Value::clone(&pod);
            next["status"] = status;
            let (ns, name) = (meta::namespace(&pod), meta::name(&pod));
            if let Err(e) = api.update(&def, ns, name, next, UpdateMode::Status, false).await {
                tracing::debug!(error = %e, "kubelet status update failed");
            }
        }
    }

    fn is_settled(&self, pod: &Value) -> bool {
        let settled = self.settled.lock().unwrap_or_else(|e| e.into_inner());
        settled
            .get(meta::uid_of(pod))
            .is_some_and(|rv| rv == meta::resource_version(pod))
    }

    /// Remembers a pod whose reported status is current, when no container is still starting (a
    /// start delay or a missing ConfigMap key would change it without the pod changing).
    fn mark_settled(&self, pod: &Value) {
        let statuses = pod["status"]["containerStatuses"].as_array();
        let all_running = statuses.is_some_and(|s| {
            s.iter()
                .all(|c| c["state"]["running"].is_object() && c["ready"] == true)
        });
        // A container whose command ends changes its status on its own.
        let ends = pod["spec"]["containers"]
            .as_array()
            .into_iter()
            .flatten()
            .any(|c| program::exit_of(c).is_some());
        if all_running && !ends && super::ephemeral::all_ended(pod) {
            let mut settled = self.settled.lock().unwrap_or_else(|e| e.into_inner());
            settled.insert(
                meta::uid_of(pod).to_string(),
                meta::resource_version(pod).to_string(),
            );
        }
    }
}

impl super::ephemeral::Starts for Simulated {
    fn elapsed(&self, uid: &str, name: &str, image: &str) -> bool {
        Simulated::elapsed(self, uid, name, image)
    }

    fn running_for(&self, uid: &str, name: &str, image: &str) -> Duration {
        Simulated::running_for(self, uid, name, image)
    }
}
