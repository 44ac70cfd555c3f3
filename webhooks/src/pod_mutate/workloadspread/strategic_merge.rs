//! Strategic merge of a Pod as RFC 6902 operations: the merge itself is
//! [`kruise_core::strategic_merge`] (shared with the UnitedDeployment planner, which patches subset pod
//! templates); [`merge_to_ops`] and [`diff`] turn "before → after" into operations that touch only what
//! changed.

use json_patch::PatchOperation;
use serde_json::{Map, Value};

pub use kruise_core::strategic_merge::{MergeError, Schema, merge};
use kruise_core::strategic_merge::{field, fresh_value, merge_map};

use crate::patch;

/// Merges `patch` into `before` (the value at `path`, absent when `None`) and emits the operations of
/// what changes, cloning only the subtrees the patch reaches: plain map patches are walked key by key
/// without copying the original.
pub fn merge_to_ops(
    before: Option<&Value>,
    patch: &Map<String, Value>,
    schema: Schema,
    path: &mut Vec<String>,
    ops: &mut Vec<PatchOperation>,
) -> Result<(), MergeError> {
    let plain = !patch.keys().any(|k| k.starts_with('$'));
    match before {
        Some(Value::Object(original)) if plain => {
            for (key, value) in patch {
                path.push(key.clone());
                let (child, strategy) = field(schema, key);
                match (original.get(key), value) {
                    (None, Value::Null) => {}
                    (Some(_), Value::Null) => ops.push(PatchOperation::Remove(json_patch::RemoveOperation {
                        path: patch::pointer(path.iter().map(String::as_str)),
                    })),
                    (Some(old @ Value::Object(_)), Value::Object(p)) => {
                        merge_to_ops(Some(old), p, child, path, ops)?
                    }
                    (None, value) => ops.push(patch::add(
                        path.iter().map(String::as_str),
                        fresh_value(value, child, strategy)?,
                    )),
                    (Some(old), value) => {
                        let mut holder = Map::new();
                        holder.insert(key.clone(), old.clone());
                        let mut single = Map::new();
                        single.insert(key.clone(), value.clone());
                        merge_map(&mut holder, &single, schema)?;
                        match holder.get(key) {
                            Some(new) => diff(old, new, path, ops),
                            None => ops.push(PatchOperation::Remove(json_patch::RemoveOperation {
                                path: patch::pointer(path.iter().map(String::as_str)),
                            })),
                        }
                    }
                }
                path.pop();
            }
            Ok(())
        }
        _ => {
            let mut after = before.cloned().unwrap_or(Value::Null);
            merge(&mut after, patch, schema)?;
            match before {
                None => ops.push(patch::add(path.iter().map(String::as_str), after)),
                Some(old) => diff(old, &after, path, ops),
            }
            Ok(())
        }
    }
}

/// RFC 6902 operations turning `before` into `after`, located under `path`: additions and removals of
/// map keys, insertions into lists that only grew at their front or end, and `replace` of whatever
/// else changed.
pub fn diff(before: &Value, after: &Value, path: &mut Vec<String>, ops: &mut Vec<PatchOperation>) {
    if before == after {
        return;
    }
    match (before, after) {
        (Value::Object(b), Value::Object(a)) => {
            for key in b.keys().filter(|k| !a.contains_key(*k)) {
                path.push(key.clone());
                ops.push(PatchOperation::Remove(json_patch::RemoveOperation {
                    path: patch::pointer(path.iter().map(String::as_str)),
                }));
                path.pop();
            }
            for (key, value) in a {
                path.push(key.clone());
                match b.get(key) {
                    None => ops.push(patch::add(path.iter().map(String::as_str), value.clone())),
                    Some(old) => diff(old, value, path, ops),
                }
                path.pop();
            }
        }
        (Value::Array(b), Value::Array(a)) if a.len() == b.len() => {
            for (i, (old, new)) in b.iter().zip(a).enumerate() {
                path.push(i.to_string());
                diff(old, new, path, ops);
                path.pop();
            }
        }
        (Value::Array(b), Value::Array(a)) if a.len() > b.len() && a[a.len() - b.len()..] == b[..] => {
            // Items put in front (a strategic merge places new patch items first).
            for (i, new) in a[..a.len() - b.len()].iter().enumerate() {
                path.push(i.to_string());
                ops.push(patch::add(path.iter().map(String::as_str), new.clone()));
                path.pop();
            }
        }
        (Value::Array(b), Value::Array(a)) if a.len() > b.len() && a[..b.len()] == b[..] => {
            path.push("-".into());
            for new in &a[b.len()..] {
                ops.push(patch::add(path.iter().map(String::as_str), new.clone()));
            }
            path.pop();
        }
        _ => ops.push(patch::replace(path.iter().map(String::as_str), after.clone())),
    }
}

#[cfg(test)]
mod tests;
