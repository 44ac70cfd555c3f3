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
    ErrorList, GoValue, Path, forbidden, go_int_or_string, go_label_selector, go_string_map,
    int_or_string_text, invalid, not_supported, required, str_at,
};
use super::meta::{
    name_is_dns_subdomain, scaled_value, selector_conversion_fails, selector_is_empty, selector_matches,
    string_map, validate_label_selector, validate_nonnegative, validate_object_meta,
    validate_object_meta_update,
};
use super::sidecarset::{priority_strategy_error, scatter_strategy_error};
use super::{Which, check_decodes, check_version, judged, raw_object, refuse};
use crate::{Decision, Settings, review::AdmissionRequest, view::ClusterView};

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

fn strip_nulls(v: &Value) -> Value {
    match v {
        Value::Object(m) => Value::Object(
            m.iter()
                .filter(|(_, v)| !v.is_null())
                .map(|(k, v)| (k.clone(), strip_nulls(v)))
                .collect(),
        ),
        Value::Array(a) => Value::Array(a.iter().map(strip_nulls).collect()),
        v => v.clone(),
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

fn validate_scale_strategy(
    obj: &Value,
    spec: &Value,
    old: Option<&Value>,
    version: &str,
    view: &impl ClusterView,
) -> ErrorList {
    let path = Path::new("spec").child("scaleStrategy").child("podsToDelete");
    let mut errs = ErrorList::new();
    let names: Vec<String> = super::meta::string_list(spec.pointer("/scaleStrategy/podsToDelete"));
    let mut seen = std::collections::BTreeSet::new();
    let dups: Vec<&str> = names
        .iter()
        .filter(|n| !seen.insert(n.as_str()))
        .map(String::as_str)
        .collect();
    if !dups.is_empty() {
        errs.push(invalid(
            &path,
            GoValue::Raw(super::field::go_string_slice(
                "string",
                spec.pointer("/scaleStrategy/podsToDelete"),
            )),
            format!("duplicated items [{}]", dups.join(" ")),
        ));
        return errs;
    }
    if version != "v1alpha1" {
        return errs;
    }
    let old_names: Vec<String> = old
        .map(|o| super::meta::string_list(o.pointer("/spec/scaleStrategy/podsToDelete")))
        .unwrap_or_default();
    let namespace = obj
        .pointer("/metadata/namespace")
        .and_then(Value::as_str)
        .unwrap_or("");
    let uid = obj.pointer("/metadata/uid").and_then(Value::as_str).unwrap_or("");
    let mut new_names: Vec<&String> = names.iter().filter(|n| !old_names.contains(n)).collect();
    new_names.sort();
    for name in new_names {
        match view.pod(namespace, name) {
            None => errs.push(invalid(
                &path,
                name.as_str(),
                format!(
                    "find pod {name} failed: pods {} not found",
                    super::field::go_quote(name)
                ),
            )),
            Some(pod) if pod.metadata.deletion_timestamp.is_some() => errs.push(invalid(
                &path,
                name.as_str(),
                format!("find pod {name} already terminating"),
            )),
            Some(pod) => {
                let controller = pod
                    .metadata
                    .owner_references
                    .iter()
                    .flatten()
                    .find(|o| o.controller == Some(true));
                if controller.is_none_or(|o| o.uid != uid) {
                    errs.push(invalid(
                        &path,
                        name.as_str(),
                        format!("find pod {name} owner is not this CloneSet"),
                    ));
                }
            }
        }
    }
    errs
}

/// The partition / maxUnavailable / maxSurge checks shared by both versions.
fn validate_rolling_numbers(
    s: &Value,
    path: &Path,
    replicas: i64,
    in_place_only: bool,
    surge_msg: &str,
    surge_shadowed: bool,
) -> ErrorList {
    let mut errs = ErrorList::new();
    let partition = match scaled_value(s.get("partition"), replicas, true) {
        Ok(v) => v,
        Err(e) => {
            errs.push(invalid(
                &path.child("partition"),
                int_or_string_text(s.get("partition")),
                format!("failed GetScaledValueFromIntOrPercent for partition: {e}"),
            ));
            0
        }
    };
    errs.extend(validate_nonnegative(partition, &path.child("partition")));
    errs.extend(strategy_extras(s, path));
    let mut max_unavailable = 0;
    if let Some(mu) = present(s, "maxUnavailable") {
        match scaled_value(Some(mu), replicas, true) {
            Ok(v) => max_unavailable = v,
            Err(e) => errs.push(invalid(
                &path.child("maxUnavailable"),
                int_or_string_text(Some(mu)),
                format!("failed GetScaledValueFromIntOrPercent for maxUnavailable: {e}"),
            )),
        }
    }
    let mut max_surge = 0;
    if let Some(ms) = present(s, "maxSurge") {
        let value = match scaled_value(Some(ms), replicas, true) {
            Ok(v) => v,
            Err(e) => {
                errs.push(invalid(
                    &path.child("maxSurge"),
                    int_or_string_text(Some(ms)),
                    format!("failed GetScaledValueFromIntOrPercent for maxSurge: {e}"),
                ));
                0
            }
        };
        if in_place_only && value > 0 {
            errs.push(invalid(
                &path.child("maxSurge"),
                int_or_string_text(Some(ms)),
                surge_msg,
            ));
        }
        if !surge_shadowed {
            max_surge = value;
        }
    }
    if replicas > 0 && max_unavailable < 1 && max_surge < 1 {
        errs.push(invalid(
            &path.child("maxUnavailable"),
            go_int_or_string(s.get("maxUnavailable")),
            "maxUnavailable and maxSurge should not both be less than 1",
        ));
    }
    errs
}

fn strategy_extras(s: &Value, path: &Path) -> ErrorList {
    let mut errs = ErrorList::new();
    if let Some(e) = priority_strategy_error(s.get("priorityStrategy")) {
        errs.push(required(&path.child("priorityStrategy"), e));
    }
    if let Some(e) = scatter_strategy_error(s.get("scatterStrategy")) {
        errs.push(required(&path.child("scatterStrategy"), e));
    }
    errs
}

fn validate_strategy_v1alpha1(s: &Value, replicas: i64) -> ErrorList {
    let path = Path::new("spec").child("updateStrategy");
    let mut errs = ErrorList::new();
    let t = str_at(s, "type");
    if !matches!(t, "ReCreate" | "InPlaceIfPossible" | "InPlaceOnly") {
        errs.push(invalid(
            &path.child("type"),
            t,
            "must be 'ReCreate', InPlaceIfPossible or 'InPlaceOnly'",
        ));
    }
    // Order as OpenKruise: partition, priority/scatter, maxUnavailable, maxSurge.
    errs.extend(validate_rolling_numbers(
        s,
        &path,
        replicas,
        t == "InPlaceOnly",
        "can not use maxSurge with strategy type InPlaceOnly",
        false,
    ));
    errs
}

fn validate_strategy_v1beta1(s: &Value, replicas: i64) -> ErrorList {
    let path = Path::new("spec").child("updateStrategy");
    let mut errs = ErrorList::new();
    let t = str_at(s, "type");
    if !matches!(t, "RollingUpdate" | "OnDelete" | "") {
        errs.push(invalid(
            &path.child("type"),
            t,
            "must be 'RollingUpdate' or 'OnDelete'",
        ));
    }
    let Some(ru) = present(s, "rollingUpdate") else {
        return errs;
    };
    let rpath = path.child("rollingUpdate");
    let policy = str_at(ru, "podUpdatePolicy");
    if !matches!(policy, "ReCreate" | "InPlaceIfPossible" | "InPlaceOnly" | "") {
        errs.push(invalid(
            &rpath.child("podUpdatePolicy"),
            policy,
            "must be 'ReCreate', 'InPlaceIfPossible' or 'InPlaceOnly'",
        ));
    }
    errs.extend(validate_rolling_numbers(
        ru,
        &rpath,
        replicas,
        policy == "InPlaceOnly",
        "can not use maxSurge with podUpdatePolicy InPlaceOnly",
        true,
    ));
    if let Some(ips) = present(ru, "inPlaceUpdateStrategy") {
        let ipath = rpath.child("inPlaceUpdateStrategy");
        let ppath = ipath.child("imagePreDownloadParallelism");
        match present(ips, "imagePreDownloadParallelism") {
            Some(Value::String(s)) => {
                if s.ends_with('%') {
                    errs.push(invalid(
                        &ppath,
                        s.as_str(),
                        "imagePreDownloadParallelism does not support percentage value",
                    ));
                } else {
                    match s.parse::<i32>() {
                        Err(_) => errs.push(invalid(
                            &ppath,
                            s.as_str(),
                            format!(
                                "imagePreDownloadParallelism must be a valid integer: {}",
                                go_parse_int_error(s)
                            ),
                        )),
                        Ok(v) if v < 0 => errs.push(invalid(
                            &ppath,
                            s.as_str(),
                            "imagePreDownloadParallelism must be non-negative",
                        )),
                        Ok(_) => {}
                    }
                }
            }
            Some(v) => {
                let n = v.as_i64().unwrap_or(0);
                if n < 0 {
                    errs.push(invalid(
                        &ppath,
                        n,
                        "imagePreDownloadParallelism must be non-negative",
                    ));
                }
            }
            None => {}
        }
        for key in [
            "imagePreDownloadTimeoutSeconds",
            "imagePreDownloadMinUpdatedReadyPods",
        ] {
            if let Some(n) = present(ips, key).and_then(Value::as_i64) {
                errs.extend(validate_nonnegative(n, &ipath.child(key)));
            }
        }
    }
    errs
}

fn go_parse_int_error(s: &str) -> String {
    let quoted = super::field::go_quote(s);
    let digits = s.strip_prefix(['-', '+']).unwrap_or(s);
    if !digits.is_empty() && digits.bytes().all(|c| c.is_ascii_digit()) {
        format!("strconv.ParseInt: parsing {quoted}: value out of range")
    } else {
        format!("strconv.ParseInt: parsing {quoted}: invalid syntax")
    }
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
