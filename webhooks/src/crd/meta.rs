//! apimachinery's small validators, on raw JSON: names, label keys and values, label selectors, object
//! metadata, int-or-percent values, and OpenKruise's selector-overlap tests.

use std::collections::BTreeMap;

use kruise_core::intstr::{self, IntOrPercent, Round};
use kruise_core::selector::{Selection, Selector};
use serde_json::{Map, Value};

use super::field::{
    ErrorList, GoValue, Path, forbidden, go_int_or_string, invalid, required, str_at, too_long,
};

pub const QUALIFIED_NAME_FMT: &str = "([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]";
const QUALIFIED_NAME_MSG: &str = "must consist of alphanumeric characters, '-', '_' or '.', and must start and end with an alphanumeric character";
const LABEL_VALUE_MSG: &str = "a valid label must be an empty string or consist of alphanumeric characters, '-', '_' or '.', and must start and end with an alphanumeric character";
const DNS1123_LABEL_FMT: &str = "[a-z0-9]([-a-z0-9]*[a-z0-9])?";
const DNS1123_LABEL_MSG: &str = "a lowercase RFC 1123 label must consist of lower case alphanumeric characters or '-', and must start and end with an alphanumeric character";
const DNS1123_SUBDOMAIN_FMT: &str = "[a-z0-9]([-a-z0-9]*[a-z0-9])?(\\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*";
const DNS1123_SUBDOMAIN_MSG: &str = "a lowercase RFC 1123 subdomain must consist of lower case alphanumeric characters, '-' or '.', and must start and end with an alphanumeric character";
/// `IsNegativeErrorMsg`.
pub const NEGATIVE_MSG: &str = "must be greater than or equal to 0";
/// `FieldImmutableErrorMsg`.
pub const IMMUTABLE_MSG: &str = "field is immutable";

/// `validation.RegexError`.
pub fn regex_error(msg: &str, fmt: &str, examples: &[&str]) -> String {
    if examples.is_empty() {
        return format!("{msg} (regex used for validation is '{fmt}')");
    }
    let mut out = format!("{msg} (e.g. ");
    for (i, e) in examples.iter().enumerate() {
        if i > 0 {
            out.push_str(" or ");
        }
        out.push_str(&format!("'{e}', "));
    }
    out.push_str(&format!("regex used for validation is '{fmt}')"));
    out
}

/// `validation.MaxLenError`.
pub fn max_len_error(n: usize) -> String {
    format!("must be no more than {n} characters")
}

fn alnum(c: u8) -> bool {
    c.is_ascii_alphanumeric()
}

/// `^([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]$`
fn is_qualified_token(s: &str) -> bool {
    let b = s.as_bytes();
    !b.is_empty()
        && alnum(b[0])
        && alnum(b[b.len() - 1])
        && b.iter().all(|&c| alnum(c) || c == b'-' || c == b'_' || c == b'.')
}

fn is_dns_label_token(s: &str) -> bool {
    let b = s.as_bytes();
    let ok = |c: u8| c.is_ascii_lowercase() || c.is_ascii_digit();
    !b.is_empty() && ok(b[0]) && ok(b[b.len() - 1]) && b.iter().all(|&c| ok(c) || c == b'-')
}

fn is_dns_subdomain_token(s: &str) -> bool {
    !s.is_empty() && s.split('.').all(is_dns_label_token)
}

/// `validation.IsDNS1123Label`.
pub fn dns1123_label(value: &str) -> Vec<String> {
    let mut errs = Vec::new();
    if value.len() > 63 {
        errs.push(max_len_error(63));
    }
    if !is_dns_label_token(value) {
        if is_dns_subdomain_token(value) {
            errs.push("must not contain dots".to_string());
        } else {
            errs.push(regex_error(
                DNS1123_LABEL_MSG,
                DNS1123_LABEL_FMT,
                &["my-name", "123-abc"],
            ));
        }
    }
    errs
}

/// `validation.IsDNS1123Subdomain`.
pub fn dns1123_subdomain(value: &str) -> Vec<String> {
    let mut errs = Vec::new();
    if value.len() > 253 {
        errs.push(max_len_error(253));
    }
    if !is_dns_subdomain_token(value) {
        errs.push(regex_error(
            DNS1123_SUBDOMAIN_MSG,
            DNS1123_SUBDOMAIN_FMT,
            &["example.com"],
        ));
    }
    errs
}

