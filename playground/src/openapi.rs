//! A minimal OpenAPI v3 surface, enough for kubectl: `/openapi/v3` lists every served group
//! version, and each group version's document declares, for every kind, a PATCH operation tagged
//! `x-kubernetes-group-version-kind` accepting the `fieldValidation` query parameter. kubectl
//! then leaves validation to the server (which applies `fieldValidation` to custom resources)
//! instead of validating on the client. Custom resources' and built-in kinds' schemas
//! ([`crate::builtin_schemas`]) are published under `components.schemas` (what `kubectl explain`
//! reads).
//! `/openapi/v2` is a Swagger 2.0 document without definitions (protobuf when asked for, as
//! client-go's discovery asks): kubectl's client-side validation, which it uses for `kind: List`
//! files whatever the server supports, skips kinds the document does not define.

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

const V2_PROTOBUF: &str = "application/com.github.proto-openapi.spec.v2.v1.0+protobuf";

/// `/openapi/v2`: `{"swagger": "2.0"}`, in gnostic's protobuf encoding (field 1, `swagger`) when
/// the client accepts it.
pub fn v2(req: &crate::request::Request) -> axum::response::Response {
    use axum::{http::header, response::IntoResponse as _};
    let accept = req
        .headers
        .get(header::ACCEPT)
        .and_then(|v| v.to_str().ok())
        .unwrap_or_default();
    if accept.contains("protobuf") {
        let body: &[u8] = b"\x0a\x032.0";
        return ([(header::CONTENT_TYPE, V2_PROTOBUF)], body).into_response();
    }
    let doc = json!({"swagger": "2.0", "info": {"title": "Kubernetes", "version": "v1.32.0"},
        "paths": {}, "definitions": {}});
    crate::response::json_response(axum::http::StatusCode::OK, &doc)
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
    if path == "api/v1" {
        // A `kind: List` file: kubectl asks whether `v1 List` takes `fieldValidation` before
        // falling back to client-side validation (which needs `/openapi/v2`); the server
        // validates the items, so say it does.
        let op = json!({"operationId": "patchList", "parameters": [
                {"name": "fieldValidation", "in": "query", "schema": {"type": "string"}}],
            "x-kubernetes-action": "patch",
            "x-kubernetes-group-version-kind": {"group": "", "version": "v1", "kind": "List"}});
        paths.insert("/api/v1/lists/{name}".into(), json!({"patch": op}));
    }
    let builtin: Vec<&str> = defs
        .iter()
        .filter(|d| d.builtin)
        .map(|d| d.kind.as_str())
        .collect();
    let mut schemas = crate::builtin_schemas::schemas(&defs[0].group, &defs[0].version, &builtin);
    for d in &defs {
        if let Some(schema) = d.crd.as_deref().and_then(|c| c.schema.as_ref()) {
            schemas.insert(schema_name(&d.group, &d.version, &d.kind), kind_schema(d, schema));
        }
    }
    Ok(json!({
        "openapi": "3.0.0",
        "info": {"title": "Kubernetes", "version": "v1.32.0"},
        "paths": paths,
        "components": {"schemas": schemas},
    }))
}

/// kube-apiserver's name of a kind's schema: the group reversed, version, kind
/// (`io.kruise.apps.v1beta1.CloneSet`).
fn schema_name(group: &str, version: &str, kind: &str) -> String {
    let mut parts: Vec<&str> = group.split('.').collect();
    parts.reverse();
    format!("{}.{version}.{kind}", parts.join("."))
}

/// A custom resource's schema as apiextensions-apiserver publishes it (`pkg/controller/openapi/builder`):
/// the CRD's `openAPIV3Schema` with the standard `apiVersion`, `kind` and `metadata` and the
/// `x-kubernetes-group-version-kind` that `kubectl explain` looks up.
fn kind_schema(d: &crate::resources::ResourceDef, schema: &Value) -> Value {
    let mut s = schema.clone();
    s["properties"]["apiVersion"] = json!({"type": "string", "description": "APIVersion defines the versioned schema of this representation of an object. Servers should convert recognized schemas to the latest internal value, and may reject unrecognized values. More info: https://git.k8s.io/community/contributors/devel/sig-architecture/api-conventions.md#resources"});
    s["properties"]["kind"] = json!({"type": "string", "description": "Kind is a string value representing the REST resource this object represents. Servers may infer this from the endpoint the client submits requests to. Cannot be updated. In CamelCase. More info: https://git.k8s.io/community/contributors/devel/sig-architecture/api-conventions.md#types-kinds"});
    s["properties"]["metadata"] = json!({"type": "object", "description": "Standard object's metadata. More info: https://git.k8s.io/community/contributors/devel/sig-architecture/api-conventions.md#metadata"});
    s["x-kubernetes-group-version-kind"] = json!([{"group": d.group, "version": d.version, "kind": d.kind}]);
    s
}
