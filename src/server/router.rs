//! The HTTPS router: one POST route per webhook path plus `/convert`; JSON errors for everything that
//! is not a usable review.

use std::{sync::Arc, time::Duration};

use axum::{
    Json, Router,
    body::{Body, BodyDataStream, Bytes},
    extract::State,
    http::{HeaderMap, Method, StatusCode, Uri, Version, header},
    response::{IntoResponse, Response},
    routing::post,
};
use futures::StreamExt as _;
use kruise_webhooks::Webhook;
use serde_json::json;
use tokio::sync::Semaphore;

use crate::cli::ServingLimits;

use super::{
    App,
    metrics::{BudgetLabels, Outcome, RejectLabels, ReviewLabels, SidecarSetLabels, WebhookLabels},
};

/// Largest request body accepted: kube-apiserver can send ~7 MiB reviews (object + oldObject).
pub const MAX_BODY_BYTES: usize = 8 * 1024 * 1024;

/// Bounds on each request: a body-read timeout, and how many are handled at once.
pub struct RequestLimits {
    /// Time to receive a body once the header is in.
    pub body_read_timeout: Duration,
    /// One permit per request being handled; none left means 503 at once.
    slots: Semaphore,
    max_concurrent: usize,
    /// One permit per byte of request bodies held, all requests together; none left means 503.
    body_bytes: Semaphore,
    max_body_bytes: usize,
}

impl RequestLimits {
    /// The limits of `--body-read-timeout` and `--max-concurrent-requests`.
    pub fn new(limits: &ServingLimits) -> Self {
        RequestLimits {
            body_read_timeout: limits.body_read_timeout,
            slots: Semaphore::new(limits.max_concurrent_requests),
            max_concurrent: limits.max_concurrent_requests,
            body_bytes: Semaphore::new(limits.max_buffered_body_bytes.min(Semaphore::MAX_PERMITS)),
            max_body_bytes: limits.max_buffered_body_bytes,
        }
    }
}

