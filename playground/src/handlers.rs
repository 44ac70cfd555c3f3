//! Verb handlers: get, list, create, update, patch, delete, deletecollection and the pod
//! subresources, translating HTTP to the [`Api`] write path.

use std::sync::Arc;

use axum::{http::StatusCode, response::Response};
use base64::Engine as _;
use serde_json::{Value, json};

use crate::api::delete::{DeleteOptions, Deleted};
use crate::api::{Api, UpdateMode, key};
use crate::error::ApiError;
use crate::meta;
use crate::request::{ApiPath, Request};
use crate::resources::ResourceDef;
use crate::response::{json_response, with_warnings};
use crate::selectors::{FieldSelector, LabelSelector};
use crate::{patch, scale, table};

const BODY_TYPES: &[&str] = &[
    "application/json",
    "application/yaml",
    "application/vnd.kubernetes.protobuf",
];

/// Parses a create/update body (JSON or YAML); 415 for other media types.
pub fn body(req: &Request) -> Result<Value, ApiError> {
    match req.content_type().as_str() {
        "application/json" | "" => serde_json::from_slice(&req.body)
            .map_err(|e| ApiError::bad_request(format!("couldn't get version/kind; json parse error: {e}"))),
        "application/yaml" => {
            let text = std::str::from_utf8(&req.body).map_err(|e| ApiError::bad_request(e.to_string()))?;
            serde_saphyr::from_str(text)
                .map_err(|e| ApiError::bad_request(format!("error converting YAML to JSON: {e}")))
        }
        "application/vnd.kubernetes.protobuf" => crate::protobuf::decode(&req.body, BODY_TYPES),
        _ => Err(ApiError::unsupported_media_type(BODY_TYPES)),
    }
}

/// The object as served in the requested version.
pub fn output(def: &ResourceDef, mut obj: Value) -> Value {
    obj["apiVersion"] = json!(def.api_version());
    obj["kind"] = json!(def.kind);
    obj
}

fn ns(p: &ApiPath) -> &str {
    p.namespace.as_deref().unwrap_or_default()
}

fn name(p: &ApiPath) -> &str {
    p.name.as_deref().unwrap_or_default()
}

/// GET of an object or its status/scale subresource.
pub async fn get(api: &Api, def: &ResourceDef, p: &ApiPath, req: &Request) -> Result<Response, ApiError> {
    let obj = api
        .store
        .get(&key(def), ns(p), name(p))
        .ok_or_else(|| ApiError::not_found(&def.group_resource(), name(p)))?;
    if req.wants_metadata() && p.subresource.is_none() {
        return Ok(json_response(StatusCode::OK, &table::partial(&obj)));
    }
    let obj = api.present(def, obj).await?;
    if p.subresource.as_deref() == Some("scale") {
        return Ok(json_response(StatusCode::OK, &scale::to_scale(def, &obj)));
    }
    if req.wants_table() {
        return Ok(json_response(StatusCode::OK, &table::table(def, &[obj], "")));
    }
    Ok(json_response(StatusCode::OK, &obj))
}

/// The objects a list or deletecollection selects.
pub fn select(
    api: &Api,
    def: &ResourceDef,
    p: &ApiPath,
    req: &Request,
) -> Result<(Vec<Value>, u64), ApiError> {
    let (items, rv) = select_shared(api, def, p, req)?;
    Ok((items.iter().map(|o| Value::clone(o)).collect(), rv))
}

/// [`select`] without copying the objects: a list copies only the page it answers.
fn select_shared(
    api: &Api,
    def: &ResourceDef,
    p: &ApiPath,
    req: &Request,
) -> Result<(Vec<Arc<Value>>, u64), ApiError> {
    let labels = LabelSelector::parse(
        req.query
            .get("labelSelector")
            .map(String::as_str)
            .unwrap_or_default(),
    )?;
    let fields = FieldSelector::parse(
        req.query
            .get("fieldSelector")
            .map(String::as_str)
            .unwrap_or_default(),
        &def.kind,
    )?;
    let (mut items, rv) = api.store.list_shared(&key(def), p.namespace.as_deref());
    items.retain(|o| labels.matches(&meta::labels(o)) && fields.matches(o));
    Ok((items, rv))
}

