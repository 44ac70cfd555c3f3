//! PodUnavailableBudget validation (`vpodunavailablebudget.kb.io`), as OpenKruise's
//! `validatingPodUnavailableBudgetFnV1beta1`, on the v1beta1 form of the object:
//!
//! * the annotation `pub.kruise.io/protect-total-replicas` is an int32 and agrees with
//!   `spec.protectTotalReplicas`;
//! * exactly one of `selector` / `targetRef` (a targetRef has apiVersion, kind and name and a valid
//!   apiVersion; a selector is valid and non-empty);
//! * exactly one of `maxUnavailable` / `minAvailable`, a non-negative integer or a percentage ≤ 100%;
//! * `protectOperations` ⊆ {DELETE, UPDATE, EVICT, RESIZE}; `ignoredPodSelector` valid and non-empty;
//! * on UPDATE, `selector` and `targetRef` may not change;
//! * no other PUB of the namespace has the same target (group, kind, name) or a loosely overlapping
//!   selector.

use serde_json::Value;

use super::field::{
    ErrorList, Path, go_label_selector, go_target_reference, invalid, not_supported, required, str_at,
};
use super::meta::{
    is_not_more_than_100_percent, selector_conversion_fails, selector_is_empty, selectors_loose_overlap,
    validate_label_selector, validate_positive_int_or_percent,
};
use super::{Which, check_decodes, check_version, judged, raw_object, refuse};
use crate::{Decision, review::AdmissionRequest, view::ClusterView};

const GROUP: &str = "policy.kruise.io";
const KIND: &str = "PodUnavailableBudget";
const PROTECT_TOTAL_REPLICAS: &str = "pub.kruise.io/protect-total-replicas";

fn v1beta1(request: &AdmissionRequest, which: Which) -> Result<Value, Box<Decision>> {
    let version = check_version(request)?;
    let object = raw_object(request, which, GROUP, KIND)?;
    match version {
        "v1alpha1" => {
            check_decodes::<kruise_api::policy_v1alpha1::PodUnavailableBudget>(KIND, &object).map(drop)?
        }
        _ => check_decodes::<kruise_api::policy_v1beta1::PodUnavailableBudget>(KIND, &object).map(drop)?,
    }
    kruise_api::convert_object(&object, "policy.kruise.io/v1beta1")
        .map_err(|e| Box::new(Decision::bad_request(e.to_string())))
}

/// `/validate-policy-kruise-io-podunavailablebudget`.
pub fn validate(request: &AdmissionRequest, view: &impl ClusterView) -> Decision {
    if !judged(request) {
        return Decision::allow();
    }
    let obj = match v1beta1(request, Which::New) {
        Ok(o) => o,
        Err(d) => return *d,
    };
    let old = if request.operation == crate::Operation::Update {
        match v1beta1(request, Which::Old) {
            Ok(o) => Some(o),
            Err(d) => return *d,
        }
    } else {
        None
    };
    let namespace = obj
        .pointer("/metadata/namespace")
        .and_then(Value::as_str)
        .unwrap_or(&request.namespace)
        .to_string();
    let others: Vec<Value> = view
        .pod_unavailable_budgets(&namespace)
        .iter()
        .filter_map(|p| serde_json::to_value(&**p).ok())
        .collect();
    refuse(&validate_pub(&obj, old.as_ref(), &others)).unwrap_or_else(Decision::allow)
}

fn present<'a>(v: &'a Value, key: &str) -> Option<&'a Value> {
    v.get(key).filter(|x| !x.is_null())
}

fn parse_group(api_version: &str) -> Result<&str, String> {
    match api_version.matches('/').count() {
        0 => Ok(""),
        1 => Ok(api_version.split('/').next().unwrap_or("")),
        _ => Err(format!("unexpected GroupVersion string: {api_version}")),
    }
}

