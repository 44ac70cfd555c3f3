//! Kubernetes strategic merge patch of a Pod, the part a WorkloadSpread subset `patch` relies on
//! (apimachinery `strategicpatch.StrategicMergePatch(pod, patch, &corev1.Pod{})`):
//!
//! * maps merge recursively; `null` deletes a key; a value of another JSON type replaces;
//! * lists of the Pod schema with a merge strategy merge by their key — containers, initContainers,
//!   ephemeralContainers, volumes, imagePullSecrets, resourceClaims, schedulingGates and env by `name`,
//!   volumeMounts by `mountPath`, volumeDevices by `devicePath`, ports by `containerPort`, hostAliases by
//!   `ip`, topologySpreadConstraints by `topologyKey`, ownerReferences by `uid`; `finalizers` merge as a
//!   set; every other list (tolerations, args, ...) is replaced;
//! * merged lists are ordered as apimachinery orders them: the patch's items in patch order, the
//!   original's other items in their order, an original item going first only when it preceded the
//!   patch item in the original (so a new item lands in front of the items that follow it);
//! * directives: `$patch: replace | delete` on maps and list items, `$patch: replace` as a list element,
//!   `$retainKeys`, `$deleteFromPrimitiveList/<field>` and `$setElementOrder/<field>`.
//!
//! Fields the schema does not know merge as maps / replace as lists, so a patch can touch fields newer
//! than ours. (kruise-webhooks' WorkloadSpread injection turns "before → after" into RFC 6902 operations.)

use serde_json::{Map, Value};

/// Why a patch cannot be applied (OpenKruise then rejects the pod with a 500).
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
#[error("{0}")]
pub struct MergeError(pub String);

/// The Pod-schema types whose fields carry patch strategies.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Schema {
    Pod,
    ObjectMeta,
    PodSpec,
    Container,
    /// Anything else: maps merge, lists are replaced.
    Other,
}

/// How a list field merges.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ListStrategy {
    Replace,
    /// Merge lists of maps by this key.
    MergeKey(&'static str),
    /// Merge lists of scalars as a set.
    MergeScalars,
}

/// The type of `key` inside a `schema` object, and the strategy if it is a list.
pub fn field(schema: Schema, key: &str) -> (Schema, ListStrategy) {
    use ListStrategy::*;
    match (schema, key) {
        (Schema::Pod, "metadata") => (Schema::ObjectMeta, Replace),
        (Schema::Pod, "spec") => (Schema::PodSpec, Replace),
        (Schema::ObjectMeta, "finalizers") => (Schema::Other, MergeScalars),
        (Schema::ObjectMeta, "ownerReferences") => (Schema::Other, MergeKey("uid")),
        (Schema::PodSpec, "containers" | "initContainers" | "ephemeralContainers") => {
            (Schema::Container, MergeKey("name"))
        }
        (Schema::PodSpec, "volumes" | "imagePullSecrets" | "resourceClaims" | "schedulingGates") => {
            (Schema::Other, MergeKey("name"))
        }
        (Schema::PodSpec, "hostAliases") => (Schema::Other, MergeKey("ip")),
        (Schema::PodSpec, "topologySpreadConstraints") => (Schema::Other, MergeKey("topologyKey")),
        (Schema::Container, "env") => (Schema::Other, MergeKey("name")),
        (Schema::Container, "volumeMounts") => (Schema::Other, MergeKey("mountPath")),
        (Schema::Container, "volumeDevices") => (Schema::Other, MergeKey("devicePath")),
        (Schema::Container, "ports") => (Schema::Other, MergeKey("containerPort")),
        _ => (Schema::Other, Replace),
    }
}

const DIRECTIVE: &str = "$patch";
const RETAIN_KEYS: &str = "$retainKeys";
const DELETE_FROM_PRIMITIVE_LIST: &str = "$deleteFromPrimitiveList/";
const SET_ELEMENT_ORDER: &str = "$setElementOrder/";

/// Merges `patch` (an object) into `target` (replaced by an empty object when it is not one).
pub fn merge(target: &mut Value, patch: &Map<String, Value>, schema: Schema) -> Result<(), MergeError> {
    if let Some(directive) = patch.get(DIRECTIVE) {
        *target = map_directive(directive, patch)?;
        return Ok(());
    }
    if !target.is_object() {
        *target = Value::Object(Map::new());
    }
    let Value::Object(original) = target else {
        unreachable!("just made an object")
    };
    merge_map(original, patch, schema)
}

fn map_directive(directive: &Value, patch: &Map<String, Value>) -> Result<Value, MergeError> {
    match directive.as_str() {
        Some("replace") => {
            let mut replaced = patch.clone();
            replaced.remove(DIRECTIVE);
            Ok(Value::Object(replaced))
        }
        Some("delete") => Ok(Value::Object(Map::new())),
        _ => Err(MergeError(format!(
            "Unknown patch type: {directive} in map: {}",
            Value::Object(patch.clone())
        ))),
    }
}

