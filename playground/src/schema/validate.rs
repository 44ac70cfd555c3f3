//! Validation of a custom resource against a structural schema, with the field errors
//! apiextensions-apiserver's `pkg/apiserver/validation` (`ValidateCustomResource`, over
//! kube-openapi's validator) and `pkg/apiserver/schema/listtype` report: types (with
//! `nullable`, `x-kubernetes-int-or-string`, `x-kubernetes-preserve-unknown-fields`), `required`,
//! `enum`, `format`, bounds, lengths, item and property counts, `pattern`, `allOf`/`anyOf`/`oneOf`/
//! `not`, and `x-kubernetes-list-type` `set`/`map` uniqueness.

use regex::Regex;
use serde_json::Value;

use super::Object;
use crate::error::FieldError;

/// Every violation of `schema` in `obj` (the root's `metadata`, `apiVersion` and `kind` excepted).
pub fn validate(schema: &Value, obj: &Value) -> Vec<FieldError> {
    let mut errors = vec![];
    let mut root = schema.clone();
    if let Some(p) = root["properties"].as_object_mut() {
        for k in ["metadata", "apiVersion", "kind"] {
            p.remove(k);
        }
    }
    if let Some(r) = root["required"].as_array_mut() {
        r.retain(|k| !matches!(k.as_str(), Some("metadata" | "apiVersion" | "kind")));
    }
    walk(&root, obj, "", &mut errors);
    errors
}

fn child(path: &str, key: &str) -> String {
    if path.is_empty() {
        key.to_string()
    } else {
        format!("{path}.{key}")
    }
}

fn type_name(v: &Value) -> &'static str {
    match v {
        Value::Null => "null",
        Value::Bool(_) => "boolean",
        Value::Number(n) if n.is_i64() || n.is_u64() => "integer",
        Value::Number(_) => "number",
        Value::String(_) => "string",
        Value::Array(_) => "array",
        Value::Object(_) => "object",
    }
}

fn type_ok(t: &str, v: &Value) -> bool {
    match t {
        "number" => v.is_number(),
        "integer" => v.is_i64() || v.is_u64() || v.as_f64().is_some_and(|f| f.fract() == 0.0),
        other => type_name(v) == other,
    }
}

fn invalid(path: &str, v: &Value, detail: String) -> FieldError {
    FieldError::invalid(path, v, &detail)
}

fn walk(schema: &Value, v: &Value, path: &str, out: &mut Vec<FieldError>) {
    let shown = if path.is_empty() { "<nil>" } else { path };
    if v.is_null() {
        if !schema["nullable"].as_bool().unwrap_or(false) && schema.get("type").is_some() {
            let t = schema["type"].as_str().unwrap_or_default();
            let detail = format!("{shown} in body must be of type {t}: \"null\"");
            out.push(FieldError::other(
                "FieldValueTypeInvalid",
                path,
                format!("Invalid value: \"null\": {detail}"),
            ));
        }
        return;
    }
    let int_or_string = schema["x-kubernetes-int-or-string"].as_bool().unwrap_or(false);
    if int_or_string {
        if !(v.is_string() || type_ok("integer", v)) {
            let detail = format!(
                "{shown} in body must be of type integer,string: \"{}\"",
                type_name(v)
            );
            out.push(FieldError::other(
                "FieldValueTypeInvalid",
                path,
                format!("Invalid value: \"{}\": {detail}", type_name(v)),
            ));
            return;
        }
    } else if let Some(t) = schema["type"].as_str()
        && !type_ok(t, v)
    {
        let detail = format!("{shown} in body must be of type {t}: \"{}\"", type_name(v));
        out.push(FieldError::other(
            "FieldValueTypeInvalid",
            path,
            format!("Invalid value: \"{}\": {detail}", type_name(v)),
        ));
        return;
    }
    if let Some(values) = schema["enum"].as_array()
        && !values.contains(v)
    {
        let supported: Vec<String> = values.iter().map(Value::to_string).collect();
        let detail = format!(
            "Unsupported value: {v}: supported values: {}",
            supported.join(", ")
        );
        out.push(FieldError::other("FieldValueNotSupported", path, detail));
    }
    match v {
        Value::String(s) => string(schema, s, v, shown, path, out),
        Value::Number(_) => number(schema, v, shown, path, out),
        Value::Array(items) => array(schema, items, v, shown, path, out),
        Value::Object(map) => object(schema, map, shown, path, out),
        Value::Bool(_) | Value::Null => {}
    }
    combinators(schema, v, shown, path, out);
}

