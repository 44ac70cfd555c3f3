//! The `pods/ephemeralcontainers` subresource (the simulated kubelet's statuses: `kubelet::ephemeral`).
//!
//! As kube-apiserver (`pkg/apis/core/validation`, `ValidatePodEphemeralContainersUpdate`): a write
//! through the subresource changes only `spec.ephemeralContainers`; existing entries may be neither
//! removed nor changed; a new entry needs a DNS-1123 label name unique across every container of the
//! pod and an image, may name an existing container as `targetContainerName`, and may not set the
//! fields that would make it part of the workload (ports, resources, probes, lifecycle, restart
//! policy, volume subpaths). Writes of the pod itself may not change the list.

use serde_json::{Value, json};

use crate::error::{ApiError, FieldError};
use crate::meta;

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

pub(crate) fn entries(pod: &Value) -> &[Value] {
    pod["spec"]["ephemeralContainers"]
        .as_array()
        .map_or(&[], Vec::as_slice)
}

pub(crate) fn name_of(c: &Value) -> &str {
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
}
