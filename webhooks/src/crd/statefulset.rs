//! Advanced StatefulSet: OpenKruise's defaults (`/mutate-apps-kruise-io-statefulset`) and validation
//! (`/validate-apps-kruise-io-statefulset`). OpenKruise converts a v1alpha1 object to v1beta1, applies
//! one rule set and converts back; the shapes are the same for every field v1alpha1 has, so kruise-rs
//! works on the object as sent, with field paths that read the same in both versions.
//!
//! Defaults: `podManagementPolicy: OrderedReady`, `updateStrategy.type: RollingUpdate` and, for
//! RollingUpdate, `rollingUpdate.{partition: 0, maxUnavailable: 1, podUpdatePolicy: ReCreate,
//! minReadySeconds: 0}`; `replicas: 1`, `revisionHistoryLimit: 10`; v1beta1 only (v1alpha1 has no such
//! fields): `persistentVolumeClaimRetentionPolicy.{whenDeleted,whenScaled}: Retain` with
//! `StatefulSetAutoDeletePVC`, `volumeClaimUpdateStrategy.type: OnDelete` with
//! `StatefulSetAutoResizePVCGate`. The pod template gets CloneSet's template defaults
//! ([`super::defaults::default_pod_spec`]) on CREATE and on an UPDATE that changes it, unless
//! `TemplateNoDefaults`.
//!
//! Validation (on the defaulted object): DNS-label name, `podManagementPolicy`, `reserveOrdinals`,
//! both `maxUnavailable`s, the update strategy, retention values, `replicas` ≥ 0, the selector (valid,
//! non-empty, matching the template labels), template labels and annotations, `restartPolicy` Always,
//! no `activeDeadlineSeconds`. On UPDATE only replicas, ordinals, template, reserveOrdinals, lifecycle,
//! revisionHistoryLimit, persistentVolumeClaimRetentionPolicy, volumeClaimTemplates,
//! volumeClaimUpdateStrategy, updateStrategy and scaleStrategy may change; with `InPlaceOnly` only
//! container images may change in the template.

use serde_json::{Map, Value, json};

use super::defaults::{Mutator, default_pod_spec, path};
use super::field::{
    ErrorList, GoValue, Path, forbidden, go_int_or_string, go_label_selector, go_string_map, invalid,
    not_supported, required, str_at,
};
use super::meta::{
    name_is_dns_label, selector_conversion_fails, selector_is_empty, selector_matches, string_map,
    validate_annotations, validate_label_selector, validate_labels, validate_nonnegative,
    validate_object_meta, validate_object_meta_update, validate_positive_int_or_percent,
};
use super::{Which, check_decodes, check_version, judged, raw_object, refuse, strip_nulls};
use crate::{Decision, Settings, review::AdmissionRequest, view::ClusterView};
use kruise_core::{feature_gates::Gate, ordinals};

const GROUP: &str = "apps.kruise.io";
const KIND: &str = "StatefulSet";

fn p(s: &[&str]) -> Vec<String> {
    s.iter().map(|x| x.to_string()).collect()
}

