//! `?watch=true`: a stream of newline-delimited `{"type": ..., "object": ...}` events.
//!
//! - `resourceVersion` unset or `"0"`: synthetic ADDED events for the current objects, then changes;
//! - `resourceVersion=N`: the retained events after N, then changes; N older than the retained
//!   history answers 200 with one ERROR event carrying a 410 `Expired` Status, as the watch cache does;
//! - `sendInitialEvents=true`: the initial ADDED events, then a BOOKMARK annotated
//!   `k8s.io/initial-events-end: "true"`;
//! - `allowWatchBookmarks=true`: a BOOKMARK every `bookmark_interval` (kube-apiserver: about a minute);
//! - `timeoutSeconds`: the stream ends after that long; every stream ends at
//!   [`crate::store::Store::expire_watches`] (a test's apiserver restart);
//! - label and field selectors filter; an object leaving the selection is a DELETED event.

use std::sync::Arc;
use std::time::Duration;

use axum::{
    body::Body,
    http::{StatusCode, header},
    response::Response,
};
use serde_json::{Value, json};
use tokio::sync::broadcast::error::RecvError;

use crate::api::{Api, key};
use crate::error::ApiError;
use crate::handlers::select;
use crate::meta;
use crate::request::{ApiPath, Request};
use crate::resources::ResourceDef;
use crate::selectors::{FieldSelector, LabelSelector};
use crate::store::{Event, EventType};

fn line(kind: &str, object: &Value) -> Result<bytes::Bytes, std::convert::Infallible> {
    let mut s = json!({"type": kind, "object": object}).to_string();
    s.push('\n');
    Ok(bytes::Bytes::from(s))
}

struct Filter {
    ns: Option<String>,
    labels: LabelSelector,
    fields: FieldSelector,
}

impl Filter {
    fn matches(&self, obj: &Value) -> bool {
        self.ns.as_deref().is_none_or(|n| n == meta::namespace(obj))
            && self.labels.matches(&meta::labels(obj))
            && self.fields.matches(obj)
    }

    /// The event a watcher with this filter sees, if any.
    fn view(&self, e: &Event) -> Option<EventType> {
        let now = e.kind != EventType::Deleted && self.matches(&e.object);
        let before = e.old.as_ref().is_some_and(|o| self.matches(o));
        match (e.kind, before, now) {
            (EventType::Deleted, true, _) => Some(EventType::Deleted),
            (EventType::Added, _, true) => Some(EventType::Added),
            (EventType::Modified, true, true) => Some(EventType::Modified),
            (EventType::Modified, false, true) => Some(EventType::Added),
            (EventType::Modified, true, false) => Some(EventType::Deleted),
            _ => None,
        }
    }
}

