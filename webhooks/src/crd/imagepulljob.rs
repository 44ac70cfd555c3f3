//! ImagePullJob and ImageListPullJob: OpenKruise's defaults (`/mutate-apps-kruise-io-imagepulljob`,
//! `/mutate-apps-kruise-io-imagelistpulljob`) and validation (`/validate-…`), `pkg/webhook/imagepulljob`
//! and `pkg/webhook/imagelistpulljob`.
//!
//! Defaults: `completionPolicy.type: Always`, `pullPolicy.timeoutSeconds: 600`,
//! `pullPolicy.backoffLimit: 3`, and for ImagePullJob `imagePullPolicy: IfNotPresent`.
//!
//! Validation (on the defaulted object, with OpenKruise's messages): with `ImagePullJobGate` off every
//! CREATE/UPDATE is refused with 403 (kruise-rs turns the gate on by default); the image parses as a
//! reference; `selector` names and labels are exclusive, names unique, `selector` and `podSelector`
//! exclusive; `parallelism` a non-negative integer, no percent; `Always` with a deadline needs it at
//! least the pull timeout; `Never` forbids the deadline and TTL; an ImagePullJob's `pullSecrets`
//! cannot change; an ImageListPullJob lists 1–255 unique images.

use serde_json::Value;

use super::defaults::Mutator;
use super::{Which, check_decodes, check_version, judged, raw_object};
use crate::{Decision, Operation, Settings, review::AdmissionRequest};
use kruise_core::Gate;
use kruise_core::image_ref::ImageRef;

const GROUP: &str = "apps.kruise.io";
const MAX_LIST_IMAGES: usize = 255;

fn p(s: &[&str]) -> Vec<String> {
    s.iter().map(|x| x.to_string()).collect()
}

/// OpenKruise's `SetDefaultsImagePullJob` / `SetDefaultsImageListPullJob`.
fn apply_defaults(m: &mut Mutator, list: bool) {
    m.set_default(&p(&["spec", "completionPolicy"]), serde_json::json!({}));
    m.set_default_zero(
        &p(&["spec", "completionPolicy", "type"]),
        serde_json::json!("Always"),
    );
    m.set_default(&p(&["spec", "pullPolicy"]), serde_json::json!({}));
    m.set_default(
        &p(&["spec", "pullPolicy", "timeoutSeconds"]),
        serde_json::json!(600),
    );
    m.set_default(&p(&["spec", "pullPolicy", "backoffLimit"]), serde_json::json!(3));
    if !list {
        m.set_default_zero(
            &p(&["spec", "imagePullPolicy"]),
            serde_json::json!("IfNotPresent"),
        );
    }
}

fn kind(list: bool) -> &'static str {
    if list { "ImageListPullJob" } else { "ImagePullJob" }
}

fn object(request: &AdmissionRequest, which: Which, list: bool) -> Result<Value, Box<Decision>> {
    check_version(request)?;
    let object = raw_object(request, which, GROUP, kind(list))?;
    if list {
        check_decodes::<kruise_api::apps_v1beta1::ImageListPullJob>(kind(list), &object)?;
    } else {
        check_decodes::<kruise_api::apps_v1beta1::ImagePullJob>(kind(list), &object)?;
    }
    Ok(object)
}

/// `/mutate-apps-kruise-io-imagepulljob` (`list` false) and `/mutate-apps-kruise-io-imagelistpulljob`.
pub fn mutate(request: &AdmissionRequest, list: bool) -> Decision {
    if !judged(request) {
        return Decision::allow();
    }
    let object = match object(request, Which::New, list) {
        Ok(o) => o,
        Err(d) => return *d,
    };
    let mut m = Mutator::new(request.object.clone().unwrap_or(object));
    apply_defaults(&mut m, list);
    Decision::patched(m.ops)
}

/// `/validate-apps-kruise-io-imagepulljob` (`list` false) and `/validate-apps-kruise-io-imagelistpulljob`.
pub fn validate(request: &AdmissionRequest, settings: &Settings, list: bool) -> Decision {
    if !judged(request) {
        return Decision::allow();
    }
    if !settings.enabled(Gate::ImagePullJobGate) {
        return Decision::deny(403, "Forbidden", "feature-gate ImagePullJobGate is not enabled");
    }
    let new = match object(request, Which::New, list) {
        Ok(o) => o,
        Err(d) => return *d,
    };
    let mut m = Mutator::new(new);
    apply_defaults(&mut m, list);
    let spec = m.doc.get("spec").cloned().unwrap_or(Value::Null);
    let mut errors = if list {
        list_errors(&spec)
    } else {
        image_error(spec.get("image")).into_iter().collect()
    };
    errors.extend(template_errors(&spec));
    if !list && request.operation == Operation::Update {
        match raw_object(request, Which::Old, GROUP, kind(list)) {
            Ok(old) => {
                let secrets = |v: &Value| v.pointer("/spec/pullSecrets").filter(|s| !s.is_null()).cloned();
                if secrets(&old) != secrets(&m.doc) {
                    errors.push("spec.pullSecrets is immutable".into());
                }
            }
            Err(d) => return *d,
        }
    }
    match errors.first() {
        None => Decision::allow(),
        Some(first) => Decision::deny(422, "Invalid", first.clone()),
    }
}

