//! CloneSet: OpenKruise's defaults (`mcloneset.kb.io`) and validation (`vcloneset.kb.io`), in the version
//! the object arrives in (OpenKruise has one rule set per version).
//!
//! Defaults: `replicas: 1`, `revisionHistoryLimit: 10`; v1beta1 `updateStrategy.type: RollingUpdate` with
//! `rollingUpdate.{podUpdatePolicy: ReCreate, partition: 0, maxUnavailable: 20%, maxSurge: 0}` (and
//! `inPlaceUpdateStrategy: {}` for in-place policies); v1alpha1 `updateStrategy.{type: ReCreate,
//! partition: 0, maxUnavailable: 20%, maxSurge: 0}` (and `inPlaceUpdateStrategy: {}` for in-place
//! types). On CREATE, and on UPDATE when the template changed, the pod template gets the core/v1 defaults
//! ([`super::defaults`]) and each volumeClaimTemplate `status.phase: Pending`.
//!
//! Validation: metadata (DNS-subdomain name), `replicas` ≥ 0, selector required / valid / non-empty and
//! matching the template labels, the pod template (Kubernetes' checks, with a volume per
//! volumeClaimTemplate), `restartPolicy` Always only, no `activeDeadlineSeconds`, `podsToDelete` without
//! duplicates (v1alpha1: each newly listed pod must exist, not be terminating and be controlled by this
//! CloneSet), the update strategy (types, partition / maxUnavailable / maxSurge, priority and scatter
//! strategies, in-place image pre-download settings), v1alpha1 `progressDeadlineSeconds`. On UPDATE only
//! replicas, template, lifecycle, scaleStrategy, updateStrategy, minReadySeconds,
//! progressDeadlineSeconds, volumeClaimTemplates and revisionHistoryLimit may change (so `selector` is
//! immutable), and (v1alpha1) with InPlaceOnly only container images may change in the template.
//!
//! Kept from OpenKruise on purpose: in v1beta1 a `maxSurge` ≥ 1 does not excuse `maxUnavailable` < 1
//! (OpenKruise's check reads a shadowed variable).

use serde_json::{Map, Value, json};

use super::defaults::{Mutator, default_pod_spec, path};
use super::field::{
    ErrorList, GoValue, Path, forbidden, go_label_selector, go_string_map, invalid, not_supported, required,
    str_at,
};
use super::meta::{
    name_is_dns_subdomain, selector_conversion_fails, selector_is_empty, selector_matches, string_map,
    validate_label_selector, validate_nonnegative, validate_object_meta, validate_object_meta_update,
};
use super::{Which, check_decodes, check_version, judged, raw_object, refuse, strip_nulls};
use crate::{Decision, Settings, review::AdmissionRequest, view::ClusterView};

mod strategy;

use strategy::{validate_scale_strategy, validate_strategy_v1alpha1, validate_strategy_v1beta1};

const GROUP: &str = "apps.kruise.io";
const KIND: &str = "CloneSet";

fn p(s: &[&str]) -> Vec<String> {
    s.iter().map(|x| x.to_string()).collect()
}

