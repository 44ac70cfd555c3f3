//! A minimal in-memory API server for kube `Client`s: GET / POST / PUT of any object path, with
//! resourceVersion preconditions (409 Conflict), 409 AlreadyExists on create and 404 NotFound — enough for
//! the certificate Secret, caBundle publishing and Lease election. It is test support for what touches the
//! API directly; the playground is the full simulation.

use std::{
    collections::BTreeMap,
    convert::Infallible,
    sync::{Arc, Mutex},
};

use bytes::Bytes;
use http::{Method, Request, Response, StatusCode};
use http_body_util::{BodyExt, Full};
use serde_json::{Value, json};

/// Stored objects by path (e.g. `/api/v1/namespaces/ns/secrets/name`).
#[derive(Clone, Default)]
pub struct FakeApi {
    pub objects: Arc<Mutex<BTreeMap<String, Value>>>,
    pub writes: Arc<Mutex<Vec<(Method, String)>>>,
    /// Writes to these paths fail with 500 (an unavailable API, a webhook blocking updates, …).
    pub failing: Arc<Mutex<std::collections::BTreeSet<String>>>,
}

fn status(code: StatusCode, reason: &str, message: &str) -> Response<Full<Bytes>> {
    let body = json!({"kind": "Status", "apiVersion": "v1", "status": "Failure", "reason": reason,
        "message": message, "code": code.as_u16()});
    Response::builder()
        .status(code)
        .body(Full::new(Bytes::from(body.to_string())))
        .unwrap()
}

fn ok(code: StatusCode, object: &Value) -> Response<Full<Bytes>> {
    Response::builder()
        .status(code)
        .body(Full::new(Bytes::from(object.to_string())))
        .unwrap()
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

    /// Stores an object at `path` with resourceVersion 1.
    pub fn put(&self, path: &str, mut object: Value) {
        object["metadata"]["resourceVersion"] = json!("1");
        self.objects.lock().unwrap().insert(path.to_string(), object);
    }

    /// The object at `path`.
    pub fn get(&self, path: &str) -> Option<Value> {
        self.objects.lock().unwrap().get(path).cloned()
    }

    async fn handle(&self, request: Request<kube::client::Body>) -> Response<Full<Bytes>> {
        let (parts, body) = request.into_parts();
        let path = parts.uri.path().to_string();
        let body = body.collect().await.map(|b| b.to_bytes()).unwrap_or_default();
        let mut objects = self.objects.lock().unwrap();
        if parts.method != Method::GET && self.failing.lock().unwrap().contains(&path) {
            return status(
                StatusCode::INTERNAL_SERVER_ERROR,
                "InternalError",
                "injected failure",
            );
        }
        match parts.method {
            Method::GET => match objects.get(&path) {
                Some(object) => ok(StatusCode::OK, object),
                None => status(StatusCode::NOT_FOUND, "NotFound", &format!("{path} not found")),
            },
            Method::POST => {
                let mut object: Value = serde_json::from_slice(&body).unwrap();
                let name = object["metadata"]["name"].as_str().unwrap().to_string();
                let object_path = format!("{path}/{name}");
                if objects.contains_key(&object_path) {
                    return status(
                        StatusCode::CONFLICT,
                        "AlreadyExists",
                        &format!("{name} already exists"),
                    );
                }
                object["metadata"]["resourceVersion"] = json!("1");
                objects.insert(object_path.clone(), object.clone());
                self.writes.lock().unwrap().push((Method::POST, object_path));
                ok(StatusCode::CREATED, &object)
            }
            Method::PUT => {
                let mut object: Value = serde_json::from_slice(&body).unwrap();
                let Some(current) = objects.get(&path) else {
                    return status(StatusCode::NOT_FOUND, "NotFound", &format!("{path} not found"));
                };
                let current_rv = current["metadata"]["resourceVersion"]
                    .as_str()
                    .unwrap_or("0")
                    .to_string();
                if object["metadata"]["resourceVersion"].as_str() != Some(current_rv.as_str()) {
                    return status(StatusCode::CONFLICT, "Conflict", "the object has been modified");
                }
                let next = current_rv.parse::<u64>().unwrap() + 1;
                object["metadata"]["resourceVersion"] = json!(next.to_string());
                objects.insert(path.clone(), object.clone());
                self.writes.lock().unwrap().push((Method::PUT, path));
                ok(StatusCode::OK, &object)
            }
            _ => status(
                StatusCode::METHOD_NOT_ALLOWED,
                "MethodNotAllowed",
                "not supported by the fake",
            ),
        }
    }
}
