//! Types and helpers shared by several kinds and by both API versions.
//!
//! OpenKruise keeps these in its `apis/apps/pub` package (priority, lifecycle and in-place
//! update settings) and repeats the scatter strategy in each version package; the JSON shape
//! is identical everywhere, so one Rust definition serves all of them.

use std::collections::BTreeMap;

use k8s_openapi::apimachinery::pkg::apis::meta::v1::LabelSelector;
use k8s_openapi::apimachinery::pkg::util::intstr::IntOrString;
use schemars::{JsonSchema, Schema, SchemaGenerator, json_schema};
use serde::{Deserialize, Serialize};

/// Defines a string-valued enum that tolerates values it does not know.
///
/// Go models these as `type X string`, so any string decodes; the known constants become
/// variants and everything else lands in `Other`. The schema is a plain string, optionally
/// restricted with `enum` where OpenKruise's CRD validates the value.
macro_rules! string_enum {
    (
        $(#[$meta:meta])*
        $vis:vis enum $name:ident $([$validated:ident])? {
            $( $(#[$vmeta:meta])* $variant:ident = $value:literal ),+ $(,)?
        }
    ) => {
        $(#[$meta])*
        #[derive(Clone, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
        $vis enum $name {
            $( $(#[$vmeta])* $variant, )+
            /// A value this crate does not know; kept verbatim.
            Other(String),
        }

        impl $name {
            /// The wire forms of the known values.
            pub const KNOWN: &'static [&'static str] = &[ $( $value ),+ ];

            /// The wire form of this value.
            pub fn as_str(&self) -> &str {
                match self {
                    $( Self::$variant => $value, )+
                    Self::Other(s) => s.as_str(),
                }
            }
        }

        impl From<&str> for $name {
            fn from(s: &str) -> Self {
                match s {
                    $( $value => Self::$variant, )+
                    other => Self::Other(other.to_string()),
                }
            }
        }

        impl From<String> for $name {
            fn from(s: String) -> Self {
                match s.as_str() {
                    $( $value => Self::$variant, )+
                    _ => Self::Other(s),
                }
            }
        }

        impl std::fmt::Display for $name {
            fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
                f.write_str(self.as_str())
            }
        }

        impl serde::Serialize for $name {
            fn serialize<S: serde::Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
                serializer.serialize_str(self.as_str())
            }
        }

        impl<'de> serde::Deserialize<'de> for $name {
            fn deserialize<D: serde::Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
                let s = <String as serde::Deserialize>::deserialize(deserializer)?;
                Ok(Self::from(s))
            }
        }

        impl schemars::JsonSchema for $name {
            fn schema_name() -> std::borrow::Cow<'static, str> {
                stringify!($name).into()
            }

            fn schema_id() -> std::borrow::Cow<'static, str> {
                concat!(module_path!(), "::", stringify!($name)).into()
            }

            fn json_schema(_: &mut schemars::SchemaGenerator) -> schemars::Schema {
                #[allow(unused_mut)]
                let mut schema = schemars::json_schema!({ "type": "string" });
                $(
                    let _ = stringify!($validated);
                    schema.insert("enum".to_string(), serde_json::json!(Self::KNOWN));
                )?
                schema
            }
        }
    };
}

pub(crate) use string_enum;

/// Schema for an embedded Kubernetes object kept schemaless in the CRD (pod templates,
/// volumes, PVC templates, raw patches): any object, unknown fields preserved.
pub(crate) fn preserve_unknown_object(_: &mut SchemaGenerator) -> Schema {
    json_schema!({
        "type": "object",
        "x-kubernetes-preserve-unknown-fields": true,
    })
}

/// Schema for a whole Kubernetes object embedded in a spec (ResourceDistribution's resource):
/// `apiVersion`, `kind` and `metadata` checked by the API server, every other field preserved.
pub(crate) fn embedded_resource(_: &mut SchemaGenerator) -> Schema {
    json_schema!({
        "type": "object",
        "x-kubernetes-embedded-resource": true,
        "x-kubernetes-preserve-unknown-fields": true,
    })
}

/// Schema for a list of schemaless embedded objects.
pub(crate) fn preserve_unknown_object_list(_: &mut SchemaGenerator) -> Schema {
    json_schema!({
        "type": "array",
        "items": {
            "type": "object",
            "x-kubernetes-preserve-unknown-fields": true,
        },
    })
}

/// Field schema transform that drops the `default` schemars derives from `#[serde(default)]`:
/// OpenKruise's CRDs only default a few fields, and a schema default changes what the API
/// server stores.
pub(crate) fn no_default(schema: &mut Schema) {
    schema.remove("default");
}

/// Container schema transform that keeps `fields` required in the CRD although they decode to a
/// default when absent, as Go's decoder does (objects stored by older OpenKruise versions or before
/// defaulting lack them); OpenKruise's CRDs require them. `required` stays sorted, as schemars writes it.
pub(crate) struct Required(pub &'static [&'static str]);

impl schemars::transform::Transform for Required {
    fn transform(&mut self, schema: &mut Schema) {
        let mut names: Vec<String> = schema
            .get("required")
            .and_then(|r| r.as_array())
            .map(|r| r.iter().filter_map(|n| n.as_str().map(String::from)).collect())
            .unwrap_or_default();
        names.extend(self.0.iter().map(|n| n.to_string()));
        names.sort();
        names.dedup();
        schema.insert("required".into(), names.into());
    }
}

