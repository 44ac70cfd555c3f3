//! ResourceDistribution validation (`vresourcedistribution.kb.io`), as OpenKruise's
//! `ResourceDistributionCreateUpdateHandler`, on the v1beta1 form of the object:
//!
//! * with the `ResourceDistributionGate` off, every CREATE/UPDATE is refused with 403
//!   `feature-gate ResourceDistributionGate is not enabled` (kruise-rs turns the gate on by default);
//! * `metadata` valid (cluster-scoped, name a DNS subdomain);
//! * `spec.resource` present ("empty resource is not allowed") and an object with a `kind`;
//! * its group and kind core `Secret` or `ConfigMap`;
//! * on UPDATE, its apiVersion, kind and name unchanged;
//! * the resource as the API server would accept it. OpenKruise asks the API server (a dry-run create in
//!   its own namespace); a webhook here makes no request, so the rules that dry run would apply to a
//!   ConfigMap or Secret are checked in place ([`resource_errors`]): apiVersion `v1`, a valid name,
//!   labels and annotations, valid data keys, base64 `binaryData`/`data`, no key twice, the keys a Secret
//!   `type` requires, at most 1 MiB of data. A failure reads as OpenKruise's
//!   `spec.resource is invalid: <the API server's message>`;
//! * included and excluded namespace names valid, none in both lists;
//! * `targets.namespaceSelector` valid.

use std::collections::BTreeSet;

use base64::Engine as _;
use kruise_core::{Gate, Settings, selector::Selector};
use serde_json::{Map, Value};

use super::field::{
    ErrorList, GoValue, Path, aggregate, go_label_selector, internal, invalid, required, too_long,
};
use super::meta::{
    dns1123_label, name_is_dns_subdomain, validate_annotations, validate_labels, validate_object_meta,
    validate_object_meta_update,
};
use super::{Which, check_decodes, check_version, judged, raw_object, refuse};
use crate::{Decision, Operation, review::AdmissionRequest};

const GROUP: &str = "apps.kruise.io";
const KIND: &str = "ResourceDistribution";
/// The kinds a distribution may carry (core group).
const SUPPORTED: [&str; 2] = ["Secret", "ConfigMap"];
/// The largest total of data the API server stores in one ConfigMap or Secret.
const MAX_DATA_BYTES: usize = 1024 * 1024;

fn v1beta1(request: &AdmissionRequest, which: Which) -> Result<Value, Box<Decision>> {
    let version = check_version(request)?;
    let object = raw_object(request, which, GROUP, KIND)?;
    match version {
        "v1alpha1" => {
            check_decodes::<kruise_api::apps_v1alpha1::ResourceDistribution>(KIND, &object).map(drop)?
        }
        _ => check_decodes::<kruise_api::apps_v1beta1::ResourceDistribution>(KIND, &object).map(drop)?,
    }
    kruise_api::convert_object(&object, "apps.kruise.io/v1beta1")
        .map_err(|e| Box::new(Decision::bad_request(e.to_string())))
}

/// `/validate-apps-kruise-io-resourcedistribution`.
pub fn validate(request: &AdmissionRequest, settings: &Settings) -> Decision {
    if !judged(request) {
        return Decision::allow();
    }
    if !settings.enabled(Gate::ResourceDistributionGate) {
        return Decision::deny(
            403,
            "Forbidden",
            "feature-gate ResourceDistributionGate is not enabled",
        );
    }
    let new = match v1beta1(request, Which::New) {
        Ok(o) => o,
        Err(d) => return *d,
    };
    let old = if request.operation == Operation::Update {
        match v1beta1(request, Which::Old) {
            Ok(o) => Some(o),
            Err(d) => return *d,
        }
    } else {
        None
    };
    refuse(&validate_distribution(&new, old.as_ref())).unwrap_or_else(Decision::allow)
}

/// Every error of a v1beta1 distribution (and, on UPDATE, against its old form).
pub fn validate_distribution(new: &Value, old: Option<&Value>) -> ErrorList {
    let mut errs = validate_object_meta(new.get("metadata"), false, name_is_dns_subdomain);
    if let Some(old) = old {
        errs.extend(validate_object_meta_update(
            new.get("metadata"),
            old.get("metadata"),
        ));
    }
    let spec = Path::new("spec");
    let path = spec.child("resource");
    let Some(resource) = deserialize(new.pointer("/spec/resource"), &path, &mut errs) else {
        return errs;
    };
    let old_resource = old.and_then(|o| deserialize(o.pointer("/spec/resource"), &path, &mut errs));
    errs.extend(resource_rules(resource, old_resource, &path));
    errs.extend(targets_errors(
        new.pointer("/spec/targets"),
        &spec.child("targets"),
    ));
    errs
}

