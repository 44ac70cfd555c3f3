//! Pod annotations: the working set of changes (`patchPodMetadata`, then what injection records), JSON merge
//! patches as OpenKruise applies them, and the per-SidecarSet records of `kruise.io/sidecarset-hash` /
//! `kruise.io/sidecarset-hash-without-image`.

use std::collections::BTreeMap;

use json_patch::PatchOperation;
use serde::{Deserialize, Deserializer, Serialize};
use serde_json::{Map, Value};

use super::{
    hash::go_escape,
    plan::{MetadataPatch, MetadataPolicy},
};
use crate::patch;

/// The pod's annotations as they were, and the values we set.
pub(crate) struct Annotations<'a> {
    original: Option<&'a Map<String, Value>>,
    changes: BTreeMap<String, String>,
}

impl<'a> Annotations<'a> {
    pub(crate) fn of(pod: &'a Value) -> Annotations<'a> {
        Annotations {
            original: crate::patch::get(pod, &["metadata", "annotations"]).and_then(Value::as_object),
            changes: BTreeMap::new(),
        }
    }

    /// The pod's original value.
    pub(crate) fn original(&self, key: &str) -> Option<&'a str> {
        self.original?.get(key)?.as_str()
    }

    /// The current value.
    pub(crate) fn get(&self, key: &str) -> Option<&str> {
        self.changes
            .get(key)
            .map(String::as_str)
            .or_else(|| self.original(key))
    }

    pub(crate) fn set(&mut self, key: impl Into<String>, value: impl Into<String>) {
        self.changes.insert(key.into(), value.into());
    }

    /// The values set that differ from the pod's.
    pub(crate) fn changed(&self) -> Vec<(&String, &String)> {
        self.changes
            .iter()
            .filter(|(k, v)| self.original(k) != Some(v.as_str()))
            .collect()
    }

    /// Operations writing every changed value: one `add` of the whole map when the pod has none (or `null`),
    /// else one `add` per key whose value differs.
    pub(crate) fn patch(&self, pod: &Value) -> Vec<PatchOperation> {
        let changed = self.changed();
        if changed.is_empty() {
            return Vec::new();
        }
        if self.original.is_some() {
            return changed
                .into_iter()
                .map(|(k, v)| patch::add(["metadata", "annotations", k.as_str()], Value::String(v.clone())))
                .collect();
        }
        let map: Map<String, Value> = changed
            .into_iter()
            .map(|(k, v)| (k.clone(), Value::String(v.clone())))
            .collect();
        match pod.get("metadata") {
            Some(Value::Object(_)) => vec![patch::add(["metadata", "annotations"], Value::Object(map))],
            _ => vec![patch::add(
                ["metadata"],
                Value::Object(Map::from_iter([("annotations".to_string(), Value::Object(map))])),
            )],
        }
    }
}

/// Applies `patchPodMetadata` entries in order. An error (a `MergePatchJson` onto a pod value that is not
/// JSON, or is `null`) fails the pod as in OpenKruise.
pub(crate) fn patch_pod_metadata(
    annotations: &mut Annotations<'_>,
    patches: &[MetadataPatch],
) -> Result<(), String> {
    for p in patches {
        for (key, value) in &p.annotations {
            match p.policy {
                MetadataPolicy::Retain => {
                    if annotations.get(key).is_none() {
                        annotations.set(key, value);
                    }
                }
                MetadataPolicy::Overwrite => annotations.set(key, value),
                MetadataPolicy::MergePatchJson => {
                    let merged = match annotations.get(key).filter(|v| !v.is_empty()) {
                        Some(origin) => merge_patch(origin, value)
                            .map_err(|e| format!("patch pod annotation {key}: {e}"))?,
                        None => value.clone(),
                    };
                    annotations.set(key, merged);
                }
            }
        }
    }
    Ok(())
}

/// RFC 7396 merge of `patch` into `origin`, written compact with sorted keys as OpenKruise's library does.
/// When either side is not an object the result is the patch (nulls removed).
pub(crate) fn merge_patch(origin: &str, patch: &str) -> Result<String, String> {
    let patch: Value = serde_json::from_str(patch).map_err(|e| format!("invalid JSON patch: {e}"))?;
    if !patch.is_object() && !patch.is_array() {
        return Err("invalid JSON patch: not an object or array".into());
    }
    let origin: Value = serde_json::from_str(origin).map_err(|e| format!("invalid JSON document: {e}"))?;
    if origin.is_null() {
        return Err("invalid JSON document: null".into());
    }
    let merged = match (origin, &patch) {
        (Value::Object(mut doc), Value::Object(p)) => {
            merge_into(&mut doc, p);
            Value::Object(doc)
        }
        _ => prune_nulls(patch),
    };
    Ok(go_escape(serde_json::to_string(&merged).unwrap_or_default()))
}

