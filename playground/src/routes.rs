//! HTTP routing: one fallback handler parses the path (`/api/v1/...`, `/apis/<g>/<v>/...`) and
//! dispatches to discovery or to the verb handlers.

use std::collections::HashMap;
use std::sync::Arc;

use axum::{
    Router,
    body::Bytes,
    extract::State,
    http::{HeaderMap, Method, StatusCode, Uri, header},
    response::{IntoResponse, Response},
};
use serde_json::Value;

use crate::api::Api;
use crate::error::ApiError;
use crate::{discovery, handlers, openapi, watch};

/// A resource path taken apart.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ApiPath {
    /// API group ("" for core).
    pub group: String,
    /// API version.
    pub version: String,
    /// Namespace of the path, if any.
    pub namespace: Option<String>,
    /// Plural resource.
    pub resource: String,
    /// Object name.
    pub name: Option<String>,
    /// Subresource.
    pub subresource: Option<String>,
}

/// What a path addresses.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Target {
    /// `/apis`: the group list.
    Apis,
    /// `/apis/<group>` or `/api` (with an empty group).
    Group(String),
    /// `/api/v1` or `/apis/<group>/<version>`.
    GroupVersion(String, String),
    /// A resource, collection or object.
    Resource(ApiPath),
}

/// Parses a request path.
pub fn parse(path: &str) -> Option<Target> {
    let segs: Vec<&str> = path
        .trim_matches('/')
        .split('/')
        .filter(|s| !s.is_empty())
        .collect();
    let (group, version, rest) = match segs.as_slice() {
        ["api"] => return Some(Target::Group(String::new())),
        ["apis"] => return Some(Target::Apis),
        ["apis", g] => return Some(Target::Group(g.to_string())),
        ["api", v, rest @ ..] => (String::new(), v.to_string(), rest),
        ["apis", g, v, rest @ ..] => (g.to_string(), v.to_string(), rest),
        _ => return None,
    };
    let s = |x: &&str| x.to_string();
    let p = match rest {
        [] => return Some(Target::GroupVersion(group, version)),
        ["namespaces", ns, res, tail @ ..] if !matches!(*res, "status" | "finalize") => {
            if tail.len() > 2 {
                return None;
            }
            ApiPath {
                group,
                version,
                namespace: Some(ns.to_string()),
                resource: res.to_string(),
                name: tail.first().map(s),
                subresource: tail.get(1).map(s),
            }
        }
        [res, tail @ ..] if tail.len() <= 2 => ApiPath {
            group,
            version,
            namespace: None,
            resource: res.to_string(),
            name: tail.first().map(s),
            subresource: tail.get(1).map(s),
        },
        _ => return None,
    };
    Some(Target::Resource(p))
}

/// A JSON response.
pub fn json_response(code: StatusCode, body: &Value) -> Response {
    (
        code,
        [(header::CONTENT_TYPE, "application/json")],
        body.to_string(),
    )
        .into_response()
}

/// The router of the API server.
pub fn router(api: Arc<Api>) -> Router {
    Router::new().fallback(handle).with_state(api)
}

/// Everything a verb handler needs from the request.
#[derive(Debug)]
pub struct Request {
    /// HTTP method.
    pub method: Method,
    /// Query parameters.
    pub query: HashMap<String, String>,
    /// Headers.
    pub headers: HeaderMap,
    /// Body.
    pub body: Bytes,
}

impl Request {
    /// The Content-Type without parameters.
    pub fn content_type(&self) -> String {
        self.headers
            .get(header::CONTENT_TYPE)
            .and_then(|v| v.to_str().ok())
            .map(|v| {
                v.split(';')
                    .next()
                    .unwrap_or_default()
                    .trim()
                    .to_ascii_lowercase()
            })
            .unwrap_or_default()
    }

    /// Whether the client asked for a `meta.k8s.io/v1 Table`.
    pub fn wants_table(&self) -> bool {
        self.headers
            .get(header::ACCEPT)
            .and_then(|v| v.to_str().ok())
            .is_some_and(|a| a.contains("as=Table"))
    }

    /// Whether the client asked for `meta.k8s.io/v1 PartialObjectMetadata` (metadata-only clients).
    pub fn wants_metadata(&self) -> bool {
        self.headers
            .get(header::ACCEPT)
            .and_then(|v| v.to_str().ok())
            .is_some_and(|a| a.contains("as=PartialObjectMetadata"))
    }

    /// `dryRun=All`.
    pub fn dry_run(&self) -> bool {
        self.query.contains_key("dryRun")
    }
}

