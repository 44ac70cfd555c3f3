//! UnitedDeployment: OpenKruise's defaults (`/mutate-apps-kruise-io-uniteddeployment`) and validation
//! (`/validate-apps-kruise-io-uniteddeployment`, after deletion protection). Both versions share the
//! spec's shape, so the object is worked on as sent.
//!
//! Defaults: `replicas: 1`, `revisionHistoryLimit: 10`, `updateStrategy.type: Manual` with an empty
//! `manualUpdate`; `minReplicas: 0` on every subset without one when some subset has a min or max and
//! none has `replicas`; a StatefulSet template's pod spec gets the pod-template defaults on CREATE and on
//! an UPDATE that changes `spec.template` (unless `TemplateNoDefaults`).
//!
//! Validation (on the defaulted object): the object meta, `replicas` ≥ 0, a valid non-empty selector,
//! exactly one template whose workload labels match the selector (not checked for CloneSet templates,
//! as in OpenKruise), no `replicas` and no `rollingUpdate.partition` inside the template, subset names
//! (DNS labels, unique), node selector terms, subset replicas / min / max (percentages, sums, mutual
//! exclusion), Adaptive rules, `manualUpdate.partitions` keys. On UPDATE a subset's `nodeSelectorTerm`
//! and `tolerations` may not change, and a StatefulSet (Advanced StatefulSet) template may only change
//! `template`, `updateStrategy` (and `persistentVolumeClaimRetentionPolicy`, `minReadySeconds`,
//! `ordinals`).

use serde_json::{Value, json};

use super::defaults::{Mutator, default_pod_spec};
use super::field::{
    ErrorList, GoValue, Path, forbidden, go_int_or_string, go_label_selector, invalid, not_supported,
    required,
};
use super::meta::{
    name_is_dns_label, name_is_dns_subdomain, selector_is_empty, selector_matches, string_map,
    validate_label_selector, validate_nonnegative, validate_object_meta, validate_object_meta_update,
};
use super::{Which, check_decodes, check_version, judged, raw_object, refuse, strip_nulls};
use crate::{Decision, Settings, review::AdmissionRequest, view::ClusterView};
use kruise_api::apps_v1beta1::UnitedDeployment;
use kruise_core::feature_gates::Gate;
use kruise_core::intstr::{IntOrPercent, subset_replicas};

const GROUP: &str = "apps.kruise.io";
const KIND: &str = "UnitedDeployment";
const TEMPLATES: [&str; 4] = [
    "statefulSetTemplate",
    "advancedStatefulSetTemplate",
    "cloneSetTemplate",
    "deploymentTemplate",
];

fn p(s: &[&str]) -> Vec<String> {
    s.iter().map(|x| x.to_string()).collect()
}

/// OpenKruise's `SetDefaultsUnitedDeployment`.
pub fn apply_defaults(m: &mut Mutator, template_defaults: bool, settings: &Settings) {
    m.set_default(&p(&["spec", "replicas"]), json!(1));
    m.set_default(&p(&["spec", "revisionHistoryLimit"]), json!(10));
    m.set_default(&p(&["spec", "updateStrategy"]), json!({}));
    m.set_default_zero(&p(&["spec", "updateStrategy", "type"]), json!("Manual"));
    if m.get(&p(&["spec", "updateStrategy", "type"]))
        .and_then(Value::as_str)
        == Some("Manual")
    {
        m.set_default(&p(&["spec", "updateStrategy", "manualUpdate"]), json!({}));
    }
    let sts = p(&["spec", "template", "statefulSetTemplate"]);
    if template_defaults && !settings.enabled(Gate::TemplateNoDefaults) && m.has(&sts) {
        m.set_default(
            &p(&["spec", "template", "statefulSetTemplate", "spec"]),
            json!({}),
        );
        m.set_default(
            &p(&["spec", "template", "statefulSetTemplate", "spec", "template"]),
            json!({}),
        );
        default_pod_spec(
            m,
            &p(&[
                "spec",
                "template",
                "statefulSetTemplate",
                "spec",
                "template",
                "spec",
            ]),
        );
    }
    let count = m.len(&p(&["spec", "topology", "subsets"]));
    let subset = |i: usize, key: &str| p(&["spec", "topology", "subsets", &i.to_string(), key]);
    let set = |m: &Mutator, i: usize, key: &str| m.get(&subset(i, key)).is_some_and(|v| !v.is_null());
    let has_replicas = (0..count).any(|i| set(m, i, "replicas"));
    let has_capacity = (0..count).any(|i| set(m, i, "minReplicas") || set(m, i, "maxReplicas"));
    if has_capacity && !has_replicas {
        for i in 0..count {
            m.set_default(&subset(i, "minReplicas"), json!(0));
        }
    }
}

