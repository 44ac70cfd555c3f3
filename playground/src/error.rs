//! API errors, rendered as `meta/v1 Status` bodies shaped exactly like kube-apiserver's
//! (`k8s.io/apimachinery/pkg/api/errors`).

use axum::{
    http::StatusCode,
    response::{IntoResponse, Response},
};
use serde_json::{Map, Value, json};

/// A group and resource, as apimachinery's `schema.GroupResource` prints it (`pods`, `deployments.apps`).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct GroupResource {
    /// API group; empty for the core group.
    pub group: String,
    /// Plural resource name.
    pub resource: String,
}

impl GroupResource {
    /// A group and resource.
    pub fn new(group: &str, resource: &str) -> Self {
        GroupResource {
            group: group.to_string(),
            resource: resource.to_string(),
        }
    }
}

impl std::fmt::Display for GroupResource {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        if self.group.is_empty() {
            write!(f, "{}", self.resource)
        } else {
            write!(f, "{}.{}", self.resource, self.group)
        }
    }
}

/// A failed API request: HTTP code, `reason`, `message` and optional `details`.
#[derive(Debug, Clone, thiserror::Error)]
#[error("{code} {reason}: {message}")]
pub struct ApiError {
    /// HTTP status code (also the Status `code`).
    pub code: u16,
    /// Status `reason` (`NotFound`, `Conflict`, …).
    pub reason: &'static str,
    /// Status `message`.
    pub message: String,
    /// Status `details`, if any.
    pub details: Option<Value>,
}

fn details(gr: &GroupResource, name: &str) -> Value {
    let mut d = Map::new();
    if !name.is_empty() {
        d.insert("name".into(), json!(name));
    }
    if !gr.group.is_empty() {
        d.insert("group".into(), json!(gr.group));
    }
    d.insert("kind".into(), json!(gr.resource));
    Value::Object(d)
}

fn quoted(name: &str) -> String {
    serde_json::to_string(name).unwrap_or_default()
}

impl ApiError {
    fn new(code: u16, reason: &'static str, message: String, details: Option<Value>) -> Self {
        ApiError {
            code,
            reason,
            message,
            details,
        }
    }

    /// 404 `pods "x" not found`.
    pub fn not_found(gr: &GroupResource, name: &str) -> Self {
        let msg = format!("{gr} {} not found", quoted(name));
        Self::new(404, "NotFound", msg, Some(details(gr, name)))
    }

    /// 404 for a path the server does not serve.
    pub fn path_not_found() -> Self {
        let msg = "the server could not find the requested resource".to_string();
        Self::new(404, "NotFound", msg, Some(json!({})))
    }

    /// 409 `pods "x" already exists`.
    pub fn already_exists(gr: &GroupResource, name: &str) -> Self {
        let msg = format!("{gr} {} already exists", quoted(name));
        Self::new(409, "AlreadyExists", msg, Some(details(gr, name)))
    }

    /// 409 `Operation cannot be fulfilled on pods "x": <why>`.
    pub fn conflict(gr: &GroupResource, name: &str, why: &str) -> Self {
        let msg = format!("Operation cannot be fulfilled on {gr} {}: {why}", quoted(name));
        Self::new(409, "Conflict", msg, Some(details(gr, name)))
    }

    /// The Conflict of an update carrying a stale resourceVersion.
    pub fn stale(gr: &GroupResource, name: &str) -> Self {
        Self::conflict(gr, name, OPTIMISTIC_LOCK_MESSAGE)
    }

    /// 403 `pods "x" is forbidden: <why>`.
    pub fn forbidden(gr: &GroupResource, name: &str, why: &str) -> Self {
        let msg = if name.is_empty() {
            format!("{gr} is forbidden: {why}")
        } else {
            format!("{gr} {} is forbidden: {why}", quoted(name))
        };
        Self::new(403, "Forbidden", msg, Some(details(gr, name)))
    }

    /// 400 BadRequest with a free message.
    pub fn bad_request(message: impl Into<String>) -> Self {
        Self::new(400, "BadRequest", message.into(), None)
    }

    /// 405 for a method the path does not route, as kube-apiserver's go-restful error handler
    /// answers (`NewGenericServerResponse(405, …)`).
    pub fn method_not_allowed() -> Self {
        let msg = "the server does not allow this method on the requested resource".to_string();
        Self::new(405, "MethodNotAllowed", msg, Some(json!({})))
    }

    /// 405 `<verb> is not supported on resources of kind "pods"`.
    pub fn method_not_supported(gr: &GroupResource, action: &str) -> Self {
        let msg = format!(
            "{action} is not supported on resources of kind {}",
            quoted(&gr.to_string())
        );
        let mut d = Map::new();
        if !gr.group.is_empty() {
            d.insert("group".into(), json!(gr.group));
        }
        d.insert("kind".into(), json!(gr.resource));
        Self::new(405, "MethodNotAllowed", msg, Some(Value::Object(d)))
    }

    /// 415 for a request body in a media type the endpoint does not accept.
    pub fn unsupported_media_type(accepted: &[&str]) -> Self {
        let msg = format!(
            "the body of the request was in an unknown format - accepted media types include: {}",
            accepted.join(", ")
        );
        Self::new(415, "UnsupportedMediaType", msg, None)
    }

    /// 410 `Expired` (a watch from a resourceVersion older than the retained history).
    pub fn expired(message: impl Into<String>) -> Self {
        Self::new(410, "Expired", message.into(), None)
    }

