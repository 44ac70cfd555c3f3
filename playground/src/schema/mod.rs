//! Structural schemas of custom resources, as apiextensions-apiserver applies the
//! `openAPIV3Schema` of the request's version:
//!
//! - [`prepare`] at decode time: unknown fields pruned (`pkg/apiserver/schema/pruning`), then
//!   `default`s applied (`pkg/apiserver/schema/defaulting`); again after mutating admission,
//!   as kube-apiserver prunes and defaults what webhooks return;
//! - [`check`] between mutating and validating admission (the strategy's `Validate`): the
//!   `validate` module, 422 with kube-apiserver's field-path messages.
//!
//! `apiVersion`, `kind` and `metadata` of the root (and of `x-kubernetes-embedded-resource`
//! objects) are never pruned; metadata is validated by the generic rules (`validate` module of the
//! crate), not by the schema.

mod validate;

use serde_json::{Map, Value};

use crate::error::ApiError;
use crate::resources::ResourceDef;

/// The schema of `def`'s version, for custom resources that have one.
fn schema_of(def: &ResourceDef) -> Option<&Value> {
    def.crd.as_deref().and_then(|c| c.schema.as_ref())
}

/// Prunes unknown fields and applies defaults (no-op for built-ins).
pub fn prepare(def: &ResourceDef, obj: &mut Value) {
    if let Some(schema) = schema_of(def) {
        prune(schema, obj, true, "", &mut vec![]);
        default(schema, obj);
    }
}

/// The fields of a custom resource its schema would prune (`spec.foo`, `spec.items[0].bar`):
/// what `fieldValidation=Strict` refuses and `Warn` warns about.
pub fn unknown_fields(def: &ResourceDef, obj: &Value) -> Vec<String> {
    let mut found = vec![];
    if let Some(schema) = schema_of(def) {
        prune(schema, &mut obj.clone(), true, "", &mut found);
    }
    found
}

/// `fieldValidation` of a write: `Strict` refuses unknown fields with kube-apiserver's 400
/// (`<Kind> in version "<v>" cannot be handled as a <Kind>: strict decoding error: unknown field
/// "spec.foo"`); `Warn` (the default) and `Ignore` accept them (Warn: one warning each, returned).
pub fn field_validation(def: &ResourceDef, mode: Option<&str>, obj: &Value) -> Result<Vec<String>, ApiError> {
    if def.crd.is_none() || mode == Some("Ignore") {
        return Ok(vec![]);
    }
    let unknown = unknown_fields(def, obj);
    if unknown.is_empty() {
        return Ok(vec![]);
    }
    let listed: Vec<String> = unknown.iter().map(|f| format!("unknown field {f:?}")).collect();
    if mode == Some("Strict") {
        return Err(ApiError::bad_request(format!(
            "{kind} in version {version:?} cannot be handled as a {kind}: strict decoding error: {}",
            listed.join(", "),
            kind = def.kind,
            version = def.version,
        )));
    }
    Ok(listed)
}

/// Validates a custom resource against its version's schema: 422 Invalid with every error.
pub fn check(def: &ResourceDef, obj: &Value) -> Result<(), ApiError> {
    let Some(schema) = schema_of(def) else {
        return Ok(());
    };
    let errors = validate::validate(schema, obj);
    if errors.is_empty() {
        return Ok(());
    }
    Err(ApiError::invalid(
        &def.group,
        &def.kind,
        crate::meta::name(obj),
        &errors,
    ))
}

fn flag(schema: &Value, name: &str) -> bool {
    schema[name].as_bool().unwrap_or(false)
}

