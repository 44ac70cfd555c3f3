//! Server-side apply (`application/apply-patch+yaml`), simplified.
//!
//! Field ownership is tracked for appliers only: every apply records the fields of the applied
//! configuration in a `managedFields` entry (`operation: Apply`, `fieldsType: FieldsV1`, in the
//! real `f:`/`k:` notation). Other writes (create, update, patch) are not recorded as owners.
//! An apply:
//! - conflicts (409, reason `Conflict`, one `FieldManagerConflict` cause per field) when it sets a
//!   field another applier owns to a different value, unless `force=true`, which takes the field over;
//! - merges the configuration into the live object (maps recursively, lists with a merge key by key,
//!   other lists replaced);
//! - removes the fields it owned before, no longer applies, and no other applier owns.

use std::collections::BTreeSet;

use serde_json::{Map, Value, json};

use crate::error::ApiError;
use crate::meta;
use crate::resources::ResourceDef;
use crate::strategic;

type Path = Vec<String>;

/// Parses an apply body (YAML or JSON).
pub fn parse(body: &[u8]) -> Result<Value, ApiError> {
    let text = std::str::from_utf8(body).map_err(|e| ApiError::bad_request(e.to_string()))?;
    let v: Value = serde_saphyr::from_str(text)
        .map_err(|e| ApiError::bad_request(format!("error decoding YAML: {e}")))?;
    if !v.is_object() {
        return Err(ApiError::bad_request(
            "the body of an apply patch must be an object",
        ));
    }
    Ok(v)
}

const SKIPPED_META: &[&str] = &[
    "name",
    "namespace",
    "uid",
    "resourceVersion",
    "managedFields",
    "creationTimestamp",
    "generation",
];

/// The FieldsV1 tree of a configuration.
pub fn fields(v: &Value) -> Value {
    fields_of(v, true)
}

fn fields_of(v: &Value, top: bool) -> Value {
    let mut out = Map::new();
    let Some(m) = v.as_object() else {
        return Value::Object(out);
    };
    for (k, child) in m {
        if top && (k == "apiVersion" || k == "kind") {
            continue;
        }
        let sub = match child {
            Value::Object(_) if top && k == "metadata" => {
                let mut meta = child.clone();
                if let Some(mm) = meta.as_object_mut() {
                    mm.retain(|mk, _| !SKIPPED_META.contains(&mk.as_str()));
                }
                fields_of(&meta, false)
            }
            Value::Object(_) => fields_of(child, false),
            Value::Array(items) => match strategic::merge_key(k, items.first()) {
                Some(key) => {
                    let mut list = Map::new();
                    for item in items {
                        let id = json!({key: item.get(key).cloned().unwrap_or(Value::Null)});
                        let mut node = fields_of(item, false).as_object().cloned().unwrap_or_default();
                        node.insert(".".into(), json!({}));
                        list.insert(format!("k:{id}"), Value::Object(node));
                    }
                    Value::Object(list)
                }
                None => json!({}),
            },
            _ => json!({}),
        };
        if top && k == "metadata" && sub.as_object().is_some_and(Map::is_empty) {
            continue;
        }
        out.insert(format!("f:{k}"), sub);
    }
    Value::Object(out)
}

/// Every owned path of a FieldsV1 tree: leaves, and list items (nodes with `.`).
fn paths(tree: &Value) -> BTreeSet<Path> {
    let mut out = BTreeSet::new();
    walk(tree, &mut vec![], &mut out);
    out
}

fn walk(tree: &Value, prefix: &mut Path, out: &mut BTreeSet<Path>) {
    let Some(m) = tree.as_object() else { return };
    if m.contains_key(".") || (m.is_empty() && !prefix.is_empty()) {
        out.insert(prefix.clone());
    }
    for (k, v) in m {
        if k == "." {
            continue;
        }
        prefix.push(k.clone());
        walk(v, prefix, out);
        prefix.pop();
    }
}

fn tree_of(set: &BTreeSet<Path>) -> Value {
    let mut root = json!({});
    for p in set {
        let mut cur = &mut root;
        for seg in p {
            cur = cur
                .as_object_mut()
                .expect("trees are objects")
                .entry(seg.clone())
                .or_insert_with(|| json!({}));
        }
        if p.last().is_some_and(|s| s.starts_with("k:")) {
            cur[".".to_string()] = json!({});
        }
    }
    root
}

fn step<'a>(v: &'a Value, seg: &str) -> Option<&'a Value> {
    if let Some(f) = seg.strip_prefix("f:") {
        return v.get(f);
    }
    let id: Value = serde_json::from_str(seg.strip_prefix("k:")?).ok()?;
    let id = id.as_object()?;
    v.as_array()?
        .iter()
        .find(|item| id.iter().all(|(k, want)| item.get(k) == Some(want)))
}

