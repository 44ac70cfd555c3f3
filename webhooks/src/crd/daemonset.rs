//! Advanced DaemonSet: OpenKruise's defaults (`/mutate-apps-kruise-io-daemonset`) and validation
//! (`/validate-apps-kruise-io-daemonset`, `pkg/webhook/daemonset`), on the object as sent (both
//! versions have the same shape but for `scaleStrategy`, which only v1beta1 has).
//!
//! Defaults: `burstReplicas: 250`, `updateStrategy.type: RollingUpdate` and, for RollingUpdate,
//! `rollingUpdate: {}` with `rollingUpdateType: Standard` and, when neither is set,
//! `maxUnavailable: 1` / `maxSurge: 0`; `revisionHistoryLimit: 10`. A v1alpha1 `Surging` type becomes
//! `Standard` with `maxSurge: 1` / `maxUnavailable: 0` where unset. The pod template is not defaulted, so
//! the revision hash covers the template as written.
//!
//! Validation (on the defaulted object; the pod template on a defaulted copy of it): DNS-subdomain
//! name; selector valid, non-empty and matching the template labels; the whole pod template;
//! `restartPolicy` Always; no `activeDeadlineSeconds`; `minReadySeconds` and `revisionHistoryLimit`
//! ≥ 0; no `lifecycle.inPlaceUpdate`; the rolling-update rules of `maxUnavailable` / `maxSurge` /
//! type / `partition`. On UPDATE only template, updateStrategy, lifecycle, burstReplicas,
//! minReadySeconds, revisionHistoryLimit and scaleStrategy may change. Every refusal is 422 (OpenKruise
//! answers 500 on CREATE), and the paths of the type and partition errors name the fields
//! (`rollingUpdate.rollingUpdateType`, `rollingUpdate.partition`; OpenKruise repeats `rollingUpdate`).

use serde_json::{Map, Value, json};

use super::defaults::{Mutator, default_pod_spec, path};
use super::field::{
    ErrorList, GoValue, Path, forbidden, go_int_or_string, go_label_selector, go_string_map, invalid,
    not_supported, required, str_at,
};
use super::meta::{
    is_not_more_than_100_percent, name_is_dns_subdomain, selector_conversion_fails, selector_is_empty,
    selector_matches, string_map, validate_label_selector, validate_nonnegative, validate_object_meta,
    validate_object_meta_update, validate_positive_int_or_percent,
};
use super::podspec::validate_pod_template;
use super::{Which, check_decodes, check_version, judged, raw_object, refuse, strip_nulls};
use crate::{Decision, Settings, review::AdmissionRequest, view::ClusterView};

const GROUP: &str = "apps.kruise.io";
const KIND: &str = "DaemonSet";

fn p(s: &[&str]) -> Vec<String> {
    s.iter().map(|x| x.to_string()).collect()
}

/// OpenKruise's `SetDefaultsDaemonSet` (v1alpha1) / `SetDefaultsDaemonSetV1beta1`.
pub fn apply_defaults(m: &mut Mutator) {
    m.set_default(&p(&["spec", "burstReplicas"]), json!(250));
    let us = p(&["spec", "updateStrategy"]);
    m.set_default_zero(&path(&us, &["type"]), json!("RollingUpdate"));
    if m.get(&path(&us, &["type"])).and_then(Value::as_str) == Some("RollingUpdate") {
        let ru = path(&us, &["rollingUpdate"]);
        m.set_default(&ru, json!({}));
        let kind = path(&ru, &["rollingUpdateType"]);
        m.set_default_zero(&kind, json!("Standard"));
        let (unavailable, surge) = (path(&ru, &["maxUnavailable"]), path(&ru, &["maxSurge"]));
        if m.get(&kind).and_then(Value::as_str) == Some("Surging") {
            m.push(crate::patch::replace(
                kind.iter().map(String::as_str),
                json!("Standard"),
            ));
            m.set_default(&surge, json!(1));
            m.set_default(&unavailable, json!(0));
        }
        if !m.has(&unavailable) && !m.has(&surge) {
            m.set_default(&unavailable, json!(1));
            m.set_default(&surge, json!(0));
        }
    }
    m.set_default(&p(&["spec", "revisionHistoryLimit"]), json!(10));
}

fn decode(version: &str, object: &Value) -> Result<(), Box<Decision>> {
    match version {
        "v1alpha1" => check_decodes::<kruise_api::apps_v1alpha1::DaemonSet>(KIND, object).map(drop),
        _ => check_decodes::<kruise_api::apps_v1beta1::DaemonSet>(KIND, object).map(drop),
    }
}