/// The embedded object, or the error OpenKruise's `DeserializeResource` reports.
fn deserialize<'a>(
    resource: Option<&'a Value>,
    path: &Path,
    errs: &mut ErrorList,
) -> Option<&'a Map<String, Value>> {
    match resource {
        None | Some(Value::Null) => {
            errs.push(invalid(path, GoValue::Null, "empty resource is not allowed"));
            None
        }
        Some(Value::Object(map))
            if map
                .get("kind")
                .and_then(Value::as_str)
                .is_some_and(|k| !k.is_empty()) =>
        {
            Some(map)
        }
        Some(other) => {
            errs.push(internal(
                path,
                format!(
                    "failed to deserialize resource, please check your spec.resource, err Object 'Kind' is missing in '{other}'"
                ),
            ));
            None
        }
    }
}

fn str_of<'a>(map: &'a Map<String, Value>, key: &str) -> &'a str {
    map.get(key).and_then(Value::as_str).unwrap_or("")
}

fn name_of(resource: &Map<String, Value>) -> &str {
    resource
        .get("metadata")
        .and_then(|m| m.get("name"))
        .and_then(Value::as_str)
        .unwrap_or("")
}

/// The group of an apiVersion (`v1` → ``, `apps/v1` → `apps`).
fn group_of(api_version: &str) -> &str {
    api_version.rsplit_once('/').map_or("", |(g, _)| g)
}

fn resource_rules(resource: &Map<String, Value>, old: Option<&Map<String, Value>>, path: &Path) -> ErrorList {
    let (api_version, kind) = (str_of(resource, "apiVersion"), str_of(resource, "kind"));
    let group = group_of(api_version);
    if !group.is_empty() || !SUPPORTED.contains(&kind) {
        let group_kind = if group.is_empty() {
            kind.to_string()
        } else {
            format!("{kind}.{group}")
        };
        return vec![invalid(
            path,
            GoValue::Raw(group_kind),
            "unknown or unsupported resource GroupKind, only support [Secret ConfigMap]",
        )];
    }
    if let Some(old) = old
        && (str_of(old, "apiVersion") != api_version
            || str_of(old, "kind") != kind
            || name_of(old) != name_of(resource))
    {
        return vec![invalid(
            path,
            GoValue::Null,
            "resource apiVersion, kind, and name are immutable",
        )];
    }
    let inner = resource_errors(resource);
    match aggregate(&inner) {
        None => Vec::new(),
        Some(message) => vec![invalid(
            path,
            GoValue::Null,
            format!(
                "spec.resource is invalid: {kind} {} is invalid: {message}",
                kruise_core::go::quote(name_of(resource))
            ),
        )],
    }
}

/// What the API server's validation of a `v1` ConfigMap or Secret would reject (the dry-run create
/// OpenKruise makes), in the API server's wording.
pub fn resource_errors(resource: &Map<String, Value>) -> ErrorList {
    let mut errs = ErrorList::new();
    let api_version = str_of(resource, "apiVersion");
    if api_version != "v1" {
        errs.push(invalid(&Path::new("apiVersion"), api_version, "must be v1"));
    }
    let meta = resource.get("metadata");
    let name = meta
        .and_then(|m| m.get("name"))
        .and_then(Value::as_str)
        .unwrap_or("");
    let meta_path = Path::new("metadata");
    if name.is_empty() {
        errs.push(required(
            &meta_path.child("name"),
            "name or generateName is required",
        ));
    } else {
        errs.extend(
            name_is_dns_subdomain(name, false)
                .into_iter()
                .map(|m| invalid(&meta_path.child("name"), name, m)),
        );
    }
    errs.extend(validate_labels(
        meta.and_then(|m| m.get("labels")),
        &meta_path.child("labels"),
    ));
    errs.extend(validate_annotations(
        meta.and_then(|m| m.get("annotations")),
        &meta_path.child("annotations"),
    ));
    let mut keys = BTreeSet::new();
    let mut size = 0;
    let secret = str_of(resource, "kind") == "Secret";
    let (text, binary) = if secret {
        ("stringData", "data")
    } else {
        ("data", "binaryData")
    };
    for (field, base64) in [(binary, true), (text, false)] {
        let Some(entries) = resource.get(field).filter(|v| !v.is_null()) else {
            continue;
        };
        let Some(entries) = entries.as_object() else {
            errs.push(invalid(
                &Path::new(field),
                GoValue::Null,
                "must be a map of strings",
            ));
            continue;
        };
        for (key, value) in entries {
            let at = Path::new(field).key(key);
            errs.extend(
                config_key_errors(key)
                    .into_iter()
                    .map(|m| invalid(&at, key.as_str(), m)),
            );
            let Some(value) = value.as_str() else {
                errs.push(invalid(&at, GoValue::Null, "must be a string"));
                continue;
            };
            if base64 {
                match base64::engine::general_purpose::STANDARD.decode(value) {
                    Ok(bytes) => size += bytes.len(),
                    Err(e) => errs.push(invalid(&at, GoValue::Null, format!("illegal base64 data: {e}"))),
                }
            } else {
                size += value.len();
            }
            // A Secret's stringData is merged over its data; a ConfigMap key may be in one map only.
            if !keys.insert(key.clone()) && !secret {
                errs.push(invalid(
                    &Path::new("data").key(key),
                    key.as_str(),
                    "duplicate of key present in binaryData",
                ));
            }
        }
    }
    if secret {
        errs.extend(secret_type_errors(resource, &keys));
        if size > MAX_DATA_BYTES {
            errs.push(too_long(&Path::new("data"), MAX_DATA_BYTES));
        }
    } else if size > MAX_DATA_BYTES {
        errs.push(too_long(&Path::new(""), MAX_DATA_BYTES));
    }
    errs
}

