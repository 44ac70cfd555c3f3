//! A minimal OpenAPI v3 surface, enough for kubectl: `/openapi/v3` lists every served group
//! version, and each group version's document declares, for every kind, a PATCH operation tagged
//! `x-kubernetes-group-version-kind` accepting the `fieldValidation` query parameter. kubectl
//! then leaves validation to the server (which accepts and ignores `fieldValidation`) instead of
//! failing to download schemas. No schemas are published: kubectl computes strategic merge
//! patches from its compiled-in types, and JSON merge patches for custom resources.
//! `/openapi/v2` is not served (404).

use serde_json::{Map, Value, json};

use crate::api::Api;
use crate::error::ApiError;

fn gv_path(group: &str, version: &str) -> String {
    if group.is_empty() {
        format!("api/{version}")
    } else {
        format!("apis/{group}/{version}")
    }
}

/// `/openapi/v3`: the group-version index.
pub fn root(api: &Api) -> Value {
    let hash = api.store.revision();
    let mut paths = Map::new();
    for d in api.registry.all() {
        let p = gv_path(&d.group, &d.version);
        let url = format!("/openapi/v3/{p}?hash={hash:016X}");
        paths.insert(p, json!({"serverRelativeURL": url}));
    }
    json!({"paths": paths})
}

/// `/openapi/v3/<api/v1 | apis/g/v>`: the document of one group version.
pub fn group_version(api: &Api, path: &str) -> Result<Value, ApiError> {
    let defs: Vec<_> = api
        .registry
        .all()
        .into_iter()
        .filter(|d| gv_path(&d.group, &d.version) == path)
        .collect();
    if defs.is_empty() {
        return Err(ApiError::path_not_found());
    }
    let mut paths = Map::new();
    for d in &defs {
        let ns = if d.namespaced {
            "namespaces/{namespace}/"
        } else {
            ""
        };
        let url = format!("/{path}/{ns}{}/{{name}}", d.plural);
        let mut content = Map::new();
        for t in [
            "application/json-patch+json",
            "application/merge-patch+json",
            "application/apply-patch+yaml",
        ] {
            content.insert(t.into(), json!({"schema": {"type": "object"}}));
        }
        let op = json!({
            "operationId": format!("patch{}", d.kind),
            "parameters": [
                {"name": "dryRun", "in": "query", "schema": {"type": "string"}},
                {"name": "fieldManager", "in": "query", "schema": {"type": "string"}},
                {"name": "fieldValidation", "in": "query", "schema": {"type": "string"}},
                {"name": "force", "in": "query", "schema": {"type": "boolean"}},
            ],
            "requestBody": {"content": content, "required": true},
            "responses": {"200": {"description": "OK"}},
            "x-kubernetes-action": "patch",
            "x-kubernetes-group-version-kind": {"group": d.group, "version": d.version, "kind": d.kind},
        });
        paths.insert(url, json!({"patch": op}));
    }
    Ok(json!({
        "openapi": "3.0.0",
        "info": {"title": "Kubernetes", "version": "v1.32.0"},
        "paths": paths,
        "components": {"schemas": {}},
    }))
}