/// The webhook router.
pub fn router(app: Arc<App>) -> Router {
    let mut router = Router::new();
    for &webhook in Webhook::ALL {
        router = router.route(
            webhook.path(),
            post(
                move |State(app): State<Arc<App>>, version: Version, headers: HeaderMap, body: Body| {
                    review(app, webhook, version, headers, body)
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
        .method_not_allowed_fallback(|method: Method, uri: Uri| async move {
            error(
                StatusCode::METHOD_NOT_ALLOWED,
                "MethodNotAllowed",
                &format!("{method} is not allowed on {}: send POST", uri.path()),
            )
        })
        .with_state(app)
}

/// A `metav1.Status`-shaped JSON error.
pub fn error(code: StatusCode, reason: &str, message: &str) -> Response {
    let body = status_body(code.as_u16(), reason, message);
    (code, [(header::CONTENT_TYPE, "application/json")], body).into_response()
}

/// The bytes of a failed `metav1.Status`.
pub fn status_body(code: u16, reason: &str, message: &str) -> Vec<u8> {
    let body = json!({
        "apiVersion": "v1", "kind": "Status", "status": "Failure",
        "code": code, "reason": reason, "message": message,
    });
    body.to_string().into_bytes()
}

/// Bytes of request bodies held by one request, counted in the server-wide budget until dropped.
struct Held<'a> {
    permit: Option<tokio::sync::SemaphorePermit<'a>>,
    gauge: prometheus_client::metrics::gauge::Gauge,
}

impl<'a> Held<'a> {
    /// Adds `n` bytes, if the budget has them.
    fn take(&mut self, budget: &'a Semaphore, n: usize) -> bool {
        let Ok(more) = u32::try_from(n).map(|n| budget.try_acquire_many(n)) else {
            return false;
        };
        let Ok(more) = more else {
            return false;
        };
        self.gauge.inc_by(n as i64);
        match &mut self.permit {
            Some(permit) => permit.merge(more),
            None => self.permit = Some(more),
        }
        true
    }
}

impl Drop for Held<'_> {
    fn drop(&mut self) {
        if let Some(permit) = &self.permit {
            self.gauge.dec_by(permit.num_permits() as i64);
        }
    }
}

/// Checks the content type, takes a request slot and reads the body; `Err` is the response to send.
/// The body's bytes count in `--max-buffered-body-bytes` until the returned [`Held`] is dropped.
/// An HTTP/1.1 body shed for the budget is drained after the 503 ([`drain`]).
async fn read_body<'a>(
    app: &'a App,
    path: &str,
    version: Version,
    headers: &HeaderMap,
    body: Body,
) -> Result<(Bytes, Held<'a>), Box<Response>> {
    let reject = |code: StatusCode, reason: &str, message: &str| {
        app.metrics
            .rejected
            .get_or_create(&RejectLabels {
                path: path.into(),
                code: code.as_u16(),
            })
            .inc();
        Box::new(error(code, reason, message))
    };
    let content_type = headers
        .get(header::CONTENT_TYPE)
        .and_then(|v| v.to_str().ok())
        .unwrap_or("");
    let media_type = content_type.split(';').next().unwrap_or("").trim();
    if !media_type.eq_ignore_ascii_case("application/json") {
        return Err(reject(
            StatusCode::UNSUPPORTED_MEDIA_TYPE,
            "UnsupportedMediaType",
            &format!("content type {content_type:?} is not supported: send application/json"),
        ));
    }
    if headers
        .get(header::CONTENT_ENCODING)
        .is_some_and(|v| v != "identity")
    {
        return Err(reject(
            StatusCode::UNSUPPORTED_MEDIA_TYPE,
            "UnsupportedMediaType",
            "content encodings are not supported",
        ));
    }
    let declared = headers
        .get(header::CONTENT_LENGTH)
        .and_then(|v| v.to_str().ok())
        .and_then(|v| v.parse::<u64>().ok());
    if let Some(declared) = declared.filter(|&n| n > MAX_BODY_BYTES as u64) {
        return Err(reject(
            StatusCode::PAYLOAD_TOO_LARGE,
            "RequestEntityTooLarge",
            &format!("declared Content-Length {declared} is larger than {MAX_BODY_BYTES} bytes"),
        ));
    }
    let timeout = app.requests.body_read_timeout;
    let mut held = Held {
        permit: None,
        gauge: app.metrics.buffered_body_bytes.clone(),
    };
    let budget = &app.requests.body_bytes;
    match tokio::time::timeout(timeout, collect(body, declared, |n| held.take(budget, n))).await {
        Ok(Ok(bytes)) => Ok((bytes, held)),
        Ok(Err(BodyError::OverBudget { rest, read })) => {
            if version < Version::HTTP_2 {
                drain(rest, read, timeout);
            }
            tracing::warn!(
                path,
                limit = app.requests.max_body_bytes,
                "buffered request bytes limit reached; shedding"
            );
            Err(reject(
                StatusCode::SERVICE_UNAVAILABLE,
                "ServiceUnavailable",
                &format!(
                    "the request bodies being handled hold {} bytes, the limit; try again",
                    app.requests.max_body_bytes
                ),
            ))
        }
        Ok(Err(BodyError::TooLarge)) => Err(reject(
            StatusCode::PAYLOAD_TOO_LARGE,
            "RequestEntityTooLarge",
            &format!("request body is larger than {MAX_BODY_BYTES} bytes"),
        )),
        Ok(Err(BodyError::Failed(cause))) => Err(reject(
            StatusCode::BAD_REQUEST,
            "BadRequest",
            &format!("cannot read the request body: {cause}"),
        )),
        Err(_) => Err(reject(
            StatusCode::REQUEST_TIMEOUT,
            "Timeout",
            &format!("request body not received within {} s", timeout.as_secs_f64()),
        )),
    }
}

/// Why a body could not be read.
enum BodyError {
    TooLarge,
    /// The server-wide budget of buffered bytes is spent: what is still to come of the body, and how
    /// many bytes of it were read.
    OverBudget {
        rest: BodyDataStream,
        read: usize,
    },
    Failed(String),
}

/// Reads and drops, in the background, what is still to come of an HTTP/1.1 body shed with a 503 — at
/// most [`MAX_BODY_BYTES`] in all and for at most `within`. A connection closed while its client is
/// still sending is reset, and the reset loses the 503 the client was sent (Go's HTTP/1.1 transport,
/// kube-apiserver's, and hyper's alike see a broken connection instead); read to its end, the body
/// leaves the connection clean, even reusable. Nothing is buffered. h2 needs none of this: the stream
/// is ended with `RST_STREAM(NO_ERROR)` after the answer, which tells the client to stop sending and
/// keep the answer (RFC 9113, 8.1).
fn drain(mut rest: BodyDataStream, mut read: usize, within: Duration) {
    tokio::spawn(async move {
        let to_the_end = async {
            while let Some(Ok(chunk)) = rest.next().await {
                read += chunk.len();
                if read > MAX_BODY_BYTES {
                    break;
                }
            }
        };
        let _ = tokio::time::timeout(within, to_the_end).await;
    });
}

/// The whole body, at most [`MAX_BODY_BYTES`]; `take(n)` reserves each chunk's bytes as it arrives.
async fn collect(
    body: Body,
    declared: Option<u64>,
    mut take: impl FnMut(usize) -> bool,
) -> Result<Bytes, BodyError> {
    let mut stream = body.into_data_stream();
    // Sized by what arrives, not by what is declared: a stalled upload holds only what it sent.
    let mut buffer = Vec::with_capacity(declared.unwrap_or(0).min(64 * 1024) as usize);
    while let Some(chunk) = stream.next().await {
        let chunk = chunk.map_err(|e| BodyError::Failed(e.to_string()))?;
        if buffer.len() + chunk.len() > MAX_BODY_BYTES {
            return Err(BodyError::TooLarge);
        }
        if !take(chunk.len()) {
            let read = buffer.len() + chunk.len();
            return Err(BodyError::OverBudget { rest: stream, read });
        }
        buffer.extend_from_slice(&chunk);
    }
    Ok(Bytes::from(buffer))
}

/// Bodies from this size on are decided on a blocking thread: a wide object takes long enough to
/// decode and decide to delay every other review sharing its async worker.
pub const LARGE_BODY_BYTES: usize = 256 * 1024;

/// [`crate::admission::Admission::answer`], off the async workers for a large body.
async fn decide(
    app: &Arc<App>,
    webhook: Webhook,
    body: Bytes,
) -> Result<crate::admission::Answer, crate::admission::AnswerError> {
    if body.len() < LARGE_BODY_BYTES {
        return app.admission.answer(webhook, &body).await;
    }
    let (app, runtime) = (app.clone(), tokio::runtime::Handle::current());
    let blocking =
        tokio::task::spawn_blocking(move || runtime.block_on(app.admission.answer(webhook, &body)));
    match blocking.await {
        Ok(answer) => answer,
        // A panic in the decision: the same as one on the async worker.
        Err(e) => std::panic::resume_unwind(e.into_panic()),
    }
}

/// A request slot, or the 503 to answer when every slot is taken.
fn take_slot<'a>(app: &'a App, path: &str) -> Result<tokio::sync::SemaphorePermit<'a>, Box<Response>> {
    app.requests.slots.try_acquire().map_err(|_| {
        let labels = RejectLabels {
            path: path.into(),
            code: 503,
        };
        app.metrics.rejected.get_or_create(&labels).inc();
        tracing::warn!(
            path,
            limit = app.requests.max_concurrent,
            "request limit reached; shedding"
        );
        Box::new(error(
            StatusCode::SERVICE_UNAVAILABLE,
            "ServiceUnavailable",
            &format!(
                "{} requests are being handled; try again",
                app.requests.max_concurrent
            ),
        ))
    })
}

async fn review(
    app: Arc<App>,
    webhook: Webhook,
    version: Version,
    headers: HeaderMap,
    body: Body,
) -> Response {
    // No per-review span: its field bookkeeping ran on every review though few reviews log anything.
    // The log lines carry the fields themselves.
    let _slot = match take_slot(&app, webhook.path()) {
        Ok(slot) => slot,
        Err(response) => return *response,
    };
    let (body, _held) = match read_body(&app, webhook.path(), version, &headers, body).await {
        Ok(read) => read,
        Err(response) => return *response,
    };
    let answer = match decide(&app, webhook, body).await {
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

async fn convert(State(app): State<Arc<App>>, version: Version, headers: HeaderMap, body: Body) -> Response {
    let _slot = match take_slot(&app, "/convert") {
        Ok(slot) => slot,
        Err(response) => return *response,
    };
    let (body, _held) = match read_body(&app, "/convert", version, &headers, body).await {
        Ok(read) => read,
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