/// OpenKruise's `SetDefaultsStatefulSet`, in `version`'s shape.
pub fn apply_defaults(m: &mut Mutator, version: &str, template_defaults: bool, settings: &Settings) {
    m.set_default_zero(&p(&["spec", "podManagementPolicy"]), json!("OrderedReady"));
    let us = p(&["spec", "updateStrategy"]);
    m.set_default_zero(&path(&us, &["type"]), json!("RollingUpdate"));
    if m.get(&path(&us, &["type"])).and_then(Value::as_str) == Some("RollingUpdate") {
        let ru = path(&us, &["rollingUpdate"]);
        m.set_default(&ru, json!({}));
        m.set_default(&path(&ru, &["partition"]), json!(0));
        m.set_default(&path(&ru, &["maxUnavailable"]), json!(1));
        m.set_default_zero(&path(&ru, &["podUpdatePolicy"]), json!("ReCreate"));
        m.set_default(&path(&ru, &["minReadySeconds"]), json!(0));
    }
    if version == "v1beta1" {
        if settings.enabled(Gate::StatefulSetAutoDeletePVC) {
            let policy = p(&["spec", "persistentVolumeClaimRetentionPolicy"]);
            m.set_default(&policy, json!({}));
            m.set_default_zero(&path(&policy, &["whenDeleted"]), json!("Retain"));
            m.set_default_zero(&path(&policy, &["whenScaled"]), json!("Retain"));
        }
        if settings.enabled(Gate::StatefulSetAutoResizePVCGate) {
            let vcus = p(&["spec", "volumeClaimUpdateStrategy"]);
            m.set_default(&vcus, json!({}));
            m.set_default_zero(&path(&vcus, &["type"]), json!("OnDelete"));
        }
    }
    m.set_default(&p(&["spec", "replicas"]), json!(1));
    m.set_default(&p(&["spec", "revisionHistoryLimit"]), json!(10));
    if template_defaults && !settings.enabled(Gate::TemplateNoDefaults) {
        default_pod_spec(m, &p(&["spec", "template", "spec"]));
        for i in 0..m.len(&p(&["spec", "volumeClaimTemplates"])) {
            m.set_default_zero(
                &p(&["spec", "volumeClaimTemplates", &i.to_string(), "status", "phase"]),
                json!("Pending"),
            );
        }
    }
}

fn decode(version: &str, object: &Value) -> Result<(), Box<Decision>> {
    match version {
        "v1alpha1" => check_decodes::<kruise_api::apps_v1alpha1::StatefulSet>(KIND, object).map(drop),
        _ => check_decodes::<kruise_api::apps_v1beta1::StatefulSet>(KIND, object).map(drop),
    }
}

fn at(v: &Value, pointer: &str) -> Value {
    strip_nulls(v.pointer(pointer).unwrap_or(&Value::Null))
}

/// `/mutate-apps-kruise-io-statefulset`.
pub fn mutate(request: &AdmissionRequest, settings: &Settings) -> Decision {
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
            Ok(old) => at(&object, "/spec/template") != at(&old, "/spec/template"),
            Err(d) => return *d,
        }
    } else {
        true
    };
    let mut m = Mutator::new(request.object.clone().unwrap_or(object));
    apply_defaults(&mut m, version, template_defaults, settings);
    Decision::patched(m.ops)
}

fn defaulted(
    request: &AdmissionRequest,
    which: Which,
    version: &str,
    settings: &Settings,
) -> Result<Value, Box<Decision>> {
    let object = raw_object(request, which, GROUP, KIND)?;
    decode(version, &object)?;
    let mut m = Mutator::new(object);
    apply_defaults(&mut m, version, true, settings);
    Ok(m.doc)
}

/// `/validate-apps-kruise-io-statefulset`: deletion protection first (DELETE, and the label's value on
/// CREATE/UPDATE), then, for CREATE and UPDATE, the StatefulSet rules.
pub fn validate(request: &AdmissionRequest, view: &impl ClusterView, settings: &Settings) -> Decision {
    let protection = crate::deletion_protection::validate(request, view, settings);
    if !protection.allowed() || !judged(request) {
        return protection;
    }
    let version = match check_version(request) {
        Ok(v) => v,
        Err(d) => return *d,
    };
    let obj = match defaulted(request, Which::New, version, settings) {
        Ok(o) => o,
        Err(d) => return *d,
    };
    let mut errs = validate_statefulset(&obj);
    let mut in_place_only = None;
    if request.operation == crate::Operation::Update {
        let old = match defaulted(request, Which::Old, version, settings) {
            Ok(o) => o,
            Err(d) => return *d,
        };
        errs.extend(validate_update(&obj, &old));
        if str_at(&at(&obj, "/spec/updateStrategy/rollingUpdate"), "podUpdatePolicy") == "InPlaceOnly" {
            in_place_only = first_non_image_change(
                &at(&old, "/spec/template/spec"),
                &at(&obj, "/spec/template/spec"),
                "",
            );
        }
    }
    let mut decision = match (refuse(&errs), in_place_only) {
        (Some(d), _) => d,
        (None, Some(change)) => Decision::deny(
            422,
            "Invalid",
            format!(
                "invalid template modified with InPlaceOnly strategy: {change}, currently only image update is allowed for InPlaceOnly"
            ),
        ),
        (None, None) => Decision::allow(),
    };
    decision.warnings.splice(0..0, protection.warnings);
    decision
}