/// OpenKruise's `SetDefaultsCloneSet` (v1alpha1) / `SetDefaultsCloneSetV1beta1`.
pub fn apply_defaults(m: &mut Mutator, version: &str, template_defaults: bool) {
    m.set_default(&p(&["spec", "replicas"]), json!(1));
    m.set_default(&p(&["spec", "revisionHistoryLimit"]), json!(10));
    if template_defaults {
        default_pod_spec(m, &p(&["spec", "template", "spec"]));
        for i in 0..m.len(&p(&["spec", "volumeClaimTemplates"])) {
            m.set_default_zero(
                &p(&["spec", "volumeClaimTemplates", &i.to_string(), "status", "phase"]),
                json!("Pending"),
            );
        }
    }
    let us = p(&["spec", "updateStrategy"]);
    let in_place = |v: Option<&Value>| {
        matches!(
            v.and_then(Value::as_str),
            Some("InPlaceIfPossible" | "InPlaceOnly")
        )
    };
    let strategy = if version == "v1alpha1" {
        m.set_default_zero(&path(&us, &["type"]), json!("ReCreate"));
        if in_place(m.get(&path(&us, &["type"]))) {
            m.set_default(&path(&us, &["inPlaceUpdateStrategy"]), json!({}));
        }
        us
    } else {
        m.set_default_zero(&path(&us, &["type"]), json!("RollingUpdate"));
        if m.get(&path(&us, &["type"])).and_then(Value::as_str) != Some("RollingUpdate") {
            return;
        }
        let ru = path(&us, &["rollingUpdate"]);
        m.set_default(&ru, json!({}));
        m.set_default_zero(&path(&ru, &["podUpdatePolicy"]), json!("ReCreate"));
        if in_place(m.get(&path(&ru, &["podUpdatePolicy"]))) {
            m.set_default(&path(&ru, &["inPlaceUpdateStrategy"]), json!({}));
        }
        ru
    };
    m.set_default(&path(&strategy, &["partition"]), json!(0));
    m.set_default(&path(&strategy, &["maxUnavailable"]), json!("20%"));
    m.set_default(&path(&strategy, &["maxSurge"]), json!(0));
}

fn decode(version: &str, object: &Value) -> Result<(), Box<Decision>> {
    match version {
        "v1alpha1" => check_decodes::<kruise_api::apps_v1alpha1::CloneSet>(KIND, object).map(drop),
        _ => check_decodes::<kruise_api::apps_v1beta1::CloneSet>(KIND, object).map(drop),
    }
}

fn template_changed(new: &Value, old: &Value) -> bool {
    let t = |o: &Value| strip_nulls(o.pointer("/spec/template").unwrap_or(&Value::Null));
    t(new) != t(old)
}

/// `/mutate-apps-kruise-io-cloneset`.
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
    let template_defaults = if request.operation == crate::Operation::Update {
        match raw_object(request, Which::Old, GROUP, KIND) {
            Ok(old) => template_changed(&object, &old),
            Err(d) => return *d,
        }
    } else {
        true
    };
    let mut m = Mutator::new(request.object.clone().unwrap_or(object));
    apply_defaults(&mut m, version, template_defaults);
    Decision::patched(m.ops)
}

fn defaulted(request: &AdmissionRequest, which: Which, version: &str) -> Result<Value, Box<Decision>> {
    let object = raw_object(request, which, GROUP, KIND)?;
    decode(version, &object)?;
    let mut m = Mutator::new(object);
    apply_defaults(&mut m, version, true);
    Ok(m.doc)
}

/// `/validate-apps-kruise-io-cloneset`: deletion protection first (DELETE, and the label's value on
/// CREATE/UPDATE), then, for CREATE and UPDATE, the CloneSet rules.
pub fn validate(request: &AdmissionRequest, view: &impl ClusterView, settings: &Settings) -> Decision {
    let protection = crate::deletion_protection::validate(request, view, settings);
    if !protection.allowed() || !judged(request) {
        return protection;
    }
    let mut decision = validate_spec_request(request, view);
    decision.warnings.splice(0..0, protection.warnings);
    decision
}

fn validate_spec_request(request: &AdmissionRequest, view: &impl ClusterView) -> Decision {
    let version = match check_version(request) {
        Ok(v) => v,
        Err(d) => return *d,
    };
    let obj = match defaulted(request, Which::New, version) {
        Ok(o) => o,
        Err(d) => return *d,
    };
    let errs = if request.operation == crate::Operation::Update {
        let old = match defaulted(request, Which::Old, version) {
            Ok(o) => o,
            Err(d) => return *d,
        };
        validate_update(&obj, &old, version, view)
    } else {
        validate_cloneset(&obj, None, version, view)
    };
    refuse(&errs).unwrap_or_else(Decision::allow)
}

