//! A container's `resourcesPolicy`: the target regex and the resource expressions, checked by the
//! parser the pod webhook evaluates them with.

use serde_json::Value;

use super::present;
use crate::crd::field::{ErrorList, GoValue, Path, go_quote, invalid, required, str_at};
use crate::pod_mutate::sidecarset::resources;

pub(super) fn go_resources_policy(policy: &Value) -> GoValue {
    let ptr = |k: &str, t: &str| match policy.pointer(&format!("/resourcesExpr/{k}")) {
        None | Some(Value::Null) => format!("(*v1beta1.{t})(nil)"),
        Some(_) => format!("(*v1beta1.{t})(0xc000000000)"),
    };
    GoValue::Raw(format!(
        "v1beta1.ResourcesPolicy{{TargetContainersMode:{}, TargetContainersNameRegex:{}, ResourcesExpr:v1beta1.ResourcesExpr{{Limits:{}, Requests:{}}}}}",
        go_quote(str_at(policy, "targetContainersMode")),
        go_quote(str_at(policy, "targetContainersNameRegex")),
        ptr("limits", "ResourceExprLimits"),
        ptr("requests", "ResourceExprRequests"),
    ))
}

pub(super) fn validate_resources_policy(c: &Value, path: &Path) -> ErrorList {
    let mut errs = ErrorList::new();
    let Some(policy) = present(c, "resourcesPolicy") else {
        return errs;
    };
    let non_empty = |k: &str| {
        c.pointer(&format!("/resources/{k}"))
            .and_then(Value::as_object)
            .is_some_and(|m| !m.is_empty())
    };
    if non_empty("limits") || non_empty("requests") {
        errs.push(invalid(
            path,
            go_resources_policy(policy),
            "resourcesPolicy and resources cannot be configured together",
        ));
        return errs;
    }
    if str_at(policy, "targetContainersNameRegex").is_empty() {
        errs.push(required(
            &path.child("targetContainersNameRegex"),
            "invalid empty regex",
        ));
    }
    let regex = str_at(policy, "targetContainersNameRegex");
    if let Some(problem) = resources::regex_problem(regex).filter(|_| !regex.is_empty()) {
        errs.push(invalid(
            &path.child("targetContainersNameRegex"),
            regex,
            format!("invalid regex pattern: {problem}"),
        ));
    }
    let expr = policy.get("resourcesExpr").unwrap_or(&Value::Null);
    let epath = path.child("resourcesExpr");
    if present(expr, "limits").is_none() && present(expr, "requests").is_none() {
        errs.push(invalid(
            &epath,
            GoValue::Raw(
                "v1beta1.ResourcesExpr{Limits:(*v1beta1.ResourceExprLimits)(nil), Requests:(*v1beta1.ResourceExprRequests)(nil)}".into(),
            ),
            "at least one of limits or requests must be configured",
        ));
        return errs;
    }
    for kind in ["limits", "requests"] {
        let Some(exprs) = present(expr, kind) else {
            continue;
        };
        for variable in ["cpu", "memory"] {
            let text = str_at(exprs, variable);
            if let Some(problem) = (!text.is_empty())
                .then(|| resources::expression_problem(text, variable))
                .flatten()
            {
                errs.push(invalid(
                    &epath.child(kind).child(variable),
                    text,
                    format!("invalid expression: {problem}"),
                ));
            }
        }
    }
    errs
}