async fn handle(
    State(api): State<Arc<Api>>,
    method: Method,
    uri: Uri,
    headers: HeaderMap,
    body: Bytes,
) -> Response {
    let query = axum::extract::Query::<HashMap<String, String>>::try_from_uri(&uri)
        .map(|q| q.0)
        .unwrap_or_default();
    let req = Request {
        method,
        query,
        headers,
        body,
    };
    match dispatch(&api, uri.path(), req).await {
        Ok(r) => r,
        Err(e) => e.into_response(),
    }
}

async fn dispatch(api: &Arc<Api>, path: &str, req: Request) -> Result<Response, ApiError> {
    match path {
        "/version" | "/version/" => return Ok(json_response(StatusCode::OK, &discovery::version())),
        "/healthz" | "/livez" | "/readyz" => return Ok((StatusCode::OK, "ok").into_response()),
        "/openapi/v3" | "/openapi/v3/" => return Ok(json_response(StatusCode::OK, &openapi::root(api))),
        "/openapi/v2" | "/openapi/v2/" => return Ok(openapi::v2(&req)),
        _ => {}
    }
    if let Some(gv) = path.strip_prefix("/openapi/v3/") {
        return openapi::group_version(api, gv.trim_end_matches('/'))
            .map(|v| json_response(StatusCode::OK, &v));
    }
    let target = parse(path).ok_or_else(ApiError::path_not_found)?;
    if req.method != Method::GET && !matches!(target, Target::Resource(_)) {
        return Err(ApiError::path_not_found());
    }
    match target {
        Target::Group(g) if g.is_empty() => Ok(json_response(StatusCode::OK, &discovery::api_versions())),
        Target::Apis => Ok(json_response(StatusCode::OK, &discovery::groups(api))),
        Target::Group(g) => discovery::group(api, &g).map(|v| json_response(StatusCode::OK, &v)),
        Target::GroupVersion(g, v) => {
            discovery::resources(api, &g, &v).map(|v| json_response(StatusCode::OK, &v))
        }
        Target::Resource(p) => {
            let def = api
                .registry
                .find(&p.group, &p.version, &p.resource)
                .ok_or_else(ApiError::path_not_found)?;
            api.requests.record(&req.method, &p);
            if let Some(sub) = &p.subresource
                && !crate::resources::Subresource::parse(sub).is_some_and(|s| def.has(s))
            {
                return Err(ApiError::path_not_found());
            }
            if p.namespace.is_some() && !def.namespaced {
                return Err(ApiError::path_not_found());
            }
            let watching = req.query.get("watch").is_some_and(|w| w == "true" || w == "1");
            match (&req.method, &p.name) {
                (&Method::GET, None) if watching => watch::serve(api.clone(), def, p, req),
                (&Method::GET, None) => handlers::list(api, &def, &p, &req).await,
                (&Method::GET, Some(_)) => handlers::get(api, &def, &p, &req).await,
                (&Method::POST, None) => handlers::create(api, &def, &p, &req).await,
                (&Method::POST, Some(_)) if p.subresource.is_some() => {
                    handlers::create_sub(api, &def, &p, &req).await
                }
                (&Method::PUT, Some(_)) => handlers::update(api, &def, &p, &req).await,
                (&Method::PATCH, Some(_)) => handlers::patch(api, &def, &p, &req).await,
                (&Method::DELETE, Some(_)) if p.subresource.is_none() => {
                    handlers::delete(api, &def, &p, &req).await
                }
                (&Method::DELETE, None) if def.plural != "namespaces" => {
                    handlers::delete_collection(api, &def, &p, &req).await
                }
                _ => Err(ApiError::method_not_allowed()),
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn paths() {
        let p = |s| match parse(s) {
            Some(Target::Resource(p)) => p,
            other => panic!("{s}: {other:?}"),
        };
        let pod = p("/api/v1/namespaces/ns/pods/a/status");
        assert_eq!(
            (pod.namespace.as_deref(), pod.resource.as_str()),
            (Some("ns"), "pods")
        );
        assert_eq!(
            (pod.name.as_deref(), pod.subresource.as_deref()),
            (Some("a"), Some("status"))
        );
        let ns = p("/api/v1/namespaces/ns/finalize");
        assert_eq!(
            (ns.resource.as_str(), ns.name.as_deref()),
            ("namespaces", Some("ns"))
        );
        let deploys = p("/apis/apps/v1/deployments");
        assert_eq!((deploys.group.as_str(), deploys.name), ("apps", None));
        assert_eq!(
            parse("/apis/apps/v1"),
            Some(Target::GroupVersion("apps".into(), "v1".into()))
        );
        assert_eq!(parse("/apis"), Some(Target::Apis));
        assert_eq!(parse("/foo"), None);
    }
}
