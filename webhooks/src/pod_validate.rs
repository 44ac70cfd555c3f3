//! `/validate-pod`: PodUnavailableBudget protection and WorkloadSpread accounting for pod DELETE,
//! `pods/eviction` CREATE and pod UPDATE, as OpenKruise's pod validating webhook does them.
//!
//! | Request | Pod checked | PUB operation | WorkloadSpread accounting |
//! |---|---|---|---|
//! | DELETE `pods` | `oldObject` | `DELETE` | yes |
//! | CREATE `pods/eviction` | the pod named by the request, from the view (absent → allowed) | `EVICT` | yes |
//! | UPDATE `pods` that may make the pod unavailable | `oldObject` | `RESIZE` (cpu/memory only, no restart) or `UPDATE` | no |
//!
//! Everything else (other sub-resources, CONNECT, unknown operations, other resources) is allowed.
//!
//! A budget is spent by returning a [`StatusWrite`](crate::StatusWrite) of the PUB's new status
//! (`unavailableAllowed - 1`, the pod recorded in `disruptedPods`, or `unavailablePods` for UPDATE), to be
//! written with the PUB's resourceVersion as precondition before the request is answered; on a conflict the
//! caller decides again against a refreshed view, so a budget is never spent twice. Dry runs
//! (`request.dryRun`, `options.dryRun`, and for evictions also the Eviction body's
//! `deleteOptions.dryRun`, which OpenKruise ignores) are decided in full but write nothing.
//!
//! Denials carry OpenKruise's message, e.g.
//! `podunavailablebudget.policy.kruise.io "web" is forbidden: pub unavailable allowed is negative`:
//! 429 TooManyRequests for an eviction (so `kubectl drain` retries, like a PodDisruptionBudget), 403
//! Forbidden for DELETE and UPDATE. A request that cannot be decided (no `oldObject` on DELETE or UPDATE,
//! an undecodable pod, Eviction or options, an invalid `ignoredPodSelector`, an unreadable WorkloadSpread
//! replica path) is a 400. A denied decision carries no write (OpenKruise would already have recorded the
//! pod in its WorkloadSpread).

pub use kruise_core::pub_protection;
mod resize;
pub mod workloadspread_accounting;

use k8s_openapi::api::core::v1::Pod;
use k8s_openapi::jiff::Timestamp;
use kruise_api::PodRecord;
use serde::de::DeserializeOwned;
use serde_json::Value;

use crate::{
    Decision, Settings, StatusWrite,
    decision::{AdmissionEvent, BudgetRefusal, Regarding},
    review::{AdmissionRequest, Operation},
    view::ClusterView,
};
use pub_protection::{Outcome, PodOperation};

/// Decides a pod UPDATE, DELETE or eviction at the current time.
pub fn validate(request: &AdmissionRequest, view: &impl ClusterView, settings: &Settings) -> Decision {
    validate_at(request, view, settings, Timestamp::now())
}

/// Decides a pod UPDATE, DELETE or eviction; `now` stamps the pods recorded in status writes.
pub fn validate_at(
    request: &AdmissionRequest,
    view: &impl ClusterView,
    _settings: &Settings,
    now: Timestamp,
) -> Decision {
    match decide(request, view, now) {
        Ok(decision) => decision,
        Err(message) => Decision::bad_request(message),
    }
}

/// The answer once a write of `write` has conflicted on every attempt: a 429 with the apiserver's
/// conflict message (as OpenKruise reports it), so clients retry later rather than proceed unprotected.
pub fn conflict_denial(write: &StatusWrite) -> Decision {
    let t = &write.target;
    let group = t.api_version.rsplit_once('/').map_or("", |(g, _)| g);
    let resource = if group.is_empty() {
        t.plural.clone()
    } else {
        format!("{}.{group}", t.plural)
    };
    Decision::deny(
        429,
        "TooManyRequests",
        format!(
            "Operation cannot be fulfilled on {resource} \"{}\": the object has been modified; please apply your changes to the latest version and try again",
            t.name
        ),
    )
}

