//! The `pods/ephemeralcontainers` subresource and the kubelet's view of ephemeral containers.
//!
//! As kube-apiserver (`pkg/apis/core/validation`, `ValidatePodEphemeralContainersUpdate`): a write
//! through the subresource changes only `spec.ephemeralContainers`; existing entries may be neither
//! removed nor changed; a new entry needs a DNS-1123 label name unique across every container of the
//! pod and an image, may name an existing container as `targetContainerName`, and may not set the
//! fields that would make it part of the workload (ports, resources, probes, lifecycle, restart
//! policy, volume subpaths). Writes of the pod itself may not change the list.
//!
//! The kubelet starts an ephemeral container like any other (after the start delay, or never for an
//! unpullable image), never restarts it and never reports it ready.

use serde_json::{Value, json};

use crate::error::{ApiError, FieldError};
use crate::kubelet::simulated::{Simulated as Kubelet, terminated, unpullable};
use crate::{meta, program};

const LIST: &str = "spec.ephemeralContainers";
/// Fields an ephemeral container may not set (kube's allow-list, inverted).
const FORBIDDEN: &[&str] = &[
    "ports",
    "resources",
    "resizePolicy",
    "livenessProbe",
    "readinessProbe",
    "startupProbe",
    "lifecycle",
    "restartPolicy",
];

fn entries(pod: &Value) -> &[Value] {
    pod["spec"]["ephemeralContainers"]
        .as_array()
        .map_or(&[], Vec::as_slice)
}

fn name_of(c: &Value) -> &str {
    c["name"].as_str().unwrap_or_default()
}

/// Whether a field holds something (kube compares each to its zero value).
fn is_set(v: Option<&Value>) -> bool {
    match v {
        None | Some(Value::Null) => false,
        Some(Value::Object(m)) => m.values().any(|v| is_set(Some(v))),
        Some(Value::Array(a)) => !a.is_empty(),
        Some(Value::String(s)) => !s.is_empty(),
        Some(Value::Bool(b)) => *b,
        Some(Value::Number(n)) => n.as_f64() != Some(0.0),
    }
}

fn is_label(s: &str) -> bool {
    let b = s.as_bytes();
    !b.is_empty()
        && b.len() <= 63
        && b.iter()
            .all(|c| c.is_ascii_lowercase() || c.is_ascii_digit() || *c == b'-')
        && b[0] != b'-'
        && b[b.len() - 1] != b'-'
}

/// The errors of one new ephemeral container at `path`.
fn check_new(pod: &Value, c: &Value, path: &str, taken: &mut Vec<String>, errors: &mut Vec<FieldError>) {
    let name = name_of(c);
    if name.is_empty() {
        errors.push(FieldError::required(&format!("{path}.name"), ""));
    } else if !is_label(name) {
        errors.push(FieldError::invalid(
            &format!("{path}.name"),
            &json!(name),
            "a lowercase RFC 1123 label must consist of lower case alphanumeric characters or '-', and must start and end with an alphanumeric character (e.g. 'my-name',  or '123-abc', regex used for validation is '[a-z0-9]([-a-z0-9]*[a-z0-9])?')",
        ));
    } else if taken.iter().any(|t| t == name) {
        errors.push(FieldError::other(
            "FieldValueDuplicate",
            &format!("{path}.name"),
            format!("Duplicate value: {}", json!(name)),
        ));
    } else {
        taken.push(name.to_string());
    }
    let image = c["image"].as_str().unwrap_or_default();
    if image.is_empty() {
        errors.push(FieldError::required(&format!("{path}.image"), ""));
    } else if image.trim() != image {
        errors.push(FieldError::invalid(
            &format!("{path}.image"),
            &json!(image),
            "must not have leading or trailing whitespace",
        ));
    }
    for field in FORBIDDEN {
        if is_set(c.get(*field)) {
            errors.push(FieldError::forbidden(
                &format!("{path}.{field}"),
                "cannot be set for an Ephemeral Container",
            ));
        }
    }
    for (i, m) in c["volumeMounts"].as_array().into_iter().flatten().enumerate() {
        for field in ["subPath", "subPathExpr"] {
            if is_set(m.get(field)) {
                errors.push(FieldError::forbidden(
                    &format!("{path}.volumeMounts[{i}].{field}"),
                    "cannot be set for an Ephemeral Container",
                ));
            }
        }
    }
    if let Some(target) = c["targetContainerName"].as_str().filter(|t| !t.is_empty()) {
        let known = ["containers", "initContainers"].iter().any(|list| {
            pod["spec"][*list]
                .as_array()
                .into_iter()
                .flatten()
                .any(|x| name_of(x) == target)
        });
        if !known {
            errors.push(FieldError::other(
                "FieldValueNotFound",
                &format!("{path}.targetContainerName"),
                format!("Not found: {}", json!(target)),
            ));
        }
    }
}