fn decode(version: &str, object: &Value) -> Result<(), Box<Decision>> {
    match version {
        "v1alpha1" => check_decodes::<kruise_api::apps_v1alpha1::UnitedDeployment>(KIND, object).map(drop),
        _ => check_decodes::<UnitedDeployment>(KIND, object).map(drop),
    }
}

fn at(v: &Value, pointer: &str) -> Value {
    strip_nulls(v.pointer(pointer).unwrap_or(&Value::Null))
}

/// `/mutate-apps-kruise-io-uniteddeployment`.
pub fn mutate(request: &AdmissionRequest, settings: &Settings) -> Decision {
    if !judged(request) {
        return Decision::allow();
    }
    if let Err(d) = check_version(request) {
        return *d;
    }
    let object = match raw_object(request, Which::New, GROUP, KIND) {
        Ok(o) => o,
        Err(d) => return *d,
    };
    if let Err(d) = decode(super::request_version(request), &object) {
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
    apply_defaults(&mut m, template_defaults, settings);
    Decision::patched(m.ops)
}

fn defaulted(request: &AdmissionRequest, which: Which, settings: &Settings) -> Result<Value, Box<Decision>> {
    let object = raw_object(request, which, GROUP, KIND)?;
    decode(super::request_version(request), &object)?;
    let mut m = Mutator::new(object);
    apply_defaults(&mut m, true, settings);
    Ok(m.doc)
}

/// `/validate-apps-kruise-io-uniteddeployment`: deletion protection first, then for CREATE and UPDATE
/// the UnitedDeployment rules.
pub fn validate(request: &AdmissionRequest, view: &impl ClusterView, settings: &Settings) -> Decision {
    let protection = crate::deletion_protection::validate(request, view, settings);
    if !protection.allowed() || !judged(request) {
        return protection;
    }
    if let Err(d) = check_version(request) {
        return *d;
    }
    let obj = match defaulted(request, Which::New, settings) {
        Ok(o) => o,
        Err(d) => return *d,
    };
    let mut errs = validate_object_meta(obj.get("metadata"), true, name_is_dns_subdomain);
    errs.extend(validate_spec(&obj["spec"]));
    if request.operation == crate::Operation::Update {
        let old = match defaulted(request, Which::Old, settings) {
            Ok(o) => o,
            Err(d) => return *d,
        };
        errs.extend(validate_object_meta_update(
            obj.get("metadata"),
            old.get("metadata"),
        ));
        errs.extend(validate_update(&obj["spec"], &old["spec"]));
    }
    let mut decision = refuse(&errs).unwrap_or_else(Decision::allow);
    decision.warnings.splice(0..0, protection.warnings);
    decision
}

fn present<'a>(v: &'a Value, key: &str) -> Option<&'a Value> {
    v.get(key).filter(|x| !x.is_null())
}

