//! Applying our own operations to the pipeline's working copy of the pod, without the allocations of a
//! general JSON-patch engine: tokens are decoded only when escaped, no undo log is kept (a failed patch
//! discards the working copy), and `move` / `copy` — which no step emits — go to `json_patch`.

use std::borrow::Cow;

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
                *lookup(doc, op.path.as_str()).ok_or_else(|| error(&op.path, "path does not exist"))? =
                    op.value.clone();
            }
            PatchOperation::Remove(op) => remove(doc, &op.path).map_err(|r| error(&op.path, r))?,
            PatchOperation::Test(op) => {
                if lookup(doc, op.path.as_str()).is_none_or(|v| *v != op.value) {
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

/// How to take back one applied operation; the path is read from the operation itself.
#[derive(Debug)]
pub enum Undo {
    /// Put back the object entry the operation overwrote or removed, or remove the one it added.
    Entry { op: usize, previous: Option<Value> },
    /// Remove the array element the operation inserted (`index`, after `-` was resolved).
    ArrayRemove { op: usize, index: usize },
    /// Put back the array element the operation removed or replaced.
    ArrayRestore {
        op: usize,
        index: usize,
        previous: Value,
        replaced: bool,
    },
    /// Put back the whole document.
    Root { op: usize, previous: Value },
}

/// Applies `ops` like [`apply_in_place`] and records in `undo` how to take each one back; `first` is the
/// position of `ops[0]` in the list [`undo_all`] will be given. `add`, `remove` and `replace` only.
///
/// The values are moved from the operations into `doc`, not copied: until [`undo_all`] moves them back,
/// the applied operations hold `null`; the operation that fails, if any, loses its value.
pub fn apply_with_undo(
    doc: &mut Value,
    ops: &mut [PatchOperation],
    first: usize,
    undo: &mut Vec<Undo>,
) -> Result<(), InPlaceError> {
    for (index, op) in ops.iter_mut().enumerate() {
        let at = first + index;
        let error = |path: &Pointer, reason| InPlaceError {
            index,
            path: path.to_string(),
            reason,
        };
        let record = match op {
            PatchOperation::Add(op) => add_undoable(doc, &op.path, std::mem::take(&mut op.value), at),
            PatchOperation::Replace(op) => replace_undoable(doc, &op.path, std::mem::take(&mut op.value), at),
            PatchOperation::Remove(op) => remove_undoable(doc, &op.path, at),
            other => return Err(error(other.path(), "not undoable")),
        }
        .map_err(|r| error(op.path(), r))?;
        undo.push(record);
    }
    Ok(())
}

/// Takes back, newest first, everything `undo` recorded for `ops` (the list the `first` positions of
/// [`apply_with_undo`] refer to), leaving `doc` as it was and the values back in their operations.
pub fn undo_all(doc: &mut Value, ops: &mut [PatchOperation], undo: Vec<Undo>) {
    for record in undo.into_iter().rev() {
        match record {
            Undo::Root { op, previous } => give_back(&mut ops[op], std::mem::replace(doc, previous)),
            Undo::Entry { op, previous } => {
                let Some((parent, last)) = split(ops[op].path()) else {
                    continue;
                };
                if let Some(Value::Object(map)) = lookup(doc, parent) {
                    let taken = match (previous, map.get_mut(last.as_ref())) {
                        (Some(value), Some(slot)) => Some(std::mem::replace(slot, value)),
                        (Some(value), None) => map.insert(last.into_owned(), value),
                        (None, _) => map.remove(last.as_ref()),
                    };
                    if let Some(taken) = taken {
                        give_back(&mut ops[op], taken);
                    }
                }
            }
            Undo::ArrayRemove { op, index } => {
                let Some((parent, _)) = split(ops[op].path()) else {
                    continue;
                };
                if let Some(Value::Array(items)) = lookup(doc, parent)
                    && index < items.len()
                {
                    give_back(&mut ops[op], items.remove(index));
                }
            }
            Undo::ArrayRestore {
                op,
                index,
                previous,
                replaced,
            } => {
                let Some((parent, _)) = split(ops[op].path()) else {
                    continue;
                };
                if let Some(Value::Array(items)) = lookup(doc, parent) {
                    if replaced && index < items.len() {
                        let taken = std::mem::replace(&mut items[index], previous);
                        give_back(&mut ops[op], taken);
                    } else if !replaced && index <= items.len() {
                        items.insert(index, previous);
                    }
                }
            }
        }
    }
}

/// Puts a value moved into the document back into the `add` or `replace` it came from.
fn give_back(op: &mut PatchOperation, value: Value) {
    match op {
        PatchOperation::Add(op) => op.value = value,
        PatchOperation::Replace(op) => op.value = value,
        _ => {}
    }
}

fn add_undoable(doc: &mut Value, path: &Pointer, value: Value, op: usize) -> Result<Undo, &'static str> {
    let Some((parent, last)) = split(path) else {
        return Ok(Undo::Root {
            op,
            previous: std::mem::replace(doc, value),
        });
    };
    match lookup(doc, parent).ok_or("parent does not exist")? {
        Value::Object(map) => Ok(Undo::Entry {
            op,
            previous: map.insert(last.into_owned(), value),
        }),
        Value::Array(items) => {
            let index = if last == "-" {
                items.len()
            } else {
                array_index(&last, items.len()).ok_or("array index out of bounds")?
            };
            items.insert(index, value);
            Ok(Undo::ArrayRemove { op, index })
        }
        _ => Err("parent is not an object or array"),
    }
}

fn replace_undoable(doc: &mut Value, path: &Pointer, value: Value, op: usize) -> Result<Undo, &'static str> {
    let Some((parent, last)) = split(path) else {
        return Ok(Undo::Root {
            op,
            previous: std::mem::replace(doc, value),
        });
    };
    match lookup(doc, parent).ok_or("path does not exist")? {
        Value::Object(map) => {
            let slot = map.get_mut(last.as_ref()).ok_or("path does not exist")?;
            Ok(Undo::Entry {
                op,
                previous: Some(std::mem::replace(slot, value)),
            })
        }
        Value::Array(items) => {
            let index = array_index(&last, items.len())
                .filter(|i| *i < items.len())
                .ok_or("path does not exist")?;
            let previous = std::mem::replace(&mut items[index], value);
            Ok(Undo::ArrayRestore {
                op,
                index,
                previous,
                replaced: true,
            })
        }
        _ => Err("path does not exist"),
    }
}