fn value_at<'a>(v: &'a Value, path: &Path) -> Option<&'a Value> {
    path.iter().try_fold(v, |cur, seg| step(cur, seg))
}

fn remove_at(v: &mut Value, path: &Path) {
    let Some((last, parent_path)) = path.split_last() else {
        return;
    };
    let mut cur = v;
    for seg in parent_path {
        let next = if let Some(f) = seg.strip_prefix("f:") {
            cur.get_mut(f)
        } else {
            let id: Option<Value> = seg.strip_prefix("k:").and_then(|s| serde_json::from_str(s).ok());
            let id = id.and_then(|i| i.as_object().cloned()).unwrap_or_default();
            cur.as_array_mut().and_then(|a| {
                a.iter_mut()
                    .find(|item| id.iter().all(|(k, want)| item.get(k) == Some(want)))
            })
        };
        let Some(n) = next else { return };
        cur = n;
    }
    if let Some(f) = last.strip_prefix("f:") {
        cur.as_object_mut().map(|m| m.remove(f));
    } else if let Some(id) = last
        .strip_prefix("k:")
        .and_then(|s| serde_json::from_str::<Value>(s).ok())
        && let (Some(a), Some(id)) = (cur.as_array_mut(), id.as_object())
    {
        a.retain(|item| !id.iter().all(|(k, want)| item.get(k) == Some(want)));
    }
}

/// `.spec.containers[name="a"].image`
fn display(path: &Path) -> String {
    path.iter()
        .map(|s| match s.strip_prefix("f:") {
            Some(f) => format!(".{f}"),
            None => {
                let id: Value = serde_json::from_str(s.trim_start_matches("k:")).unwrap_or_default();
                let parts: Vec<String> = id
                    .as_object()
                    .map(|m| m.iter().map(|(k, v)| format!("{k}={v}")).collect())
                    .unwrap_or_default();
                format!("[{}]", parts.join(","))
            }
        })
        .collect()
}

fn entry(manager: &str, api_version: &str, tree: Value) -> Value {
    json!({"manager": manager, "operation": "Apply", "apiVersion": api_version, "time": meta::now(),
        "fieldsType": "FieldsV1", "fieldsV1": tree})
}

/// The object an apply creates.
pub fn for_create(def: &ResourceDef, applied: &Value, manager: &str) -> Value {
    let mut obj = applied.clone();
    let mf = vec![entry(manager, &def.api_version(), fields(&scoped(applied, None)))];
    meta::metadata_mut(&mut obj).insert("managedFields".into(), json!(mf));
    obj
}

/// The object after applying `applied` as `manager` to `current`.
pub fn apply(
    def: &ResourceDef,
    current: &Value,
    applied: &Value,
    manager: &str,
    force: bool,
) -> Result<Value, ApiError> {
    apply_to(def, current, applied, manager, force, None)
}

/// The part of a configuration a write to `subresource` applies: `.status` for `status`, the
/// rest for the main resource.
fn scoped(applied: &Value, subresource: Option<&str>) -> Value {
    let mut v = applied.clone();
    if let Some(m) = v.as_object_mut() {
        match subresource {
            Some("status") => {
                m.retain(|k, _| matches!(k.as_str(), "apiVersion" | "kind" | "metadata" | "status"))
            }
            _ => _ = m.remove("status"),
        }
    }
    if subresource == Some("status") {
        meta::metadata_mut(&mut v).retain(|k, _| SKIPPED_META.contains(&k.as_str()));
    }
    v
}

