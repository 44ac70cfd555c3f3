//! The embedded workload template validated as its own kind would be (OpenKruise's
//! `ValidatePodTemplateSpecForReplicaSet` / `…ForStatefulSet` and the parts of `ValidateStatefulSetSpec`
//! that a UnitedDeployment template can get wrong): the pod template's labels must match the UD's
//! selector, the pod spec is valid, `restartPolicy` is `Always` and `activeDeadlineSeconds` absent.
//!
//! The pod spec is validated with the pod defaults applied to a copy, as the API server defaults a
//! workload before validating it: an undefaulted template (no `terminationMessagePolicy`, …) is accepted
//! — OpenKruise refuses it for Deployment and Advanced StatefulSet templates — while a wrong one is
//! refused when the UD is admitted, not later when its subset workload is written. CloneSet templates
//! are not validated here, as in OpenKruise: the CloneSet webhook validates them.

use serde_json::{Value, json};

use super::super::defaults::{Mutator, default_pod_spec};
use super::super::field::{ErrorList, GoValue, Path, forbidden, go_string_map, invalid, not_supported};
use super::super::meta::{selector_is_empty, selector_matches, string_map, validate_nonnegative};
use super::super::podspec::validate_pod_template;

/// The kind a template's pods belong to, as the native messages name it.
fn kind_name(which: &str) -> Option<&'static str> {
    match which {
        "deploymentTemplate" => Some("ReplicaSet"),
        "statefulSetTemplate" | "advancedStatefulSetTemplate" => Some("StatefulSet"),
        _ => None,
    }
}

/// The rules of the workload template `t` (`spec.template.<which>`, at `path`).
pub fn validate_workload_template(
    which: &str,
    t: &Value,
    selector: Option<&Value>,
    path: &Path,
) -> ErrorList {
    let mut errs = ErrorList::new();
    let Some(kind) = kind_name(which) else {
        return errs;
    };
    let spec_path = path.child("spec");
    if which == "statefulSetTemplate" {
        errs.extend(validate_statefulset_fields(&t["spec"], &spec_path));
    }
    let template_path = spec_path.child("template");
    let template = &t["spec"]["template"];
    let labels = template["metadata"].get("labels").filter(|v| !v.is_null());
    if let Some(sel) = selector
        && !selector_is_empty(sel)
        && !selector_matches(sel, &string_map(labels))
    {
        errs.push(invalid(
            &template_path.child("metadata").child("labels"),
            GoValue::Raw(go_string_map(labels)),
            "`selector` does not match template `labels`",
        ));
    }
    let mut copy = Mutator::new(json!({"template": template}));
    let spec = ["template".to_string(), "spec".to_string()];
    copy.set_default(&spec, json!({}));
    default_pod_spec(&mut copy, &spec);
    errs.extend(validate_pod_template(&copy.doc["template"], &template_path));
    let pod_spec = &template["spec"];
    let restart = pod_spec["restartPolicy"].as_str().unwrap_or("");
    if !restart.is_empty() && restart != "Always" {
        errs.push(not_supported(
            &template_path.child("spec").child("restartPolicy"),
            restart,
            &["Always"],
        ));
    }
    if pod_spec
        .get("activeDeadlineSeconds")
        .is_some_and(|v| !v.is_null())
    {
        errs.push(forbidden(
            &template_path.child("spec").child("activeDeadlineSeconds"),
            format!("activeDeadlineSeconds in {kind} is not Supported"),
        ));
    }
    errs
}

/// `ValidateStatefulSetSpec` on the template's spec after OpenKruise's normalisation (empty
/// `podManagementPolicy` and update strategy type count as their defaults).
fn validate_statefulset_fields(spec: &Value, path: &Path) -> ErrorList {
    let mut errs = ErrorList::new();
    match spec["podManagementPolicy"].as_str().unwrap_or("") {
        "" | "OrderedReady" | "Parallel" => {}
        other => errs.push(invalid(
            &path.child("podManagementPolicy"),
            other,
            "must be 'OrderedReady' or 'Parallel'",
        )),
    }
    match spec["updateStrategy"]["type"].as_str().unwrap_or("") {
        "" | "RollingUpdate" => {}
        "OnDelete" if spec["updateStrategy"]["rollingUpdate"].is_object() => errs.push(invalid(
            &path.child("updateStrategy").child("rollingUpdate"),
            GoValue::Raw("&apps.RollingUpdateStatefulSetStrategy{...}".into()),
            "only allowed for updateStrategy 'RollingUpdate'",
        )),
        "OnDelete" => {}
        other => errs.push(invalid(
            &path.child("updateStrategy"),
            GoValue::Raw(format!("apps.StatefulSetUpdateStrategy{{Type:\"{other}\", ...}}")),
            "must be 'RollingUpdate' or 'OnDelete'",
        )),
    }
    if let Some(seconds) = spec["minReadySeconds"].as_i64() {
        errs.extend(validate_nonnegative(seconds, &path.child("minReadySeconds")));
    }
    errs
}