fn present<'a>(v: &'a Value, key: &str) -> Option<&'a Value> {
    v.get(key).filter(|x| !x.is_null())
}

/// `validateStatefulSet` on a defaulted object.
pub fn validate_statefulset(obj: &Value) -> ErrorList {
    let mut errs = validate_object_meta(obj.get("metadata"), true, name_is_dns_label);
    let null = Value::Null;
    let spec = obj.get("spec").unwrap_or(&null);
    let sp = Path::new("spec");
    let policy = str_at(spec, "podManagementPolicy");
    match policy {
        "" => errs.push(required(&sp.child("podManagementPolicy"), "")),
        "OrderedReady" | "Parallel" => {}
        other => errs.push(invalid(
            &sp.child("podManagementPolicy"),
            other,
            "must be 'OrderedReady' or 'Parallel'",
        )),
    }
    errs.extend(validate_reserve_ordinals(spec));
    if let Some(mu) = spec
        .pointer("/scaleStrategy/maxUnavailable")
        .filter(|v| !v.is_null())
    {
        errs.extend(validate_max_unavailable(
            mu,
            policy,
            &sp.child("scaleStrategy").child("maxUnavailable"),
        ));
    }
    errs.extend(validate_update_strategy(spec, policy));
    errs.extend(validate_retention(spec));
    let replicas = spec.get("replicas").and_then(Value::as_i64).unwrap_or(1);
    errs.extend(validate_nonnegative(replicas, &sp.child("replicas")));
    errs.extend(validate_selector_and_template(spec));
    let tspec = spec.pointer("/template/spec").unwrap_or(&null);
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
            "activeDeadlineSeconds in StatefulSet is not Supported",
        ));
    }
    errs
}

/// The bad value of a `reserveOrdinals` error: the whole list, as Go prints `[]intstr.IntOrString`.
fn go_reserve_ordinals(list: &[Value]) -> GoValue {
    let items: Vec<String> = list
        .iter()
        .map(|v| match go_int_or_string(Some(v)) {
            GoValue::Raw(s) => s,
            _ => "intstr.IntOrString{Type:0, IntVal:0, StrVal:\"\"}".to_string(),
        })
        .collect();
    GoValue::Raw(format!("[]intstr.IntOrString{{{}}}", items.join(", ")))
}

fn validate_reserve_ordinals(spec: &Value) -> ErrorList {
    let mut errs = ErrorList::new();
    let Some(list) = spec.get("reserveOrdinals").and_then(Value::as_array) else {
        return errs;
    };
    let root = Path::new("spec").root();
    for (i, elem) in list.iter().enumerate() {
        match elem {
            Value::String(s) => {
                if !ordinals::is_range_syntax(s) {
                    errs.push(invalid(
                        &root,
                        go_reserve_ordinals(list),
                        format!("{i} th reserve ordinal is not a valid range: {s}"),
                    ));
                }
                if let Err(e) = ordinals::parse_range(s) {
                    errs.push(invalid(
                        &root,
                        go_reserve_ordinals(list),
                        format!("{i} th reserve ordinal is invalid: {s}, err = {e}"),
                    ));
                }
            }
            v => {
                let n = v.as_i64().unwrap_or(0);
                if n < 0 {
                    errs.push(invalid(
                        &root,
                        go_reserve_ordinals(list),
                        format!("{i} th reserve ordinal is negative: {n}"),
                    ));
                }
            }
        }
    }
    errs
}