/// [`apply`] to the main resource (`None`) or a subresource: managers own fields per
/// subresource, as kube's `managedFields[].subresource`.
pub fn apply_to(
    def: &ResourceDef,
    current: &Value,
    applied: &Value,
    manager: &str,
    force: bool,
    subresource: Option<&str>,
) -> Result<Value, ApiError> {
    let applied = &scoped(applied, subresource);
    let sub = json!(subresource.unwrap_or_default());
    let same_sub =
        |e: &Value| e["subresource"].as_str().unwrap_or_default() == sub.as_str().unwrap_or_default();
    let new_set = paths(&fields(applied));
    let mut entries: Vec<Value> = current["metadata"]["managedFields"]
        .as_array()
        .cloned()
        .unwrap_or_default();
    let mine = entries
        .iter()
        .position(|e| e["manager"] == manager && e["operation"] == "Apply" && same_sub(e));
    let old_set = mine.map(|i| paths(&entries[i]["fieldsV1"])).unwrap_or_default();
    let mut conflicts: Vec<(String, Path)> = vec![];
    let mut others: Vec<(usize, BTreeSet<Path>)> = vec![];
    for (i, e) in entries.iter().enumerate() {
        if Some(i) == mine || e["operation"] != "Apply" || !same_sub(e) {
            continue;
        }
        let set = paths(&e["fieldsV1"]);
        for p in set.intersection(&new_set) {
            if value_at(current, p) != value_at(applied, p) && !p.last().is_some_and(|s| s.starts_with("k:"))
            {
                conflicts.push((e["manager"].as_str().unwrap_or_default().to_string(), p.clone()));
            }
        }
        others.push((i, set));
    }
    if !conflicts.is_empty() && !force {
        return Err(conflict_error(&def.api_version(), &conflicts));
    }
    let mut obj = current.clone();
    let owned_by_others: BTreeSet<Path> = others.iter().flat_map(|(_, s)| s.iter().cloned()).collect();
    let mut removed: Vec<&Path> = old_set
        .difference(&new_set)
        .filter(|p| !owned_by_others.contains(*p))
        .collect();
    removed.sort_by_key(|p| std::cmp::Reverse(p.len()));
    for p in removed {
        remove_at(&mut obj, p);
    }
    let mut patch = applied.clone();
    meta::metadata_mut(&mut patch).remove("managedFields");
    strategic::merge(&mut obj, &patch);
    if force {
        for (i, set) in &others {
            let lost: BTreeSet<Path> = set
                .iter()
                .filter(|p| !conflicts.iter().any(|(_, c)| c == *p))
                .cloned()
                .collect();
            entries[*i]["fieldsV1"] = tree_of(&lost);
        }
    }
    let mut e = entry(manager, &def.api_version(), fields(applied));
    if let Some(sr) = subresource {
        e["subresource"] = json!(sr);
    }
    match mine {
        Some(i) => entries[i] = e,
        None => entries.push(e),
    }
    entries.retain(|e| e["fieldsV1"].as_object().is_some_and(|m| !m.is_empty()));
    meta::metadata_mut(&mut obj).insert("managedFields".into(), json!(entries));
    Ok(obj)
}

fn conflict_error(api_version: &str, conflicts: &[(String, Path)]) -> ApiError {
    let n = conflicts.len();
    let message = if n == 1 {
        let (m, p) = &conflicts[0];
        format!(
            "Apply failed with 1 conflict: conflict with {m:?} using {api_version}: {}",
            display(p)
        )
    } else {
        let lines: Vec<String> = conflicts
            .iter()
            .map(|(m, p)| format!("- conflict with {m:?} using {api_version}: {}", display(p)))
            .collect();
        format!("Apply failed with {n} conflicts: {}", lines.join("\n"))
    };
    let causes: Vec<Value> = conflicts
        .iter()
        .map(|(m, p)| json!({"reason": "FieldManagerConflict", "message": format!("conflict with {m:?} using {api_version}"), "field": display(p)}))
        .collect();
    ApiError {
        code: 409,
        reason: "Conflict",
        message,
        details: Some(json!({"causes": causes})),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn def() -> ResourceDef {
        crate::resources::builtins()
            .into_iter()
            .find(|d| d.plural == "deployments")
            .unwrap()
    }

    #[test]
    fn fields_use_the_fieldsv1_notation() {
        let f = fields(
            &json!({"apiVersion": "v1", "metadata": {"name": "a", "labels": {"x": "1"}},
            "spec": {"containers": [{"name": "c", "image": "i"}]}}),
        );
        assert_eq!(
            f,
            json!({"f:metadata": {"f:labels": {"f:x": {}}},
            "f:spec": {"f:containers": {"k:{\"name\":\"c\"}": {".": {}, "f:name": {}, "f:image": {}}}}})
        );
    }

    #[test]
    fn appliers_conflict_and_force_takes_over() {
        let a = json!({"apiVersion": "apps/v1", "kind": "Deployment", "metadata": {"name": "d"}, "spec": {"replicas": 1, "paused": false}});
        let obj = for_create(&def(), &a, "alice");
        let b = json!({"apiVersion": "apps/v1", "kind": "Deployment", "metadata": {"name": "d"}, "spec": {"replicas": 2}});
        let err = apply(&def(), &obj, &b, "bob", false).unwrap_err();
        assert_eq!(err.code, 409);
        assert_eq!(
            err.message,
            "Apply failed with 1 conflict: conflict with \"alice\" using apps/v1: .spec.replicas"
        );
        let forced = apply(&def(), &obj, &b, "bob", true).unwrap();
        assert_eq!(forced["spec"]["replicas"], 2);
        // alice drops `paused`: she alone owned it, so it goes.
        let a2 =
            json!({"apiVersion": "apps/v1", "kind": "Deployment", "metadata": {"name": "d"}, "spec": {}});
        let after = apply(&def(), &forced, &a2, "alice", false).unwrap();
        assert_eq!(after["spec"], json!({"replicas": 2}));
    }
}