/// Serves a watch.
pub fn serve(api: Arc<Api>, def: ResourceDef, p: ApiPath, req: Request) -> Result<Response, ApiError> {
    let q = &req.query;
    let filter = Filter {
        ns: p.namespace.clone(),
        labels: LabelSelector::parse(q.get("labelSelector").map(String::as_str).unwrap_or_default())?,
        fields: FieldSelector::parse(
            q.get("fieldSelector").map(String::as_str).unwrap_or_default(),
            &def.kind,
        )?,
    };
    let rv_param = q.get("resourceVersion").map(String::as_str).unwrap_or_default();
    let send_initial = q.get("sendInitialEvents").is_some_and(|s| s == "true");
    let bookmarks = q.get("allowWatchBookmarks").is_some_and(|s| s == "true");
    let timeout = q
        .get("timeoutSeconds")
        .and_then(|t| t.parse::<u64>().ok())
        .map(Duration::from_secs);
    let from: Option<u64> = match rv_param {
        "" | "0" => None,
        n => Some(
            n.parse()
                .map_err(|_| ApiError::bad_request(format!("invalid resource version: {n}")))?,
        ),
    };
    let from = if send_initial { None } else { from };
    let mut initial = vec![];
    let (start, replay, mut rx) = match from {
        None => {
            let (items, rv) = select(&api, &def, &p, &req)?;
            let (replay, rx) = api
                .store
                .watch(&key(&def), rv)
                .map_err(|e| ApiError::expired(e.to_string()))?;
            initial = items;
            (rv, replay, rx)
        }
        Some(n) => match api.store.watch(&key(&def), n) {
            Ok((replay, rx)) => (n, replay, rx),
            Err(too_old) => {
                let status = ApiError::expired(too_old.to_string()).status();
                return Ok(stream_response(Body::from(
                    line("ERROR", &status).unwrap_or_default(),
                )));
            }
        },
    };
    let interval = api.bookmark_interval;
    let view = if req.wants_table() {
        View::Table
    } else if req.wants_metadata() {
        View::Metadata
    } else {
        View::Object
    };
    let res_key = key(&def);
    let mut expired = api.store.watches_expired();
    let stream = async_stream::stream! {
        let deadline = timeout.map(|t| tokio::time::Instant::now() + t);
        let mut last_rv = start;
        for obj in initial {
            match render(&api, &def, obj, view).await {
                Ok(o) => yield line("ADDED", &o),
                Err(e) => { yield line("ERROR", &e.status()); return; }
            }
        }
        if send_initial {
            let mark = json!({"kind": def.kind, "apiVersion": def.api_version(), "metadata": {
                "resourceVersion": start.to_string(), "annotations": {"k8s.io/initial-events-end": "true"}}});
            yield line("BOOKMARK", &mark);
        }
        for e in replay {
            last_rv = e.rv;
            if let Some(kind) = filter.view(&e) {
                match render(&api, &def, e.object.clone(), view).await {
                    Ok(o) => yield line(kind.as_str(), &o),
                    Err(e) => { yield line("ERROR", &e.status()); return; }
                }
            }
        }
        let mut ticker = tokio::time::interval_at(tokio::time::Instant::now() + interval, interval);
        loop {
            let sleep_until = deadline.unwrap_or_else(|| tokio::time::Instant::now() + Duration::from_secs(86400));
            tokio::select! {
                _ = tokio::time::sleep_until(sleep_until) => break,
                _ = expired.changed() => break,
                _ = ticker.tick(), if bookmarks => {
                    let mark = json!({"kind": def.kind, "apiVersion": def.api_version(),
                        "metadata": {"resourceVersion": last_rv.to_string()}});
                    yield line("BOOKMARK", &mark);
                }
                e = rx.recv() => match e {
                    Ok(e) => {
                        if e.key == res_key && e.rv > last_rv
                            && let Some(kind) = filter.view(&e)
                        {
                            match render(&api, &def, e.object.clone(), view).await {
                                Ok(o) => yield line(kind.as_str(), &o),
                                Err(e) => { yield line("ERROR", &e.status()); break; }
                            }
                        }
                        // The channel is ordered: everything up to here has been seen.
                        last_rv = last_rv.max(e.rv);
                    }
                    Err(RecvError::Lagged(_)) | Err(RecvError::Closed) => break,
                },
            }
        }
    };
    Ok(stream_response(Body::from_stream(stream)))
}

/// How events carry their object.
#[derive(Debug, Clone, Copy)]
enum View {
    Object,
    /// A one-row Table (`kubectl get -w`).
    Table,
    /// `PartialObjectMetadata` (metadata watchers).
    Metadata,
}

/// An event's object as the watcher asked for it; custom resources in the watched version (a
/// conversion failure ends the watch with an ERROR event, as kube-apiserver's watch encoder).
async fn render(api: &Api, def: &ResourceDef, obj: Value, view: View) -> Result<Value, ApiError> {
    Ok(match view {
        View::Object => api.present(def, obj).await?,
        View::Metadata => crate::table::partial(&obj),
        View::Table => {
            let rv = meta::resource_version(&obj).to_string();
            crate::table::table(def, &[api.present(def, obj).await?], &rv)
        }
    })
}

fn stream_response(body: Body) -> Response {
    Response::builder()
        .status(StatusCode::OK)
        .header(header::CONTENT_TYPE, "application/json")
        .body(body)
        .unwrap_or_default()
}
