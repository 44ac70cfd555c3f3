//! A minimal in-memory API server for kube `Client`s:
//!
//! - GET / POST / PUT / PATCH / DELETE of any object path, with resourceVersion preconditions (409
//!   Conflict), 409 AlreadyExists on create and 404 NotFound;
//! - the `status` subresource (PUT and PATCH change only `.status`);
//! - PATCH as JSON merge patch; a strategic merge patch is treated the same, except that lists with a
//!   merge key (`conditions` by `type`, `containers`/`env`/`volumes` by `name`, `ownerReferences` by
//!   `uid`) merge element by element and honour `$patch: delete`;
//! - GET of a collection (`/api/v1/pods`, `/api/v1/namespaces/ns/pods`, …) as a List carrying the current
//!   resourceVersion, and `?watch=true` as a held-open stream of the events after the requested
//!   resourceVersion, so kube-runtime watchers list and then wait for changes.
//!
//! resourceVersions come from one counter, as etcd's do. It is test support for what touches the API
//! directly; the playground is the full simulation.

#![allow(dead_code)]

use std::{
    collections::{BTreeMap, BTreeSet},
    convert::Infallible,
    sync::{Arc, Mutex},
};

use bytes::Bytes;
use futures::StreamExt as _;
use http::{Method, Request, Response, StatusCode};
use http_body_util::{BodyExt, Full, StreamBody, combinators::UnsyncBoxBody};
use serde_json::{Value, json};

type Body = UnsyncBoxBody<Bytes, Infallible>;

/// Runs before an injected conflict is returned.
pub type ConflictHook = Box<dyn Fn(&FakeApi) + Send>;

/// One change, as a watch reports it.
#[derive(Clone, Debug)]
pub struct Event {
    pub resource_version: u64,
    pub path: String,
    pub kind: &'static str,
    pub object: Value,
}

#[derive(Default)]
pub struct State {
    /// Stored objects by path (e.g. `/api/v1/namespaces/ns/secrets/name`).
    pub objects: BTreeMap<String, Value>,
    pub events: Vec<Event>,
    pub resource_version: u64,
}

/// The fake API server; clones share the state.
#[derive(Clone)]
pub struct FakeApi {
    pub objects: Arc<Mutex<BTreeMap<String, Value>>>,
    pub writes: Arc<Mutex<Vec<(Method, String)>>>,
    /// Writes to these paths fail with 500 (an unavailable API, a webhook blocking updates, …).
    pub failing: Arc<Mutex<BTreeSet<String>>>,
    /// Writes to these paths fail once each with 409 Conflict, after the hook below has run.
    pub conflict_once: Arc<Mutex<BTreeSet<String>>>,
    /// Runs before a write to a path in `conflict_once` is refused (another writer getting in first).
    pub before_conflict: Arc<Mutex<Option<ConflictHook>>>,
    events: Arc<Mutex<Vec<Event>>>,
    version: Arc<Mutex<u64>>,
    changed: Arc<tokio::sync::watch::Sender<u64>>,
    /// Held through each write request: a resourceVersion precondition is checked and the write made
    /// atomically, as etcd's compare-and-swap does.
    serial: Arc<Mutex<()>>,
}

impl Default for FakeApi {
    fn default() -> Self {
        FakeApi {
            objects: Arc::default(),
            writes: Arc::default(),
            failing: Arc::default(),
            conflict_once: Arc::default(),
            before_conflict: Arc::default(),
            events: Arc::default(),
            version: Arc::default(),
            changed: Arc::new(tokio::sync::watch::channel(0).0),
            serial: Arc::default(),
        }
    }
}

fn full(code: StatusCode, body: String) -> Response<Body> {
    Response::builder()
        .status(code)
        .header("content-type", "application/json")
        .body(Full::new(Bytes::from(body)).boxed_unsync())
        .unwrap()
}

fn status(code: StatusCode, reason: &str, message: &str) -> Response<Body> {
    let body = json!({"kind": "Status", "apiVersion": "v1", "status": "Failure", "reason": reason,
        "message": message, "code": code.as_u16()});
    full(code, body.to_string())
}

fn ok(code: StatusCode, object: &Value) -> Response<Body> {
    full(code, object.to_string())
}

/// A request path taken apart.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ApiPath {
    /// `/api/v1` or `/apis/<group>/<version>`.
    pub prefix: String,
    pub namespace: Option<String>,
    pub resource: String,
    pub name: Option<String>,
    pub subresource: Option<String>,
}