/// `IsConfigMapKey`.
fn config_key_errors(key: &str) -> Vec<String> {
    let mut out = Vec::new();
    if key.len() > 253 {
        out.push("must be no more than 253 characters".to_string());
    }
    if key.is_empty()
        || !key
            .bytes()
            .all(|b| b.is_ascii_alphanumeric() || matches!(b, b'-' | b'_' | b'.'))
    {
        out.push(
            "a valid config key must consist of alphanumeric characters, '-', '_' or '.' (e.g. 'key.name',  or \
             'KEY_NAME',  or 'key-name', regex used for validation is '[-._a-zA-Z0-9]+')"
                .to_string(),
        );
    }
    if key == "." {
        out.push("must not be '.'".to_string());
    } else if key == ".." {
        out.push("must not be '..'".to_string());
    } else if key.starts_with("..") {
        out.push("must not start with '..'".to_string());
    }
    out
}

/// The keys (and annotation) each built-in Secret type requires.
fn secret_type_errors(resource: &Map<String, Value>, keys: &BTreeSet<String>) -> ErrorList {
    let data = Path::new("data");
    let need = |key: &str| (!keys.contains(key)).then(|| required(&data.key(key), ""));
    match str_of(resource, "type") {
        "kubernetes.io/tls" => need("tls.crt").into_iter().chain(need("tls.key")).collect(),
        "kubernetes.io/dockerconfigjson" => need(".dockerconfigjson").into_iter().collect(),
        "kubernetes.io/dockercfg" => need(".dockercfg").into_iter().collect(),
        "kubernetes.io/ssh-auth" => need("ssh-privatekey").into_iter().collect(),
        "kubernetes.io/basic-auth" if !keys.contains("password") => need("username").into_iter().collect(),
        "kubernetes.io/service-account-token" => {
            let annotated = resource
                .get("metadata")
                .and_then(|m| m.get("annotations"))
                .and_then(|a| a.get("kubernetes.io/service-account.name"))
                .and_then(Value::as_str)
                .is_some_and(|n| !n.is_empty());
            let at = Path::new("metadata")
                .child("annotations")
                .key("kubernetes.io/service-account.name");
            (!annotated).then(|| required(&at, "")).into_iter().collect()
        }
        _ => Vec::new(),
    }
}

fn names(targets: Option<&Value>, list: &str) -> Vec<String> {
    targets
        .and_then(|t| t.get(list))
        .and_then(|l| l.get("list"))
        .and_then(Value::as_array)
        .map(|items| {
            items
                .iter()
                .map(|i| i.get("name").and_then(Value::as_str).unwrap_or("").to_string())
                .collect()
        })
        .unwrap_or_default()
}

fn targets_errors(targets: Option<&Value>, path: &Path) -> ErrorList {
    let mut errs = ErrorList::new();
    let included = names(targets, "includedNamespaces");
    let excluded = names(targets, "excludedNamespaces");
    for (list, field) in [
        (&included, "includedNamespaces"),
        (&excluded, "excludedNamespaces"),
    ] {
        for name in list {
            errs.extend(
                dns1123_label(name)
                    .into_iter()
                    .map(|m| invalid(&path.child(field), name.as_str(), m)),
            );
        }
    }
    let conflicted: Vec<&str> = excluded
        .iter()
        .filter(|n| included.contains(n))
        .map(String::as_str)
        .collect();
    if !conflicted.is_empty() {
        let rendered = targets.map(Value::to_string).unwrap_or_default();
        errs.push(invalid(
            path,
            GoValue::Raw(rendered),
            format!(
                "ambiguous targets because namespace [{}] is in both IncludedNamespaces.List and ExcludedNamespaces.List",
                conflicted.join(" ")
            ),
        ));
    }
    let selector = targets.and_then(|t| t.get("namespaceSelector"));
    if let Some(e) = Selector::from_json(selector).error() {
        errs.push(invalid(
            &path.child("namespaceSelector"),
            go_label_selector(selector),
            format!("labelSelectorAsSelector error: {e}"),
        ));
    }
    errs
}

#[cfg(test)]
mod tests;