fn remove_undoable(doc: &mut Value, path: &Pointer, op: usize) -> Result<Undo, &'static str> {
    let (parent, last) = split(path).ok_or("cannot remove the root")?;
    match lookup(doc, parent).ok_or("parent does not exist")? {
        Value::Object(map) => {
            let previous = map.remove(last.as_ref()).ok_or("path does not exist")?;
            Ok(Undo::Entry {
                op,
                previous: Some(previous),
            })
        }
        Value::Array(items) => {
            let index = array_index(&last, items.len())
                .filter(|i| *i < items.len())
                .ok_or("array index out of bounds")?;
            let previous = items.remove(index);
            Ok(Undo::ArrayRestore {
                op,
                index,
                previous,
                replaced: false,
            })
        }
        _ => Err("parent is not an object or array"),
    }
}

/// The value at the valid pointer `path`, mutably.
fn lookup<'a>(doc: &'a mut Value, path: &str) -> Option<&'a mut Value> {
    tokens(path).try_fold(doc, |v, token| child(v, &token))
}

/// The decoded tokens of a valid pointer (every `~` is followed by 0 or 1, so its tokens are the text
/// between `/`s). One byte scan finds both the `/`s and the tokens that need decoding; `str::split`
/// searches with memchr, which costs more than these short tokens.
fn tokens(pointer: &str) -> impl Iterator<Item = Cow<'_, str>> {
    let mut rest = pointer;
    std::iter::from_fn(move || {
        let body = rest.strip_prefix('/')?;
        let mut escaped = false;
        let end = body
            .bytes()
            .position(|b| {
                escaped |= b == b'~';
                b == b'/'
            })
            .unwrap_or(body.len());
        let (token, tail) = body.split_at(end);
        rest = tail;
        Some(if escaped {
            decoded(token)
        } else {
            Cow::Borrowed(token)
        })
    })
}

fn child<'a>(v: &'a mut Value, token: &str) -> Option<&'a mut Value> {
    match v {
        Value::Object(map) => map.get_mut(token),
        Value::Array(items) => array_index(token, items.len()).and_then(|i| items.get_mut(i)),
        _ => None,
    }
}

/// A JSON-pointer array index ([`super::array_index`]) at most `len`.
fn array_index(token: &str, len: usize) -> Option<usize> {
    super::array_index(token).filter(|i| *i <= len)
}

/// The parent pointer and the last token, decoded (borrowed unless escaped); `None` for the root.
fn split(path: &Pointer) -> Option<(&str, Cow<'_, str>)> {
    let path = path.as_str();
    let at = path.bytes().rposition(|b| b == b'/')?;
    // `/` is ASCII, so `at` is a char boundary.
    Some((&path[..at], decoded(&path[at + 1..])))
}