/// Checks a write of the `ephemeralcontainers` subresource: `new` is `old` with only
/// `spec.ephemeralContainers` taken from the request.
pub fn validate_update(old: &Value, new: &Value) -> Result<(), ApiError> {
    let (before, after) = (entries(old), entries(new));
    let mut errors = vec![];
    for prev in before {
        match after.iter().position(|c| name_of(c) == name_of(prev)) {
            None => errors.push(FieldError::forbidden(
                LIST,
                &format!(
                    "existing ephemeral containers {} may not be removed",
                    json!(name_of(prev))
                ),
            )),
            Some(i) if after[i] != *prev => errors.push(FieldError::forbidden(
                &format!("{LIST}[{i}]"),
                &format!(
                    "existing ephemeral containers {} may not be changed",
                    json!(name_of(prev))
                ),
            )),
            Some(_) => {}
        }
    }
    let mut taken: Vec<String> = ["containers", "initContainers"]
        .iter()
        .flat_map(|list| new["spec"][*list].as_array().into_iter().flatten())
        .map(|c| name_of(c).to_string())
        .collect();
    taken.extend(before.iter().map(|c| name_of(c).to_string()));
    for (i, c) in after.iter().enumerate() {
        if before.iter().any(|p| name_of(p) == name_of(c)) {
            continue;
        }
        check_new(new, c, &format!("{LIST}[{i}]"), &mut taken, &mut errors);
    }
    if errors.is_empty() {
        Ok(())
    } else {
        Err(ApiError::invalid("", "Pod", meta::name(new), &errors))
    }
}

/// A write of the pod itself may not change its ephemeral containers.
pub fn validate_pod_update(old: &Value, new: &Value) -> Result<(), ApiError> {
    if entries(old) == entries(new) {
        return Ok(());
    }
    let e = FieldError::forbidden(
        LIST,
        "ephemeral containers may only be changed through the ephemeralcontainers subresource",
    );
    Err(ApiError::invalid("", "Pod", meta::name(new), &[e]))
}

/// Fills in what kube-apiserver defaults on a new ephemeral container (pull policy, termination
/// message path and policy), keeping entries that already exist untouched.
pub fn default_new(old: &Value, new: &mut Value) {
    let before: Vec<String> = entries(old).iter().map(|c| name_of(c).to_string()).collect();
    for c in new["spec"]["ephemeralContainers"]
        .as_array_mut()
        .into_iter()
        .flatten()
    {
        if !before.iter().any(|b| b == name_of(c)) {
            crate::defaults::ephemeral_container(c);
        }
    }
}

/// The `ephemeralContainerStatuses` the kubelet reports for `pod`.
pub fn statuses(kubelet: &Kubelet, pod: &Value, now: &str) -> Vec<Value> {
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
                status["imageID"] = json!(crate::kubelet::image_id(image));
                status["state"] = json!({"running": {"startedAt": now}});
                status["started"] = json!(true);
            }
            status
        })
        .collect()
}