/// `validateMaxUnavailableField`.
fn validate_max_unavailable(mu: &Value, policy: &str, path: &Path) -> ErrorList {
    let mut errs = validate_positive_int_or_percent(mu, path);
    // OpenKruise prints the resolved integer here (a shadowed variable), the struct below.
    match super::meta::int_or_percent_value(mu, 1, true) {
        Err(e) => errs.push(invalid(path, 0, format!("getValueFromIntOrPercent error: {e}"))),
        Ok(v) if v < 1 => errs.push(invalid(path, v, "should not be less than 1")),
        Ok(_) => {}
    }
    if policy != "Parallel" && mu.as_i64() != Some(1) {
        errs.push(invalid(
            path,
            go_int_or_string(Some(mu)),
            "can only work with Parallel PodManagementPolicyType",
        ));
    }
    errs
}

fn validate_update_strategy(spec: &Value, policy: &str) -> ErrorList {
    let mut errs = ErrorList::new();
    let sp = Path::new("spec");
    let us = spec.get("updateStrategy").unwrap_or(&Value::Null);
    let rpath = sp.child("updateStrategy").child("rollingUpdate");
    let rolling = present(us, "rollingUpdate");
    match str_at(us, "type") {
        "" => errs.push(required(&sp.child("updateStrategy"), "")),
        "OnDelete" => {
            if rolling.is_some() {
                errs.push(invalid(
                    &rpath,
                    GoValue::Raw("&v1beta1.RollingUpdateStatefulSetStrategy{...}".into()),
                    "only allowed for updateStrategy 'RollingUpdate'",
                ));
            }
        }
        "RollingUpdate" => {
            if let Some(ru) = rolling {
                errs.extend(validate_rolling_update(spec, ru, policy, &rpath));
            }
        }
        other => errs.push(invalid(
            &sp.child("updateStrategy"),
            GoValue::Raw(format!(
                "v1beta1.StatefulSetUpdateStrategy{{Type:\"{other}\", ...}}"
            )),
            "must be 'RollingUpdate' or 'OnDelete'",
        )),
    }
    errs
}

fn validate_rolling_update(spec: &Value, ru: &Value, policy: &str, rpath: &Path) -> ErrorList {
    let mut errs = ErrorList::new();
    let partition = ru.get("partition").and_then(Value::as_i64).unwrap_or(0);
    errs.extend(validate_nonnegative(partition, &rpath.child("partition")));
    let min_ready = ru.get("minReadySeconds").and_then(Value::as_i64).unwrap_or(0);
    errs.extend(validate_nonnegative(min_ready, &rpath.child("minReadySeconds")));
    if min_ready > i64::from(kruise_api::apps_v1beta1::MAX_MIN_READY_SECONDS) {
        errs.push(invalid(
            &rpath.child("minReadySeconds"),
            min_ready,
            "must be no more than 300 seconds",
        ));
    }
    match present(ru, "maxUnavailable") {
        None => errs.push(required(&rpath.child("maxUnavailable"), "")),
        Some(mu) => errs.extend(validate_max_unavailable(
            mu,
            policy,
            &rpath.child("maxUnavailable"),
        )),
    }
    match str_at(ru, "podUpdatePolicy") {
        "" => errs.push(required(&rpath.child("podUpdatePolicy"), "")),
        "ReCreate" => {}
        p @ ("InPlaceIfPossible" | "InPlaceOnly") => {
            let gates = spec
                .pointer("/template/spec/readinessGates")
                .and_then(Value::as_array)
                .map_or(&[][..], Vec::as_slice);
            let has_gate = gates
                .iter()
                .any(|g| g.get("conditionType").and_then(Value::as_str) == Some("InPlaceUpdateReady"));
            if !has_gate {
                errs.push(invalid(
                    &Path::new("spec")
                        .child("template")
                        .child("spec")
                        .child("readinessGates"),
                    GoValue::Raw(format!("[]v1.PodReadinessGate(len={})", gates.len())),
                    format!("must contains InPlaceUpdateReady when podUpdatePolicy is {p}"),
                ));
            }
        }
        other => errs.push(invalid(
            &rpath.child("podUpdatePolicy"),
            other,
            "must be 'ReCreate', InPlaceIfPossible or 'InPlaceOnly'",
        )),
    }
    if let Some(unordered) = present(ru, "unorderedUpdate") {
        let upath = rpath.child("unorderedUpdate");
        if policy != "Parallel" {
            errs.push(required(
                &upath,
                "unorderedUpdate can only work with Parallel PodManagementPolicyType",
            ));
        }
        if let Some(e) = super::sidecarset::priority_strategy_error(unordered.get("priorityStrategy")) {
            errs.push(required(&upath.child("priorityStrategy"), e));
        }
    }
    errs
}