/// OpenKruise's `validateUnitedDeploymentSpec`.
pub fn validate_spec(spec: &Value) -> ErrorList {
    let path = Path::new("spec");
    let mut errs = ErrorList::new();
    if let Some(r) = present(spec, "replicas") {
        errs.extend(validate_nonnegative(
            r.as_i64().unwrap_or(0),
            &path.child("replicas"),
        ));
    }
    let selector = present(spec, "selector");
    match selector {
        None => errs.push(required(&path.child("selector"), "")),
        Some(sel) => {
            errs.extend(validate_label_selector(Some(sel), &path.child("selector")));
            if selector_is_empty(sel) {
                errs.push(invalid(
                    &path.child("selector"),
                    go_label_selector(Some(sel)),
                    "empty selector is invalid for statefulset",
                ));
            }
        }
    }
    let strategy = &spec["topology"]["scheduleStrategy"];
    let adaptive = strategy["type"] == "Adaptive";
    let template = &spec["template"];
    let stateful = present(template, "statefulSetTemplate").is_some()
        || present(template, "advancedStatefulSetTemplate").is_some();
    if adaptive && strategy["adaptive"]["reserveUnschedulablePods"] == true && stateful {
        errs.push(invalid(
            &path.child("topology").child("scheduleStrategy"),
            GoValue::Raw(strategy.to_string()),
            "only stateless workloads (Deployment and CloneSet) are supported by reserved rescheduling",
        ));
    }
    errs.extend(validate_template(template, selector, &path.child("template")));
    let subsets_path = path.child("topology").child("subsets");
    let subsets = spec["topology"]["subsets"]
        .as_array()
        .cloned()
        .unwrap_or_default();
    errs.extend(validate_subset_replicas(
        present(spec, "replicas").and_then(Value::as_i64),
        &subsets,
        &subsets_path,
    ));
    let mut names: Vec<&str> = Vec::new();
    for (i, subset) in subsets.iter().enumerate() {
        let sp = subsets_path.index(i);
        let name = subset["name"].as_str().unwrap_or("");
        if name.is_empty() {
            errs.push(required(&sp.child("name"), ""));
        }
        if names.contains(&name) {
            errs.push(invalid(
                &sp.child("name"),
                name,
                format!("duplicated subset name {name}"),
            ));
        }
        names.push(name);
        let problems = name_is_dns_label(name, false);
        if !problems.is_empty() {
            errs.push(invalid(
                &sp.child("name"),
                name,
                format!("invalid subset name {}", problems.join(", ")),
            ));
        }
        for (j, expr) in subset["nodeSelectorTerm"]["matchExpressions"]
            .as_array()
            .into_iter()
            .flatten()
            .enumerate()
        {
            let ep = sp.child("nodeSelectorTerm").child("matchExpressions").index(j);
            let op = expr["operator"].as_str().unwrap_or("");
            let values = expr["values"].as_array().map_or(0, Vec::len);
            match op {
                "In" | "NotIn" if values == 0 => errs.push(required(
                    &ep.child("values"),
                    "must be specified when `operator` is 'In' or 'NotIn'",
                )),
                "Exists" | "DoesNotExist" if values > 0 => errs.push(forbidden(
                    &ep.child("values"),
                    "may not be specified when `operator` is 'Exists' or 'DoesNotExist'",
                )),
                "Gt" | "Lt" if values != 1 => errs.push(required(
                    &ep.child("values"),
                    "must be specified single value when `operator` is 'Lt' or 'Gt'",
                )),
                "In" | "NotIn" | "Exists" | "DoesNotExist" | "Gt" | "Lt" => {}
                _ => errs.push(invalid(
                    &ep.child("operator"),
                    op,
                    "not a valid selector operator",
                )),
            }
        }
        if present(subset, "replicas").is_some() && adaptive {
            errs.push(forbidden(
                &sp.child("replicas"),
                "specify replicas use minReplicas/maxReplicas to enable adaptive strategy",
            ));
        }
    }
    let update = &spec["updateStrategy"];
    let up = path.child("updateStrategy");
    match update["type"].as_str().unwrap_or("") {
        "" | "Manual" => {
            for key in update["manualUpdate"]["partitions"]
                .as_object()
                .into_iter()
                .flatten()
                .map(|(k, _)| k)
            {
                if !names.contains(&key.as_str()) {
                    errs.push(invalid(
                        &up.child("manualUpdate").child("partitions"),
                        GoValue::Raw(update["manualUpdate"]["partitions"].to_string()),
                        format!("subset {key} does not exist"),
                    ));
                }
            }
        }
        other => errs.push(not_supported(&up.child("type"), other, &["Manual", ""])),
    }
    errs
}