/// Drops fields the schema does not declare (`pruning.PruneWithOptions`), noting their paths.
fn prune(schema: &Value, obj: &mut Value, root: bool, path: &str, pruned: &mut Vec<String>) {
    let at = |k: &str| {
        if path.is_empty() {
            k.to_string()
        } else {
            format!("{path}.{k}")
        }
    };
    match obj {
        Value::Object(map) => {
            let embedded = root || flag(schema, "x-kubernetes-embedded-resource");
            let preserve = flag(schema, "x-kubernetes-preserve-unknown-fields");
            let properties = schema["properties"].as_object();
            let additional = schema.get("additionalProperties").filter(|a| a.is_object());
            let keys: Vec<String> = map.keys().cloned().collect();
            for k in keys {
                if embedded && matches!(k.as_str(), "apiVersion" | "kind" | "metadata") {
                    continue;
                }
                if let Some(sub) = properties.and_then(|p| p.get(&k)) {
                    prune(
                        sub,
                        map.get_mut(&k).unwrap_or(&mut Value::Null),
                        false,
                        &at(&k),
                        pruned,
                    );
                } else if let Some(sub) = additional {
                    prune(
                        sub,
                        map.get_mut(&k).unwrap_or(&mut Value::Null),
                        false,
                        &at(&k),
                        pruned,
                    );
                } else if !preserve && !additional_true(schema) {
                    map.remove(&k);
                    pruned.push(at(&k));
                }
            }
        }
        Value::Array(items) => {
            if let Some(sub) = schema.get("items").filter(|i| i.is_object()) {
                for (i, item) in items.iter_mut().enumerate() {
                    prune(sub, item, false, &format!("{path}[{i}]"), pruned);
                }
            }
        }
        _ => {}
    }
}

fn additional_true(schema: &Value) -> bool {
    schema["additionalProperties"] == Value::Bool(true)
}

/// Sets the `default` of every absent (or null, unless nullable) property
/// (`defaulting.Default`).
fn default(schema: &Value, obj: &mut Value) {
    match obj {
        Value::Object(map) => {
            if let Some(properties) = schema["properties"].as_object() {
                for (k, sub) in properties {
                    let missing = match map.get(k) {
                        None => true,
                        Some(Value::Null) => !flag(sub, "nullable"),
                        Some(_) => false,
                    };
                    if missing && let Some(d) = sub.get("default") {
                        map.insert(k.clone(), d.clone());
                    }
                }
                for (k, sub) in properties {
                    if let Some(v) = map.get_mut(k) {
                        default(sub, v);
                    }
                }
            } else if let Some(sub) = schema.get("additionalProperties").filter(|a| a.is_object()) {
                for v in map.values_mut() {
                    default(sub, v);
                }
            }
        }
        Value::Array(items) => {
            if let Some(sub) = schema.get("items").filter(|i| i.is_object()) {
                for item in items {
                    default(sub, item);
                }
            }
        }
        _ => {}
    }
}

/// `Map` alias for the validator.
type Object = Map<String, Value>;

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn schema() -> Value {
        json!({"type": "object", "properties": {
            "spec": {"type": "object", "properties": {
                "replicas": {"type": "integer", "default": 1},
                "strategy": {"type": "object", "properties": {"type": {"type": "string", "default": "ReCreate"}}},
                "template": {"type": "object", "x-kubernetes-preserve-unknown-fields": true},
                "labels": {"type": "object", "additionalProperties": {"type": "string"}},
                "items": {"type": "array", "items": {"type": "object", "properties": {"name": {"type": "string"}}}},
            }},
            "status": {"type": "object"},
        }})
    }

    #[test]
    fn unknown_fields_are_pruned_but_where_preserved() {
        let mut obj = json!({"apiVersion": "x/v1", "kind": "K", "metadata": {"name": "a", "x": 1},
            "spec": {"unknown": 1, "template": {"anything": {"goes": true}}, "labels": {"a": "b"},
                     "items": [{"name": "n", "extra": 2}]},
            "extra": true});
        let mut pruned = vec![];
        prune(&schema(), &mut obj, true, "", &mut pruned);
        pruned.sort();
        assert_eq!(pruned, ["extra", "spec.items[0].extra", "spec.unknown"]);
        assert_eq!(
            obj,
            json!({"apiVersion": "x/v1", "kind": "K", "metadata": {"name": "a", "x": 1},
            "spec": {"template": {"anything": {"goes": true}}, "labels": {"a": "b"}, "items": [{"name": "n"}]}})
        );
    }

    #[test]
    fn defaults_fill_absent_fields_at_every_level_present() {
        let mut obj = json!({"spec": {"strategy": {}}});
        default(&schema(), &mut obj);
        assert_eq!(
            obj,
            json!({"spec": {"replicas": 1, "strategy": {"type": "ReCreate"}}})
        );
        let mut obj = json!({"spec": {"replicas": 3}});
        default(&schema(), &mut obj);
        assert_eq!(
            obj,
            json!({"spec": {"replicas": 3}}),
            "no strategy object: nothing below it defaulted"
        );
    }
}