    /// 422 `Pod "x" is invalid: <field>: <detail>` with one cause per field error.
    pub fn invalid(group: &str, kind: &str, name: &str, errors: &[FieldError]) -> Self {
        let gk = if group.is_empty() {
            kind.to_string()
        } else {
            format!("{kind}.{group}")
        };
        let list: Vec<String> = errors.iter().map(FieldError::render).collect();
        let joined = if list.len() == 1 {
            list[0].clone()
        } else {
            format!("[{}]", list.join(", "))
        };
        let msg = format!("{gk} {} is invalid: {joined}", quoted(name));
        let causes: Vec<Value> = errors
            .iter()
            .map(|e| json!({"reason": e.kind, "message": e.body(), "field": e.field}))
            .collect();
        let mut d = Map::new();
        if !name.is_empty() {
            d.insert("name".into(), json!(name));
        }
        if !group.is_empty() {
            d.insert("group".into(), json!(group));
        }
        d.insert("kind".into(), json!(kind));
        d.insert("causes".into(), Value::Array(causes));
        Self::new(422, "Invalid", msg, Some(Value::Object(d)))
    }

    /// 500 `Internal error occurred: <why>`.
    pub fn internal(why: impl std::fmt::Display) -> Self {
        let why = why.to_string();
        let msg = format!("Internal error occurred: {why}");
        Self::new(
            500,
            "InternalError",
            msg,
            Some(json!({"causes": [{"message": why}]})),
        )
    }

    /// Adds a cause to `details.causes`.
    pub fn with_cause(mut self, kind: &str, message: &str, field: &str) -> Self {
        let details = self.details.get_or_insert_with(|| json!({}));
        if let Some(map) = details.as_object_mut() {
            let causes = map.entry("causes").or_insert_with(|| json!([]));
            if let Some(list) = causes.as_array_mut() {
                list.push(json!({"type": kind, "message": message, "field": field}));
            }
        }
        self
    }

    /// The `meta/v1 Status` body.
    pub fn status(&self) -> Value {
        let mut s = json!({
            "kind": "Status", "apiVersion": "v1", "metadata": {}, "status": "Failure",
            "message": self.message, "reason": self.reason,
        });
        if let Some(d) = &self.details {
            s["details"] = d.clone();
        }
        s["code"] = json!(self.code);
        s
    }
}

/// The message of a Conflict on a stale resourceVersion.
pub const OPTIMISTIC_LOCK_MESSAGE: &str =
    "the object has been modified; please apply your changes to the latest version and try again";

/// One field error of a 422 Invalid (`field.Error`).
#[derive(Debug, Clone)]
pub struct FieldError {
    /// `FieldValueRequired`, `FieldValueInvalid`, …
    pub kind: &'static str,
    /// The field path (`metadata.name`).
    pub field: String,
    /// What is wrong.
    pub detail: String,
}

impl FieldError {
    /// `Required value` error.
    pub fn required(field: &str, detail: &str) -> Self {
        FieldError {
            kind: "FieldValueRequired",
            field: field.into(),
            detail: detail.into(),
        }
    }

    /// `Invalid value` error; `value` is rendered as JSON.
    pub fn invalid(field: &str, value: &Value, detail: &str) -> Self {
        FieldError {
            kind: "FieldValueInvalid",
            field: field.into(),
            detail: format!("Invalid value: {value}: {detail}"),
        }
    }

    /// `Forbidden` error.
    pub fn forbidden(field: &str, detail: &str) -> Self {
        FieldError {
            kind: "FieldValueForbidden",
            field: field.into(),
            detail: detail.into(),
        }
    }

    /// A field error of another kind whose detail is already rendered (`Unsupported value: …`).
    pub fn other(kind: &'static str, field: &str, rendered: String) -> Self {
        FieldError {
            kind,
            field: field.into(),
            detail: rendered,
        }
    }

    fn body(&self) -> String {
        let with = |t: &str| match self.detail.as_str() {
            "" => t.to_string(),
            d => format!("{t}: {d}"),
        };
        match self.kind {
            "FieldValueRequired" => with("Required value"),
            "FieldValueForbidden" => with("Forbidden"),
            _ => self.detail.clone(),
        }
    }

    fn render(&self) -> String {
        format!("{}: {}", self.field, self.body())
    }
}

impl IntoResponse for ApiError {
    fn into_response(self) -> Response {
        let code = StatusCode::from_u16(self.code).unwrap_or(StatusCode::INTERNAL_SERVER_ERROR);
        crate::response::json_response(code, &self.status())
    }
}

/// Errors starting the playground.
#[derive(Debug, thiserror::Error)]
pub enum StartError {
    /// The serving certificate could not be generated.
    #[error("cannot generate the serving certificate: {0}")]
    Certificate(#[from] kruise_certs::CertError),
    /// rustls refused the certificate.
    #[error("cannot configure TLS: {0}")]
    Tls(#[from] rustls::Error),
    /// The certificate PEM could not be parsed.
    #[error("cannot read the serving certificate: {0}")]
    Pem(String),
    /// The listener could not bind or start.
    #[error("cannot listen: {0}")]
    Io(#[from] std::io::Error),
    /// The server stopped before it was listening.
    #[error("the server stopped before listening")]
    NotListening,
    /// The container runtime of the CRI kubelet does not answer.
    #[error("container runtime: {0}")]
    Runtime(#[from] kruise_cri::ConnectError),
}

/// Errors building a client or kubeconfig for a running playground.
#[derive(Debug, thiserror::Error)]
pub enum ClientError {
    /// The kubeconfig could not be parsed by kube.
    #[error("invalid kubeconfig: {0}")]
    Kubeconfig(#[from] kube::config::KubeconfigError),
    /// kube refused to build a client.
    #[error("cannot build a client: {0}")]
    Client(#[from] kube::Error),
    /// The kubeconfig could not be written.
    #[error("cannot write the kubeconfig: {0}")]
    Io(#[from] std::io::Error),
}
