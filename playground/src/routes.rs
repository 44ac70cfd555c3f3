//! HTTP routing: one fallback handler parses the path (`/api/v1/...`, `/apis/<g>/<v>/...`) and
//! dispatches to discovery or to the verb handlers.

use std::collections::HashMap;
use std::sync::Arc;

use axum::{
    Router,
    body::Bytes,
    extract::State,
    http::{HeaderMap, Method, StatusCode, Uri},
    response::{IntoResponse, Response},
};

use crate::api::Api;
use crate::error::ApiError;
use crate::request::{Request, Target, parse};
use crate::response::json_response;
use crate::{discovery, handlers, openapi, watch};

/// The router of the API server.
pub fn router(api: Arc<Api>) -> Router {
    Router::new().fallback(handle).with_state(api)
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

/// `GET /playground/clock`: the clock's time; `POST` with `{"advanceSeconds": N}` moves a manual clock
/// forward (`kubectl create --raw /playground/clock -f -`) and answers the new time.
fn clock(api: &Api, req: &Request) -> Result<Response, ApiError> {
    let state = |api: &Api| {
        serde_json::json!({"kind": "PlaygroundClock", "manual": api.clock.is_manual(),
            "now": crate::meta::timestamp(api.clock.now()),
            "offsetSeconds": api.clock.offset().as_secs()})
    };
    match req.method {
        Method::GET => Ok(json_response(StatusCode::OK, &state(api))),
        Method::POST => {
            let body: serde_json::Value = serde_json::from_slice(&req.body)
                .map_err(|e| ApiError::bad_request(format!("clock: {e}")))?;
            let seconds = body["advanceSeconds"].as_u64().ok_or_else(|| {
                ApiError::bad_request("clock: expected {\"advanceSeconds\": <non-negative integer>}")
            })?;
            api.clock
                .advance(std::time::Duration::from_secs(seconds))
                .map_err(|e| ApiError::bad_request(e.to_string()))?;
            Ok(json_response(StatusCode::CREATED, &state(api)))
        }
        _ => Err(ApiError::method_not_allowed()),
    }
}

/// `POST /playground/restart` with `{"downSeconds": N}`: the API server restarts (`restart` module) —
/// connections cut, the port closed for N seconds (fractions allowed), then serving again; answered
/// 202 before the connections are cut.
fn restart(api: &Api, req: &Request) -> Result<Response, ApiError> {
    if req.method != Method::POST {
        return Err(ApiError::method_not_allowed());
    }
    let body: serde_json::Value =
        serde_json::from_slice(&req.body).map_err(|e| ApiError::bad_request(format!("restart: {e}")))?;
    let down = body["downSeconds"]
        .as_f64()
        .filter(|s| s.is_finite() && *s >= 0.0)
        .ok_or_else(|| ApiError::bad_request("restart: expected {\"downSeconds\": <non-negative number>}"))?;
    let down = std::time::Duration::from_secs_f64(down.min(1e6));
    let number = api
        .restarts
        .request(down)
        .map_err(|e| ApiError::bad_request(format!("restart: {e}")))?;
    let answer = serde_json::json!({"kind": "PlaygroundRestart", "restart": number,
        "downSeconds": down.as_secs_f64()});
    Ok(json_response(StatusCode::ACCEPTED, &answer))
}

async fn dispatch(api: &Arc<Api>, path: &str, req: Request) -> Result<Response, ApiError> {
    match path {
        "/version" | "/version/" => return Ok(json_response(StatusCode::OK, &discovery::version())),
        "/healthz" | "/livez" | "/readyz" => return Ok((StatusCode::OK, "ok").into_response()),
        "/openapi/v3" | "/openapi/v3/" => return Ok(json_response(StatusCode::OK, &openapi::root(api))),
        "/openapi/v2" | "/openapi/v2/" => return Ok(openapi::v2(&req)),
        "/playground/clock" => return clock(api, &req),
        "/playground/restart" => return restart(api, &req),
        "/debug/request-counts" if req.method == Method::GET => {
            return Ok(json_response(StatusCode::OK, &api.requests.to_json()));
        }
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
            if let Some(refused) = api.refusals.check(&req.method, &p, watching) {
                return Ok(refused);
            }
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
