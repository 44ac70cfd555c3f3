//! ResourceDistribution building blocks that are identical in `v1alpha1` and `v1beta1`.

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

/// Annotation on every copy: lowercase hex SHA-256 of the distribution's `spec.resource` as stored.
pub const RESOURCE_HASH_ANNOTATION: &str = "kruise.io/resourcedistribution.resource.hashcode";
/// Annotation on every copy: the name of the ResourceDistribution it was copied from.
pub const RESOURCE_FROM_ANNOTATION: &str = "kruise.io/resourcedistribution.resource.from";

/// The six condition types, in the order the status lists them.
pub const CONDITION_TYPES: [&str; 6] = [
    "GetResourceFailed",
    "CreateResourceFailed",
    "UpdateResourceFailed",
    "DeleteResourceFailed",
    "ConflictOccurred",
    "NamespaceNotExists",
];

/// A list of namespaces named explicitly.
#[derive(Serialize, Deserialize, Clone, Debug, Default, PartialEq, Eq, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct ResourceDistributionTargetNamespaces {
    /// The namespaces, by name.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    #[schemars(transform = crate::common::no_default)]
    pub list: Vec<ResourceDistributionNamespace>,
}

impl ResourceDistributionTargetNamespaces {
    /// The names in the list, in order.
    pub fn names(&self) -> impl Iterator<Item = &str> {
        self.list.iter().map(|n| n.name.as_str())
    }
}

/// One namespace named in a target list.
#[derive(Serialize, Deserialize, Clone, Debug, Default, PartialEq, Eq, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct ResourceDistributionNamespace {
    /// Namespace name.
    #[serde(default, skip_serializing_if = "String::is_empty")]
    #[schemars(transform = crate::common::no_default)]
    pub name: String,
}