/// Merges a patch map into an original map of type `schema` (the recursion behind [`merge`]).
pub fn merge_map(
    original: &mut Map<String, Value>,
    patch: &Map<String, Value>,
    schema: Schema,
) -> Result<(), MergeError> {
    if let Some(retain) = patch.get(RETAIN_KEYS) {
        let keys = retain.as_array().ok_or_else(|| {
            MergeError("invalid patch: doesn't support retainKeys with non-list value".into())
        })?;
        original.retain(|k, _| keys.iter().any(|r| r.as_str() == Some(k)));
    }
    let mut ordered: Vec<&str> = Vec::new();
    for (key, order) in patch {
        let Some(list_key) = key.strip_prefix(SET_ELEMENT_ORDER) else {
            continue;
        };
        let order = order
            .as_array()
            .ok_or_else(|| MergeError("invalid patch: $setElementOrder must be a list".into()))?;
        let (item_schema, strategy) = field(schema, list_key);
        let mut list = match original.remove(list_key) {
            Some(Value::Array(list)) => list,
            _ => Vec::new(),
        };
        let found_original = !list.is_empty();
        if let Some(Value::Array(items)) = patch.get(list_key) {
            merge_list(&mut list, items, strategy, item_schema)?;
        }
        if found_original || patch.get(list_key).is_some_and(Value::is_array) {
            let key = match strategy {
                ListStrategy::MergeKey(k) => Some(k),
                _ => None,
            };
            let before = list.clone();
            let (in_order, rest): (Vec<Value>, Vec<Value>) = list
                .into_iter()
                .partition(|item| position(order, item, key).is_some());
            original.insert(
                list_key.to_string(),
                Value::Array(interleave(
                    rest,
                    sort_by_order(in_order, order, key),
                    &before,
                    key,
                )),
            );
        }
        ordered.push(list_key);
    }
    for (key, value) in patch {
        if key == DIRECTIVE
            || key == RETAIN_KEYS
            || key.starts_with(SET_ELEMENT_ORDER)
            || ordered.contains(&key.as_str())
        {
            continue;
        }
        if let Some(list_key) = key.strip_prefix(DELETE_FROM_PRIMITIVE_LIST) {
            let remove = value
                .as_array()
                .ok_or_else(|| MergeError("invalid patch: $deleteFromPrimitiveList must be a list".into()))?;
            if let Some(Value::Array(list)) = original.get_mut(list_key) {
                list.retain(|item| !remove.contains(item));
            }
            continue;
        }
        if value.is_null() {
            original.remove(key);
            continue;
        }
        let (child, strategy) = field(schema, key);
        match (original.get_mut(key), value) {
            (Some(Value::Object(o)), Value::Object(p)) => {
                if let Some(directive) = p.get(DIRECTIVE) {
                    original.insert(key.clone(), map_directive(directive, p)?);
                } else {
                    merge_map(o, p, child)?;
                }
            }
            (Some(Value::Array(o)), Value::Array(p)) => merge_list(o, p, strategy, child)?,
            _ => {
                let fresh = fresh_value(value, child, strategy)?;
                original.insert(key.clone(), fresh);
            }
        }
    }
    Ok(())
}

/// A patch value placed where the original has nothing (or something of another type): its
/// directives are resolved against an empty value and its nulls dropped.
pub fn fresh_value(value: &Value, schema: Schema, strategy: ListStrategy) -> Result<Value, MergeError> {
    match value {
        Value::Object(p) => {
            let mut out = Value::Object(Map::new());
            merge(&mut out, p, schema)?;
            Ok(out)
        }
        Value::Array(p) if strategy != ListStrategy::Replace => {
            let mut out = Vec::new();
            merge_list(&mut out, p, strategy, schema)?;
            Ok(Value::Array(out))
        }
        other => Ok(other.clone()),
    }
}

#[derive(PartialEq, Eq)]
enum Kind {
    Object,
    Array,
    Scalar(u8),
}

fn kind(v: &Value) -> Kind {
    match v {
        Value::Object(_) => Kind::Object,
        Value::Array(_) => Kind::Array,
        Value::String(_) => Kind::Scalar(0),
        Value::Number(_) => Kind::Scalar(1),
        Value::Bool(_) => Kind::Scalar(2),
        Value::Null => Kind::Scalar(3),
    }
}

