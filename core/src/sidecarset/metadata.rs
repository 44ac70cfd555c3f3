//! `patchPodMetadata`: how a SidecarSet's entries change a pod's annotations (Retain, Overwrite,
//! MergePatchJson as OpenKruise applies them), on injection and again on each in-place upgrade.

use std::collections::BTreeMap;

use kruise_api::apps_v1beta1::{SidecarSetPatchPolicyType, SidecarSetSpec};
use serde_json::{Map, Value};

use super::records::go_escape;

/// How a `patchPodMetadata` entry treats a key the pod already has.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum MetadataPolicy {
    Retain,
    Overwrite,
    MergePatchJson,
}

/// One `patchPodMetadata` entry.
#[derive(Clone, Debug)]
pub struct MetadataPatch {
    pub policy: MetadataPolicy,
    pub annotations: Vec<(String, String)>,
}

/// A pod's annotations being changed: the current value of a key, and setting one.
pub trait AnnotationValues {
    fn value(&self, key: &str) -> Option<&str>;
    fn set_value(&mut self, key: &str, value: String);
}

impl AnnotationValues for BTreeMap<String, String> {
    fn value(&self, key: &str) -> Option<&str> {
        self.get(key).map(String::as_str)
    }
    fn set_value(&mut self, key: &str, value: String) {
        self.insert(key.to_string(), value);
    }
}

/// The entries of `spec.patchPodMetadata` in order. An entry with an unknown policy is ignored, as
/// OpenKruise does; a `MergePatchJson` value that is not a JSON object or array is an error naming it.
pub fn metadata_patches(spec: &SidecarSetSpec) -> Result<Vec<MetadataPatch>, String> {
    let mut out = Vec::new();
    for (index, p) in spec.patch_pod_metadata.iter().flatten().enumerate() {
        let policy = match p.patch_policy.as_ref() {
            None | Some(SidecarSetPatchPolicyType::Retain) => MetadataPolicy::Retain,
            Some(SidecarSetPatchPolicyType::Other(s)) if s.is_empty() => MetadataPolicy::Retain,
            Some(SidecarSetPatchPolicyType::Overwrite) => MetadataPolicy::Overwrite,
            Some(SidecarSetPatchPolicyType::MergePatchJson) => MetadataPolicy::MergePatchJson,
            Some(SidecarSetPatchPolicyType::Other(_)) => continue,
        };
        let annotations: Vec<(String, String)> = p
            .annotations
            .iter()
            .flatten()
            .map(|(k, v)| (k.clone(), v.clone()))
            .collect();
        if policy == MetadataPolicy::MergePatchJson {
            for (k, v) in &annotations {
                let valid = serde_json::from_str::<Value>(v).is_ok_and(|v| v.is_object() || v.is_array());
                if !valid {
                    return Err(format!(
                        "spec.patchPodMetadata[{index}].annotations[{k}]: a MergePatchJson value must be a JSON object or array"
                    ));
                }
            }
        }
        out.push(MetadataPatch { policy, annotations });
    }
    Ok(out)
}

/// Applies `patchPodMetadata` entries in order. An error (a `MergePatchJson` onto a pod value that is not
/// JSON, or is `null`) fails the pod as in OpenKruise.
pub fn apply_metadata_patches(
    annotations: &mut impl AnnotationValues,
    patches: &[MetadataPatch],
) -> Result<(), String> {
    for p in patches {
        for (key, value) in &p.annotations {
            match p.policy {
                MetadataPolicy::Retain => {
                    if annotations.value(key).is_none() {
                        annotations.set_value(key, value.clone());
                    }
                }
                MetadataPolicy::Overwrite => annotations.set_value(key, value.clone()),
                MetadataPolicy::MergePatchJson => {
                    let merged = match annotations.value(key).filter(|v| !v.is_empty()) {
                        Some(origin) => merge_patch(origin, value)
                            .map_err(|e| format!("patch pod annotation {key}: {e}"))?,
                        None => value.clone(),
                    };
                    annotations.set_value(key, merged);
                }
            }
        }
    }
    Ok(())
}

/// The annotation values `patchPodMetadata` changes on a pod with `annotations` (every policy, as on
/// injection; the SidecarSet controller re-applies it on each in-place upgrade).
pub fn patch_pod_metadata(
    spec: &SidecarSetSpec,
    annotations: &BTreeMap<String, String>,
) -> Result<BTreeMap<String, String>, String> {
    let patches = metadata_patches(spec)?;
    let mut working = annotations.clone();
    apply_metadata_patches(&mut working, &patches)?;
    Ok(working
        .into_iter()
        .filter(|(k, v)| annotations.get(k) != Some(v))
        .collect())
}

/// RFC 7396 merge of `patch` into `origin`, written compact with sorted keys as OpenKruise's library does.
/// When either side is not an object the result is the patch (nulls removed).
pub fn merge_patch(origin: &str, patch: &str) -> Result<String, String> {
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
    fn every_policy_changes_only_what_it_should() {
        let spec: SidecarSetSpec = serde_json::from_value(serde_json::json!({"patchPodMetadata": [
            {"annotations": {"keep": "new", "fresh": "v"}, "patchPolicy": "Retain"},
            {"annotations": {"over": "new"}, "patchPolicy": "Overwrite"},
            {"annotations": {"merge": "{\"b\":2}"}, "patchPolicy": "MergePatchJson"},
        ]}))
        .unwrap();
        let pod: BTreeMap<String, String> = [("keep", "old"), ("over", "old"), ("merge", "{\"a\":1}")]
            .into_iter()
            .map(|(k, v)| (k.to_string(), v.to_string()))
            .collect();
        let changed = patch_pod_metadata(&spec, &pod).unwrap();
        let expected: BTreeMap<String, String> =
            [("fresh", "v"), ("over", "new"), ("merge", "{\"a\":1,\"b\":2}")]
                .into_iter()
                .map(|(k, v)| (k.to_string(), v.to_string()))
                .collect();
        assert_eq!(changed, expected);
    }
}