/// GET of a collection, with selectors, `limit` and `continue`.
pub async fn list(api: &Api, def: &ResourceDef, p: &ApiPath, req: &Request) -> Result<Response, ApiError> {
    let (mut items, rv) = select_shared(api, def, p, req)?;
    let b64 = base64::engine::general_purpose::STANDARD;
    if let Some(token) = req.query.get("continue").filter(|c| !c.is_empty()) {
        let bad = || {
            ApiError::bad_request(
                "continue key is not valid: incorrect encoded start resourceVersion (version meta.k8s.io/v1)",
            )
        };
        let decoded = b64.decode(token).map_err(|_| bad())?;
        let start: Value = serde_json::from_slice(&decoded).map_err(|_| bad())?;
        let start = (
            start["ns"].as_str().unwrap_or_default(),
            start["name"].as_str().unwrap_or_default(),
        );
        items.retain(|o| (meta::namespace(o), meta::name(o)) > start);
    }
    let mut list_meta = json!({"resourceVersion": rv.to_string()});
    if let Some(limit) = req
        .query
        .get("limit")
        .and_then(|l| l.parse::<usize>().ok())
        .filter(|l| *l > 0)
        && items.len() > limit
    {
        let remaining = items.len() - limit;
        items.truncate(limit);
        let (ns, name) = items
            .last()
            .map(|o| (meta::namespace(o), meta::name(o)))
            .unwrap_or_default();
        let token = json!({"ns": ns, "name": name, "rv": rv});
        list_meta["continue"] = json!(b64.encode(token.to_string()));
        list_meta["remainingItemCount"] = json!(remaining);
        api.requests.record_cut_list();
    }
    let items: Vec<Value> = items.iter().map(|o| Value::clone(o)).collect();
    if req.wants_table() {
        let items = api.present_all(def, items).await?;
        let mut t = table::table(def, &items, &rv.to_string());
        t["metadata"] = list_meta;
        return Ok(json_response(StatusCode::OK, &t));
    }
    if req.wants_metadata() {
        let items: Vec<Value> = items.iter().map(table::partial).collect();
        let list = json!({"kind": "PartialObjectMetadataList", "apiVersion": "meta.k8s.io/v1",
            "metadata": list_meta, "items": items});
        return Ok(json_response(StatusCode::OK, &list));
    }
    let items: Vec<Value> = api
        .present_all(def, items)
        .await?
        .into_iter()
        .map(|mut o| {
            if def.builtin {
                // kube-apiserver leaves kind/apiVersion out of built-in list items.
                o.as_object_mut()
                    .map(|m| (m.remove("kind"), m.remove("apiVersion")));
            }
            o
        })
        .collect();
    let list = json!({
        "kind": format!("{}List", def.kind), "apiVersion": def.api_version(),
        "metadata": list_meta, "items": items,
    });
    Ok(json_response(StatusCode::OK, &list))
}

/// POST of a collection.
pub async fn create(api: &Api, def: &ResourceDef, p: &ApiPath, req: &Request) -> Result<Response, ApiError> {
    let obj = body(req)?;
    let warnings = crate::schema::field_validation(def, req.field_validation(), &obj)?;
    let created = api.create(def, ns(p), obj, req.dry_run()).await?;
    let resp = json_response(StatusCode::CREATED, &api.present(def, created).await?);
    Ok(with_warnings(resp, &warnings))
}

/// POST of `pods/<name>/eviction` or `pods/<name>/binding`.
pub async fn create_sub(
    api: &Arc<Api>,
    def: &ResourceDef,
    p: &ApiPath,
    req: &Request,
) -> Result<Response, ApiError> {
    let mut obj = body(req)?;
    let (api_version, kind) = match p.subresource.as_deref() {
        Some("eviction") => ("policy/v1", "Eviction"),
        _ => ("v1", "Binding"),
    };
    if obj["kind"].as_str().is_none_or(str::is_empty) {
        obj["apiVersion"] = json!(api_version);
        obj["kind"] = json!(kind);
    }
    let Some(pod) = api.store.get(&key(def), ns(p), name(p)) else {
        return Err(ApiError::not_found(&def.group_resource(), name(p)));
    };
    // Webhooks registered for pods/eviction or pods/binding CREATE see the subresource object.
    let attrs = crate::api::admission::Attributes {
        api,
        operation: crate::api::admission::Operation::Create,
        resource: def,
        subresource: p.subresource.as_deref(),
        namespace: ns(p),
        name: name(p),
        object: None,
        old_object: None,
        dry_run: req.dry_run(),
    };
    let obj = api.admit(attrs, Some(obj)).await?.unwrap_or_default();
    match p.subresource.as_deref() {
        Some("eviction") => {
            let opts = DeleteOptions::parse(obj.get("deleteOptions"), &req.query);
            crate::disruption::check_eviction(api, &pod, opts.dry_run).await?;
            api.delete_admitted(def, ns(p), name(p), &opts, false).await?;
            let status = json!({"kind": "Status", "apiVersion": "v1", "metadata": {}, "status": "Success", "code": 201});
            Ok(json_response(StatusCode::CREATED, &status))
        }
        Some("binding") => {
            let node = obj["target"]["name"].as_str().unwrap_or_default().to_string();
            let current = api
                .store
                .get(&key(def), ns(p), name(p))
                .ok_or_else(|| ApiError::not_found(&def.group_resource(), name(p)))?;
            if current["spec"]["nodeName"]
                .as_str()
                .is_some_and(|n| !n.is_empty())
            {
                let why = format!(
                    "pod {} is already assigned to node {:?}",
                    name(p),
                    current["spec"]["nodeName"]
                );
                return Err(ApiError::conflict(&def.group_resource(), name(p), &why));
            }
            let mut next = current.clone();
            next["spec"]["nodeName"] = json!(node);
            api.update(def, ns(p), name(p), next, UpdateMode::Main, req.dry_run())
                .await?;
            let status = json!({"kind": "Status", "apiVersion": "v1", "metadata": {}, "status": "Success", "code": 201});
            Ok(json_response(StatusCode::CREATED, &status))
        }
        _ => Err(ApiError::method_not_supported(&def.group_resource(), "create")),
    }
}