/// Whether every ephemeral container has ended (so its status will not change on its own).
pub fn all_ended(pod: &Value) -> bool {
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

    fn pod(ephemeral: Value) -> Value {
        json!({"metadata": {"name": "p", "uid": "u1"}, "spec": {
            "containers": [{"name": "app", "image": "nginx"}],
            "ephemeralContainers": ephemeral}})
    }

    fn debug(name: &str) -> Value {
        json!({"name": name, "image": "busybox", "terminationMessagePolicy": "File"})
    }

    fn message(r: Result<(), ApiError>) -> String {
        r.expect_err("denied").message
    }

    #[test]
    fn adding_a_container_is_allowed() {
        let old = pod(json!([]));
        let new = pod(json!([debug("debugger")]));
        validate_update(&old, &new).expect("allowed");
    }

    #[test]
    fn existing_entries_may_not_be_removed_or_changed() {
        let old = pod(json!([debug("a"), debug("b")]));
        let mut changed = debug("b");
        changed["image"] = json!("alpine");
        let m = message(validate_update(&old, &pod(json!([changed]))));
        assert!(
            m.contains(
                "spec.ephemeralContainers: Forbidden: existing ephemeral containers \"a\" may not be removed"
            ),
            "{m}"
        );
        assert!(m.contains("spec.ephemeralContainers[0]: Forbidden: existing ephemeral containers \"b\" may not be changed"), "{m}");
    }

    #[test]
    fn names_are_unique_across_every_container() {
        let old = pod(json!([debug("a")]));
        let m = message(validate_update(
            &old,
            &pod(json!([debug("a"), debug("app"), debug("x"), debug("x")])),
        ));
        assert!(
            m.contains("spec.ephemeralContainers[1].name: Duplicate value: \"app\""),
            "{m}"
        );
        assert!(
            m.contains("spec.ephemeralContainers[3].name: Duplicate value: \"x\""),
            "{m}"
        );
        assert!(!m.contains("[2]"), "{m}");
    }

    #[test]
    fn workload_fields_are_forbidden() {
        let mut c = debug("d");
        c["ports"] = json!([{"containerPort": 80}]);
        c["resources"] = json!({"limits": {"cpu": "1"}});
        c["readinessProbe"] = json!({"tcpSocket": {"port": 80}});
        c["lifecycle"] = json!({"preStop": {"exec": {"command": ["true"]}}});
        c["volumeMounts"] = json!([{"name": "v", "mountPath": "/v", "subPath": "x"}]);
        c["targetContainerName"] = json!("nope");
        c["image"] = json!("");
        let m = message(validate_update(&pod(json!([])), &pod(json!([c]))));
        for expected in [
            "spec.ephemeralContainers[0].ports: Forbidden: cannot be set for an Ephemeral Container",
            "spec.ephemeralContainers[0].resources: Forbidden",
            "spec.ephemeralContainers[0].readinessProbe: Forbidden",
            "spec.ephemeralContainers[0].lifecycle: Forbidden",
            "spec.ephemeralContainers[0].volumeMounts[0].subPath: Forbidden",
            "spec.ephemeralContainers[0].targetContainerName: Not found: \"nope\"",
            "spec.ephemeralContainers[0].image: Required value",
        ] {
            assert!(m.contains(expected), "{expected} in {m}");
        }
        // Empty values are not "set".
        let mut empty = debug("e");
        empty["resources"] = json!({});
        empty["targetContainerName"] = json!("app");
        validate_update(&pod(json!([])), &pod(json!([empty]))).expect("allowed");
    }

    #[test]
    fn pod_writes_keep_the_list() {
        let old = pod(json!([debug("a")]));
        validate_pod_update(&old, &old.clone()).expect("unchanged");
        let m = message(validate_pod_update(&old, &pod(json!([]))));
        assert!(m.contains("spec.ephemeralContainers: Forbidden"), "{m}");
    }

    #[test]
    fn defaults_only_touch_new_entries() {
        let old = pod(json!([{"name": "a", "image": "busybox"}]));
        let mut new = pod(json!([{"name": "a", "image": "busybox"}, {"name": "b", "image": "busybox:1.36"}]));
        default_new(&old, &mut new);
        assert_eq!(
            new["spec"]["ephemeralContainers"][0],
            json!({"name": "a", "image": "busybox"})
        );
        let b = &new["spec"]["ephemeralContainers"][1];
        assert_eq!(b["imagePullPolicy"], "IfNotPresent");
        assert_eq!(b["terminationMessagePolicy"], "File");
        assert_eq!(b["terminationMessagePath"], "/dev/termination-log");
        assert!(b.get("resources").is_none());
    }

    #[test]
    fn statuses_start_run_and_end() {
        let kubelet = Kubelet::new(std::time::Duration::ZERO);
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
