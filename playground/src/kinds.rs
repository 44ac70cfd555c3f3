//! Kind-specific behaviour of the built-in resources: what a create sets (pod phase and QoS class,
//! namespace finalizers and phase, secret type, a Job's selector, a pod's default tolerations) and the immutable fields an update may not change.

use serde_json::{Value, json};

use crate::error::{ApiError, FieldError};
use crate::meta;
use crate::resources::ResourceDef;

/// Sets what kube-apiserver's create strategy of the kind sets.
pub fn prepare_create(plural: &str, obj: &mut Value) {
    match plural {
        "pods" => {
            let qos = qos_class(&obj["spec"]);
            obj["status"] = json!({"phase": "Pending", "qosClass": qos});
            default_toleration_seconds(&mut obj["spec"]);
        }
        "namespaces" => {
            obj["spec"] = json!({"finalizers": ["kubernetes"]});
            obj["status"] = json!({"phase": "Active"});
            let name = meta::name(obj).to_string();
            let m = meta::metadata_mut(obj);
            if !m.get("labels").is_some_and(Value::is_object) {
                m.insert("labels".into(), json!({}));
            }
            m["labels"]["kubernetes.io/metadata.name"] = json!(name);
        }
        "secrets" if obj["type"].as_str().is_none_or(str::is_empty) => obj["type"] = json!("Opaque"),
        "jobs" => generate_job_selector(obj),
        _ => {}
    }
}

/// The `DefaultTolerationSeconds` admission plugin (`plugin/pkg/admission/defaulttolerationseconds`):
/// a pod not tolerating the not-ready or unreachable `NoExecute` taint gets a toleration of it for
/// 300 seconds.
fn default_toleration_seconds(spec: &mut Value) {
    if !spec.is_object() {
        return;
    }
    for key in ["node.kubernetes.io/not-ready", "node.kubernetes.io/unreachable"] {
        let tolerated = spec["tolerations"].as_array().into_iter().flatten().any(|t| {
            let key_ok =
                t["key"] == key || (t["key"].as_str().is_none_or(str::is_empty) && t["operator"] == "Exists");
            key_ok && (t["effect"] == "NoExecute" || t["effect"].as_str().is_none_or(str::is_empty))
        });
        if tolerated {
            continue;
        }
        if !spec["tolerations"].is_array() {
            spec["tolerations"] = json!([]);
        }
        if let Some(list) = spec["tolerations"].as_array_mut() {
            list.push(
                json!({"key": key, "operator": "Exists", "effect": "NoExecute", "tolerationSeconds": 300}),
            );
        }
    }
}

/// The QoS class of a pod spec (`v1/qos.GetPodQOS`, without the pod-level resources).
pub fn qos_class(spec: &Value) -> &'static str {
    let containers = spec["containers"]
        .as_array()
        .into_iter()
        .flatten()
        .chain(spec["initContainers"].as_array().into_iter().flatten());
    let (mut any, mut guaranteed) = (false, true);
    for c in containers {
        let requests = c["resources"]["requests"].as_object();
        let limits = c["resources"]["limits"].as_object();
        if requests.is_some_and(|r| !r.is_empty()) || limits.is_some_and(|l| !l.is_empty()) {
            any = true;
        }
        for res in ["cpu", "memory"] {
            let limit = limits.and_then(|l| l.get(res));
            let request = requests.and_then(|r| r.get(res)).or(limit);
            if limit.is_none() || request != limit {
                guaranteed = false;
            }
        }
    }
    match (any, guaranteed) {
        (false, _) => "BestEffort",
        (true, true) => "Guaranteed",
        (true, false) => "Burstable",
    }
}

/// Immutable fields of the main resource: a changed one is a 422 Invalid.
pub fn validate_update(def: &ResourceDef, old: &Value, new: &Value) -> Result<(), ApiError> {
    let immutable: &[&str] = match (def.group.as_str(), def.plural.as_str()) {
        ("apps", "deployments" | "replicasets" | "statefulsets" | "daemonsets") => &["spec.selector"],
        ("", "pods") => &["spec.nodeName"],
        _ => &[],
    };
    for field in immutable {
        let path = format!(".{field}");
        let (o, n) = (meta::get_path(old, &path), meta::get_path(new, &path));
        let unset_before = o.is_none_or(Value::is_null);
        if o != n && !(def.plural == "pods" && unset_before) {
            let e = FieldError::invalid(field, n.unwrap_or(&Value::Null), "field is immutable");
            return Err(ApiError::invalid(&def.group, &def.kind, meta::name(new), &[e]));
        }
    }
    Ok(())
}

/// The Job's selector label (`batch.kubernetes.io/controller-uid`).
pub const CONTROLLER_UID_LABEL: &str = "batch.kubernetes.io/controller-uid";
/// The label with the Job's name (`batch.kubernetes.io/job-name`).
pub const JOB_NAME_LABEL: &str = "batch.kubernetes.io/job-name";

/// What the API server sets on a created Job without `manualSelector` (the job strategy's
/// `generateSelector`): the controller-uid and job-name labels (new and legacy keys) on the
/// template, and a selector on the uid.
pub fn generate_job_selector(job: &mut Value) {
    if job["spec"]["manualSelector"] == true {
        return;
    }
    let (uid, name) = (meta::uid_of(job).to_string(), meta::name(job).to_string());
    let labels = &mut job["spec"]["template"]["metadata"]["labels"];
    if !labels.is_object() {
        *labels = json!({});
    }
    for (k, v) in [
        (CONTROLLER_UID_LABEL, &uid),
        (JOB_NAME_LABEL, &name),
        ("controller-uid", &uid),
        ("job-name", &name),
    ] {
        labels[k] = json!(v);
    }
    job["spec"]["selector"] = json!({"matchLabels": {CONTROLLER_UID_LABEL: uid}});
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_api_server_labels_the_template_and_selects_on_the_uid() {
        let mut job = json!({"metadata": {"name": "pi", "uid": "u-1"}, "spec": {"template": {"spec": {}}}});
        generate_job_selector(&mut job);
        assert_eq!(
            job["spec"]["selector"],
            json!({"matchLabels": {CONTROLLER_UID_LABEL: "u-1"}})
        );
        let labels = &job["spec"]["template"]["metadata"]["labels"];
        assert_eq!(labels["job-name"], "pi");
        assert_eq!(labels[JOB_NAME_LABEL], "pi");
        assert_eq!(labels["controller-uid"], "u-1");
        let mut manual = json!({"metadata": {"name": "m"}, "spec": {"manualSelector": true, "selector": {}}});
        generate_job_selector(&mut manual);
        assert_eq!(manual["spec"]["selector"], json!({}));
    }
}
