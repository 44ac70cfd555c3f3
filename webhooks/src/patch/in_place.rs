//! Applying our own operations to the pipeline's working copy of the pod, without the allocations of a
//! general JSON-patch engine: tokens are decoded only when escaped, no undo log is kept (a failed patch
//! discards the working copy), and `move` / `copy` — which no step emits — go to `json_patch`.

use json_patch::{PatchOperation, jsonptr::Pointer};
use serde_json::Value;

/// Why an operation did not apply.
#[derive(Debug, thiserror::Error, PartialEq, Eq)]
#[error("operation {index} ({path}): {reason}")]
pub struct InPlaceError {
    /// Position of the operation in the list.
    pub index: usize,
    /// Its path, escaped.
    pub path: String,
    /// What was wrong.
    pub reason: &'static str,
}

/// Applies `ops` to `doc` in order. On error `doc` may hold the operations before the failing one.
pub fn apply_in_place(doc: &mut Value, ops: &[PatchOperation]) -> Result<(), InPlaceError> {
    for (index, op) in ops.iter().enumerate() {
        let error = |path: &Pointer, reason| InPlaceError {
            index,
            path: path.to_string(),
            reason,
        };
        match op {
            PatchOperation::Add(op) => {
                add(doc, &op.path, op.value.clone()).map_err(|r| error(&op.path, r))?
            }
            PatchOperation::Replace(op) => {
                *lookup(doc, &op.path).ok_or_else(|| error(&op.path, "path does not exist"))? =
                    op.value.clone();
            }
            PatchOperation::Remove(op) => remove(doc, &op.path).map_err(|r| error(&op.path, r))?,
            PatchOperation::Test(op) => {
                if lookup(doc, &op.path).is_none_or(|v| *v != op.value) {
                    return Err(error(&op.path, "test failed"));
                }
            }
            PatchOperation::Move(_) | PatchOperation::Copy(_) => {
                json_patch::patch(doc, std::slice::from_ref(op)).map_err(|_| InPlaceError {
                    index,
                    path: String::new(),
                    reason: "move or copy failed",
                })?;
            }
        }
    }
    Ok(())
}

/// The value at `path`, mutably.
fn lookup<'a>(doc: &'a mut Value, path: &Pointer) -> Option<&'a mut Value> {
    path.tokens().try_fold(doc, |v, token| child(v, &token.decoded()))
}

fn child<'a>(v: &'a mut Value, token: &str) -> Option<&'a mut Value> {
    match v {
        Value::Object(map) => map.get_mut(token),
        Value::Array(items) => array_index(token, items.len()).and_then(|i| items.get_mut(i)),
        _ => None,
    }
}

/// A JSON-pointer array index: decimal, no leading zero, at most `len`.
fn array_index(token: &str, len: usize) -> Option<usize> {
    if token.is_empty() || (token.len() > 1 && token.starts_with('0')) {
        return None;
    }
    token.parse().ok().filter(|i| *i <= len)
}

fn split(path: &Pointer) -> Option<(&Pointer, String)> {
    let (parent, last) = path.split_back()?;
    Some((parent, last.decoded().into_owned()))
}

fn add(doc: &mut Value, path: &Pointer, value: Value) -> Result<(), &'static str> {
    let Some((parent, last)) = split(path) else {
        *doc = value;
        return Ok(());
    };
    match lookup(doc, parent).ok_or("parent does not exist")? {
        Value::Object(map) => {
            map.insert(last, value);
        }
        Value::Array(items) if last == "-" => items.push(value),
        Value::Array(items) => {
            let i = array_index(&last, items.len()).ok_or("array index out of bounds")?;
            items.insert(i, value);
        }
        _ => return Err("parent is not an object or array"),
    }
    Ok(())
}

fn remove(doc: &mut Value, path: &Pointer) -> Result<(), &'static str> {
    let (parent, last) = split(path).ok_or("cannot remove the root")?;
    match lookup(doc, parent).ok_or("parent does not exist")? {
        Value::Object(map) => map.remove(&last).map(drop).ok_or("path does not exist"),
        Value::Array(items) => {
            let i = array_index(&last, items.len())
                .filter(|i| *i < items.len())
                .ok_or("array index out of bounds")?;
            items.remove(i);
            Ok(())
        }
        _ => Err("parent is not an object or array"),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn ops(v: Value) -> Vec<PatchOperation> {
        serde_json::from_value(v).unwrap()
    }

    /// Every case gives what `json_patch` gives: the same document, or an error from both.
    #[test]
    fn agrees_with_json_patch() {
        let doc = json!({"metadata": {"annotations": {"a/b": "1", "c~d": "2"}, "labels": {}},
            "spec": {"containers": [{"name": "app"}, {"name": "side"}], "volumes": []}});
        let cases = [
            json!([{"op": "add", "path": "/metadata/annotations/x~1y", "value": "v"}]),
            json!([{"op": "add", "path": "/metadata/annotations/a~1b", "value": "over"}]),
            json!([{"op": "replace", "path": "/metadata/annotations/c~0d", "value": "3"}]),
            json!([{"op": "add", "path": "/spec/containers/0", "value": {"name": "first"}}]),
            json!([{"op": "add", "path": "/spec/containers/2", "value": {"name": "last"}}]),
            json!([{"op": "add", "path": "/spec/containers/-", "value": {"name": "end"}}]),
            json!([{"op": "add", "path": "/spec/containers/3", "value": {}}]),
            json!([{"op": "add", "path": "/spec/containers/01", "value": {}}]),
            json!([{"op": "add", "path": "/spec/missing/x", "value": 1}]),
            json!([{"op": "add", "path": "/metadata/annotations/a~1b/deeper", "value": 1}]),
            json!([{"op": "add", "path": "", "value": {"replaced": true}}]),
            json!([{"op": "replace", "path": "/spec/nope", "value": 1}]),
            json!([{"op": "remove", "path": "/spec/containers/1"}]),
            json!([{"op": "remove", "path": "/spec/containers/2"}]),
            json!([{"op": "remove", "path": "/metadata/labels"}, {"op": "remove", "path": "/metadata/labels"}]),
            json!([{"op": "test", "path": "/spec/volumes", "value": []}]),
            json!([{"op": "test", "path": "/spec/volumes", "value": {}}]),
            json!([{"op": "copy", "from": "/spec/containers/0", "path": "/spec/volumes/-"}]),
            json!([{"op": "add", "path": "/spec/volumes/-", "value": {"name": "v"}},
                   {"op": "add", "path": "/spec/containers/1/volumeMounts", "value": [{"name": "v"}]}]),
        ];
        for case in cases {
            let ops = ops(case.clone());
            let mut ours = doc.clone();
            let mut theirs = doc.clone();
            let our_result = apply_in_place(&mut ours, &ops);
            let their_result = json_patch::patch(&mut theirs, &ops);
            assert_eq!(
                our_result.is_ok(),
                their_result.is_ok(),
                "{case}: {our_result:?} / {their_result:?}"
            );
            if our_result.is_ok() {
                assert_eq!(ours, theirs, "{case}");
            }
        }
    }
}
