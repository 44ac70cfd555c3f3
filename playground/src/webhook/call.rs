//! One webhook call: the AdmissionReview v1 kube-apiserver sends, the HTTPS request (verifying
//! `caBundle` against the service's DNS name), and the reading of the response.

use std::net::SocketAddr;
use std::time::Duration;

use axum::http;
use base64::Engine as _;
use rustls::pki_types::{CertificateDer, pem::PemObject as _};
use serde_json::{Value, json};

use super::matching::operation_name;
use crate::api::admission::Attributes;

/// Why a webhook could not be called, or answered nonsense (kube's `ErrCallingWebhook`).
#[derive(Debug, thiserror::Error)]
pub enum CallError {
    /// Transport failure, timeout, or a non-2xx answer.
    #[error("failed to call webhook: Post \"{url}\": {why}")]
    Call {
        /// The URL kube-apiserver would post to.
        url: String,
        /// What went wrong.
        why: String,
    },
    /// The answer is not a valid AdmissionReview response.
    #[error("received invalid webhook response: {0}")]
    Invalid(String),
    /// The patch cannot be decoded or applied.
    #[error("received undecodable patch in webhook response: {0}")]
    Patch(String),
}

/// Where and how to reach a webhook.
#[derive(Debug, Clone)]
pub struct Target {
    /// The URL as kube-apiserver prints it (`https://svc.ns.svc:443/path?timeout=10s`).
    pub url: String,
    /// Where to connect.
    pub connect: String,
    /// The name the serving certificate must carry (None: the URL's host).
    pub server_name: Option<String>,
    /// Path and query.
    pub path: String,
    /// `caBundle` certificates (DER).
    pub ca: Vec<Vec<u8>>,
    /// `timeoutSeconds` (default 10).
    pub timeout: Duration,
}

impl Target {
    /// The target of a webhook's `clientConfig`; services resolve to `service_address`.
    pub fn of(webhook: &Value, service_address: Option<SocketAddr>) -> Result<Target, CallError> {
        let cc = &webhook["clientConfig"];
        let timeout = Duration::from_secs(webhook["timeoutSeconds"].as_u64().unwrap_or(10));
        let b64 = base64::engine::general_purpose::STANDARD;
        let pem = b64
            .decode(cc["caBundle"].as_str().unwrap_or_default())
            .unwrap_or_default();
        let ca: Vec<Vec<u8>> = CertificateDer::pem_slice_iter(&pem)
            .filter_map(Result::ok)
            .map(|c| c.as_ref().to_vec())
            .collect();
        let query = format!("?timeout={}s", timeout.as_secs());
        if let Some(svc) = cc.get("service").filter(|s| s.is_object()) {
            let host = format!(
                "{}.{}.svc",
                svc["name"].as_str().unwrap_or_default(),
                svc["namespace"].as_str().unwrap_or_default()
            );
            let port = svc["port"].as_u64().unwrap_or(443);
            let path = format!("{}{query}", svc["path"].as_str().unwrap_or("/"));
            let url = format!("https://{host}:{port}{path}");
            let Some(addr) = service_address else {
                let why = format!("dial tcp: lookup {host}: no such host");
                return Err(CallError::Call { url, why });
            };
            return Ok(Target {
                url,
                connect: format!("https://{addr}"),
                server_name: Some(host),
                path,
                ca,
                timeout,
            });
        }
        let raw = cc["url"].as_str().unwrap_or_default();
        let uri: http::Uri = raw.parse().map_err(|e| CallError::Call {
            url: raw.to_string(),
            why: format!("{e}"),
        })?;
        let path = format!(
            "{}{query}",
            uri.path_and_query().map(|p| p.as_str()).unwrap_or("/")
        );
        Ok(Target {
            url: format!("{raw}{query}"),
            connect: format!(
                "https://{}",
                uri.authority().map(|a| a.as_str()).unwrap_or_default()
            ),
            server_name: None,
            path,
            ca,
            timeout,
        })
    }

    /// Posts the review; returns the parsed AdmissionReview.
    pub async fn post(&self, review: &Value) -> Result<Value, CallError> {
        let fail = |why: String| CallError::Call {
            url: self.url.clone(),
            why,
        };
        let uri: http::Uri = self.connect.parse().map_err(|e| fail(format!("{e}")))?;
        let mut config = kube::Config::new(uri);
        config.root_cert = (!self.ca.is_empty()).then(|| self.ca.clone());
        config.tls_server_name = self.server_name.clone();
        config.connect_timeout = Some(self.timeout);
        config.read_timeout = Some(self.timeout);
        config.default_retry = false;
        let client = kube::Client::try_from(config).map_err(|e| fail(e.to_string()))?;
        let body = serde_json::to_vec(review).map_err(|e| fail(e.to_string()))?;
        let request = http::Request::post(&self.path)
            .header(http::header::CONTENT_TYPE, "application/json")
            .header(http::header::ACCEPT, "application/json")
            .body(body)
            .map_err(|e| fail(e.to_string()))?;
        let text = match tokio::time::timeout(self.timeout, client.request_text(request)).await {
            Err(_) => return Err(fail("context deadline exceeded".into())),
            Ok(Err(e)) => return Err(fail(e.to_string())),
            Ok(Ok(text)) => text,
        };
        serde_json::from_str(&text).map_err(|e| CallError::Invalid(e.to_string()))
    }
}

