//! The JSON responses of the API server.

use axum::{
    http::{StatusCode, header},
    response::{IntoResponse, Response},
};
use serde_json::Value;

/// A JSON response.
pub fn json_response(code: StatusCode, body: &Value) -> Response {
    (
        code,
        [(header::CONTENT_TYPE, "application/json")],
        body.to_string(),
    )
        .into_response()
}

/// Adds one `Warning: 299 - "<text>"` header per warning, as kube-apiserver does.
pub fn with_warnings(mut resp: Response, warnings: &[String]) -> Response {
    for w in warnings {
        if let Ok(v) = axum::http::HeaderValue::from_str(&format!("299 - {w:?}")) {
            resp.headers_mut().append(axum::http::header::WARNING, v);
        }
    }
    resp
}
