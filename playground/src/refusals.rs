//! Test hook: requests refused before any handler sees them, reads and watches included, as
//! kube-apiserver refuses them for reasons outside the request itself: API Priority and Fairness
//! (429 `TooManyRequests` with a `Retry-After` header) or a client without the RBAC permission
//! (403 `Forbidden`); and watch streams that go silent (a half-open connection: headers sent,
//! then nothing, never closed). kube-apiserver has no such switch; tests arm rules on
//! [`crate::Api::refusals`].

use std::sync::Mutex;

use axum::{
    http::{HeaderValue, Method, header::RETRY_AFTER},
    response::{IntoResponse as _, Response},
};
use serde_json::json;

use crate::error::{ApiError, GroupResource};
use crate::request::ApiPath;

/// Which requests a rule refuses.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Requests {
    /// `None`: every verb. A list and a watch are both `GET` (see `watch`).
    pub method: Option<Method>,
    /// `Some(true)`: watches only; `Some(false)`: everything but watches.
    pub watch: Option<bool>,
    /// API group ("" for core).
    pub group: String,
    /// Plural resource.
    pub resource: String,
    /// Exact subresource (`None`: the main resource only).
    pub subresource: Option<String>,
}

impl Requests {
    /// Every request on the main resource `group`/`resource`.
    pub fn on(group: &str, resource: &str) -> Self {
        Requests {
            method: None,
            watch: None,
            group: group.into(),
            resource: resource.into(),
            subresource: None,
        }
    }

    /// Lists and watches (collection `GET`s) only.
    pub fn reads(self) -> Self {
        Requests {
            method: Some(Method::GET),
            ..self
        }
    }

    /// Watches only.
    pub fn watches(self) -> Self {
        Requests {
            method: Some(Method::GET),
            watch: Some(true),
            ..self
        }
    }

    /// Only `method` on the subresource `subresource`.
    pub fn subresource(self, method: Method, subresource: &str) -> Self {
        Requests {
            method: Some(method),
            subresource: Some(subresource.into()),
            ..self
        }
    }

    fn matches(&self, method: &Method, path: &ApiPath, watching: bool) -> bool {
        self.method.as_ref().is_none_or(|m| m == method)
            && self.watch.is_none_or(|w| w == watching)
            && self.group == path.group
            && self.resource == path.resource
            && self.subresource == path.subresource
    }
}

/// How a rule answers.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Refusal {
    /// 429 with a `Retry-After` header (and `details.retryAfterSeconds`).
    TooManyRequests {
        /// The delay the client is asked to wait.
        retry_after_seconds: u64,
    },
    /// 403, as to a service account without the permission.
    Forbidden,
    /// 200 and the headers of a watch, then silence: no event, no bookmark, no end.
    Silence,
}

struct Rule {
    requests: Requests,
    refusal: Refusal,
    /// `None`: until cleared.
    remaining: Option<u32>,
    refused: u64,
}

/// The armed rules, checked in order; the first that matches answers.
#[derive(Default)]
pub struct Refusals(Mutex<Vec<Rule>>);

impl std::fmt::Debug for Refusals {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Refusals")
            .field("armed", &self.lock().len())
            .finish()
    }
}

impl Refusals {
    /// Refuses `requests` with `refusal`, `times` times (`None`: until [`Self::clear`]).
    pub fn arm(&self, requests: Requests, refusal: Refusal, times: Option<u32>) {
        self.lock().push(Rule {
            requests,
            refusal,
            remaining: times,
            refused: 0,
        });
    }

    /// Removes the rules on `requests`; returns how many requests they refused.
    pub fn clear(&self, requests: &Requests) -> u64 {
        let mut rules = self.lock();
        let refused = rules
            .iter()
            .filter(|r| &r.requests == requests)
            .map(|r| r.refused)
            .sum();
        rules.retain(|r| &r.requests != requests);
        refused
    }

    /// How many requests the rules on `requests` refused so far.
    pub fn refused(&self, requests: &Requests) -> u64 {
        let rules = self.lock();
        rules
            .iter()
            .filter(|r| &r.requests == requests)
            .map(|r| r.refused)
            .sum()
    }

    /// The answer to a request the first matching rule refuses, if any.
    pub fn check(&self, method: &Method, path: &ApiPath, watching: bool) -> Option<Response> {
        let mut rules = self.lock();
        let rule = rules
            .iter_mut()
            .find(|r| r.remaining != Some(0) && r.requests.matches(method, path, watching))?;
        if let Some(n) = rule.remaining.as_mut() {
            *n -= 1;
        }
        rule.refused += 1;
        Some(answer(rule.refusal, method, path, watching))
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, Vec<Rule>> {
        self.0.lock().unwrap_or_else(|e| e.into_inner())
    }
}

/// kube-apiserver's words for the refusal.
fn answer(refusal: Refusal, method: &Method, path: &ApiPath, watching: bool) -> Response {
    match refusal {
        Refusal::TooManyRequests { retry_after_seconds } => {
            let error = ApiError {
                code: 429,
                reason: "TooManyRequests",
                message: "Too many requests, please try again later.".into(),
                details: Some(json!({"retryAfterSeconds": retry_after_seconds})),
            };
            let mut response = error.into_response();
            response
                .headers_mut()
                .insert(RETRY_AFTER, HeaderValue::from(retry_after_seconds));
            response
        }
        Refusal::Silence => {
            let silent = futures::stream::pending::<Result<axum::body::Bytes, std::convert::Infallible>>();
            let mut response = Response::new(axum::body::Body::from_stream(silent));
            response.headers_mut().insert(
                axum::http::header::CONTENT_TYPE,
                HeaderValue::from_static("application/json"),
            );
            response
        }
        Refusal::Forbidden => {
            let verb = match (method.as_str(), &path.name) {
                ("GET", None) if watching => "watch",
                ("GET", None) => "list",
                ("GET", Some(_)) => "get",
                ("POST", _) => "create",
                ("PUT", _) => "update",
                ("PATCH", _) => "patch",
                ("DELETE", None) => "deletecollection",
                _ => "delete",
            };
            let resource = match &path.subresource {
                Some(sub) => format!("{}/{sub}", path.resource),
                None => path.resource.clone(),
            };
            let scope = match &path.namespace {
                Some(ns) => format!("in the namespace \"{ns}\""),
                None => "at the cluster scope".into(),
            };
            let why = format!(
                "User \"system:serviceaccount:kruise-system:kruise\" cannot {verb} resource \"{resource}\" in API group \"{}\" {scope}",
                path.group
            );
            let gr = GroupResource::new(&path.group, &path.resource);
            ApiError::forbidden(&gr, path.name.as_deref().unwrap_or_default(), &why).into_response()
        }
    }
}