/// `validation.IsQualifiedName`.
pub fn qualified_name(value: &str) -> Vec<String> {
    let mut errs = Vec::new();
    let parts: Vec<&str> = value.split('/').collect();
    let name = match parts.as_slice() {
        [name] => *name,
        [prefix, name] => {
            if prefix.is_empty() {
                errs.push("prefix part must be non-empty".to_string());
            } else {
                errs.extend(
                    dns1123_subdomain(prefix)
                        .into_iter()
                        .map(|m| format!("prefix part {m}")),
                );
            }
            *name
        }
        _ => {
            errs.push(format!(
                "a qualified name {} with an optional DNS subdomain prefix and '/' (e.g. 'example.com/MyName')",
                regex_error(
                    QUALIFIED_NAME_MSG,
                    QUALIFIED_NAME_FMT,
                    &["MyName", "my.name", "123-abc"]
                )
            ));
            return errs;
        }
    };
    if name.is_empty() {
        errs.push("name part must be non-empty".to_string());
    } else if name.len() > 63 {
        errs.push(format!("name part {}", max_len_error(63)));
    }
    if !is_qualified_token(name) {
        errs.push(format!(
            "name part {}",
            regex_error(
                QUALIFIED_NAME_MSG,
                QUALIFIED_NAME_FMT,
                &["MyName", "my.name", "123-abc"]
            )
        ));
    }
    errs
}

/// `validation.IsValidLabelValue`.
pub fn label_value(value: &str) -> Vec<String> {
    let mut errs = Vec::new();
    if value.len() > 63 {
        errs.push(max_len_error(63));
    }
    if !value.is_empty() && !is_qualified_token(value) {
        errs.push(regex_error(
            LABEL_VALUE_MSG,
            &format!("({QUALIFIED_NAME_FMT})?"),
            &["MyValue", "my_value", "12345"],
        ));
    }
    errs
}

/// `validation.IsValidPortName`.
pub fn port_name(port: &str) -> Vec<String> {
    let mut errs = Vec::new();
    if port.len() > 15 {
        errs.push(max_len_error(15));
    }
    if !port
        .bytes()
        .all(|c| c.is_ascii_lowercase() || c.is_ascii_digit() || c == b'-')
        || port.is_empty()
    {
        errs.push("must contain only alpha-numeric characters (a-z, 0-9), and hyphens (-)".to_string());
    }
    if !port.bytes().any(|c| c.is_ascii_lowercase()) {
        errs.push("must contain at least one letter (a-z)".to_string());
    }
    if port.contains("--") {
        errs.push("must not contain consecutive hyphens".to_string());
    }
    if port.starts_with('-') || port.ends_with('-') {
        errs.push("must not begin or end with a hyphen".to_string());
    }
    errs
}

/// `ValidateLabels(labels, path)`.
pub fn validate_labels(labels: Option<&Value>, path: &Path) -> ErrorList {
    let mut errs = ErrorList::new();
    let Some(map) = labels.and_then(Value::as_object) else {
        return errs;
    };
    for (k, v) in map {
        errs.extend(
            qualified_name(k)
                .into_iter()
                .map(|m| invalid(path, k.as_str(), m)),
        );
        let v = v.as_str().unwrap_or("");
        errs.extend(label_value(v).into_iter().map(|m| invalid(path, v, m)));
    }
    errs
}

/// `ValidateAnnotations(annotations, path)`.
pub fn validate_annotations(annotations: Option<&Value>, path: &Path) -> ErrorList {
    let mut errs = ErrorList::new();
    let Some(map) = annotations.and_then(Value::as_object) else {
        return errs;
    };
    let mut total = 0usize;
    for (k, v) in map {
        errs.extend(
            qualified_name(&k.to_lowercase())
                .into_iter()
                .map(|m| invalid(path, k.as_str(), m)),
        );
        total += k.len() + v.as_str().map_or(0, str::len);
    }
    if total > 256 * 1024 {
        errs.push(too_long(path, 256 * 1024));
    }
    errs
}

/// A name validator: the messages for a name (`prefix` when validating a `generateName`).
pub type NameFn = fn(&str, bool) -> Vec<String>;

/// `NameIsDNSLabel` (StatefulSet names: the pods' hostnames are `<name>-<ordinal>`).
pub fn name_is_dns_label(name: &str, prefix: bool) -> Vec<String> {
    let name = if prefix {
        mask_trailing_dash(name)
    } else {
        name.to_string()
    };
    dns1123_label(&name)
}