fn string(schema: &Value, s: &str, v: &Value, shown: &str, path: &str, out: &mut Vec<FieldError>) {
    let chars = s.chars().count() as u64;
    if let Some(max) = schema["maxLength"].as_u64()
        && chars > max
    {
        out.push(FieldError::other(
            "FieldValueTooLong",
            path,
            format!("Too long: may not be more than {max} bytes"),
        ));
    }
    if let Some(min) = schema["minLength"].as_u64()
        && chars < min
    {
        out.push(invalid(
            path,
            v,
            format!("{shown} in body should be at least {min} chars long"),
        ));
    }
    if let Some(p) = schema["pattern"].as_str()
        && Regex::new(p).is_ok_and(|re| !re.is_match(s))
    {
        out.push(invalid(path, v, format!("{shown} in body should match '{p}'")));
    }
    if let Some(f) = schema["format"].as_str()
        && !format_ok(f, s)
    {
        out.push(invalid(
            path,
            v,
            format!("{shown} in body must be of type {f}: {v}"),
        ));
    }
}

/// The formats kube-apiserver checks (`apiextensions-apiserver/pkg/apiserver/validation/formats.go`);
/// unknown formats pass.
fn format_ok(format: &str, s: &str) -> bool {
    match format {
        "int32" => s.parse::<i32>().is_ok(),
        "int64" => s.parse::<i64>().is_ok(),
        "date-time" | "datetime" => crate::meta::parse_time(s).is_some(),
        "uuid" => {
            s.len() == 36
                && s.chars().enumerate().all(|(i, c)| {
                    if matches!(i, 8 | 13 | 18 | 23) {
                        c == '-'
                    } else {
                        c.is_ascii_hexdigit()
                    }
                })
        }
        "ipv4" => s.parse::<std::net::Ipv4Addr>().is_ok(),
        "ipv6" => s.parse::<std::net::Ipv6Addr>().is_ok(),
        "byte" => {
            use base64::Engine as _;
            base64::engine::general_purpose::STANDARD.decode(s).is_ok()
        }
        _ => true,
    }
}

fn number(schema: &Value, v: &Value, shown: &str, path: &str, out: &mut Vec<FieldError>) {
    let Some(x) = v.as_f64() else { return };
    let excl_min = schema["exclusiveMinimum"].as_bool().unwrap_or(false);
    let excl_max = schema["exclusiveMaximum"].as_bool().unwrap_or(false);
    if let Some(min) = schema["minimum"].as_f64()
        && (x < min || (excl_min && x == min))
    {
        let rel = if excl_min {
            "greater than"
        } else {
            "greater than or equal to"
        };
        out.push(invalid(
            path,
            v,
            format!("{shown} in body should be {rel} {}", num(&schema["minimum"])),
        ));
    }
    if let Some(max) = schema["maximum"].as_f64()
        && (x > max || (excl_max && x == max))
    {
        let rel = if excl_max {
            "less than"
        } else {
            "less than or equal to"
        };
        out.push(invalid(
            path,
            v,
            format!("{shown} in body should be {rel} {}", num(&schema["maximum"])),
        ));
    }
    if let Some(m) = schema["multipleOf"].as_f64()
        && m > 0.0
        && (x / m).fract() != 0.0
    {
        out.push(invalid(
            path,
            v,
            format!(
                "{shown} in body should be a multiple of {}",
                num(&schema["multipleOf"])
            ),
        ));
    }
}

/// A bound as Go's `%v` prints a float64 (`1`, not `1.0`).
fn num(v: &Value) -> String {
    match v.as_f64() {
        Some(f) if f.fract() == 0.0 && f.abs() < 1e15 => format!("{}", f as i64),
        _ => v.to_string(),
    }
}

