//! Building RFC 6902 operations directly against the raw object: escaped pointers, missing parents
//! created first, never a `remove` or `replace` outside the paths we own.

use json_patch::{AddOperation, PatchOperation, ReplaceOperation, jsonptr::PointerBuf};
use serde_json::{Map, Value};

mod in_place;

pub use in_place::{InPlaceError, Undo, apply_in_place, apply_with_undo, undo_all};

/// An array index as RFC 6901 writes it: decimal digits only, no leading zero (`usize::from_str`
/// alone would also take `+0`).
pub(crate) fn array_index(token: &str) -> Option<usize> {
    let digits = !token.is_empty() && token.bytes().all(|b| b.is_ascii_digit());
    if !digits || (token.len() > 1 && token.starts_with('0')) {
        return None;
    }
    token.parse().ok()
}

/// The value at `tokens` (unescaped object keys or array indices). Unlike `Value::pointer` it
/// allocates nothing.
pub fn get<'a>(value: &'a Value, tokens: &[&str]) -> Option<&'a Value> {
    tokens.iter().try_fold(value, |v, token| match v {
        Value::Object(map) => map.get(*token),
        Value::Array(items) => array_index(token).and_then(|i| items.get(i)),
        _ => None,
    })
}

/// A pointer from unescaped tokens (`/` and `~` in keys are escaped). One allocation in the common
/// case (`PointerBuf::from_tokens` grows its string token by token).
pub fn pointer<'a>(tokens: impl IntoIterator<Item = &'a str>) -> PointerBuf {
    let mut path = String::with_capacity(64);
    for token in tokens {
        path.push('/');
        escape_into(&mut path, token);
    }
    // Every `~` is now followed by 0 or 1, so the string parses; the fallback is never taken.
    PointerBuf::parse(path).unwrap_or_default()
}

/// Appends `token` escaped as RFC 6901 says (`~` as `~0`, `/` as `~1`), in one pass.
fn escape_into(path: &mut String, token: &str) {
    let mut start = 0;
    for (at, byte) in token.bytes().enumerate() {
        let escaped = match byte {
            b'/' => "~1",
            b'~' => "~0",
            _ => continue,
        };
        // `/` and `~` are ASCII, so `at` is a char boundary.
        path.push_str(&token[start..at]);
        path.push_str(escaped);
        start = at + 1;
    }
    path.push_str(&token[start..]);
}

/// `add` of `value` at `tokens`.
pub fn add<'a>(tokens: impl IntoIterator<Item = &'a str>, value: Value) -> PatchOperation {
    PatchOperation::Add(AddOperation {
        path: pointer(tokens),
        value,
    })
}

/// `replace` of the value at `tokens`.
pub fn replace<'a>(tokens: impl IntoIterator<Item = &'a str>, value: Value) -> PatchOperation {
    PatchOperation::Replace(ReplaceOperation {
        path: pointer(tokens),
        value,
    })
}

/// Operations that set `key = value` in the string map at `map_path` (e.g. `["metadata", "annotations"]`)
/// of `object`: one `add` of the whole map when it is absent or null, else one `add` of the key (which
/// replaces an existing value). Nothing when the value is already there.
pub fn set_map_entry(object: &Value, map_path: &[&str], key: &str, value: &str) -> Vec<PatchOperation> {
    let mut current = object;
    for token in map_path {
        match current.get(token) {
            Some(next) => current = next,
            None => return vec![add_missing(object, map_path, key, value)],
        }
    }
    match current {
        Value::Object(map) if map.get(key).and_then(Value::as_str) == Some(value) => Vec::new(),
        Value::Object(_) => {
            vec![add(
                map_path.iter().copied().chain([key]),
                Value::String(value.to_string()),
            )]
        }
        _ => vec![add_missing(object, map_path, key, value)],
    }
}

/// Adds the map (and any missing parent maps) with the single entry.
fn add_missing(object: &Value, map_path: &[&str], key: &str, value: &str) -> PatchOperation {
    // Find the deepest existing ancestor, then add everything below it as one nested value.
    let mut depth = 0;
    let mut current = object;
    while depth < map_path.len() {
        match current.get(map_path[depth]) {
            Some(next) if next.is_object() => {
                current = next;
                depth += 1;
            }
            _ => break,
        }
    }
    let mut value = Value::Object(Map::from_iter([(
        key.to_string(),
        Value::String(value.to_string()),
    )]));
    for token in map_path[depth + 1..].iter().rev() {
        value = Value::Object(Map::from_iter([(token.to_string(), value)]));
    }
    add(map_path[..=depth].iter().copied(), value)
}

/// Applies operations to a copy of `object` (tests and `kruise admit -f`).
pub fn apply(object: &Value, ops: &[PatchOperation]) -> Result<Value, json_patch::PatchError> {
    let mut out = object.clone();
    json_patch::patch(&mut out, ops)?;
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    const ANN: &[&str] = &["metadata", "annotations"];

    #[test]
    fn pointer_escapes_as_rfc_6901_says() {
        for tokens in [
            vec!["spec", "containers", "0"],
            vec!["metadata", "annotations", "a/b~c"],
            vec!["~1", "~0/", "", "/"],
            Vec::<&str>::new(),
        ] {
            assert_eq!(
                pointer(tokens.iter().copied()),
                PointerBuf::from_tokens(tokens.iter().copied())
            );
        }
        assert_eq!(pointer(["a/b~c"]).as_str(), "/a~1b~0c");
    }

    #[test]
    fn adds_missing_map_and_parents() {
        let pod = json!({"kind": "Pod"});
        let ops = set_map_entry(&pod, ANN, "apps.kruise.io/x~y", "v");
        let out = apply(&pod, &ops).unwrap();
        assert_eq!(out["metadata"]["annotations"]["apps.kruise.io/x~y"], "v");
    }

    #[test]
    fn escapes_keys_and_keeps_other_entries() {
        let pod = json!({"metadata": {"annotations": {"a": "1"}}});
        let ops = set_map_entry(&pod, ANN, "kruise.io/k~e", "v");
        let wire = serde_json::to_value(&ops).unwrap();
        assert_eq!(wire[0]["path"], "/metadata/annotations/kruise.io~1k~0e");
        let out = apply(&pod, &ops).unwrap();
        assert_eq!(
            out["metadata"]["annotations"],
            json!({"a": "1", "kruise.io/k~e": "v"})
        );
    }

    #[test]
    fn null_map_is_replaced_and_same_value_is_a_no_op() {
        let pod = json!({"metadata": {"annotations": null}});
        let out = apply(&pod, &set_map_entry(&pod, ANN, "k", "v")).unwrap();
        assert_eq!(out["metadata"]["annotations"], json!({"k": "v"}));
        assert!(set_map_entry(&out, ANN, "k", "v").is_empty());
    }
}