/// `NameIsDNSSubdomain`.
pub fn name_is_dns_subdomain(name: &str, prefix: bool) -> Vec<String> {
    let name = if prefix {
        mask_trailing_dash(name)
    } else {
        name.to_string()
    };
    dns1123_subdomain(&name)
}

fn mask_trailing_dash(name: &str) -> String {
    match name.strip_suffix('-') {
        Some(stem) if !stem.is_empty() => format!("{stem}a"),
        _ => name.to_string(),
    }
}

/// `ValidateObjectMeta` (subset: name / generateName, namespace presence, labels, annotations).
pub fn validate_object_meta(meta: Option<&Value>, namespaced: bool, name_fn: NameFn) -> ErrorList {
    let path = Path::new("metadata");
    let empty = Value::Object(Map::new());
    let meta = meta.unwrap_or(&empty);
    let mut errs = ErrorList::new();
    let generate_name = str_at(meta, "generateName");
    if !generate_name.is_empty() {
        errs.extend(
            name_fn(generate_name, true)
                .into_iter()
                .map(|m| invalid(&path.child("generateName"), generate_name, m)),
        );
    }
    let name = str_at(meta, "name");
    if name.is_empty() {
        errs.push(required(&path.child("name"), "name or generateName is required"));
    } else {
        errs.extend(
            name_fn(name, false)
                .into_iter()
                .map(|m| invalid(&path.child("name"), name, m)),
        );
    }
    let namespace = str_at(meta, "namespace");
    if namespaced {
        if namespace.is_empty() {
            errs.push(required(&path.child("namespace"), ""));
        } else {
            errs.extend(
                dns1123_label(namespace)
                    .into_iter()
                    .map(|m| invalid(&path.child("namespace"), namespace, m)),
            );
        }
    } else if !namespace.is_empty() {
        errs.push(forbidden(&path.child("namespace"), "not allowed on this type"));
    }
    errs.extend(validate_labels(meta.get("labels"), &path.child("labels")));
    errs.extend(validate_annotations(
        meta.get("annotations"),
        &path.child("annotations"),
    ));
    errs
}

/// `ValidateObjectMetaUpdate` (subset: name, namespace and uid are immutable; labels and annotations valid).
pub fn validate_object_meta_update(new: Option<&Value>, old: Option<&Value>) -> ErrorList {
    let path = Path::new("metadata");
    let null = Value::Null;
    let (new, old) = (new.unwrap_or(&null), old.unwrap_or(&null));
    let mut errs = ErrorList::new();
    for key in ["name", "namespace", "uid"] {
        let (n, o) = (str_at(new, key), str_at(old, key));
        if n != o && !(key == "uid" && o.is_empty()) {
            errs.push(invalid(&path.child(key), n, IMMUTABLE_MSG));
        }
    }
    errs.extend(validate_labels(new.get("labels"), &path.child("labels")));
    errs.extend(validate_annotations(
        new.get("annotations"),
        &path.child("annotations"),
    ));
    errs
}

/// `metav1validation.ValidateLabelSelector` with default options.
pub fn validate_label_selector(selector: Option<&Value>, path: &Path) -> ErrorList {
    let mut errs = ErrorList::new();
    let Some(sel) = selector.filter(|s| !s.is_null()) else {
        return errs;
    };
    errs.extend(validate_labels(
        sel.get("matchLabels"),
        &path.child("matchLabels"),
    ));
    for (i, expr) in sel
        .get("matchExpressions")
        .and_then(Value::as_array)
        .into_iter()
        .flatten()
        .enumerate()
    {
        let p = path.child("matchExpressions").index(i);
        let values = string_list(expr.get("values"));
        match str_at(expr, "operator") {
            "In" | "NotIn" => {
                if values.is_empty() {
                    errs.push(required(
                        &p.child("values"),
                        "must be specified when `operator` is 'In' or 'NotIn'",
                    ));
                }
            }
            "Exists" | "DoesNotExist" => {
                if !values.is_empty() {
                    errs.push(forbidden(
                        &p.child("values"),
                        "may not be specified when `operator` is 'Exists' or 'DoesNotExist'",
                    ));
                }
            }
            op => errs.push(invalid(&p.child("operator"), op, "not a valid selector operator")),
        }
        let key = str_at(expr, "key");
        errs.extend(
            qualified_name(key)
                .into_iter()
                .map(|m| invalid(&p.child("key"), key, m)),
        );
        for (j, v) in values.iter().enumerate() {
            errs.extend(
                label_value(v)
                    .into_iter()
                    .map(|m| invalid(&p.child("values").index(j), v.as_str(), m)),
            );
        }
    }
    errs
}

