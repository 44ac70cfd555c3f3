//! Kind-specific behaviour of the built-in resources: what a create sets (pod phase and QoS class,
//! namespace finalizers and phase, secret type) and the immutable fields an update may not change.

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
        "jobs" => crate::job::generate_selector(obj),
        _ => {}
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