/// An RFC 6901 token unescaped: `~1` is `/`, `~0` is `~`. Borrowed when there is no `~`.
fn decoded(token: &str) -> Cow<'_, str> {
    let Some(first) = token.bytes().position(|b| b == b'~') else {
        return Cow::Borrowed(token);
    };
    let mut out = String::with_capacity(token.len());
    out.push_str(&token[..first]);
    let mut bytes = token[first..].char_indices();
    while let Some((_, c)) = bytes.next() {
        match c {
            '~' => match bytes.next() {
                Some((_, '1')) => out.push('/'),
                Some((_, '0')) => out.push('~'),
                // Not produced by a valid pointer; kept as written.
                Some((_, other)) => {
                    out.push('~');
                    out.push(other);
                }
                None => out.push('~'),
            },
            c => out.push(c),
        }
    }
    Cow::Owned(out)
}

fn add(doc: &mut Value, path: &Pointer, value: Value) -> Result<(), &'static str> {
    let Some((parent, last)) = split(path) else {
        *doc = value;
        return Ok(());
    };
    match lookup(doc, parent).ok_or("parent does not exist")? {
        Value::Object(map) => {
            map.insert(last.into_owned(), value);
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
        Value::Object(map) => map.remove(last.as_ref()).map(drop).ok_or("path does not exist"),
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

    #[test]
    fn tokens_decode_as_rfc_6901_says() {
        for (token, want) in [
            ("plain", "plain"),
            ("a~1b~0c", "a/b~c"),
            ("~01", "~1"),
            ("~10", "/0"),
            ("é~1ü", "é/ü"),
        ] {
            assert_eq!(decoded(token), want, "{token}");
            let pointer = json_patch::jsonptr::PointerBuf::parse(format!("/{token}")).unwrap();
            assert_eq!(
                pointer.tokens().next().unwrap().decoded(),
                want,
                "jsonptr agrees on {token}"
            );
        }
    }

    /// Applying with undo gives the same document as `json_patch`, and undoing gives back the original,
    /// also after a failure part-way.
    #[test]
    fn undo_gives_back_the_original() {
        let doc = json!({"metadata": {"annotations": {"a/b": "1"}, "labels": {"x": "y"}},
            "spec": {"containers": [{"name": "app"}, {"name": "side"}], "volumes": []}});
        let cases = [
            json!([{"op": "add", "path": "/metadata/annotations/a~1b", "value": "over"},
                   {"op": "add", "path": "/metadata/annotations/new", "value": "n"},
                   {"op": "add", "path": "/spec/containers/0", "value": {"name": "first"}},
                   {"op": "add", "path": "/spec/containers/-", "value": {"name": "end"}},
                   {"op": "add", "path": "/spec/containers/1/env", "value": []},
                   {"op": "add", "path": "/spec/containers/1/env/-", "value": {"name": "E"}}]),
            json!([{"op": "replace", "path": "/metadata/labels/x", "value": "z"},
                   {"op": "replace", "path": "/spec/containers/1", "value": {"name": "other"}},
                   {"op": "remove", "path": "/spec/containers/0"},
                   {"op": "remove", "path": "/metadata/labels"},
                   {"op": "add", "path": "/metadata/labels", "value": {"fresh": "1"}}]),
            json!([{"op": "add", "path": "/metadata/annotations/k", "value": "v"},
                   {"op": "add", "path": "/spec/containers/9", "value": {}}]),
            json!([{"op": "add", "path": "", "value": {"root": true}},
                   {"op": "add", "path": "/root2", "value": 1}]),
        ];
        for case in cases {
            let original_ops = ops(case.clone());
            let mut ops = original_ops.clone();
            let mut ours = doc.clone();
            let mut undo = Vec::new();
            let result = apply_with_undo(&mut ours, &mut ops, 0, &mut undo);
            let mut theirs = doc.clone();
            assert_eq!(
                result.is_ok(),
                json_patch::patch(&mut theirs, &original_ops).is_ok(),
                "{case}"
            );
            if result.is_ok() {
                assert_eq!(ours, theirs, "{case}");
            }
            undo_all(&mut ours, &mut ops, undo);
            assert_eq!(ours, doc, "{case}");
            if result.is_ok() {
                assert_eq!(
                    ops, original_ops,
                    "{case}: the values are back in their operations"
                );
            }
        }
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
            // `usize::from_str` takes a leading `+`; a pointer's index does not (found by fuzzing).
            json!([{"op": "add", "path": "/spec/containers/+0", "value": {}}]),
            json!([{"op": "remove", "path": "/spec/containers/+1"}]),
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
