//! Pod annotations: the working set of changes injection makes (`patchPodMetadata`, whose rules are
//! `kruise_core::sidecarset::metadata`, then what injection records).

use std::collections::BTreeMap;

use json_patch::PatchOperation;
use kruise_core::sidecarset::metadata::AnnotationValues;
use serde_json::{Map, Value};

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

impl AnnotationValues for Annotations<'_> {
    fn value(&self, key: &str) -> Option<&str> {
        self.get(key)
    }
    fn set_value(&mut self, key: &str, value: String) {
        self.set(key, value);
    }
}