/// `/mutate-apps-kruise-io-daemonset`.
pub fn mutate(request: &AdmissionRequest) -> Decision {
    if !judged(request) {
        return Decision::allow();
    }
    let version = match check_version(request) {
        Ok(v) => v,
        Err(d) => return *d,
    };
    let object = match raw_object(request, Which::New, GROUP, KIND) {
        Ok(o) => o,
        Err(d) => return *d,
    };
    if let Err(d) = decode(version, &object) {
        return *d;
    }
    let mut m = Mutator::new(request.object.clone().unwrap_or(object));
    apply_defaults(&mut m);
    Decision::patched(m.ops)
}

fn defaulted(request: &AdmissionRequest, which: Which, version: &str) -> Result<Value, Box<Decision>> {
    let object = raw_object(request, which, GROUP, KIND)?;
    decode(version, &object)?;
    let mut m = Mutator::new(object);
    apply_defaults(&mut m);
    Ok(m.doc)
}

/// `/validate-apps-kruise-io-daemonset` (CREATE and UPDATE).
pub fn validate(request: &AdmissionRequest, _view: &impl ClusterView, _settings: &Settings) -> Decision {
    if !judged(request) {
        return Decision::allow();
    }
    let version = match check_version(request) {
        Ok(v) => v,
        Err(d) => return *d,
    };
    let obj = match defaulted(request, Which::New, version) {
        Ok(o) => o,
        Err(d) => return *d,
    };
    let mut errs = Vec::new();
    if request.operation == crate::Operation::Update {
        let old = match defaulted(request, Which::Old, version) {
            Ok(o) => o,
            Err(d) => return *d,
        };
        errs.extend(validate_update(&obj, &old));
    }
    errs.extend(validate_daemonset(&obj));
    refuse(&errs).unwrap_or_else(Decision::allow)
}

fn present<'a>(v: &'a Value, key: &str) -> Option<&'a Value> {
    v.get(key).filter(|x| !x.is_null())
}

/// `validateDaemonSet` on a defaulted object.
pub fn validate_daemonset(obj: &Value) -> ErrorList {
    let mut errs = validate_object_meta(obj.get("metadata"), true, name_is_dns_subdomain);
    let null = Value::Null;
    let spec = obj.get("spec").unwrap_or(&null);
    let sp = Path::new("spec");
    errs.extend(validate_selector(spec));
    let template = spec.get("template").unwrap_or(&null);
    let mut copy = Mutator::new(template.clone());
    default_pod_spec(&mut copy, &p(&["spec"]));
    errs.extend(validate_pod_template(&copy.doc, &sp.child("template")));
    let tspec = copy.doc.get("spec").unwrap_or(&null);
    let restart = str_at(tspec, "restartPolicy");
    if restart != "Always" {
        errs.push(not_supported(
            &sp.child("template").child("spec").child("restartPolicy"),
            restart,
            &["Always"],
        ));
    }
    if present(tspec, "activeDeadlineSeconds").is_some() {
        errs.push(forbidden(
            &sp.child("template").child("spec").child("activeDeadlineSeconds"),
            "activeDeadlineSeconds in DaemonSet is not Supported",
        ));
    }
    let min_ready = spec.get("minReadySeconds").and_then(Value::as_i64).unwrap_or(0);
    errs.extend(validate_nonnegative(min_ready, &sp.child("minReadySeconds")));
    errs.extend(validate_update_strategy(
        spec.get("updateStrategy").unwrap_or(&null),
    ));
    if let Some(limit) = present(spec, "revisionHistoryLimit") {
        errs.extend(validate_nonnegative(
            limit.as_i64().unwrap_or(0),
            &sp.child("revisionHistoryLimit"),
        ));
    }
    if spec
        .pointer("/lifecycle/inPlaceUpdate")
        .is_some_and(|v| !v.is_null())
    {
        errs.push(forbidden(
            &sp.child("lifecycle").child("inPlaceUpdate"),
            "inPlaceUpdate hook has not supported yet",
        ));
    }
    errs
}

fn validate_selector(spec: &Value) -> ErrorList {
    let sp = Path::new("spec");
    let selector = present(spec, "selector");
    let mut errs = validate_label_selector(selector, &sp.child("selector"));
    let labels = spec.pointer("/template/metadata/labels").filter(|v| !v.is_null());
    if !selector_conversion_fails(selector)
        && selector.is_none_or(|s| !selector_matches(s, &string_map(labels)))
    {
        errs.push(invalid(
            &sp.child("template").child("metadata").child("labels"),
            GoValue::Raw(go_string_map(labels)),
            "`selector` does not match template `labels`",
        ));
    }
    if let Some(sel) = selector
        && selector_is_empty(sel)
    {
        errs.push(invalid(
            &sp.child("selector"),
            go_label_selector(Some(sel)),
            "empty selector is invalid for daemonset",
        ));
    }
    errs
}