fn array(schema: &Value, items: &[Value], v: &Value, shown: &str, path: &str, out: &mut Vec<FieldError>) {
    if let Some(max) = schema["maxItems"].as_u64()
        && items.len() as u64 > max
    {
        let detail = format!("Too many: {}: must have at most {max} items", items.len());
        out.push(FieldError::other("FieldValueTooMany", path, detail));
    }
    if let Some(min) = schema["minItems"].as_u64()
        && (items.len() as u64) < min
    {
        out.push(invalid(
            path,
            v,
            format!("{shown} in body should have at least {min} items"),
        ));
    }
    if let Some(item_schema) = schema.get("items").filter(|i| i.is_object()) {
        for (i, item) in items.iter().enumerate() {
            walk(item_schema, item, &format!("{path}[{i}]"), out);
        }
    }
    match schema["x-kubernetes-list-type"].as_str() {
        Some("set") => {
            for (i, item) in items.iter().enumerate() {
                if items[..i].contains(item) {
                    out.push(FieldError::other(
                        "FieldValueDuplicate",
                        &format!("{path}[{i}]"),
                        format!("Duplicate value: {item}"),
                    ));
                }
            }
        }
        Some("map") => {
            let keys: Vec<&str> = schema["x-kubernetes-list-map-keys"]
                .as_array()
                .into_iter()
                .flatten()
                .filter_map(Value::as_str)
                .collect();
            let key_of = |item: &Value| -> Value {
                let mut m = serde_json::Map::new();
                for k in &keys {
                    if let Some(x) = item.get(*k) {
                        m.insert((*k).to_string(), x.clone());
                    }
                }
                Value::Object(m)
            };
            let seen: Vec<Value> = items.iter().map(key_of).collect();
            for i in 0..seen.len() {
                if seen[..i].contains(&seen[i]) {
                    let detail = format!(
                        "Duplicate value: map[string]interface {{}}{{{}}}",
                        go_map(&seen[i])
                    );
                    out.push(FieldError::other(
                        "FieldValueDuplicate",
                        &format!("{path}[{i}]"),
                        detail,
                    ));
                }
            }
        }
        _ => {}
    }
}

/// A map's entries as Go's `%#v` prints a `map[string]interface{}`: `"k":"v", "n":1`.
fn go_map(m: &Value) -> String {
    m.as_object()
        .map(|m| {
            m.iter()
                .map(|(k, v)| format!("{k:?}:{v}"))
                .collect::<Vec<_>>()
                .join(", ")
        })
        .unwrap_or_default()
}

fn object(schema: &Value, map: &Object, shown: &str, path: &str, out: &mut Vec<FieldError>) {
    for r in schema["required"]
        .as_array()
        .into_iter()
        .flatten()
        .filter_map(Value::as_str)
    {
        if !map.contains_key(r) {
            out.push(FieldError::required(&child(path, r), ""));
        }
    }
    if let Some(max) = schema["maxProperties"].as_u64()
        && map.len() as u64 > max
    {
        let detail = format!("Too many: {}: must have at most {max} items", map.len());
        out.push(FieldError::other("FieldValueTooMany", path, detail));
    }
    if let Some(min) = schema["minProperties"].as_u64()
        && (map.len() as u64) < min
    {
        let v = Value::Object(map.clone());
        out.push(invalid(
            path,
            &v,
            format!("{shown} in body should have at least {min} properties"),
        ));
    }
    let properties = schema["properties"].as_object();
    let additional = schema.get("additionalProperties").filter(|a| a.is_object());
    for (k, v) in map {
        if let Some(sub) = properties.and_then(|p| p.get(k)) {
            walk(sub, v, &child(path, k), out);
        } else if let Some(sub) = additional {
            walk(sub, v, &child(path, k), out);
        }
    }
}

