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

/// A raw `metadata.labels` object. A non-string value counts as absent.
impl LabelSource for Map<String, Value> {
    fn label(&self, key: &str) -> Option<&str> {
        self.get(key).and_then(Value::as_str)
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
