//! PATCH: JSON patch, JSON merge patch, strategic merge patch (built-in kinds only, as
//! kube-apiserver) and server-side apply; retried on a concurrent write like `GuaranteedUpdate`.

use axum::http::StatusCode;
use serde_json::{Value, json};

use crate::api::{Api, UpdateMode, key};
use crate::error::ApiError;
use crate::meta;
use crate::request::{ApiPath, Request};
use crate::resources::ResourceDef;
use crate::{apply, scale, strategic};

const JSON_PATCH: &str = "application/json-patch+json";
const MERGE_PATCH: &str = "application/merge-patch+json";
const STRATEGIC: &str = "application/strategic-merge-patch+json";
const APPLY: &str = "application/apply-patch+yaml";

fn unsupported(def: &ResourceDef) -> ApiError {
    if def.builtin {
        ApiError::unsupported_media_type(&[JSON_PATCH, MERGE_PATCH, STRATEGIC, APPLY])
    } else {
        ApiError::unsupported_media_type(&[JSON_PATCH, MERGE_PATCH, APPLY])
    }
}

/// Applies a non-apply patch document of `content_type` to `doc`.
pub fn apply_patch(
    def: &ResourceDef,
    content_type: &str,
    doc: &Value,
    body: &[u8],
) -> Result<Value, ApiError> {
    let bad = |e: &dyn std::fmt::Display| ApiError::bad_request(format!("error decoding patch: {e}"));
    let mut out = doc.clone();
    match content_type {
        JSON_PATCH => {
            let p: json_patch::Patch = serde_json::from_slice(body).map_err(|e| bad(&e))?;
            json_patch::patch(&mut out, &p).map_err(|e| {
                let mut err = ApiError::invalid(&def.group, &def.kind, meta::name(doc), &[]);
                err.message = e.to_string();
                err.details = None;
                err
            })?;
        }
        MERGE_PATCH => {
            let p: Value = serde_json::from_slice(body).map_err(|e| bad(&e))?;
            json_patch::merge(&mut out, &p);
        }
        STRATEGIC if def.builtin => {
            let p: Value = serde_json::from_slice(body).map_err(|e| bad(&e))?;
            strategic::merge(&mut out, &p);
        }
        _ => return Err(unsupported(def)),
    }
    Ok(out)
}

/// `ValidatePatchOptions` of apimachinery: apply needs a fieldManager, `force` is for apply only.
fn validate_options(req: &Request, apply: bool) -> Result<(), ApiError> {
    use crate::error::FieldError;
    let manager = req
        .query
        .get("fieldManager")
        .map(String::as_str)
        .unwrap_or_default();
    let error = if apply && manager.is_empty() {
        FieldError::required("fieldManager", "is required for apply patch")
    } else if !apply && req.query.contains_key("force") {
        FieldError::forbidden("force", "may not be specified for non-apply patch")
    } else {
        return Ok(());
    };
    Err(ApiError::invalid("meta.k8s.io", "PatchOptions", "", &[error]))
}

/// PATCH of an object, its status or its scale. Returns the HTTP code (201 when an apply
/// created the object) and the stored object.
pub async fn patch(
    api: &Api,
    def: &ResourceDef,
    p: &ApiPath,
    req: &Request,
    mode: UpdateMode,
) -> Result<(StatusCode, Value), ApiError> {
    let ns = p.namespace.as_deref().unwrap_or_default();
    let name = p.name.as_deref().unwrap_or_default();
    let ct = req.content_type();
    if ![JSON_PATCH, MERGE_PATCH, STRATEGIC, APPLY].contains(&ct.as_str())
        || (ct == STRATEGIC && !def.builtin)
    {
        return Err(unsupported(def));
    }
    let gr = def.group_resource();
    validate_options(req, ct == APPLY)?;
    for _ in 0..8 {
        let current = api.store.get(&key(def), ns, name);
        if ct == APPLY {
            let manager = req.query.get("fieldManager").cloned().unwrap_or_default();
            let force = req.query.get("force").is_some_and(|f| f == "true");
            let applied = apply::parse(&req.body)?;
            crate::schema::field_validation(def, req.field_validation(), &applied)?;
            let Some(current) = current else {
                if mode != UpdateMode::Main {
                    return Err(ApiError::not_found(&gr, name));
                }
                let obj = apply::for_create(def, &applied, &manager);
                let created = api.create(def, ns, obj, req.dry_run()).await?;
                return Ok((StatusCode::CREATED, created));
            };
            let current = api.present(def, current).await?;
            let mut next =
                apply::apply_to(def, &current, &applied, &manager, force, p.subresource.as_deref())?;
            meta::metadata_mut(&mut next)
                .insert("resourceVersion".into(), json!(meta::resource_version(&current)));
            match api.update(def, ns, name, next, mode, req.dry_run()).await {
                Err(e) if e.reason == "Conflict" => continue,
                other => return other.map(|o| (StatusCode::OK, o)),
            }
        }
        let current = current.ok_or_else(|| ApiError::not_found(&gr, name))?;
        let current = api.present(def, current).await?;
        let doc = if p.subresource.as_deref() == Some("scale") {
            scale::to_scale(def, &current)
        } else {
            current.clone()
        };
        let patched = apply_patch(def, &ct, &doc, &req.body)?;
        if p.subresource.as_deref() != Some("scale") {
            crate::schema::field_validation(def, req.field_validation(), &patched)?;
        }
        let user_rv = meta::resource_version(&patched).to_string();
        let pinned = user_rv != meta::resource_version(&current);
        let result = if p.subresource.as_deref() == Some("scale") {
            scale::apply_scale(api, def, ns, name, &patched, req.dry_run()).await
        } else {
            api.update(def, ns, name, patched, mode, req.dry_run()).await
        };
        match result {
            Err(e) if e.reason == "Conflict" && !pinned => continue,
            other => return other.map(|o| (StatusCode::OK, o)),
        }
    }
    Err(ApiError::stale(&gr, name))
}
