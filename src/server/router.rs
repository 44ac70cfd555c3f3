//! The HTTPS router: one POST route per webhook path plus `/convert`; JSON errors for everything that
//! is not a usable review.

use std::sync::Arc;

use axum::{
    Json, Router,
    body::Bytes,
    extract::{DefaultBodyLimit, State, rejection::BytesRejection},
    http::{HeaderMap, StatusCode, header},
    response::{IntoResponse, Response},
    routing::post,
};
use kruise_webhooks::Webhook;
use serde_json::json;

use super::{
    App,
    metrics::{BudgetLabels, Outcome, RejectLabels, ReviewLabels, SidecarSetLabels, WebhookLabels},
};

/// Largest request body accepted: kube-apiserver can send ~7 MiB reviews (object + oldObject).
pub const MAX_BODY_BYTES: usize = 8 * 1024 * 1024;

/// The webhook router.
pub fn router(app: Arc<App>) -> Router {
    let mut router = Router::new();
    for &webhook in Webhook::ALL {
        router = router.route(
            webhook.path(),
            post(
                move |State(app): State<Arc<App>>,
                      headers: HeaderMap,
                      body: Result<Bytes, BytesRejection>| {
                    review(app, webhook, headers, body)
                },
            ),
        );
    }
    router
        .route("/convert", post(convert))
        .route("/healthz", axum::routing::get(|| async { "ok" }))
        .fallback(|uri: axum::http::Uri| async move {
            error(
                StatusCode::NOT_FOUND,
                "NotFound",
                &format!("no webhook is served at {}", uri.path()),
            )
        })
        .layer(DefaultBodyLimit::max(MAX_BODY_BYTES))
        .with_state(app)
}

/// A `metav1.Status`-shaped JSON error.
pub fn error(code: StatusCode, reason: &str, message: &str) -> Response {
    let body = json!({
        "apiVersion": "v1", "kind": "Status", "status": "Failure",
        "code": code.as_u16(), "reason": reason, "message": message,
    });
    (code, Json(body)).into_response()
}

/// Checks the content type and the body; `Err` is the response to send.
fn read_body(
    app: &App,
    path: &str,
    headers: &HeaderMap,
    body: Result<Bytes, BytesRejection>,
) -> Result<Bytes, Box<Response>> {
    let reject = |code: StatusCode, reason: &str, message: &str| {
        app.metrics
            .rejected
            .get_or_create(&RejectLabels {
                path: path.into(),
                code: code.as_u16(),
            })
            .inc();
        error(code, reason, message)
    };
    let content_type = headers
        .get(header::CONTENT_TYPE)
        .and_then(|v| v.to_str().ok())
        .unwrap_or("");
    let media_type = content_type.split(';').next().unwrap_or("").trim();
    if !media_type.eq_ignore_ascii_case("application/json") {
        return Err(Box::new(reject(
            StatusCode::UNSUPPORTED_MEDIA_TYPE,
            "UnsupportedMediaType",
            &format!("content type {content_type:?} is not supported: send application/json"),
        )));
    }
    if headers
        .get(header::CONTENT_ENCODING)
        .is_some_and(|v| v != "identity")
    {
        return Err(Box::new(reject(
            StatusCode::UNSUPPORTED_MEDIA_TYPE,
            "UnsupportedMediaType",
            "content encodings are not supported",
        )));
    }
    body.map_err(|rejection| {
        let status = rejection.status();
        let message = if status == StatusCode::PAYLOAD_TOO_LARGE {
            format!("request body is larger than {MAX_BODY_BYTES} bytes")
        } else {
            rejection.body_text()
        };
        Box::new(reject(status, "RequestEntityTooLarge", &message))
    })
}

async fn review(
    app: Arc<App>,
    webhook: Webhook,
    headers: HeaderMap,
    body: Result<Bytes, BytesRejection>,
) -> Response {
    // No per-review span: its field bookkeeping ran on every review though few reviews log anything.
    // The log lines carry the fields themselves.
    let body = match read_body(&app, webhook.path(), &headers, body) {
        Ok(body) => body,
        Err(response) => return *response,
    };
    let answer = match app.admission.answer(webhook, &body).await {
        Ok(answer) => answer,
        Err(e) => {
            let labels = RejectLabels {
                path: webhook.path().into(),
                code: 400,
            };
            app.metrics.rejected.get_or_create(&labels).inc();
            tracing::info!(webhook = webhook.name(), error = %e, "bad review");
            return error(StatusCode::BAD_REQUEST, "BadRequest", &e.to_string());
        }
    };
    let req = &answer.request;
    let response = &answer.review.response;
    let patched = response.patch.is_some();
    let outcome = match (response.allowed, patched) {
        (false, _) => Outcome::Denied,
        (true, true) => Outcome::Patched,
        (true, false) => Outcome::Allowed,
    };
    let labels = ReviewLabels {
        webhook: webhook.name().into(),
        operation: req.operation.as_str().into(),
        outcome,
    };
    app.metrics.reviews.get_or_create(&labels).inc();
    if let Some(refusal) = &answer.decision.budget_refusal {
        let labels = BudgetLabels {
            kind_namespace_name: refusal.kind_namespace_name.clone(),
            username: req
                .user_info
                .get("username")
                .and_then(serde_json::Value::as_str)
                .unwrap_or_default()
                .to_string(),
        };
        app.metrics.pod_unavailable_budget.get_or_create(&labels).inc();
    }
    for name in &answer.decision.skipped_sidecar_sets {
        let labels = SidecarSetLabels {
            sidecarset: name.clone(),
        };
        app.metrics.sidecarset_skipped.get_or_create(&labels).inc();
    }
    app.events.record(&answer.decision.events);
    app.metrics
        .duration
        .get_or_create(&WebhookLabels {
            webhook: webhook.name().into(),
        })
        .observe(answer.elapsed.as_secs_f64());
    macro_rules! review_event {
        ($level:ident, $($rest:tt)*) => {
            tracing::$level!(
                webhook = webhook.name(),
                uid = req.uid.as_str(),
                kind = req.kind.kind.as_str(),
                namespace = req.namespace.as_str(),
                name = req.name.as_str(),
                operation = req.operation.as_str(),
                $($rest)*
            )
        };
    }
    match &response.status {
        Some(status) => review_event!(info, code = status.code, reason = %status.reason, "denied"),
        None => review_event!(debug, patched, "allowed"),
    }
    Json(answer.review).into_response()
}

async fn convert(
    State(app): State<Arc<App>>,
    headers: HeaderMap,
    body: Result<Bytes, BytesRejection>,
) -> Response {
    let body = match read_body(&app, "/convert", &headers, body) {
        Ok(body) => body,
        Err(response) => return *response,
    };
    match kruise_webhooks::convert::convert_review(&body) {
        Ok(review) => Json(review).into_response(),
        Err(e) => {
            tracing::info!(error = %e, "bad conversion review");
            error(StatusCode::BAD_REQUEST, "BadRequest", &e.to_string())
        }
    }
}