/// The `kind` of what the request carries (an eviction carries a `policy/v1 Eviction`).
fn request_kind(a: &Attributes<'_>) -> Value {
    let (group, version, kind) = match a.subresource {
        Some("eviction") => ("policy", "v1", "Eviction"),
        Some("binding") => ("", "v1", "Binding"),
        Some("scale") => ("autoscaling", "v1", "Scale"),
        _ => (
            a.resource.group.as_str(),
            a.resource.version.as_str(),
            a.resource.kind.as_str(),
        ),
    };
    json!({"group": group, "version": version, "kind": kind})
}

/// The AdmissionReview v1 request kube-apiserver sends for these attributes.
pub fn review(a: &Attributes<'_>, uid: &str) -> Value {
    let kind = request_kind(a);
    let resource = json!({
        "group": a.resource.group, "version": a.resource.version, "resource": a.resource.plural,
    });
    let options_kind = match a.operation {
        crate::api::admission::Operation::Create => "CreateOptions",
        crate::api::admission::Operation::Update => "UpdateOptions",
        crate::api::admission::Operation::Delete => "DeleteOptions",
    };
    let mut options = json!({"kind": options_kind, "apiVersion": "meta.k8s.io/v1"});
    if a.dry_run {
        options["dryRun"] = json!(["All"]);
    }
    let mut request = json!({
        "uid": uid,
        "kind": kind.clone(),
        "resource": resource.clone(),
        "requestKind": kind,
        "requestResource": resource,
        "operation": operation_name(a.operation),
        "userInfo": {"username": "kubernetes-admin", "groups": ["system:masters", "system:authenticated"]},
        "object": a.object.cloned().unwrap_or(Value::Null),
        "oldObject": a.old_object.cloned().unwrap_or(Value::Null),
        "dryRun": a.dry_run,
        "options": options,
    });
    if let Some(sub) = a.subresource {
        request["subResource"] = json!(sub);
        request["requestSubResource"] = json!(sub);
    }
    if !a.name.is_empty() {
        request["name"] = json!(a.name);
    }
    if !a.namespace.is_empty() {
        request["namespace"] = json!(a.namespace);
    }
    json!({"apiVersion": "admission.k8s.io/v1", "kind": "AdmissionReview", "request": request})
}

/// A verified webhook answer.
#[derive(Debug)]
pub struct Verdict {
    /// `allowed`.
    pub allowed: bool,
    /// `status` (for denials).
    pub status: Value,
    /// The decoded JSONPatch, if any.
    pub patch: Option<json_patch::Patch>,
}

/// Checks a response as kube's `VerifyAdmissionResponse`.
pub fn verdict(review: &Value, uid: &str, mutating: bool) -> Result<Verdict, CallError> {
    if review["apiVersion"] != "admission.k8s.io/v1" || review["kind"] != "AdmissionReview" {
        let why = format!(
            "expected webhook response of admission.k8s.io/v1, Kind=AdmissionReview, got {}, Kind={}",
            review["apiVersion"].as_str().unwrap_or_default(),
            review["kind"].as_str().unwrap_or_default()
        );
        return Err(CallError::Invalid(why));
    }
    let response = &review["response"];
    if !response.is_object() {
        return Err(CallError::Invalid("webhook response was absent".into()));
    }
    let got = response["uid"].as_str().unwrap_or_default();
    if got != uid {
        return Err(CallError::Invalid(format!(
            "expected response.uid={uid:?}, got {got:?}"
        )));
    }
    let patch = match response["patch"].as_str() {
        None | Some("") => None,
        Some(_) if !mutating => {
            return Err(CallError::Invalid(
                "validating webhook may not return response.patch".into(),
            ));
        }
        Some(b64) => {
            let pt = response["patchType"].as_str().unwrap_or_default();
            if pt != "JSONPatch" {
                return Err(CallError::Invalid(format!(
                    "webhook returned response.patch but not response.patchType, or an unsupported one: {pt:?}"
                )));
            }
            let raw = base64::engine::general_purpose::STANDARD
                .decode(b64)
                .map_err(|e| CallError::Patch(e.to_string()))?;
            Some(serde_json::from_slice(&raw).map_err(|e| CallError::Patch(e.to_string()))?)
        }
    };
    Ok(Verdict {
        allowed: response["allowed"].as_bool().unwrap_or(false),
        status: response["status"].clone(),
        patch,
    })
}