fn merge_into(doc: &mut Map<String, Value>, patch: &Map<String, Value>) {
    for (k, v) in patch {
        match v {
            Value::Null => {
                doc.remove(k);
            }
            Value::Object(p) => {
                let mut target = match doc.remove(k) {
                    Some(Value::Object(m)) => m,
                    _ => Map::new(),
                };
                merge_into(&mut target, p);
                doc.insert(k.clone(), Value::Object(target));
            }
            other => {
                doc.insert(k.clone(), prune_nulls(other.clone()));
            }
        }
    }
}

fn prune_nulls(value: Value) -> Value {
    match value {
        Value::Object(m) => Value::Object(
            m.into_iter()
                .filter(|(_, v)| !v.is_null())
                .map(|(k, v)| (k, prune_nulls(v)))
                .collect(),
        ),
        Value::Array(a) => Value::Array(a.into_iter().filter(|v| !v.is_null()).map(prune_nulls).collect()),
        other => other,
    }
}

fn null_as_default<'de, D, T>(d: D) -> Result<T, D::Error>
where
    D: Deserializer<'de>,
    T: Default + Deserialize<'de>,
{
    Ok(Option::<T>::deserialize(d)?.unwrap_or_default())
}

/// One SidecarSet's record in `kruise.io/sidecarset-hash(-without-image)`, fields in OpenKruise's order.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct UpgradeSpec {
    /// RFC 3339; `null` for records converted from the legacy `name → hash` form.
    #[serde(rename = "updateTimestamp", default)]
    pub update_timestamp: Option<String>,
    #[serde(rename = "hash", default, deserialize_with = "null_as_default")]
    pub hash: String,
    #[serde(rename = "sidecarSetName", default, deserialize_with = "null_as_default")]
    pub sidecar_set_name: String,
    #[serde(rename = "sidecarList", default)]
    pub sidecar_list: Option<Vec<String>>,
    #[serde(
        rename = "controllerRevision",
        default,
        deserialize_with = "null_as_default",
        skip_serializing_if = "String::is_empty"
    )]
    pub controller_revision: String,
}

/// Parses a pod's hash annotation: `{name: UpgradeSpec}`, or the legacy `{name: hash}`.
pub(crate) fn parse_upgrade_specs(value: Option<&str>) -> Result<BTreeMap<String, UpgradeSpec>, String> {
    let Some(value) = value.filter(|v| !v.is_empty()) else {
        return Ok(BTreeMap::new());
    };
    match serde_json::from_str::<Option<BTreeMap<String, UpgradeSpec>>>(value) {
        Ok(map) => Ok(map.unwrap_or_default()),
        Err(_) => match serde_json::from_str::<Option<BTreeMap<String, String>>>(value) {
            Ok(legacy) => Ok(legacy
                .unwrap_or_default()
                .into_iter()
                .map(|(name, hash)| {
                    let spec = UpgradeSpec {
                        hash,
                        sidecar_set_name: name.clone(),
                        ..UpgradeSpec::default()
                    };
                    (name, spec)
                })
                .collect()),
            Err(e) => Err(e.to_string()),
        },
    }
}

/// Compact JSON of a record map (sorted by SidecarSet name).
pub(crate) fn write_upgrade_specs(map: &BTreeMap<String, UpgradeSpec>) -> String {
    go_escape(serde_json::to_string(map).unwrap_or_default())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn merge_patch_as_openkruise() {
        assert_eq!(
            merge_patch(r#"{"log-agent":1}"#, r#"{"envoy":2}"#).unwrap(),
            r#"{"envoy":2,"log-agent":1}"#
        );
        assert_eq!(
            merge_patch(r#"{"a":1,"b":2}"#, r#"{"a":null}"#).unwrap(),
            r#"{"b":2}"#
        );
        assert_eq!(
            merge_patch(r#"[1]"#, r#"{"a":null,"b":1}"#).unwrap(),
            r#"{"b":1}"#
        );
        assert_eq!(merge_patch(r#"{"a":1}"#, r#"[1,null]"#).unwrap(), r#"[1]"#);
        assert!(merge_patch("null", r#"{"a":1}"#).is_err());
        assert!(merge_patch("not json", r#"{"a":1}"#).is_err());
        assert!(merge_patch(r#"{"a":1}"#, "3").is_err());
    }

    #[test]
    fn upgrade_specs_in_both_shapes() {
        let legacy = parse_upgrade_specs(Some(r#"{"s":"h1"}"#)).unwrap();
        assert_eq!(
            write_upgrade_specs(&legacy),
            r#"{"s":{"updateTimestamp":null,"hash":"h1","sidecarSetName":"s","sidecarList":null}}"#
        );
        let full = r#"{"s":{"updateTimestamp":"2025-01-02T03:04:05Z","hash":"h","sidecarSetName":"s","sidecarList":["a"],"controllerRevision":"s-1"}}"#;
        assert_eq!(
            write_upgrade_specs(&parse_upgrade_specs(Some(full)).unwrap()),
            full
        );
        assert!(parse_upgrade_specs(Some("[1]")).is_err());
        assert!(parse_upgrade_specs(Some("")).unwrap().is_empty());
    }
}