impl ApiPath {
    pub fn parse(path: &str) -> Option<ApiPath> {
        let segments: Vec<&str> = path.trim_matches('/').split('/').collect();
        let (prefix, rest) = match *segments.first()? {
            "api" if segments.len() >= 2 => (format!("/api/{}", segments[1]), &segments[2..]),
            "apis" if segments.len() >= 3 => {
                (format!("/apis/{}/{}", segments[1], segments[2]), &segments[3..])
            }
            _ => return None,
        };
        let get = |i: usize| rest.get(i).map(|s| s.to_string());
        if rest.first() == Some(&"namespaces") && rest.len() >= 3 {
            Some(ApiPath {
                prefix,
                namespace: get(1),
                resource: rest[2].to_string(),
                name: get(3),
                subresource: get(4),
            })
        } else {
            Some(ApiPath {
                prefix,
                namespace: None,
                resource: rest.first()?.to_string(),
                name: get(1),
                subresource: get(2),
            })
        }
    }

    /// The path of the object itself (no subresource).
    pub fn object_path(&self) -> String {
        let mut path = self.collection_path();
        if let Some(name) = &self.name {
            path = format!("{path}/{name}");
        }
        path
    }

    pub fn collection_path(&self) -> String {
        match &self.namespace {
            Some(ns) => format!("{}/namespaces/{ns}/{}", self.prefix, self.resource),
            None => format!("{}/{}", self.prefix, self.resource),
        }
    }

    /// Whether `object` (a path without subresource) is in this collection.
    fn contains(&self, object: &ApiPath) -> bool {
        object.name.is_some()
            && object.prefix == self.prefix
            && object.resource == self.resource
            && (self.namespace.is_none() || self.namespace == object.namespace)
    }
}

/// The merge key of a list a strategic merge patch merges element by element (Kubernetes'
/// `patchMergeKey`), for the lists controllers patch.
fn merge_key(list: &str) -> Option<&'static str> {
    match list {
        "conditions" => Some("type"),
        "containers" | "initContainers" | "ephemeralContainers" | "env" | "volumes" | "readinessGates" => {
            Some(if list == "readinessGates" {
                "conditionType"
            } else {
                "name"
            })
        }
        "ownerReferences" => Some("uid"),
        _ => None,
    }
}

/// RFC 7386 merge, except that a strategic patch merges the lists of [`merge_key`] element by element
/// (`{"$patch": "delete", <key>: …}` removes one).
fn merge(target: &mut Value, patch: &Value, strategic: bool) {
    let Value::Object(patch_map) = patch else {
        *target = patch.clone();
        return;
    };
    if !target.is_object() {
        *target = json!({});
    }
    let target_map = target.as_object_mut().unwrap();
    for (key, value) in patch_map {
        if value.is_null() {
            target_map.remove(key);
        } else if strategic && key.starts_with('$') {
            // Directives (`$setElementOrder/…`, `$retainKeys`) are not modelled.
        } else if let (true, Some(merge_key), Some(items)) = (strategic, merge_key(key), value.as_array()) {
            let mut merged = target_map
                .get(key)
                .and_then(Value::as_array)
                .cloned()
                .unwrap_or_default();
            for item in items {
                let position = merged.iter().position(|c| c[merge_key] == item[merge_key]);
                match (position, item["$patch"].as_str()) {
                    (Some(i), Some("delete")) => _ = merged.remove(i),
                    (None, Some("delete")) => {}
                    (Some(i), _) => merge(&mut merged[i], item, true),
                    (None, _) => merged.push(item.clone()),
                }
            }
            target_map.insert(key.clone(), Value::Array(merged));
        } else {
            merge(
                target_map.entry(key.clone()).or_insert(Value::Null),
                value,
                strategic,
            );
        }
    }
}

fn query_param<'a>(query: &'a str, name: &str) -> Option<&'a str> {
    query
        .split('&')
        .filter_map(|kv| kv.split_once('='))
        .find(|(k, _)| *k == name)
        .map(|(_, v)| v)
}

impl FakeApi {
    /// A kube client talking to this fake.
    pub fn client(&self) -> kube::Client {
        let api = self.clone();
        let service = tower::service_fn(move |request: Request<kube::client::Body>| {
            let api = api.clone();
            async move { Ok::<_, Infallible>(api.handle(request).await) }
        });
        kube::Client::new(service, "default")
    }

    fn next_version(&self) -> u64 {
        let mut version = self.version.lock().unwrap();
        *version += 1;
        *version
    }

