//! Admission webhooks exactly as kube-apiserver calls them: the webhooks of the stored
//! MutatingWebhookConfigurations (sorted by configuration name, then in order; reinvoked once
//! with `reinvocationPolicy: IfNeeded` when a later webhook changed the object), then those of the
//! ValidatingWebhookConfigurations. Services resolve to one configured local address.

pub mod call;
pub mod matching;

use std::net::SocketAddr;

use futures::future::BoxFuture;
use serde_json::Value;

use crate::api::admission::{AdmissionHook, Attributes, Operation};
use crate::error::{ApiError, FieldError};
use crate::meta;
use crate::store::ResKey;
use call::{CallError, Target};

const GROUP: &str = "admissionregistration.k8s.io";

/// The webhook dispatcher (kube-apiserver's MutatingAdmissionWebhook and
/// ValidatingAdmissionWebhook plugins).
#[derive(Debug, Clone, Default)]
pub struct Webhooks {
    /// Where every `clientConfig.service` resolves to (None: calls fail with "no such host").
    pub service_address: Option<SocketAddr>,
}

/// The webhooks of the stored configurations of one kind, sorted as kube-apiserver does.
fn webhooks(api: &crate::api::Api, plural: &str) -> Vec<Value> {
    let (mut configs, _) = api.store.list(&ResKey::new(GROUP, plural), None);
    configs.sort_by(|a, b| meta::name(a).cmp(meta::name(b)));
    configs
        .iter()
        .flat_map(|c| c["webhooks"].as_array().cloned().unwrap_or_default())
        .collect()
}

fn name_of(webhook: &Value) -> &str {
    webhook["name"].as_str().unwrap_or_default()
}

/// A webhook's denial as kube's `webhookerrors.ToStatusErr`.
fn denial(webhook: &str, status: &Value) -> ApiError {
    let denied_by = format!("admission webhook {webhook:?} denied the request");
    let message = status["message"].as_str().unwrap_or_default();
    let reason = status["reason"].as_str().unwrap_or_default();
    let message = match (message, reason) {
        ("", "") => format!("{denied_by} without explanation"),
        ("", reason) => format!("{denied_by}: {reason}"),
        (message, _) => format!("{denied_by}: {message}"),
    };
    let code = status["code"].as_u64().unwrap_or(0).max(400) as u16;
    ApiError {
        code,
        reason: static_reason(reason),
        message,
        details: status.get("details").cloned(),
    }
}

/// The StatusReasons of apimachinery (the Status `reason` is kept when it is one of them).
fn static_reason(reason: &str) -> &'static str {
    const KNOWN: [&str; 18] = [
        "Unauthorized",
        "Forbidden",
        "NotFound",
        "AlreadyExists",
        "Conflict",
        "Gone",
        "Invalid",
        "ServerTimeout",
        "StoreReadError",
        "Timeout",
        "TooManyRequests",
        "BadRequest",
        "MethodNotAllowed",
        "NotAcceptable",
        "RequestEntityTooLarge",
        "UnsupportedMediaType",
        "InternalError",
        "Expired",
    ];
    KNOWN.into_iter().find(|k| *k == reason).unwrap_or("")
}

/// How a call failure is answered: Ignore proceeds (None), Fail is a 500.
fn on_failure(webhook: &Value, error: &CallError) -> Option<ApiError> {
    let name = name_of(webhook);
    if webhook["failurePolicy"].as_str() == Some("Ignore") {
        tracing::warn!(webhook = name, %error, "failed calling webhook, failing open");
        return None;
    }
    Some(ApiError::internal(format!(
        "failed calling webhook {name:?}: {error}"
    )))
}

/// Refuses configurations using what the playground does not evaluate.
fn check_configuration(a: &Attributes<'_>) -> Result<(), ApiError> {
    let Some(obj) = a.object else { return Ok(()) };
    if a.resource.group != GROUP || a.subresource.is_some() {
        return Ok(());
    }
    let errors: Vec<FieldError> = obj["webhooks"]
        .as_array()
        .into_iter()
        .flatten()
        .enumerate()
        .filter(|(_, w)| w["matchConditions"].as_array().is_some_and(|c| !c.is_empty()))
        .map(|(i, _)| {
            let field = format!("webhooks[{i}].matchConditions");
            FieldError::forbidden(&field, "matchConditions are not supported by kruise-playground")
        })
        .collect();
    if errors.is_empty() {
        return Ok(());
    }
    Err(ApiError::invalid(GROUP, &a.resource.kind, a.name, &errors))
}