fn merge_list(
    original: &mut Vec<Value>,
    patch: &[Value],
    strategy: ListStrategy,
    item_schema: Schema,
) -> Result<(), MergeError> {
    if strategy == ListStrategy::Replace {
        *original = patch.to_vec();
        return Ok(());
    }
    if original.is_empty() && patch.is_empty() {
        return Ok(());
    }
    let mut kinds = original.iter().chain(patch).map(kind);
    let first = kinds.next();
    if kinds.any(|k| Some(&k) != first.as_ref()) {
        return Err(MergeError("list element types are not identical".into()));
    }
    match first {
        Some(Kind::Array) => Err(MergeError("lists of lists are not supported".into())),
        Some(Kind::Object) => {
            let ListStrategy::MergeKey(key) = strategy else {
                return Err(MergeError("cannot merge lists without merge key".into()));
            };
            merge_keyed(original, patch, key, item_schema)
        }
        _ => {
            let before = original.clone();
            let mut merged = std::mem::take(original);
            for item in patch {
                if !merged.contains(item) {
                    merged.push(item.clone());
                }
            }
            let (from_patch, rest): (Vec<Value>, Vec<Value>) =
                merged.into_iter().partition(|item| patch.contains(item));
            let from_patch = sort_by_order(from_patch, patch, None);
            *original = interleave(rest, from_patch, &before, None);
            Ok(())
        }
    }
}

fn no_merge_key(item: &Map<String, Value>, key: &str) -> MergeError {
    MergeError(format!(
        "map: {} does not contain declared merge key: {key}",
        Value::Object(item.clone())
    ))
}

fn merge_keyed(
    original: &mut Vec<Value>,
    patch: &[Value],
    key: &str,
    item_schema: Schema,
) -> Result<(), MergeError> {
    let mut plain: Vec<&Map<String, Value>> = Vec::with_capacity(patch.len());
    let mut replace = false;
    for item in patch {
        let Value::Object(map) = item else {
            unreachable!("kinds checked")
        };
        match map.get(DIRECTIVE) {
            None => plain.push(map),
            Some(d) if d == "delete" => {
                let value = map.get(key).ok_or_else(|| no_merge_key(map, key))?;
                original.retain(|o| o.get(key) != Some(value));
            }
            Some(d) if d == "replace" => replace = true,
            Some(d) if d == "merge" => {
                return Err(MergeError(
                    "merging lists cannot yet be specified in the patch".into(),
                ));
            }
            Some(d) => {
                return Err(MergeError(format!("Unknown patch type: {d} in map: {item}")));
            }
        }
    }
    if replace {
        *original = plain.into_iter().map(|m| Value::Object(m.clone())).collect();
        return Ok(());
    }
    let before = original.clone();
    for item in &plain {
        let value = item.get(key).ok_or_else(|| no_merge_key(item, key))?;
        match original.iter_mut().find(|o| o.get(key) == Some(value)) {
            Some(Value::Object(existing)) => merge_map(existing, item, item_schema)?,
            _ => {
                let mut fresh = Value::Object(Map::new());
                merge(&mut fresh, item, item_schema)?;
                original.push(fresh);
            }
        }
    }
    let order: Vec<Value> = plain.iter().map(|m| Value::Object((*m).clone())).collect();
    let (from_patch, rest): (Vec<Value>, Vec<Value>) = std::mem::take(original)
        .into_iter()
        .partition(|item| position(&order, item, Some(key)).is_some());
    let from_patch = sort_by_order(from_patch, &order, Some(key));
    *original = interleave(rest, from_patch, &before, Some(key));
    Ok(())
}

/// The index in `list` of the item matching `item` (by `key` for maps, by value for scalars).
fn position(list: &[Value], item: &Value, key: Option<&str>) -> Option<usize> {
    match key {
        Some(key) => {
            let wanted = item.get(key);
            list.iter().position(|v| v.get(key) == wanted)
        }
        None => list.iter().position(|v| v == item),
    }
}

fn sort_by_order(mut items: Vec<Value>, order: &[Value], key: Option<&str>) -> Vec<Value> {
    items.sort_by_key(|item| position(order, item, key).unwrap_or(usize::MAX));
    items
}

/// apimachinery's `mergeSortedSlice`: server-only items (`left`, in server order) go in front of the
/// next patch item (`right`) only when both are in the server list and the left one comes first there.
fn interleave(left: Vec<Value>, right: Vec<Value>, server: &[Value], key: Option<&str>) -> Vec<Value> {
    let mut out = Vec::with_capacity(left.len() + right.len());
    let mut left = left.into_iter().peekable();
    let mut right = right.into_iter().peekable();
    loop {
        match (left.peek(), right.peek()) {
            (None, None) => break,
            (Some(_), None) => out.extend(left.next()),
            (None, Some(_)) => out.extend(right.next()),
            (Some(l), Some(r)) => {
                let take_left = match (position(server, l, key), position(server, r, key)) {
                    (Some(li), Some(ri)) => li < ri,
                    _ => false,
                };
                if take_left {
                    out.extend(left.next());
                } else {
                    out.extend(right.next());
                }
            }
        }
    }
    out
}