    fn record(&self, kind: &'static str, path: &str, object: &Value) {
        let resource_version = object["metadata"]["resourceVersion"]
            .as_str()
            .and_then(|v| v.parse().ok())
            .unwrap_or_else(|| *self.version.lock().unwrap());
        self.events.lock().unwrap().push(Event {
            resource_version,
            path: path.to_string(),
            kind,
            object: object.clone(),
        });
        self.changed.send_replace(resource_version);
    }

    /// Stores (creates or replaces) an object at `path` with a fresh resourceVersion, as another client
    /// would; watchers see it.
    pub fn put(&self, path: &str, mut object: Value) -> Value {
        let version = self.next_version();
        object["metadata"]["resourceVersion"] = json!(version.to_string());
        if object["metadata"]["uid"].is_null() {
            object["metadata"]["uid"] = json!(format!("uid-{}", path.rsplit('/').next().unwrap_or("")));
        }
        let existed = self
            .objects
            .lock()
            .unwrap()
            .insert(path.to_string(), object.clone())
            .is_some();
        self.record(if existed { "MODIFIED" } else { "ADDED" }, path, &object);
        object
    }

    /// Changes the stored object at `path` in place (as another client would), with a fresh
    /// resourceVersion.
    pub fn modify(&self, path: &str, change: impl FnOnce(&mut Value)) -> Value {
        let mut object = self.get(path).expect("object to modify");
        change(&mut object);
        self.put(path, object)
    }

    /// Deletes the object at `path`, as another client would.
    pub fn remove(&self, path: &str) {
        if let Some(mut object) = self.objects.lock().unwrap().remove(path) {
            object["metadata"]["resourceVersion"] = json!(self.next_version().to_string());
            self.record("DELETED", path, &object);
        }
    }

    /// The object at `path`.
    pub fn get(&self, path: &str) -> Option<Value> {
        self.objects.lock().unwrap().get(path).cloned()
    }

    /// The writes made so far to `path` (with any subresource), by method.
    pub fn writes_to(&self, path: &str) -> Vec<Method> {
        self.writes
            .lock()
            .unwrap()
            .iter()
            .filter(|(_, p)| p == path)
            .map(|(m, _)| m.clone())
            .collect()
    }

    async fn handle(&self, request: Request<kube::client::Body>) -> Response<Body> {
        let (parts, body) = request.into_parts();
        let path = parts.uri.path().to_string();
        let query = parts.uri.query().unwrap_or("").to_string();
        let body = body.collect().await.map(|b| b.to_bytes()).unwrap_or_default();
        let Some(api_path) = ApiPath::parse(&path) else {
            return status(StatusCode::NOT_FOUND, "NotFound", &format!("{path} not found"));
        };
        // A write's precondition check and the write itself happen under one lock, like etcd's
        // compare-and-swap (nothing below awaits).
        let serial = self.serial.clone();
        let _serial = (parts.method != Method::GET).then(|| serial.lock().unwrap_or_else(|p| p.into_inner()));
        if parts.method != Method::GET && self.failing.lock().unwrap().contains(&path) {
            return status(
                StatusCode::INTERNAL_SERVER_ERROR,
                "InternalError",
                "injected failure",
            );
        }
        if matches!(parts.method, Method::PUT | Method::PATCH)
            && self.conflict_once.lock().unwrap().remove(&path)
        {
            if let Some(hook) = self.before_conflict.lock().unwrap().take() {
                hook(self);
            }
            return status(StatusCode::CONFLICT, "Conflict", "the object has been modified");
        }
        let object_path = api_path.object_path();
        match parts.method {
            Method::GET if api_path.name.is_none() => {
                if query_param(&query, "watch") == Some("true") {
                    let since = query_param(&query, "resourceVersion")
                        .and_then(|v| v.parse().ok())
                        .unwrap_or(0);
                    return self.watch(api_path, since);
                }
                self.list(&api_path)
            }
            Method::GET => match self.get(&object_path) {
                Some(object) => ok(StatusCode::OK, &object),
                None => status(StatusCode::NOT_FOUND, "NotFound", &format!("{path} not found")),
            },
            Method::POST => {
                let mut object: Value = serde_json::from_slice(&body).unwrap();
                let name = object["metadata"]["name"].as_str().unwrap().to_string();
                let object_path = format!("{path}/{name}");
                if self.get(&object_path).is_some() {
                    return status(
                        StatusCode::CONFLICT,
                        "AlreadyExists",
                        &format!("{name} already exists"),
                    );
                }
                if let Some(ns) = &api_path.namespace {
                    object["metadata"]["namespace"] = json!(ns);
                }
                let stored = self.put(&object_path, object);
                self.writes.lock().unwrap().push((Method::POST, object_path));
                ok(StatusCode::CREATED, &stored)
            }
            Method::PUT => {
                let object: Value = serde_json::from_slice(&body).unwrap();
                let Some(current) = self.get(&object_path) else {
                    return status(StatusCode::NOT_FOUND, "NotFound", &format!("{path} not found"));
                };
                if object["metadata"]["resourceVersion"] != current["metadata"]["resourceVersion"] {
                    return status(StatusCode::CONFLICT, "Conflict", "the object has been modified");
                }
                let next = if api_path.subresource.as_deref() == Some("status") {
                    let mut next = current;
                    next["status"] = object["status"].clone();
                    next
                } else {
                    let mut next = object;
                    match current.get("status") {
                        Some(current_status) => next["status"] = current_status.clone(),
                        None => {
                            next.as_object_mut().unwrap().remove("status");
                        }
                    }
                    next
                };
                let stored = self.put(&object_path, next);
                self.writes.lock().unwrap().push((Method::PUT, path));
                ok(StatusCode::OK, &stored)
            }
            Method::PATCH => {
                let patch: Value = serde_json::from_slice(&body).unwrap();
                let Some(current) = self.get(&object_path) else {
                    return status(StatusCode::NOT_FOUND, "NotFound", &format!("{path} not found"));
                };
                let precondition = &patch["metadata"]["resourceVersion"];
                if !precondition.is_null() && *precondition != current["metadata"]["resourceVersion"] {
                    return status(StatusCode::CONFLICT, "Conflict", "the object has been modified");
                }
                let strategic = parts
                    .headers
                    .get("content-type")
                    .and_then(|v| v.to_str().ok())
                    .is_some_and(|v| v.contains("strategic"));
                let mut next = current.clone();
                merge(&mut next, &patch, strategic);
                if api_path.subresource.as_deref() == Some("status") {
                    let mut only_status = current;
                    only_status["status"] = next["status"].clone();
                    next = only_status;
                }
                let stored = self.put(&object_path, next);
                self.writes.lock().unwrap().push((Method::PATCH, path));
                ok(StatusCode::OK, &stored)
            }
            Method::DELETE => {
                let Some(current) = self.get(&object_path) else {
                    return status(StatusCode::NOT_FOUND, "NotFound", &format!("{path} not found"));
                };
                self.remove(&object_path);
                self.writes.lock().unwrap().push((Method::DELETE, path));
                ok(StatusCode::OK, &current)
            }
            _ => status(
                StatusCode::METHOD_NOT_ALLOWED,
                "MethodNotAllowed",
                "not supported by the fake",
            ),
        }
    }