fn mode(p: &ApiPath) -> UpdateMode {
    match p.subresource.as_deref() {
        Some("status") => UpdateMode::Status,
        Some("finalize") => UpdateMode::Finalize,
        Some("ephemeralcontainers") => UpdateMode::EphemeralContainers,
        _ => UpdateMode::Main,
    }
}

/// PUT of an object or a subresource.
pub async fn update(api: &Api, def: &ResourceDef, p: &ApiPath, req: &Request) -> Result<Response, ApiError> {
    let obj = body(req)?;
    if p.subresource.as_deref() == Some("scale") {
        return scale::update(api, def, ns(p), name(p), obj, req.dry_run()).await;
    }
    let warnings = crate::schema::field_validation(def, req.field_validation(), &obj)?;
    let updated = api
        .update(def, ns(p), name(p), obj, mode(p), req.dry_run())
        .await?;
    let resp = json_response(StatusCode::OK, &api.present(def, updated).await?);
    Ok(with_warnings(resp, &warnings))
}

/// PATCH of an object or a subresource.
pub async fn patch(api: &Api, def: &ResourceDef, p: &ApiPath, req: &Request) -> Result<Response, ApiError> {
    let (code, obj) = patch::patch(api, def, p, req, mode(p)).await?;
    let obj = api.present(def, obj).await?;
    let body = if p.subresource.as_deref() == Some("scale") {
        scale::to_scale(def, &obj)
    } else {
        obj
    };
    Ok(json_response(code, &body))
}

fn delete_options(req: &Request) -> Result<DeleteOptions, ApiError> {
    let body = if req.body.is_empty() {
        None
    } else {
        Some(serde_json::from_slice::<Value>(&req.body).map_err(|e| ApiError::bad_request(e.to_string()))?)
    };
    Ok(DeleteOptions::parse(body.as_ref(), &req.query))
}

/// The answer to a delete that removed the object: the object for pods, services and
/// namespaces, else a Success Status naming it.
async fn removed_body(api: &Api, def: &ResourceDef, last: Value) -> Result<Value, ApiError> {
    if def.return_deleted_object {
        return api.present(def, last).await;
    }
    let mut details = json!({"name": meta::name(&last), "kind": def.plural, "uid": meta::uid_of(&last)});
    if !def.group.is_empty() {
        details["group"] = json!(def.group);
    }
    Ok(json!({"kind": "Status", "apiVersion": "v1", "metadata": {}, "status": "Success", "details": details}))
}

/// DELETE of an object.
pub async fn delete(api: &Api, def: &ResourceDef, p: &ApiPath, req: &Request) -> Result<Response, ApiError> {
    let opts = delete_options(req)?;
    let body = match api.delete(def, ns(p), name(p), &opts).await? {
        Deleted::Removed(last) => removed_body(api, def, last).await?,
        Deleted::Pending(obj) => api.present(def, obj).await?,
    };
    Ok(json_response(StatusCode::OK, &body))
}

/// DELETE of a collection: deletes every selected object; answers the list of what was deleted.
pub async fn delete_collection(
    api: &Api,
    def: &ResourceDef,
    p: &ApiPath,
    req: &Request,
) -> Result<Response, ApiError> {
    let opts = delete_options(req)?;
    let (items, _) = select(api, def, p, req)?;
    let mut deleted = vec![];
    for o in items {
        match api.delete(def, meta::namespace(&o), meta::name(&o), &opts).await {
            Ok(Deleted::Removed(v) | Deleted::Pending(v)) => deleted.push(v),
            Err(e) if e.code == 404 => {}
            Err(e) => return Err(e),
        }
    }
    let deleted = api.present_all(def, deleted).await?;
    let list = json!({
        "kind": format!("{}List", def.kind), "apiVersion": def.api_version(),
        "metadata": {"resourceVersion": api.store.revision().to_string()}, "items": deleted,
    });
    Ok(json_response(StatusCode::OK, &list))
}
