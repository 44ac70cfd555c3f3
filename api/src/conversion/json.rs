//! Small helpers for editing a Kubernetes object as a JSON map.

use serde_json::{Map, Value};

use super::ConversionError;

/// Context carried through one conversion, for error messages.
pub(super) struct Ctx {
    pub kind: &'static str,
}

impl Ctx {
    pub fn error(&self, path: impl Into<String>, message: impl Into<String>) -> ConversionError {
        ConversionError::Decode {
            kind: self.kind.to_string(),
            path: Some(path.into()),
            message: message.into(),
        }
    }
}

/// The object at `map[key]`: `None` when absent or null, an error for any other non-object.
pub(super) fn object_mut<'a>(
    ctx: &Ctx,
    map: &'a mut Map<String, Value>,
    key: &str,
    path: &str,
) -> Result<Option<&'a mut Map<String, Value>>, ConversionError> {
    match map.get_mut(key) {
        None | Some(Value::Null) => Ok(None),
        Some(Value::Object(m)) => Ok(Some(m)),
        Some(_) => Err(ctx.error(path, "expected an object")),
    }
}

/// Removes and returns `map[key]` as an object (absent or null → `None`).
pub(super) fn take_object(
    ctx: &Ctx,
    map: &mut Map<String, Value>,
    key: &str,
    path: &str,
) -> Result<Option<Map<String, Value>>, ConversionError> {
    match map.remove(key) {
        None | Some(Value::Null) => Ok(None),
        Some(Value::Object(m)) => Ok(Some(m)),
        Some(_) => Err(ctx.error(path, "expected an object")),
    }
}

/// The object at `map[key]`, created empty when absent or null.
pub(super) fn object_entry<'a>(
    ctx: &Ctx,
    map: &'a mut Map<String, Value>,
    key: &str,
    path: &str,
) -> Result<&'a mut Map<String, Value>, ConversionError> {
    let slot = map.entry(key.to_string()).or_insert(Value::Null);
    if slot.is_null() {
        *slot = Value::Object(Map::new());
    }
    slot.as_object_mut()
        .ok_or_else(|| ctx.error(path, "expected an object"))
}

/// Reads an optional string (absent or null → `None`).
pub(super) fn opt_str<'a>(
    ctx: &Ctx,
    map: &'a Map<String, Value>,
    key: &str,
    path: &str,
) -> Result<Option<&'a str>, ConversionError> {
    match map.get(key) {
        None | Some(Value::Null) => Ok(None),
        Some(Value::String(s)) => Ok(Some(s)),
        Some(_) => Err(ctx.error(path, "expected a string")),
    }
}

/// Removes and returns an optional string (absent or null → `None`).
pub(super) fn take_str(
    ctx: &Ctx,
    map: &mut Map<String, Value>,
    key: &str,
    path: &str,
) -> Result<Option<String>, ConversionError> {
    match map.remove(key) {
        None | Some(Value::Null) => Ok(None),
        Some(Value::String(s)) => Ok(Some(s)),
        Some(_) => Err(ctx.error(path, "expected a string")),
    }
}

/// Removes and returns an optional bool (absent or null → `false`).
pub(super) fn take_bool(
    ctx: &Ctx,
    map: &mut Map<String, Value>,
    key: &str,
    path: &str,
) -> Result<bool, ConversionError> {
    match map.remove(key) {
        None | Some(Value::Null) => Ok(false),
        Some(Value::Bool(b)) => Ok(b),
        Some(_) => Err(ctx.error(path, "expected a boolean")),
    }
}

/// `metadata.labels` or `metadata.annotations` as a string map, if present.
pub(super) fn meta_map_mut<'a>(
    ctx: &Ctx,
    object: &'a mut Map<String, Value>,
    which: &str,
) -> Result<Option<&'a mut Map<String, Value>>, ConversionError> {
    let Some(meta) = object_mut(ctx, object, "metadata", "metadata")? else {
        return Ok(None);
    };
    object_mut(ctx, meta, which, &format!("metadata.{which}"))
}

/// Reads one string entry of `metadata.labels` / `metadata.annotations`.
pub(super) fn meta_get(
    ctx: &Ctx,
    object: &mut Map<String, Value>,
    which: &str,
    key: &str,
) -> Result<Option<String>, ConversionError> {
    let Some(m) = meta_map_mut(ctx, object, which)? else {
        return Ok(None);
    };
    Ok(opt_str(ctx, m, key, &format!("metadata.{which}[{key}]"))?.map(str::to_string))
}

/// Sets one entry of `metadata.labels` / `metadata.annotations`, creating the maps.
pub(super) fn meta_set(
    ctx: &Ctx,
    object: &mut Map<String, Value>,
    which: &str,
    key: &str,
    value: String,
) -> Result<(), ConversionError> {
    let meta = object_entry(ctx, object, "metadata", "metadata")?;
    let m = object_entry(ctx, meta, which, &format!("metadata.{which}"))?;
    m.insert(key.to_string(), Value::String(value));
    Ok(())
}

/// Removes one entry of `metadata.labels` / `metadata.annotations`; drops the map if it
/// becomes empty (Go omits empty maps).
pub(super) fn meta_remove(
    ctx: &Ctx,
    object: &mut Map<String, Value>,
    which: &str,
    key: &str,
) -> Result<(), ConversionError> {
    let Some(meta) = object_mut(ctx, object, "metadata", "metadata")? else {
        return Ok(());
    };
    let Some(m) = object_mut(ctx, meta, which, &format!("metadata.{which}"))? else {
        return Ok(());
    };
    if m.remove(key).is_some() && m.is_empty() {
        meta.remove(which);
    }
    Ok(())
}

/// Moves `from[key]` to `to[key]` when present (null included, as it is a value).
pub(super) fn move_key(from: &mut Map<String, Value>, to: &mut Map<String, Value>, key: &str) {
    if let Some(v) = from.remove(key) {
        to.insert(key.to_string(), v);
    }
}

/// Renames `map[from]` to `map[to]` when present.
pub(super) fn rename_key(map: &mut Map<String, Value>, from: &str, to: &str) {
    if let Some(v) = map.remove(from) {
        map.insert(to.to_string(), v);
    }
}
