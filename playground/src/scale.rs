//! The `scale` subresource: an `autoscaling/v1 Scale` view of `spec.replicas` (or the CRD's
//! `specReplicasPath`), readable and writable.

use axum::{http::StatusCode, response::Response};
use serde_json::{Value, json};

use crate::api::{Api, UpdateMode, key};
use crate::error::ApiError;
use crate::meta;
use crate::resources::ResourceDef;
use crate::response::json_response;

/// The Scale of an object.
pub fn to_scale(def: &ResourceDef, obj: &Value) -> Value {
    let Some(paths) = &def.scale else {
        return json!({});
    };
    let spec = meta::get_path(obj, &paths.spec_replicas)
        .and_then(Value::as_i64)
        .unwrap_or(0);
    let status = meta::get_path(obj, &paths.status_replicas)
        .and_then(Value::as_i64)
        .unwrap_or(0);
    let mut selector = paths
        .label_selector
        .as_deref()
        .and_then(|p| meta::get_path(obj, p))
        .and_then(Value::as_str)
        .unwrap_or_default()
        .to_string();
    if selector.is_empty() && def.builtin {
        selector = obj["spec"]["selector"]["matchLabels"]
            .as_object()
            .map(|m| {
                m.iter()
                    .map(|(k, v)| format!("{k}={}", v.as_str().unwrap_or_default()))
                    .collect::<Vec<_>>()
                    .join(",")
            })
            .unwrap_or_default();
    }
    let m = &obj["metadata"];
    json!({
        "kind": "Scale", "apiVersion": "autoscaling/v1",
        "metadata": {"name": m["name"], "namespace": m["namespace"], "uid": m["uid"],
            "resourceVersion": m["resourceVersion"], "creationTimestamp": m["creationTimestamp"]},
        "spec": {"replicas": spec},
        "status": {"replicas": status, "selector": selector},
    })
}

/// Applies a Scale to the object's replicas.
pub async fn apply_scale(
    api: &Api,
    def: &ResourceDef,
    ns: &str,
    name: &str,
    scale: &Value,
    dry_run: bool,
) -> Result<Value, ApiError> {
    let paths = def.scale.clone().ok_or_else(ApiError::path_not_found)?;
    let current = api
        .store
        .get(&key(def), ns, name)
        .ok_or_else(|| ApiError::not_found(&def.group_resource(), name))?;
    let rv = meta::resource_version(scale);
    if !rv.is_empty() && rv != meta::resource_version(&current) {
        return Err(ApiError::stale(&def.group_resource(), name));
    }
    let Some(replicas) = scale["spec"]["replicas"].as_i64() else {
        return Ok(current);
    };
    let current = api.present(def, current).await?;
    let mut next = current.clone();
    meta::set_path(&mut next, &paths.spec_replicas, json!(replicas));
    meta::metadata_mut(&mut next).insert("resourceVersion".into(), json!(meta::resource_version(&current)));
    api.update(def, ns, name, next, UpdateMode::Main, dry_run).await
}

/// PUT of `/scale`.
pub async fn update(
    api: &Api,
    def: &ResourceDef,
    ns: &str,
    name: &str,
    scale: Value,
    dry_run: bool,
) -> Result<Response, ApiError> {
    let obj = apply_scale(api, def, ns, name, &scale, dry_run).await?;
    Ok(json_response(StatusCode::OK, &to_scale(def, &obj)))
}