fn image_error(image: Option<&Value>) -> Option<String> {
    let image = image.and_then(Value::as_str).unwrap_or_default();
    if image.is_empty() {
        return Some("image can not be empty".into());
    }
    ImageRef::parse(image)
        .err()
        .map(|e| format!("invalid image {image}: {e}"))
}

fn list_errors(spec: &Value) -> Vec<String> {
    let images: Vec<&Value> = spec
        .get("images")
        .and_then(Value::as_array)
        .map(|a| a.iter().collect())
        .unwrap_or_default();
    if images.is_empty() {
        return vec!["image can not be empty".into()];
    }
    if images.len() > MAX_LIST_IMAGES {
        return vec![format!("the maximum number of images cannot > {MAX_LIST_IMAGES}")];
    }
    let mut seen = std::collections::BTreeSet::new();
    for image in &images {
        if let Some(e) = image_error(Some(image)) {
            return vec![e];
        }
        if !seen.insert(image.as_str().unwrap_or_default()) {
            return vec!["images cannot have duplicate values".into()];
        }
    }
    Vec::new()
}

/// The rules both kinds share (their inline `ImagePullJobTemplate`), first error first.
fn template_errors(spec: &Value) -> Vec<String> {
    let mut errors = Vec::new();
    let selector = spec.get("selector").filter(|s| !s.is_null());
    if let Some(s) = selector {
        let names: Vec<&str> = s
            .get("names")
            .and_then(Value::as_array)
            .map(|a| a.iter().filter_map(Value::as_str).collect())
            .unwrap_or_default();
        let labels = ["matchLabels", "matchExpressions"].iter().any(|k| {
            s.get(*k).is_some_and(|v| {
                v.as_object().is_some_and(|o| !o.is_empty()) || v.as_array().is_some_and(|a| !a.is_empty())
            })
        });
        if !names.is_empty() && labels {
            errors.push("can not set both names and labelSelector in this spec.selector".into());
        }
        let unique: std::collections::BTreeSet<_> = names.iter().collect();
        if unique.len() != names.len() {
            errors.push("duplicated name in selector names".into());
        }
    }
    if selector.is_some() && spec.get("podSelector").is_some_and(|s| !s.is_null()) {
        errors.push("can not set both selector and podSelector".into());
    }
    match spec.get("parallelism") {
        Some(Value::String(s)) if s.ends_with('%') => {
            errors.push("parallelism does not support percentage value".into())
        }
        Some(Value::String(s)) => match s.parse::<i64>() {
            Ok(n) if n < 0 => errors.push("parallelism must be non-negative".into()),
            Ok(_) => {}
            Err(e) => errors.push(format!("parallelism must be a valid integer: {e}")),
        },
        Some(Value::Number(n)) if n.as_i64().is_some_and(|n| n < 0) => {
            errors.push("parallelism must be non-negative".into())
        }
        _ => {}
    }
    let completion = spec.get("completionPolicy").cloned().unwrap_or(Value::Null);
    let deadline = completion.get("activeDeadlineSeconds").and_then(Value::as_i64);
    let ttl = completion.get("ttlSecondsAfterFinished").filter(|v| !v.is_null());
    match completion.get("type").and_then(Value::as_str).unwrap_or("Always") {
        "Always" => {
            let timeout = spec
                .pointer("/pullPolicy/timeoutSeconds")
                .and_then(Value::as_i64)
                .unwrap_or(600);
            if deadline.is_some_and(|d| d < timeout) {
                errors.push("completionPolicy.activeDeadlineSeconds must be greater than pullPolicy.timeoutSeconds(default 600)".into());
            }
        }
        "Never" => {
            if deadline.is_some() || ttl.is_some() {
                errors.push("activeDeadlineSeconds and ttlSecondsAfterFinished can only work with Always CompletionPolicyType".into());
            }
        }
        other => errors.push(format!("unknown type of completionPolicy: {other}")),
    }
    errors
}

#[cfg(test)]
mod tests;