fn items<'a>(v: &'a Value, key: &str) -> &'a [Value] {
    v.get(key).and_then(Value::as_array).map_or(&[], Vec::as_slice)
}

fn present<'a>(v: &'a Value, key: &str) -> Option<&'a Value> {
    v.get(key).filter(|x| !x.is_null())
}

/// `validateCloneSet` / `ValidateCloneSetV1beta1` on a defaulted object of `version`.
pub fn validate_cloneset(
    obj: &Value,
    old: Option<&Value>,
    version: &str,
    view: &impl ClusterView,
) -> ErrorList {
    let mut errs = validate_object_meta(obj.get("metadata"), true, name_is_dns_subdomain);
    let null = Value::Null;
    let spec = obj.get("spec").unwrap_or(&null);
    let sp = Path::new("spec");
    let replicas = spec.get("replicas").and_then(Value::as_i64).unwrap_or(1);
    errs.extend(validate_nonnegative(replicas, &sp.child("replicas")));
    let selector = present(spec, "selector");
    match selector {
        None => errs.push(required(&sp.child("selector"), "")),
        Some(sel) => {
            errs.extend(validate_label_selector(Some(sel), &sp.child("selector")));
            if selector_is_empty(sel) {
                errs.push(invalid(
                    &sp.child("selector"),
                    go_label_selector(Some(sel)),
                    "empty selector is invalid for cloneset",
                ));
            }
        }
    }
    let template = spec.get("template").unwrap_or(&null);
    if selector_conversion_fails(selector) {
        errs.push(invalid(&sp.child("selector"), go_label_selector(selector), ""));
    } else {
        let labels_value = template.pointer("/metadata/labels").filter(|v| !v.is_null());
        // A nil selector selects nothing (never "empty"); an empty one selects everything.
        let matches = match selector {
            None => false,
            Some(sel) => selector_is_empty(sel) || selector_matches(sel, &string_map(labels_value)),
        };
        if !matches {
            errs.push(invalid(
                &sp.child("template").child("metadata").child("labels"),
                GoValue::Raw(go_string_map(labels_value)),
                "`selector` does not match template `labels`",
            ));
        }
        let mut with_claims = template.clone();
        let claims: Vec<Value> = items(spec, "volumeClaimTemplates")
            .iter()
            .map(|pvc| {
                let name = pvc
                    .pointer("/metadata/name")
                    .and_then(Value::as_str)
                    .unwrap_or("");
                json!({"name": name, "persistentVolumeClaim": {"claimName": name}})
            })
            .collect();
        if !claims.is_empty()
            && let Some(tspec) = with_claims.get_mut("spec").and_then(Value::as_object_mut)
        {
            let vols = tspec.entry("volumes").or_insert_with(|| Value::Array(Vec::new()));
            if !vols.is_array() {
                *vols = Value::Array(Vec::new());
            }
            if let Some(a) = vols.as_array_mut() {
                a.extend(claims);
            }
        }
        errs.extend(super::podspec::validate_pod_template(
            &with_claims,
            &sp.child("template"),
        ));
    }
    let tspec = template.get("spec").unwrap_or(&null);
    let restart = str_at(tspec, "restartPolicy");
    if !restart.is_empty() && restart != "Always" {
        errs.push(not_supported(
            &sp.child("template").child("spec").child("restartPolicy"),
            restart,
            &["Always"],
        ));
    }
    if present(tspec, "activeDeadlineSeconds").is_some() {
        errs.push(forbidden(
            &sp.child("template").child("spec").child("activeDeadlineSeconds"),
            "activeDeadlineSeconds in cloneset is not Supported",
        ));
    }
    errs.extend(validate_scale_strategy(obj, spec, old, version, view));
    let us = spec.get("updateStrategy").unwrap_or(&null);
    if version == "v1alpha1" {
        errs.extend(validate_strategy_v1alpha1(us, replicas));
        if let Some(pds) = present(spec, "progressDeadlineSeconds").and_then(Value::as_i64) {
            let path = sp.child("progressDeadlineSeconds");
            errs.extend(validate_nonnegative(pds, &path));
            let min_ready = spec.get("minReadySeconds").and_then(Value::as_i64).unwrap_or(0);
            if pds != i64::from(i32::MAX) && pds <= min_ready {
                errs.push(invalid(&path, pds, "must be greater than minReadySeconds"));
            }
        }
    } else {
        errs.extend(validate_strategy_v1beta1(us, replicas));
    }
    errs
}