/// OpenKruise's `getIntOrPercentValue`: a percent's number, an int, or a non-percent string's integer
/// value (0 when it is none).
fn int_or_percent_nonzero(v: &Value) -> bool {
    match v {
        Value::String(s) => s.trim_end_matches('%').parse::<i64>().unwrap_or(0) != 0,
        v => v.as_i64().unwrap_or(0) != 0,
    }
}

fn validate_update_strategy(strategy: &Value) -> ErrorList {
    let mut errs = ErrorList::new();
    let path = Path::new("spec").child("updateStrategy");
    match str_at(strategy, "type") {
        "OnDelete" => {}
        "RollingUpdate" => match present(strategy, "rollingUpdate") {
            None => errs.push(required(&path.child("rollingUpdate"), "")),
            Some(ru) => errs.extend(validate_rolling_update(ru, &path.child("rollingUpdate"))),
        },
        other => errs.push(not_supported(
            &path,
            GoValue::Raw(format!("{{Type:{other:?}}}")),
            &["RollingUpdate", "OnDelete"],
        )),
    }
    errs
}

fn validate_rolling_update(ru: &Value, path: &Path) -> ErrorList {
    let mut errs = ErrorList::new();
    let mut check = |key: &str| {
        let v = present(ru, key).filter(|v| int_or_percent_nonzero(v))?;
        errs.extend(validate_positive_int_or_percent(v, &path.child(key)));
        errs.extend(is_not_more_than_100_percent(v, &path.child(key)));
        Some(v.clone())
    };
    let unavailable = check("maxUnavailable");
    let surge = check("maxSurge");
    match (&unavailable, &surge) {
        (Some(_), Some(s)) => errs.push(invalid(
            &path.child("maxSurge"),
            go_int_or_string(Some(s)),
            "may not be set when maxUnavailable is non-zero",
        )),
        (None, None) => errs.push(required(
            &path.child("maxUnavailable"),
            "cannot be 0 when maxSurge is 0",
        )),
        _ => {}
    }
    match str_at(ru, "rollingUpdateType") {
        "" | "Standard" => {}
        "InPlaceIfPossible" => {
            if surge.is_some() {
                errs.push(required(
                    &path.child("maxSurge"),
                    "must be 0 for InPlaceIfPossible type",
                ));
            }
        }
        "Surging" => {
            if unavailable.is_some() {
                errs.push(required(
                    &path.child("maxUnavailable"),
                    "must be 0 for Surging type",
                ));
            }
        }
        other => errs.push(not_supported(
            &path.child("rollingUpdateType"),
            other,
            &["Standard", "Surging", "InPlaceIfPossible"],
        )),
    }
    if let Some(partition) = present(ru, "partition") {
        let pp = path.child("partition");
        match partition {
            Value::String(_) => errs.extend(validate_positive_int_or_percent(partition, &pp)),
            v => errs.extend(validate_nonnegative(v.as_i64().unwrap_or(0), &pp)),
        }
        errs.extend(is_not_more_than_100_percent(partition, &pp));
    }
    errs
}

const MUTABLE_SPEC_FIELDS: &[&str] = &[
    "template",
    "updateStrategy",
    "lifecycle",
    "burstReplicas",
    "minReadySeconds",
    "revisionHistoryLimit",
    "scaleStrategy",
];

fn frozen_spec(obj: &Value) -> Value {
    let mut spec: Map<String, Value> = obj
        .get("spec")
        .and_then(Value::as_object)
        .cloned()
        .unwrap_or_default();
    for key in MUTABLE_SPEC_FIELDS {
        spec.remove(*key);
    }
    strip_nulls(&Value::Object(spec))
}

/// `validateDaemonSetUpdate`: metadata and the immutable spec fields.
pub fn validate_update(obj: &Value, old: &Value) -> ErrorList {
    let mut errs = validate_object_meta_update(obj.get("metadata"), old.get("metadata"));
    if frozen_spec(obj) != frozen_spec(old) {
        errs.push(forbidden(
            &Path::new("spec"),
            "updates to daemonset spec for fields other than 'BurstReplicas', 'template', 'lifecycle', 'scaleStrategy', 'updateStrategy', 'minReadySeconds', and 'revisionHistoryLimit' are forbidden",
        ));
    }
    errs
}