fn validate_template(template: &Value, selector: Option<&Value>, path: &Path) -> ErrorList {
    let mut errs = ErrorList::new();
    let set: Vec<&str> = TEMPLATES
        .into_iter()
        .filter(|t| present(template, t).is_some())
        .collect();
    match set.len() {
        0 => errs.push(required(path, "should provide one of statefulSetTemplate, advancedStatefulSetTemplate, cloneSetTemplate, or deploymentTemplate")),
        1 => {}
        _ => errs.push(invalid(path, GoValue::Raw(template.to_string()), "should provide only one of statefulSetTemplate, advancedStatefulSetTemplate, cloneSetTemplate, or deploymentTemplate")),
    }
    let Some(&which) = set.first() else { return errs };
    let t = &template[which];
    let tp = path.child(which);
    if which != "cloneSetTemplate"
        && let Some(sel) = selector
    {
        let labels = string_map(t["metadata"].get("labels"));
        if !selector_matches(sel, &labels) {
            // OpenKruise names the StatefulSet template's path for the Advanced StatefulSet one too.
            let field = if which == "advancedStatefulSetTemplate" {
                "statefulSetTemplate"
            } else {
                which
            };
            errs.push(invalid(
                &path.child(field).child("metadata").child("labels"),
                GoValue::Raw(super::field::go_string_map(t["metadata"].get("labels"))),
                "`selector` does not match template `labels`",
            ));
        }
    }
    errs.extend(pod_template::validate_workload_template(which, t, selector, &tp));
    if let Some(r) = present(&t["spec"], "replicas") {
        errs.push(invalid(
            &tp.child("spec").child("replicas"),
            r.as_i64().unwrap_or(0),
            format!("replicas in {which} will not be used"),
        ));
    }
    let strategy = &t["spec"]["updateStrategy"];
    if matches!(which, "statefulSetTemplate" | "advancedStatefulSetTemplate")
        && strategy["type"] == "RollingUpdate"
        && let Some(partition) = present(&strategy["rollingUpdate"], "partition")
    {
        errs.push(invalid(
            &tp.child("spec")
                .child("updateStrategy")
                .child("rollingUpdate")
                .child("partition"),
            partition.as_i64().unwrap_or(0),
            format!("partition in {which} will not be used"),
        ));
    }
    errs
}

/// OpenKruise's `validateSubsetReplicas`.
fn validate_subset_replicas(replicas: Option<i64>, subsets: &[Value], path: &Path) -> ErrorList {
    let mut errs = ErrorList::new();
    let (mut sum, mut sum_min, mut sum_max) = (0i64, 0i64, 0i64);
    let (mut count, mut count_max) = (0usize, 0usize);
    let (mut has_replicas, mut has_capacity) = (false, false);
    let read =
        |subset: &Value, key: &str, i: usize, absent: i64, errs: &mut ErrorList| match present(subset, key) {
            None => absent,
            Some(v) => {
                let value = match v {
                    Value::String(s) => IntOrPercent::Str(s),
                    other => IntOrPercent::Int(other.as_i64().unwrap_or(0)),
                };
                subset_replicas(value, replicas).unwrap_or_else(|e| {
                    errs.push(invalid(
                        &path.index(i).child(key),
                        go_int_or_string(Some(v)),
                        e.to_string(),
                    ));
                    0
                })
            }
        };
    for (i, subset) in subsets.iter().enumerate() {
        if present(subset, "replicas").is_some() {
            count += 1;
            has_replicas = true;
        }
        sum += read(subset, "replicas", i, 0, &mut errs);
        has_capacity |= present(subset, "minReplicas").is_some() || present(subset, "maxReplicas").is_some();
        let min = read(subset, "minReplicas", i, 0, &mut errs);
        if present(subset, "maxReplicas").is_some() {
            count_max += 1;
        }
        let max = read(subset, "maxReplicas", i, 1_000_000, &mut errs);
        sum_min += min;
        sum_max += max;
        if min > max {
            errs.push(invalid(
                &path.index(i).child("minReplicas"),
                go_int_or_string(present(subset, "minReplicas")),
                format!("subset[{i}].minReplicas must be less than or equal to maxReplicas"),
            ));
        }
    }
    if has_replicas && has_capacity {
        errs.push(invalid(
            path,
            GoValue::Raw(Value::Array(subsets.to_vec()).to_string()),
            "subset.Replicas and subset.MinReplicas/subset.MaxReplicas are mutually exclusive in a UnitedDeployment",
        ));
        return errs;
    }
    if has_capacity {
        if replicas.is_none() {
            errs.push(invalid(
                path,
                -1,
                "spec.replicas must be not empty if you set subset.minReplicas/maxReplicas",
            ));
        }
        if count_max >= subsets.len() {
            errs.push(invalid(
                path,
                count_max as i64,
                "at least one subset.maxReplicas must be empty",
            ));
        }
        if sum_min > sum_max {
            errs.push(invalid(path, sum_min, "sum of indicated subset.minReplicas should not be greater than sum of indicated subset.maxReplicas"));
        }
    } else if let Some(total) = replicas {
        if sum > total {
            errs.push(invalid(path, sum, format!("sum of indicated subset replicas {sum} should not be greater than UnitedDeployment replicas {total}")));
        }
        if count > 0 && count == subsets.len() && sum != total {
            errs.push(invalid(path, sum, format!("if replicas of all subsets are provided, the sum of indicated subset replicas {sum} should equal UnitedDeployment replicas {total}")));
        }
    } else if count != subsets.len() {
        errs.push(invalid(
            path,
            sum,
            "if UnitedDeployment replicas is not provided, replicas of all subsets should be provided",
        ));
    }
    errs
}