const MUTABLE_SPEC_FIELDS: &[&str] = &[
    "replicas",
    "template",
    "scaleStrategy",
    "updateStrategy",
    "minReadySeconds",
    "progressDeadlineSeconds",
    "lifecycle",
    "revisionHistoryLimit",
    "volumeClaimTemplates",
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

/// A minimal JSON diff: the first operation (as `op path`) that is not a replacement of
/// `/containers/N/image`.
pub(crate) fn first_non_image_change(old: &Value, new: &Value, at: &str) -> Option<String> {
    match (old, new) {
        (Value::Object(a), Value::Object(b)) => {
            let mut keys: Vec<&String> = a.keys().chain(b.keys()).collect();
            keys.sort();
            keys.dedup();
            for k in keys {
                let sub = format!("{at}/{}", k.replace('~', "~0").replace('/', "~1"));
                match (a.get(k), b.get(k)) {
                    (Some(x), Some(y)) => {
                        if let Some(found) = first_non_image_change(x, y, &sub) {
                            return Some(found);
                        }
                    }
                    (None, Some(_)) => return Some(format!("add {sub}")),
                    (Some(_), None) => return Some(format!("remove {sub}")),
                    (None, None) => {}
                }
            }
            None
        }
        (Value::Array(a), Value::Array(b)) if a.len() == b.len() => a
            .iter()
            .zip(b)
            .enumerate()
            .find_map(|(i, (x, y))| first_non_image_change(x, y, &format!("{at}/{i}"))),
        (Value::Array(a), Value::Array(b)) if a.len() < b.len() => Some(format!("add {at}/{}", a.len())),
        (Value::Array(_), Value::Array(b)) => Some(format!("remove {at}/{}", b.len())),
        (x, y) if x == y => None,
        _ => {
            let parts: Vec<&str> = at.split('/').collect();
            let image = parts.len() == 4
                && parts[1] == "containers"
                && parts[2].bytes().all(|c| c.is_ascii_digit())
                && parts[3] == "image";
            (!image).then(|| format!("replace {at}"))
        }
    }
}

/// `validateCloneSetUpdate` / `ValidateCloneSetUpdateV1beta1`.
pub fn validate_update(obj: &Value, old: &Value, version: &str, view: &impl ClusterView) -> ErrorList {
    let mut errs = validate_object_meta_update(obj.get("metadata"), old.get("metadata"));
    if frozen_spec(obj) != frozen_spec(old) {
        errs.push(forbidden(
            &Path::new("spec"),
            "updates to cloneset spec for fields other than 'replicas', 'template', 'lifecycle', 'scaleStrategy', 'updateStrategy', 'minReadySeconds', 'progressDeadlineSeconds', 'volumeClaimTemplates' and 'revisionHistoryLimit' are forbidden",
        ));
    }
    if version == "v1alpha1"
        && obj.pointer("/spec/updateStrategy/type").and_then(Value::as_str) == Some("InPlaceOnly")
    {
        let t = |o: &Value| strip_nulls(o.pointer("/spec/template/spec").unwrap_or(&Value::Null));
        if let Some(change) = first_non_image_change(&t(old), &t(obj), "") {
            errs.push(forbidden(
                &Path::new("spec"),
                format!("only allowed to update images in spec for InPlaceOnly, but found {change}"),
            ));
        }
    }
    errs.extend(validate_cloneset(obj, Some(old), version, view));
    errs
}
