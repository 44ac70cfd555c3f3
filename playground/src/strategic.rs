//! Strategic merge patch for built-in kinds, driven by field names instead of Go struct tags:
//! lists of objects listed in [`merge_key`] merge by that key, `finalizers` merges as a set,
//! other lists are replaced. Directives: `$patch: replace|delete|merge`, `$retainKeys`,
//! `$deleteFromPrimitiveList/<field>`; `$setElementOrder/<field>` is accepted and ignored (the
//! merged order is: existing items in place, new items appended).

use serde_json::{Map, Value};

/// The `patchMergeKey` of a list field, by field name (and, for `ports`, by item shape).
pub fn merge_key(field: &str, sample: Option<&Value>) -> Option<&'static str> {
    Some(match field {
        "containers"
        | "initContainers"
        | "ephemeralContainers"
        | "volumes"
        | "env"
        | "imagePullSecrets"
        | "resourceClaims"
        | "schedulingGates" => "name",
        "volumeMounts" => "mountPath",
        "volumeDevices" => "devicePath",
        "conditions" => "type",
        "ownerReferences" => "uid",
        "hostAliases" => "ip",
        "topologySpreadConstraints" => "topologyKey",
        "readinessGates" => "conditionType",
        "ports" => match sample {
            Some(item) if item.get("containerPort").is_some() => "containerPort",
            _ => "port",
        },
        _ => return None,
    })
}

/// Primitive lists that merge as sets.
fn is_set_list(field: &str) -> bool {
    field == "finalizers"
}

/// Applies a strategic merge patch to `target`.
pub fn merge(target: &mut Value, patch: &Value) {
    let Value::Object(patch) = patch else {
        *target = patch.clone();
        return;
    };
    if patch.get("$patch").and_then(Value::as_str) == Some("replace") {
        let mut p = patch.clone();
        p.remove("$patch");
        *target = Value::Object(strip_directives(p));
        return;
    }
    if !target.is_object() {
        *target = Value::Object(Map::new());
    }
    let t = target.as_object_mut().expect("made an object");
    if let Some(keep) = patch.get("$retainKeys").and_then(Value::as_array) {
        let keep: Vec<&str> = keep.iter().filter_map(Value::as_str).collect();
        t.retain(|k, _| keep.contains(&k.as_str()) || patch.contains_key(k));
    }
    for (k, v) in patch {
        if let Some(field) = k.strip_prefix("$deleteFromPrimitiveList/") {
            if let (Some(list), Some(del)) = (t.get_mut(field).and_then(Value::as_array_mut), v.as_array()) {
                list.retain(|x| !del.contains(x));
            }
            continue;
        }
        if k.starts_with('$') {
            continue;
        }
        match v {
            Value::Null => {
                t.remove(k);
            }
            Value::Object(inner) if inner.get("$patch").and_then(Value::as_str) == Some("delete") => {
                t.remove(k);
            }
            Value::Object(_) => merge(t.entry(k.clone()).or_insert(Value::Null), v),
            Value::Array(items) => {
                let merged = merge_list(k, t.get(k), items);
                t.insert(k.clone(), merged);
            }
            _ => {
                t.insert(k.clone(), v.clone());
            }
        }
    }
}

fn strip_directives(mut m: Map<String, Value>) -> Map<String, Value> {
    m.retain(|k, _| !k.starts_with('$'));
    m
}

fn merge_list(field: &str, current: Option<&Value>, items: &[Value]) -> Value {
    let current: Vec<Value> = current.and_then(Value::as_array).cloned().unwrap_or_default();
    if items
        .iter()
        .any(|i| i.get("$patch").and_then(Value::as_str) == Some("replace"))
    {
        let kept = items
            .iter()
            .filter(|i| i.get("$patch").is_none())
            .map(|i| clean(i.clone()))
            .collect();
        return Value::Array(kept);
    }
    if is_set_list(field) {
        let mut out = current;
        for i in items {
            if !out.contains(i) {
                out.push(i.clone());
            }
        }
        return Value::Array(out);
    }
    let Some(key) = merge_key(field, items.first().or(current.first())) else {
        return Value::Array(items.iter().cloned().map(clean).collect());
    };
    let mut out = current;
    for item in items {
        let id = item.get(key);
        let pos = out.iter().position(|c| id.is_some() && c.get(key) == id);
        let delete = item.get("$patch").and_then(Value::as_str) == Some("delete");
        match (pos, delete) {
            (Some(i), true) => {
                out.remove(i);
            }
            (None, true) => {}
            (Some(i), false) => merge(&mut out[i], item),
            (None, false) => out.push(clean(item.clone())),
        }
    }
    Value::Array(out)
}

/// Drops directive keys from a new item (recursively) before it is stored.
fn clean(v: Value) -> Value {
    match v {
        Value::Object(m) => Value::Object(
            strip_directives(m)
                .into_iter()
                .filter(|(_, v)| !v.is_null())
                .map(|(k, v)| (k, clean(v)))
                .collect(),
        ),
        Value::Array(a) => Value::Array(a.into_iter().map(clean).collect()),
        other => other,
    }
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    #[test]
    fn containers_merge_by_name() {
        let mut pod =
            json!({"spec": {"containers": [{"name": "a", "image": "x:1"}, {"name": "b", "image": "y:1"}]}});
        merge(
            &mut pod,
            &json!({"spec": {"containers": [{"name": "b", "image": "y:2"}],
            "$setElementOrder/containers": [{"name": "a"}, {"name": "b"}]}}),
        );
        assert_eq!(pod["spec"]["containers"][0]["image"], "x:1");
        assert_eq!(pod["spec"]["containers"][1]["image"], "y:2");
    }

    #[test]
    fn directives() {
        let mut obj = json!({"metadata": {"finalizers": ["a"], "labels": {"x": "1", "y": "2"}},
            "spec": {"env": [{"name": "A", "value": "1"}, {"name": "B", "value": "2"}], "tolerations": [{"key": "k"}]}});
        merge(
            &mut obj,
            &json!({"metadata": {"finalizers": ["b"], "labels": {"x": null}},
            "spec": {"env": [{"name": "A", "$patch": "delete"}], "tolerations": [{"key": "j"}]}}),
        );
        assert_eq!(obj["metadata"]["finalizers"], json!(["a", "b"]));
        assert_eq!(obj["metadata"]["labels"], json!({"y": "2"}));
        assert_eq!(obj["spec"]["env"], json!([{"name": "B", "value": "2"}]));
        assert_eq!(obj["spec"]["tolerations"], json!([{"key": "j"}]));
        merge(
            &mut obj,
            &json!({"metadata": {"$deleteFromPrimitiveList/finalizers": ["a"]}}),
        );
        assert_eq!(obj["metadata"]["finalizers"], json!(["b"]));
        merge(
            &mut obj,
            &json!({"spec": {"$retainKeys": ["env"], "env": [{"$patch": "replace"}, {"name": "C"}]}}),
        );
        assert_eq!(obj["spec"], json!({"env": [{"name": "C"}]}));
    }
}