/// Label on a pod workload's pods that records its lifecycle state.
pub const LIFECYCLE_STATE_KEY: &str = "lifecycle.apps.kruise.io/state";
/// Annotation that records when the lifecycle state last changed.
pub const LIFECYCLE_TIMESTAMP_KEY: &str = "lifecycle.apps.kruise.io/timestamp";
/// Readiness gate added to pods of workloads that update them in place.
pub const IN_PLACE_UPDATE_READY: &str = "InPlaceUpdateReady";
/// Pod annotation holding the JSON in-place update state.
pub const IN_PLACE_UPDATE_STATE_KEY: &str = "apps.kruise.io/inplace-update-state";
/// Pod annotation holding the spec to apply once the in-place grace period ends.
pub const IN_PLACE_UPDATE_GRACE_KEY: &str = "apps.kruise.io/inplace-update-grace";
/// Pod annotation the node agent writes (through `pods/status`) with what it saw of the pod's runtime
/// containers: ids, restart counts and hashes (`kruise_core::containermeta`).
pub const RUNTIME_CONTAINERS_META_KEY: &str = "apps.kruise.io/runtime-containers-meta";

string_enum! {
    /// States of the pod lifecycle state machine (label `lifecycle.apps.kruise.io/state`).
    pub enum LifecycleStateType {
        /// Created but not yet available.
        PreparingNormal = "PreparingNormal",
        /// Available for service.
        Normal = "Normal",
        /// About to be updated.
        PreparingUpdate = "PreparingUpdate",
        /// Being updated in place.
        Updating = "Updating",
        /// Update done, not yet back to normal.
        Updated = "Updated",
        /// About to be deleted.
        PreparingDelete = "PreparingDelete",
    }
}

/// Order in which pods are picked for update: either by label value order or by weights.
/// Only one of the two lists may be set.
#[derive(Serialize, Deserialize, Clone, Debug, Default, PartialEq, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct UpdatePriorityStrategy {
    /// Pods are sorted by the integer found in the value of each key, in list order.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub order_priority: Option<Vec<UpdatePriorityOrderTerm>>,
    /// Pods are sorted by the sum of the weights of the terms they match.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub weight_priority: Option<Vec<UpdatePriorityWeightTerm>>,
}

/// One ordered-key priority term.
#[derive(Serialize, Deserialize, Clone, Debug, Default, PartialEq, JsonSchema)]
#[serde(rename_all = "camelCase")]
#[schemars(transform = crate::common::Required(&["orderedKey"]))]
pub struct UpdatePriorityOrderTerm {
    /// Label key whose value (its last integer) orders the pods.
    #[serde(default)]
    #[schemars(transform = crate::common::no_default)]
    pub ordered_key: String,
}

/// One weighted priority term.
#[derive(Serialize, Deserialize, Clone, Debug, Default, PartialEq, JsonSchema)]
#[serde(rename_all = "camelCase")]
#[schemars(transform = crate::common::Required(&["weight", "matchSelector"]))]
pub struct UpdatePriorityWeightTerm {
    /// Weight (1-100) added for pods matching the selector.
    #[serde(default)]
    #[schemars(transform = crate::common::no_default)]
    pub weight: i32,
    /// Pod label selector of this term.
    #[serde(default)]
    #[schemars(transform = crate::common::no_default)]
    pub match_selector: LabelSelector,
}

/// Label key/value whose pods are spread out across update batches.
#[derive(Serialize, Deserialize, Clone, Debug, Default, PartialEq, Eq, JsonSchema)]
#[schemars(transform = crate::common::Required(&["key", "value"]))]
pub struct UpdateScatterTerm {
    /// Label key.
    #[serde(default)]
    #[schemars(transform = crate::common::no_default)]
    pub key: String,
    /// Label value.
    #[serde(default)]
    #[schemars(transform = crate::common::no_default)]
    pub value: String,
}

/// Scatter rules applied when ordering pods for update.
pub type UpdateScatterStrategy = Vec<UpdateScatterTerm>;

/// Lifecycle hooks of a workload's pods.
#[derive(Serialize, Deserialize, Clone, Debug, Default, PartialEq, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct Lifecycle {
    /// Hook run before a pod is deleted.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub pre_delete: Option<LifecycleHook>,
    /// Hook run around an in-place update.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub in_place_update: Option<LifecycleHook>,
    /// Hook run after creation, before the pod becomes Normal.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub pre_normal: Option<LifecycleHook>,
}

/// A lifecycle hook: the pod is held while it carries these labels or finalizers.
#[derive(Serialize, Deserialize, Clone, Debug, Default, PartialEq, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct LifecycleHook {
    /// Labels that hold the hook while present on the pod.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub labels_handler: Option<BTreeMap<String, String>>,
    /// Finalizers that hold the hook while present on the pod.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub finalizers_handler: Option<Vec<String>>,
    /// Mark the pod not ready while the hook holds (preDelete and inPlaceUpdate only).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub mark_pod_not_ready: Option<bool>,
}

/// Settings for in-place updates.
#[derive(Serialize, Deserialize, Clone, Debug, Default, PartialEq, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct InPlaceUpdateStrategy {
    /// Seconds between marking the pod not ready and patching its images.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub grace_period_seconds: Option<i32>,
    /// Parallelism of image pre-download jobs (v1alpha1 keeps it in an annotation).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub image_pre_download_parallelism: Option<IntOrString>,
    /// Timeout of image pre-download jobs (v1alpha1 keeps it in an annotation).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub image_pre_download_timeout_seconds: Option<i32>,
    /// Updated ready pods needed before pre-downloading for the next batch
    /// (v1alpha1 keeps it in an annotation).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub image_pre_download_min_updated_ready_pods: Option<i32>,
}