fn validate_retention(spec: &Value) -> ErrorList {
    let mut errs = ErrorList::new();
    let Some(policy) = present(spec, "persistentVolumeClaimRetentionPolicy") else {
        return errs;
    };
    let path = Path::new("spec").child("persistentVolumeClaimRetentionPolicy");
    for key in ["whenDeleted", "whenScaled"] {
        let v = str_at(policy, key);
        if !matches!(v, "Retain" | "Delete") {
            errs.push(not_supported(&path.child(key), v, &["Retain", "Delete"]));
        }
    }
    errs
}

/// `validateSpecSelector`: the selector, then Kubernetes' `ValidatePodTemplateSpecForStatefulSet`
/// (selector matches the labels; labels and annotations valid; no pod-spec validation).
fn validate_selector_and_template(spec: &Value) -> ErrorList {
    let mut errs = ErrorList::new();
    let sp = Path::new("spec");
    let selector = present(spec, "selector");
    match selector {
        None => errs.push(required(&sp.child("selector"), "")),
        Some(sel) => {
            errs.extend(validate_label_selector(Some(sel), &sp.child("selector")));
            if selector_is_empty(sel) {
                errs.push(invalid(
                    &sp.child("selector"),
                    go_label_selector(Some(sel)),
                    "empty selector is invalid for statefulset",
                ));
            }
        }
    }
    if selector_conversion_fails(selector) {
        errs.push(invalid(&sp.child("selector"), go_label_selector(selector), ""));
        return errs;
    }
    let tpath = sp.child("template");
    let labels = spec.pointer("/template/metadata/labels").filter(|v| !v.is_null());
    // A nil selector converts to "nothing" and an empty one to "everything": neither is checked.
    if let Some(sel) = selector
        && !selector_is_empty(sel)
        && !selector_matches(sel, &string_map(labels))
    {
        errs.push(invalid(
            &tpath.child("metadata").child("labels"),
            GoValue::Raw(go_string_map(labels)),
            "`selector` does not match template `labels`",
        ));
    }
    errs.extend(validate_labels(labels, &tpath.child("labels")));
    let annotations = spec.pointer("/template/metadata/annotations");
    errs.extend(validate_annotations(annotations, &tpath.child("annotations")));
    errs
}

const MUTABLE_SPEC_FIELDS: &[&str] = &[
    "replicas",
    "ordinals",
    "template",
    "reserveOrdinals",
    "lifecycle",
    "revisionHistoryLimit",
    "persistentVolumeClaimRetentionPolicy",
    "volumeClaimTemplates",
    "volumeClaimUpdateStrategy",
    "updateStrategy",
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

/// `ValidateStatefulSetUpdate`: metadata and the immutable spec fields.
pub fn validate_update(obj: &Value, old: &Value) -> ErrorList {
    let mut errs = validate_object_meta_update(obj.get("metadata"), old.get("metadata"));
    if frozen_spec(obj) != frozen_spec(old) {
        errs.push(forbidden(
            &Path::new("spec"),
            "updates to statefulset spec for fields other than 'replicas', 'ordinals', 'template', 'reserveOrdinals', 'lifecycle', 'revisionHistoryLimit', 'persistentVolumeClaimRetentionPolicy', `volumeClaimTemplates`, `VolumeClaimUpdateStrategy` and 'updateStrategy' are forbidden",
        ));
    }
    errs
}

/// The first change (`op path`) between two template specs that is not a replacement of
/// `/containers/<n>/image`.
fn first_non_image_change(old: &Value, new: &Value, at: &str) -> Option<String> {
    super::cloneset::first_non_image_change(old, new, at)
}
