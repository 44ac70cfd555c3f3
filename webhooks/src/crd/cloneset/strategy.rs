//! CloneSet validation of `scaleStrategy` and `updateStrategy`, per API version (OpenKruise's
//! `pkg/webhook/cloneset/validating/validation.go`).

use serde_json::Value;

use super::present;
use crate::crd::field::{
    ErrorList, GoValue, Path, go_int_or_string, int_or_string_text, invalid, required, str_at,
};
use crate::crd::meta::{scaled_value, validate_nonnegative};
use crate::crd::sidecarset::{priority_strategy_error, scatter_strategy_error};
use crate::view::ClusterView;

pub(super) fn validate_scale_strategy(
    obj: &Value,
    spec: &Value,
    old: Option<&Value>,
    version: &str,
    view: &impl ClusterView,
) -> ErrorList {
    let path = Path::new("spec").child("scaleStrategy").child("podsToDelete");
    let mut errs = ErrorList::new();
    let names: Vec<String> = crate::crd::meta::string_list(spec.pointer("/scaleStrategy/podsToDelete"));
    let mut seen = std::collections::BTreeSet::new();
    let dups: Vec<&str> = names
        .iter()
        .filter(|n| !seen.insert(n.as_str()))
        .map(String::as_str)
        .collect();
    if !dups.is_empty() {
        errs.push(invalid(
            &path,
            GoValue::Raw(crate::crd::field::go_string_slice(
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
        .map(|o| crate::crd::meta::string_list(o.pointer("/spec/scaleStrategy/podsToDelete")))
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
                    crate::crd::field::go_quote(name)
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

pub(super) fn validate_strategy_v1alpha1(s: &Value, replicas: i64) -> ErrorList {
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

pub(super) fn validate_strategy_v1beta1(s: &Value, replicas: i64) -> ErrorList {
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
    let quoted = crate::crd::field::go_quote(s);
    let digits = s.strip_prefix(['-', '+']).unwrap_or(s);
    if !digits.is_empty() && digits.bytes().all(|c| c.is_ascii_digit()) {
        format!("strconv.ParseInt: parsing {quoted}: value out of range")
    } else {
        format!("strconv.ParseInt: parsing {quoted}: invalid syntax")
    }
}