/// True when `metav1.LabelSelectorAsSelector` would fail on this selector.
pub fn selector_conversion_fails(selector: Option<&Value>) -> bool {
    !Selector::from_json(selector).is_valid()
}

/// True when the selector has neither matchLabels nor matchExpressions (`len(a)+len(b) == 0`).
pub fn selector_is_empty(selector: &Value) -> bool {
    let len = |k: &str| match selector.get(k) {
        Some(Value::Object(m)) => m.len(),
        Some(Value::Array(a)) => a.len(),
        _ => 0,
    };
    len("matchLabels") + len("matchExpressions") == 0
}

/// Whether `selector` (already known to convert) matches `labels`.
pub fn selector_matches(selector: &Value, labels: &BTreeMap<String, String>) -> bool {
    Selector::from_json(Some(selector))
        .evaluate(labels)
        .is_ok_and(|s| s != Selection::NoMatch)
}

/// A JSON string map as a `BTreeMap` (non-strings skipped).
pub fn string_map(v: Option<&Value>) -> BTreeMap<String, String> {
    v.and_then(Value::as_object)
        .map(|m| {
            m.iter()
                .filter_map(|(k, v)| v.as_str().map(|s| (k.clone(), s.to_string())))
                .collect()
        })
        .unwrap_or_default()
}

/// A JSON string list (non-strings skipped).
pub fn string_list(v: Option<&Value>) -> Vec<String> {
    v.and_then(Value::as_array)
        .map(|a| a.iter().filter_map(|s| s.as_str().map(String::from)).collect())
        .unwrap_or_default()
}

/// `apimachineryvalidation.ValidateNonnegativeField`.
pub fn validate_nonnegative(value: i64, path: &Path) -> ErrorList {
    if value < 0 {
        vec![invalid(path, value, NEGATIVE_MSG)]
    } else {
        Vec::new()
    }
}

fn is_percent(s: &str) -> bool {
    s.strip_suffix('%')
        .is_some_and(|d| !d.is_empty() && d.bytes().all(|c| c.is_ascii_digit()))
}

/// `appsvalidation.ValidatePositiveIntOrPercent`.
pub fn validate_positive_int_or_percent(value: &Value, path: &Path) -> ErrorList {
    match value {
        Value::String(s) => {
            if is_percent(s) {
                Vec::new()
            } else {
                vec![invalid(
                    path,
                    go_int_or_string(Some(value)),
                    regex_error(
                        "a valid percent string must be a numeric string followed by an ending '%'",
                        "[0-9]+%",
                        &["1%", "93%"],
                    ),
                )]
            }
        }
        v => validate_nonnegative(v.as_i64().unwrap_or(0), path),
    }
}

/// `appsvalidation.IsNotMoreThan100Percent`.
pub fn is_not_more_than_100_percent(value: &Value, path: &Path) -> ErrorList {
    if let Value::String(s) = value
        && is_percent(s)
        && s.trim_end_matches('%').parse::<u64>().map_or(true, |p| p > 100)
    {
        return vec![invalid(
            path,
            go_int_or_string(Some(value)),
            "must not be greater than 100%",
        )];
    }
    Vec::new()
}

/// OpenKruise's `util.GetScaledValueFromIntOrPercent` on a JSON value.
pub fn scaled_value(value: Option<&Value>, total: i64, round_up: bool) -> Result<i64, String> {
    let value = IntOrPercent::from_json(value).map_err(|e| e.to_string())?;
    intstr::kruise_scaled(value, total, Round::up_if(round_up)).map_err(|e| e.to_string())
}

/// apimachinery's `intstr.GetValueFromIntOrPercent` on a JSON value (every string is a percentage).
pub fn int_or_percent_value(value: &Value, total: i64, round_up: bool) -> Result<i64, String> {
    let value = IntOrPercent::from_json(Some(value)).map_err(|e| e.to_string())?;
    intstr::value_from(value, total, Round::up_if(round_up)).map_err(|e| e.to_string())
}

/// A bad value for an `*int32` field.
pub fn go_int(v: Option<&Value>) -> GoValue {
    match v {
        None | Some(Value::Null) => GoValue::Null,
        Some(v) => GoValue::Int(v.as_i64().unwrap_or(0)),
    }
}

mod overlap;
pub use overlap::{selectors_loose_overlap, selectors_overlap};

#[cfg(test)]
mod tests;