fn decide(request: &AdmissionRequest, view: &impl ClusterView, now: Timestamp) -> Result<Decision, String> {
    if !request.resource.resource.is_empty() && request.resource.resource != "pods" {
        return Ok(Decision::allow());
    }
    match request.operation {
        Operation::Delete => delete(request, view, now),
        Operation::Create => evict(request, view, now),
        Operation::Update => update(request, view, now),
        Operation::Connect | Operation::Unknown => Ok(Decision::allow()),
    }
}

fn present(object: Option<&Value>) -> Option<&Value> {
    object.filter(|v| !v.is_null())
}

fn decode_pod<T: DeserializeOwned>(object: &Value, field: &str) -> Result<T, String> {
    kruise_core::decode::typed(object.clone()).map_err(|e| format!("{field} is not a valid Pod: {e}"))
}

/// `dryRun` of a DeleteOptions / UpdateOptions object (absent: not a dry run). A present but malformed
/// value is an error, as decoding it is in OpenKruise.
fn options_dry_run(options: Option<&Value>, what: &str) -> Result<bool, String> {
    let Some(options) = present(options) else {
        return Ok(false);
    };
    let Value::Object(map) = options else {
        return Err(format!(
            "{what} is not a valid DeleteOptions/UpdateOptions: expected an object"
        ));
    };
    match map.get("dryRun") {
        None | Some(Value::Null) => Ok(false),
        Some(Value::Array(items)) if items.iter().all(Value::is_string) => Ok(!items.is_empty()),
        Some(_) => Err(format!("{what}.dryRun must be a list of strings")),
    }
}

fn pod_ref(request: &AdmissionRequest) -> String {
    format!("{}/{}", request.namespace, request.name)
}

fn delete(request: &AdmissionRequest, view: &impl ClusterView, now: Timestamp) -> Result<Decision, String> {
    if request.sub_resource().is_some() {
        return Ok(Decision::allow());
    }
    let old = present(request.old_object.as_ref()).ok_or_else(|| {
        format!(
            "DELETE of pod {} carries no oldObject: the PodUnavailableBudget check needs the pod being deleted",
            pod_ref(request)
        )
    })?;
    let pod: PodRecord = decode_pod(old, "oldObject")?;
    let dry_run = options_dry_run(request.options.as_ref(), "options")? || request.is_dry_run();
    protect(request, &pod, PodOperation::Delete, dry_run, view, now)
}

fn evict(request: &AdmissionRequest, view: &impl ClusterView, now: Timestamp) -> Result<Decision, String> {
    if request.sub_resource() != Some("eviction") {
        return Ok(Decision::allow());
    }
    let body = present(request.object.as_ref())
        .ok_or_else(|| format!("eviction of pod {} carries no Eviction object", pod_ref(request)))?;
    let Value::Object(eviction) = body else {
        return Err("object is not a valid Eviction: expected an object".into());
    };
    let body_dry_run = options_dry_run(eviction.get("deleteOptions"), "Eviction deleteOptions")?;
    let dry_run =
        body_dry_run || options_dry_run(request.options.as_ref(), "options")? || request.is_dry_run();
    let meta = |key: &str| {
        eviction
            .get("metadata")
            .and_then(|m| m.get(key))
            .and_then(Value::as_str)
            .unwrap_or_default()
    };
    let name = if request.name.is_empty() {
        meta("name")
    } else {
        request.name.as_str()
    };
    let namespace = if request.namespace.is_empty() {
        meta("namespace")
    } else {
        request.namespace.as_str()
    };
    if name.is_empty() {
        return Err("eviction names no pod (request.name and the Eviction's metadata.name are empty)".into());
    }
    let Some(pod) = view.pod(namespace, name) else {
        // Not in the view: deleted already, nothing left to protect.
        return Ok(Decision::allow());
    };
    protect(request, &pod, PodOperation::Evict, dry_run, view, now)
}

