//! Selectors: label selectors ([`Selector`], `metav1.LabelSelector`) parsed once and evaluated many
//! times, and node selector terms ([`node`], `v1.NodeSelectorTerm`), as apimachinery and OpenKruise
//! evaluate them.

mod label;
pub mod node;
mod syntax;

use std::collections::BTreeMap;

use serde_json::{Map, Value};

pub use label::{InvalidOperator, Requirement, Selection, Selector, selects, selects_non_empty};
pub use syntax::{is_dns_subdomain, is_label_value, is_qualified_name};

/// A set of labels to match against.
pub trait LabelSource {
    /// The value of label `key`, if present.
    fn label(&self, key: &str) -> Option<&str>;
}

impl LabelSource for BTreeMap<String, String> {
    fn label(&self, key: &str) -> Option<&str> {
        self.get(key).map(String::as_str)
    }
}

/// A pod's labels or annotations as the cache keeps them.
impl LabelSource for kruise_api::pod::InternedMap {
    fn label(&self, key: &str) -> Option<&str> {
        self.get(key)
    }
}

/// No labels at all.
impl LabelSource for () {
    fn label(&self, _: &str) -> Option<&str> {
        None
    }
}

/// A raw `metadata.labels` object. A non-string value counts as absent.
impl LabelSource for Map<String, Value> {
    fn label(&self, key: &str) -> Option<&str> {
        self.get(key).and_then(Value::as_str)
    }
}

/// `metadata.labels` of a kind that keeps `ObjectMeta`.
impl LabelSource for Option<BTreeMap<String, String>> {
    fn label(&self, key: &str) -> Option<&str> {
        self.as_ref()?.label(key)
    }
}

impl<T: LabelSource> LabelSource for Option<&T> {
    fn label(&self, key: &str) -> Option<&str> {
        self.and_then(|labels| labels.label(key))
    }
}

/// The labels of a raw object (`metadata.labels`), or none.
pub fn raw_labels(object: &Value) -> Option<&Map<String, Value>> {
    object.get("metadata")?.get("labels")?.as_object()
}