/// OpenKruise's `ValidateUnitedDeploymentUpdate` (besides the object meta).
pub fn validate_update(spec: &Value, old: &Value) -> ErrorList {
    let mut errs = ErrorList::new();
    let path = Path::new("spec");
    let subsets = path.child("topology").child("subsets");
    let old_subsets = old["topology"]["subsets"].as_array().cloned().unwrap_or_default();
    for (i, subset) in spec["topology"]["subsets"]
        .as_array()
        .into_iter()
        .flatten()
        .enumerate()
    {
        let Some(before) = old_subsets.iter().find(|o| o["name"] == subset["name"]) else {
            continue;
        };
        for key in ["nodeSelectorTerm", "tolerations"] {
            if strip_nulls(&subset[key]) != strip_nulls(&before[key]) {
                errs.push(forbidden(
                    &subsets.index(i).child(key),
                    "may not be changed in an update",
                ));
            }
        }
    }
    let (new_t, old_t) = (&spec["template"], &old["template"]);
    for (which, may_change, message) in [
        (
            "statefulSetTemplate",
            &[
                "replicas",
                "template",
                "updateStrategy",
                "minReadySeconds",
                "ordinals",
                "persistentVolumeClaimRetentionPolicy",
            ][..],
            "updates to statefulsetTemplate spec for fields other than 'template', 'updateStrategy', 'persistentVolumeClaimRetentionPolicy', 'minReadySeconds' and 'ordinals' are forbidden",
        ),
        (
            "advancedStatefulSetTemplate",
            &["replicas", "template", "updateStrategy"][..],
            "updates to advancedStatefulsetTemplate spec for fields other than 'template', and 'updateStrategy' are forbidden",
        ),
    ] {
        let (Some(new), Some(before)) = (present(new_t, which), present(old_t, which)) else {
            continue;
        };
        let frozen = |v: &Value| {
            let mut s = strip_nulls(&v["spec"]);
            if let Some(m) = s.as_object_mut() {
                for key in may_change {
                    m.remove(*key);
                }
                // The selector is the UD's; OpenKruise replaces it before comparing.
                m.remove("selector");
            }
            s
        };
        if frozen(new) != frozen(before) {
            errs.push(forbidden(
                &path.child("template").child(which).child("spec"),
                message,
            ));
        }
    }
    for which in TEMPLATES {
        if let Some(r) = present(&new_t[which]["spec"], "replicas") {
            errs.extend(validate_nonnegative(
                r.as_i64().unwrap_or(0),
                &path
                    .child("template")
                    .child(which)
                    .child("spec")
                    .child("replicas"),
            ));
        }
    }
    errs
}

mod pod_template;
#[cfg(test)]
mod tests;