fn update(request: &AdmissionRequest, view: &impl ClusterView, now: Timestamp) -> Result<Decision, String> {
    if request.sub_resource().is_some() {
        return Ok(Decision::allow());
    }
    let new = present(request.object.as_ref())
        .ok_or_else(|| format!("UPDATE of pod {} carries no object", pod_ref(request)))?;
    let new: Pod = decode_pod(new, "object")?;
    if pub_protection::related_pub_name(&new.metadata).is_none() {
        return Ok(Decision::allow());
    }
    let old = present(request.old_object.as_ref()).ok_or_else(|| {
        format!(
            "UPDATE of pod {} carries no oldObject: the PodUnavailableBudget check needs the pod being updated",
            pod_ref(request)
        )
    })?;
    let old_record: PodRecord = decode_pod(old, "oldObject")?;
    let old: Pod = decode_pod(old, "oldObject")?;
    let can_resize = resize::can_resize_in_place(&old, &new);
    if !resize::may_cause_unavailability(&old, &new) {
        return Ok(Decision::allow());
    }
    let dry_run = options_dry_run(request.options.as_ref(), "options")? || request.is_dry_run();
    let operation = if can_resize {
        PodOperation::Resize
    } else {
        PodOperation::Update
    };
    protect(request, &old_record, operation, dry_run, view, now)
}

/// WorkloadSpread accounting (DELETE and EVICT, not in dry run), then the PUB procedure.
fn protect(
    request: &AdmissionRequest,
    pod: &PodRecord,
    operation: PodOperation,
    dry_run: bool,
    view: &impl ClusterView,
    now: Timestamp,
) -> Result<Decision, String> {
    let mut decision = Decision::allow();
    if !dry_run && matches!(operation, PodOperation::Delete | PodOperation::Evict) {
        decision.writes.extend(workloadspread_accounting::account(
            pod,
            &request.namespace,
            view,
            now,
        )?);
    }
    match pub_protection::check(pod, &request.namespace, operation, dry_run, view, now)? {
        Outcome::Skipped(_) => Ok(decision),
        Outcome::Spent { write } => {
            decision.writes.extend(write);
            Ok(decision)
        }
        Outcome::Denied { message, .. } => {
            let mut denied = if operation == PodOperation::Evict {
                Decision::deny(429, "TooManyRequests", message)
            } else {
                Decision::forbid(message)
            };
            denied.events.push(budget_event(pod, &request.namespace));
            denied.budget_refusal = Some(budget_refusal(pod, &request.namespace));
            Ok(denied)
        }
    }
}

/// OpenKruise's Warning event on a pod a PodUnavailableBudget protected.
fn budget_event(pod: &PodRecord, namespace: &str) -> AdmissionEvent {
    AdmissionEvent {
        regarding: Regarding {
            api_version: "v1".into(),
            kind: "Pod".into(),
            namespace: pod
                .metadata
                .namespace
                .clone()
                .unwrap_or_else(|| namespace.to_string()),
            name: pod.metadata.name.clone().unwrap_or_default(),
            uid: pod.metadata.uid.clone(),
        },
        warning: true,
        reason: "PubPreventPodDeletion",
        message: "openkruise pub prevents pod deletion".into(),
    }
}

/// The `pod_unavailable_budget` metric's label: the pod's controller, as OpenKruise names it.
fn budget_refusal(pod: &PodRecord, namespace: &str) -> BudgetRefusal {
    let namespace = pod
        .metadata
        .namespace
        .as_deref()
        .filter(|n| !n.is_empty())
        .unwrap_or(if namespace.is_empty() {
            "default"
        } else {
            namespace
        });
    let controller = pod
        .metadata
        .owner_references
        .iter()
        .flatten()
        .find(|o| o.controller == Some(true));
    let kind_namespace_name = match controller {
        Some(owner) => format!("{}_{namespace}_{}", owner.kind, owner.name),
        None => format!(
            "unknown_{namespace}_{}",
            pod.metadata.name.as_deref().unwrap_or_default()
        ),
    };
    BudgetRefusal { kind_namespace_name }
}