    fn list(&self, collection: &ApiPath) -> Response<Body> {
        let items: Vec<Value> = self
            .objects
            .lock()
            .unwrap()
            .iter()
            .filter(|(path, _)| ApiPath::parse(path).is_some_and(|p| collection.contains(&p)))
            .map(|(_, object)| object.clone())
            .collect();
        let version = *self.version.lock().unwrap();
        ok(
            StatusCode::OK,
            &json!({"kind": "List", "apiVersion": "v1",
                "metadata": {"resourceVersion": version.to_string()}, "items": items}),
        )
    }

    /// The events of `collection` after `since`, then every later one as it happens; never ends.
    fn watch(&self, collection: ApiPath, since: u64) -> Response<Body> {
        let api = self.clone();
        let changed = self.changed.subscribe();
        let stream = futures::stream::unfold((since, changed), move |(mut seen, mut changed)| {
            let api = api.clone();
            let collection = collection.clone();
            async move {
                loop {
                    // Mark the current version seen before looking, so no change is missed.
                    changed.borrow_and_update();
                    let pending: Vec<Event> = api
                        .events
                        .lock()
                        .unwrap()
                        .iter()
                        .filter(|e| e.resource_version > seen)
                        .filter(|e| ApiPath::parse(&e.path).is_some_and(|p| collection.contains(&p)))
                        .cloned()
                        .collect();
                    if let Some(last) = pending.last() {
                        seen = last.resource_version;
                        let mut lines = String::new();
                        for event in pending {
                            lines.push_str(&json!({"type": event.kind, "object": event.object}).to_string());
                            lines.push('\n');
                        }
                        let frame = http_body::Frame::data(Bytes::from(lines));
                        return Some((Ok::<_, Infallible>(frame), (seen, changed)));
                    }
                    if changed.changed().await.is_err() {
                        return None;
                    }
                }
            }
        });
        Response::builder()
            .status(StatusCode::OK)
            .header("content-type", "application/json")
            .body(BodyExt::boxed_unsync(StreamBody::new(stream.boxed())))
            .unwrap()
    }
}
