//! How many requests the API server answered, by verb, resource and subresource: tests use it to
//! bound how many writes a controller makes (say, API writes per pod during a rollout). Requests
//! are counted once their path names a served resource, whatever their outcome. Benchmarks read
//! them over HTTP (`GET /debug/request-counts`, [`RequestCounts::to_json`]).

use std::collections::BTreeMap;
use std::sync::Mutex;
use std::sync::atomic::{AtomicU64, Ordering};

use serde_json::{Value, json};

use axum::http::Method;

use crate::request::ApiPath;

/// One kind of request.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord)]
pub struct RequestKind {
    /// `GET`, `POST`, `PUT`, `PATCH` or `DELETE` (a watch is a `GET`).
    pub method: String,
    /// API group ("" for core).
    pub group: String,
    /// Plural resource.
    pub resource: String,
    /// Subresource (`status`, `scale`, `eviction`, …), if any.
    pub subresource: Option<String>,
}

impl RequestKind {
    /// Whether this kind changes state (anything but `GET`).
    pub fn is_write(&self) -> bool {
        self.method != Method::GET.as_str()
    }
}

/// The running counts.
#[derive(Debug, Default)]
pub struct RequestCounts {
    by_kind: Mutex<BTreeMap<RequestKind, u64>>,
    /// List responses cut short by `limit` (they carry a `continue` token).
    cut_lists: AtomicU64,
}

impl RequestCounts {
    /// Counts one list response that `limit` cut short.
    pub fn record_cut_list(&self) {
        self.cut_lists.fetch_add(1, Ordering::Relaxed);
    }

    /// List responses cut short by `limit` so far.
    pub fn cut_lists(&self) -> u64 {
        self.cut_lists.load(Ordering::Relaxed)
    }

    /// The counts as JSON: `{"requests": [{verb, group, resource, subresource, count}], "cutLists": n}`.
    pub fn to_json(&self) -> Value {
        let requests: Vec<Value> = self
            .lock()
            .iter()
            .map(|(k, n)| {
                json!({"verb": k.method, "group": k.group, "resource": k.resource,
                    "subresource": k.subresource, "count": n})
            })
            .collect();
        json!({"requests": requests, "cutLists": self.cut_lists()})
    }

    /// Counts one request.
    pub fn record(&self, method: &Method, path: &ApiPath) {
        let kind = RequestKind {
            method: method.as_str().to_string(),
            group: path.group.clone(),
            resource: path.resource.clone(),
            subresource: path.subresource.clone(),
        };
        *self.lock().entry(kind).or_default() += 1;
    }

    /// The counts so far.
    pub fn snapshot(&self) -> BTreeMap<RequestKind, u64> {
        self.lock().clone()
    }

    /// Writes (non-`GET` requests) to `group`/`resource` with `subresource` since `before`.
    pub fn writes_since(
        &self,
        before: &BTreeMap<RequestKind, u64>,
        group: &str,
        resource: &str,
        subresource: Option<&str>,
    ) -> u64 {
        self.lock()
            .iter()
            .filter(|(k, _)| {
                k.is_write()
                    && k.group == group
                    && k.resource == resource
                    && k.subresource.as_deref() == subresource
            })
            .map(|(k, n)| n - before.get(k).copied().unwrap_or(0))
            .sum()
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, BTreeMap<RequestKind, u64>> {
        self.by_kind.lock().unwrap_or_else(|e| e.into_inner())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn path(resource: &str, subresource: Option<&str>) -> ApiPath {
        ApiPath {
            group: String::new(),
            version: "v1".into(),
            namespace: Some("ns".into()),
            resource: resource.into(),
            name: Some("web-1".into()),
            subresource: subresource.map(str::to_string),
        }
    }

    #[test]
    fn counts_writes_by_resource_and_subresource_since_a_snapshot() {
        let counts = RequestCounts::default();
        counts.record(&Method::PATCH, &path("pods", None));
        let before = counts.snapshot();
        counts.record(&Method::PATCH, &path("pods", None));
        counts.record(&Method::PUT, &path("pods", None));
        counts.record(&Method::GET, &path("pods", None));
        counts.record(&Method::PATCH, &path("pods", Some("status")));
        assert_eq!(counts.writes_since(&before, "", "pods", None), 2);
        assert_eq!(counts.writes_since(&before, "", "pods", Some("status")), 1);
        assert_eq!(counts.writes_since(&BTreeMap::new(), "", "pods", None), 3);
        assert_eq!(counts.writes_since(&before, "", "configmaps", None), 0);
    }

    #[test]
    fn the_json_lists_every_kind_with_its_count_and_the_cut_lists() {
        let counts = RequestCounts::default();
        counts.record(&Method::POST, &path("pods", None));
        counts.record(&Method::POST, &path("pods", None));
        counts.record(&Method::PATCH, &path("pods", Some("status")));
        counts.record_cut_list();
        let json = counts.to_json();
        assert_eq!(json["cutLists"], 1);
        let requests = json["requests"].as_array().cloned().unwrap_or_default();
        assert_eq!(requests.len(), 2);
        assert!(
            requests.contains(&json!({"verb": "POST", "group": "", "resource": "pods",
            "subresource": null, "count": 2}))
        );
        assert!(
            requests.contains(&json!({"verb": "PATCH", "group": "", "resource": "pods",
            "subresource": "status", "count": 1}))
        );
    }
}
