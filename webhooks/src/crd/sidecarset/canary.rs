//! Canary SidecarSets (`apps.kruise.io/sidecarset-canary` with a base SidecarSet).

use std::collections::BTreeMap;

use serde_json::Value;

use crate::crd::field::{ErrorList, GoValue, Path, go_quote, invalid};
use crate::crd::meta;

const CANARY_ANNOTATION: &str = "apps.kruise.io/sidecarset-canary";

const BASE_ANNOTATION: &str = "apps.kruise.io/sidecarset-base";

fn annotations(obj: &Value) -> BTreeMap<String, String> {
    meta::string_map(obj.pointer("/metadata/annotations"))
}

pub(super) fn is_canary(obj: &Value) -> (bool, String) {
    let a = annotations(obj);
    let base = a.get(BASE_ANNOTATION).cloned().unwrap_or_default();
    (
        a.get(CANARY_ANNOTATION).map(String::as_str) == Some("true") && !base.is_empty(),
        base,
    )
}

/// Go's `%#v` of `metadata.annotations` (a `map[string]string`).
fn go_annotations(obj: &Value) -> GoValue {
    GoValue::Raw(crate::crd::field::go_string_map(
        obj.pointer("/metadata/annotations").filter(|v| !v.is_null()),
    ))
}

pub(super) fn validate_canary(obj: &Value, old: Option<&Value>, others: &[Value]) -> ErrorList {
    let mut errs = ErrorList::new();
    let (canary, base) = is_canary(obj);
    if !canary {
        return errs;
    }
    let mpath = Path::new("metadata");
    let name = obj
        .pointer("/metadata/name")
        .and_then(Value::as_str)
        .unwrap_or("");
    if base == name {
        errs.push(invalid(
            &mpath,
            go_annotations(obj),
            "base sidecarSet cannot be itself",
        ));
    }
    if let Some(old) = old
        && annotations(old).get(BASE_ANNOTATION) != Some(&base)
    {
        errs.push(invalid(
            &mpath,
            go_annotations(obj),
            format!("annotations[{BASE_ANNOTATION}] is immutable"),
        ));
    }
    match others
        .iter()
        .find(|o| o.pointer("/metadata/name").and_then(Value::as_str) == Some(&base))
    {
        None => errs.push(invalid(
            &mpath,
            go_annotations(obj),
            format!(
                "fetch base sidecarSet[{base}] failed: sidecarsets.apps.kruise.io {} not found",
                go_quote(&base)
            ),
        )),
        Some(b) => {
            if is_canary(b).0 {
                errs.push(invalid(
                    &mpath,
                    go_annotations(obj),
                    "base sidecarSet cannot be canary",
                ));
            }
        }
    }
    if obj.pointer("/spec/updateStrategy/type").and_then(Value::as_str) != Some("NotUpdate") {
        errs.push(invalid(
            &mpath,
            go_annotations(obj),
            "RollingUpdate is not supported for canary sidecarSet",
        ));
    }
    errs
}