/// Every check on a v1beta1 PUB; `others` are the PUBs of its namespace.
pub fn validate_pub(obj: &Value, old: Option<&Value>, others: &[Value]) -> ErrorList {
    let mut errs = ErrorList::new();
    let null = Value::Null;
    let spec = obj.get("spec").unwrap_or(&null);
    let sp = Path::new("spec");
    if let Some(v) = obj
        .pointer("/metadata/annotations")
        .and_then(|a| a.get(PROTECT_TOTAL_REPLICAS))
        .and_then(Value::as_str)
    {
        let apath = Path::new("metadata")
            .child("annotations")
            .key(PROTECT_TOTAL_REPLICAS);
        match v.parse::<i32>() {
            Err(_) => errs.push(invalid(&apath, v, "must be a valid int32")),
            Ok(_) => {
                if let Some(n) = present(spec, "protectTotalReplicas").and_then(Value::as_i64)
                    && v != n.to_string()
                {
                    errs.push(invalid(
                        &apath,
                        v,
                        "must match spec.protectTotalReplicas when both are set",
                    ));
                }
            }
        }
    }
    let either = sp.child("selector, targetRef");
    let selector = present(spec, "selector");
    let target = present(spec, "targetRef");
    match (selector, target) {
        (None, None) => errs.push(required(
            &either,
            "no selector or targetRef defined in PodUnavailableBudget",
        )),
        (Some(_), Some(_)) => errs.push(required(&either, "selector and targetRef are mutually exclusive")),
        (None, Some(t)) => {
            let go = go_target_reference("v1beta1", Some(t));
            if ["apiVersion", "name", "kind"]
                .iter()
                .any(|k| str_at(t, k).is_empty())
            {
                errs.push(invalid(
                    &sp.child("targetRef"),
                    go.clone(),
                    "empty targetRef is not valid for PodUnavailableBudget",
                ));
            }
            if let Err(e) = parse_group(str_at(t, "apiVersion")) {
                errs.push(invalid(&sp.child("targetRef"), go, e));
            }
        }
        (Some(sel), None) => {
            errs.extend(validate_label_selector(Some(sel), &sp.child("selector")));
            if selector_is_empty(sel) {
                errs.push(invalid(
                    &sp.child("selector"),
                    go_label_selector(Some(sel)),
                    "empty selector is not valid for PodUnavailableBudget.",
                ));
            }
            if selector_conversion_fails(Some(sel)) {
                errs.push(invalid(&sp.child("selector"), go_label_selector(Some(sel)), ""));
            }
        }
    }
    let both = sp.child("maxUnavailable, minAvailable");
    match (present(spec, "maxUnavailable"), present(spec, "minAvailable")) {
        (None, None) => errs.push(required(
            &both,
            "no maxUnavailable or minAvailable defined in PodUnavailableBudget",
        )),
        (Some(_), Some(_)) => errs.push(required(
            &both,
            "maxUnavailable and minAvailable are mutually exclusive",
        )),
        (Some(v), None) => {
            errs.extend(validate_positive_int_or_percent(v, &sp.child("maxUnavailable")));
            errs.extend(is_not_more_than_100_percent(v, &sp.child("maxUnavailable")));
        }
        (None, Some(v)) => {
            errs.extend(validate_positive_int_or_percent(v, &sp.child("minAvailable")));
            errs.extend(is_not_more_than_100_percent(v, &sp.child("minAvailable")));
        }
    }
    for (i, op) in spec
        .get("protectOperations")
        .and_then(Value::as_array)
        .into_iter()
        .flatten()
        .enumerate()
    {
        let op = op.as_str().unwrap_or("");
        if !matches!(op, "DELETE" | "UPDATE" | "EVICT" | "RESIZE") {
            errs.push(not_supported(
                &sp.child("protectOperations").index(i),
                op,
                &["DELETE", "UPDATE", "EVICT", "RESIZE"],
            ));
        }
    }
    if let Some(ignored) = present(spec, "ignoredPodSelector") {
        errs.extend(validate_label_selector(
            Some(ignored),
            &sp.child("ignoredPodSelector"),
        ));
        if selector_is_empty(ignored) {
            errs.push(invalid(
                &sp.child("ignoredPodSelector"),
                go_label_selector(Some(ignored)),
                "empty ignoredPodSelector is not valid for PodUnavailableBudget",
            ));
        }
    }
    if let Some(old) = old {
        let ospec = old.get("spec").unwrap_or(&null);
        if present(spec, "selector") != present(ospec, "selector")
            || present(spec, "targetRef") != present(ospec, "targetRef")
        {
            errs.push(required(&either, "selector and targetRef cannot be modified"));
        }
    }
    errs.extend(conflicts(obj, spec, others));
    errs
}

fn conflicts(obj: &Value, spec: &Value, others: &[Value]) -> ErrorList {
    let sp = Path::new("spec");
    let name = obj
        .pointer("/metadata/name")
        .and_then(Value::as_str)
        .unwrap_or("");
    for other in others {
        let other_name = other
            .pointer("/metadata/name")
            .and_then(Value::as_str)
            .unwrap_or("");
        if other_name == name {
            continue;
        }
        let ospec = other.get("spec").unwrap_or(&Value::Null);
        match (
            present(spec, "targetRef"),
            present(ospec, "targetRef"),
            present(spec, "selector"),
            present(ospec, "selector"),
        ) {
            (Some(a), Some(b), _, _) => {
                let group = |t: &Value| parse_group(str_at(t, "apiVersion")).unwrap_or("").to_string();
                if group(a) == group(b)
                    && str_at(a, "kind") == str_at(b, "kind")
                    && str_at(a, "name") == str_at(b, "name")
                {
                    return vec![invalid(
                        &sp.child("targetReference"),
                        go_target_reference("v1beta1", Some(a)),
                        format!(
                            "pub.spec.targetReference is in conflict with other PodUnavailableBudget {other_name}"
                        ),
                    )];
                }
            }
            (_, _, Some(a), Some(b)) if selectors_loose_overlap(Some(a), Some(b)) => {
                return vec![invalid(
                    &sp.child("selector"),
                    go_label_selector(Some(a)),
                    format!("pub.spec.selector is in conflict with other PodUnavailableBudget {other_name}"),
                )];
            }
            _ => {}
        }
    }
    Vec::new()
}