impl Webhooks {
    /// Calls one webhook; `Ok(Some(patch))` when it allowed with a patch.
    async fn call(
        &self,
        webhook: &Value,
        a: &Attributes<'_>,
        mutating: bool,
    ) -> Result<Option<json_patch::Patch>, ApiError> {
        let name = name_of(webhook);
        let side_effects = webhook["sideEffects"].as_str().unwrap_or("Unknown");
        if a.dry_run && !matches!(side_effects, "None" | "NoneOnDryRun") {
            return Err(ApiError::bad_request(format!(
                "admission webhook {name:?} does not support dry run"
            )));
        }
        let uid = meta::uid();
        let review = call::review(a, &uid);
        let answer = match Target::of(webhook, self.service_address) {
            Ok(target) => target.post(&review).await,
            Err(e) => Err(e),
        };
        let verdict = match answer.and_then(|r| call::verdict(&r, &uid, mutating)) {
            Ok(v) => v,
            Err(e) => return on_failure(webhook, &e).map_or(Ok(None), Err),
        };
        if !verdict.allowed {
            return Err(denial(name, &verdict.status));
        }
        Ok(verdict.patch)
    }

    /// The mutating pass (and its one reinvocation round); returns the final object.
    async fn mutate(&self, a: &Attributes<'_>) -> Result<Option<Value>, ApiError> {
        let hooks = webhooks(a.api, "mutatingwebhookconfigurations");
        let mut object = a.object.cloned();
        let (mut previously, mut reinvoke) = (Vec::new(), Vec::new());
        let mut should_reinvoke = false;
        for round in 0..2 {
            if round == 1 && !should_reinvoke {
                break;
            }
            for (i, hook) in hooks.iter().enumerate() {
                let attrs = Attributes {
                    object: object.as_ref(),
                    ..*a
                };
                if !matching::selects(hook, &attrs).map_err(ApiError::bad_request)? {
                    continue;
                }
                if round == 1 && !reinvoke.contains(&i) {
                    continue;
                }
                let changed = match self.call(hook, &attrs, true).await? {
                    None => false,
                    Some(patch) => {
                        let Some(obj) = object.as_mut() else {
                            return Err(ApiError::internal(format!(
                                "admission webhook {:?} attempted to modify the object, which is not supported for this operation",
                                name_of(hook)
                            )));
                        };
                        let before = obj.clone();
                        json_patch::patch(obj, &patch).map_err(|e| {
                            let err = CallError::Patch(e.to_string());
                            ApiError::internal(format!("failed calling webhook {:?}: {err}", name_of(hook)))
                        })?;
                        *obj != before
                    }
                };
                if changed {
                    reinvoke.append(&mut previously);
                    should_reinvoke = true;
                }
                if hook["reinvocationPolicy"].as_str() == Some("IfNeeded") {
                    previously.push(i);
                }
            }
        }
        Ok(object)
    }

    /// The validating pass (sequential here; kube-apiserver calls them in parallel).
    async fn validate(&self, a: &Attributes<'_>) -> Result<(), ApiError> {
        for hook in webhooks(a.api, "validatingwebhookconfigurations") {
            if matching::selects(&hook, a).map_err(ApiError::bad_request)? {
                self.call(&hook, a, false).await?;
            }
        }
        Ok(())
    }
}

impl AdmissionHook for Webhooks {
    fn admit<'a>(&'a self, a: Attributes<'a>) -> BoxFuture<'a, Result<Option<Value>, ApiError>> {
        Box::pin(async move {
            if a.operation != Operation::Delete {
                check_configuration(&a)?;
            }
            let mut object = self.mutate(&a).await?;
            // The strategy's validation runs between the two phases, as in kube-apiserver: a
            // custom resource is pruned, defaulted and checked against its version's schema.
            if let Some(o) = object.as_mut()
                && a.resource.crd.is_some()
            {
                crate::schema::prepare(a.resource, o);
                crate::schema::check(a.resource, o)?;
            }
            let changed = object.as_ref() != a.object;
            let attrs = Attributes {
                object: object.as_ref(),
                ..a
            };
            self.validate(&attrs).await?;
            Ok(if changed { object } else { None })
        })
    }
}