fn combinators(schema: &Value, v: &Value, shown: &str, path: &str, out: &mut Vec<FieldError>) {
    let passes = |s: &Value| {
        let mut e = vec![];
        walk(s, v, path, &mut e);
        e.is_empty()
    };
    if let Some(all) = schema["allOf"].as_array() {
        for s in all {
            walk(s, v, path, out);
        }
    }
    if let Some(any) = schema["anyOf"].as_array()
        && !any.iter().any(passes)
    {
        let mut first = vec![];
        if let Some(s) = any.first() {
            walk(s, v, path, &mut first);
        }
        out.append(&mut first);
        out.push(invalid(
            path,
            v,
            format!("\"{shown}\" must validate at least one schema (anyOf)"),
        ));
    }
    if let Some(one) = schema["oneOf"].as_array() {
        let n = one.iter().filter(|s| passes(s)).count();
        if n != 1 {
            out.push(invalid(
                path,
                v,
                format!("\"{shown}\" must validate one and only one schema (oneOf)"),
            ));
        }
    }
    if let Some(not) = schema.get("not").filter(|n| n.is_object())
        && passes(not)
    {
        out.push(invalid(
            path,
            v,
            format!("\"{shown}\" must not validate the schema (not)"),
        ));
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn messages(schema: Value, obj: Value) -> Vec<String> {
        let e = crate::error::ApiError::invalid("x.io", "Foo", "a", &validate(&schema, &obj));
        e.details.unwrap()["causes"]
            .as_array()
            .unwrap()
            .iter()
            .map(|c| {
                format!(
                    "{}: {}",
                    c["field"].as_str().unwrap(),
                    c["message"].as_str().unwrap()
                )
            })
            .collect()
    }

    #[test]
    fn kube_apiserver_messages() {
        // Wording of apiextensions-apiserver's ValidateCustomResource over kube-openapi's errors.
        let schema = json!({"type": "object", "properties": {"spec": {"type": "object",
        "required": ["selector"],
        "properties": {
            "replicas": {"type": "integer", "minimum": 0, "format": "int32"},
            "selector": {"type": "object"},
            "strategy": {"type": "string", "enum": ["ReCreate", "InPlaceIfPossible"]},
            "name": {"type": "string", "pattern": "^[a-z]+$", "maxLength": 5},
            "port": {"x-kubernetes-int-or-string": true},
            "tags": {"type": "array", "items": {"type": "string"}, "x-kubernetes-list-type": "set"},
            "containers": {"type": "array", "x-kubernetes-list-type": "map",
                "x-kubernetes-list-map-keys": ["name"],
                "items": {"type": "object", "properties": {"name": {"type": "string"}}}},
        }}}});
        let mut got = messages(
            schema,
            json!({"metadata": {"name": "a"}, "spec": {"replicas": "3", "strategy": "Rolling",
                "name": "ABCDEFG", "port": true, "tags": ["a", "a"],
                "containers": [{"name": "c"}, {"name": "c"}]}}),
        );
        got.sort();
        let mut want = [
            "spec.selector: Required value",
            r#"spec.replicas: Invalid value: "string": spec.replicas in body must be of type integer: "string""#,
            r#"spec.strategy: Unsupported value: "Rolling": supported values: "ReCreate", "InPlaceIfPossible""#,
            "spec.name: Too long: may not be more than 5 bytes",
            r#"spec.name: Invalid value: "ABCDEFG": spec.name in body should match '^[a-z]+$'"#,
            r#"spec.port: Invalid value: "boolean": spec.port in body must be of type integer,string: "boolean""#,
            r#"spec.tags[1]: Duplicate value: "a""#,
            r#"spec.containers[1]: Duplicate value: map[string]interface {}{"name":"c"}"#,
        ];
        want.sort();
        assert_eq!(got, want);
    }

    #[test]
    fn bounds_and_preserved_fields() {
        let schema = json!({"type": "object", "properties": {"spec": {"type": "object", "properties": {
            "replicas": {"type": "integer", "minimum": 0},
            "free": {"type": "object", "x-kubernetes-preserve-unknown-fields": true}}}}});
        assert_eq!(
            messages(
                schema.clone(),
                json!({"spec": {"replicas": -1, "free": {"a": [1, "b"]}}})
            ),
            ["spec.replicas: Invalid value: -1: spec.replicas in body should be greater than or equal to 0"]
        );
        assert!(messages(schema, json!({"spec": {"replicas": 2}})).is_empty());
    }
}
