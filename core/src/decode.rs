//! Decoding what Kubernetes stores.
//!
//! Objects in a cluster come from older OpenKruise versions, from other writers and from before
//! defaulting. The types in `kruise-api` give every field Go's decoder would leave at its zero value a
//! default, so such objects decode. An object that still cannot be decoded is reported with the field
//! path ([`DecodeError`]); where the cluster is read ([`Lenient`](crate::Lenient)) it is skipped rather than stopping
//! the watch. See `docs/adding-a-kind.md`.

use serde::de::DeserializeOwned;
use serde_json::Value;

/// Why an object does not decode as its kind: the field path (`spec.containers`) and serde's message.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
#[error("{}{message}", path.as_deref().map(|p| format!("at {p}: ")).unwrap_or_default())]
pub struct DecodeError {
    /// The path of the offending field, `None` when the object itself is wrong.
    pub path: Option<String>,
    pub message: String,
}

impl From<kruise_api::ConversionError> for DecodeError {
    fn from(e: kruise_api::ConversionError) -> Self {
        match e {
            kruise_api::ConversionError::Decode { path, message, .. } => DecodeError { path, message },
            other => DecodeError {
                path: None,
                message: other.to_string(),
            },
        }
    }
}

/// Decodes `value` as `T`, naming the failing field.
pub fn typed<T: DeserializeOwned>(value: Value) -> Result<T, DecodeError> {
    serde_path_to_error::deserialize(value).map_err(|err| {
        let path = err.path().to_string();
        DecodeError {
            path: (path != "." && !path.is_empty()).then_some(path),
            message: err.into_inner().to_string(),
        }
    })
}

/// Checks that `value` decodes as `T` (e.g. a reviewed pod as a Pod), naming the failing field, without
/// copying it.
pub fn check<T: DeserializeOwned>(value: &Value) -> Result<(), DecodeError> {
    serde_path_to_error::deserialize::<_, T>(value)
        .map(drop)
        .map_err(|err| {
            let path = err.path().to_string();
            DecodeError {
                path: (path != "." && !path.is_empty()).then_some(path),
                message: err.into_inner().to_string(),
            }
        })
}

/// Decodes a stored object of a kind that is served in several versions: directly when it is already
/// at the kind's version, else through `convert` (e.g. [`kruise_api::cloneset_to_v1beta1`]).
pub fn converted<K: kube::Resource<DynamicType = ()> + DeserializeOwned>(
    mut value: Value,
    convert: fn(&Value) -> Result<K, kruise_api::ConversionError>,
) -> Result<K, DecodeError> {
    // A custom resource's `spec` may be absent (OpenKruise's Go types mark it `omitempty`); Go's
    // decoder leaves it at its zero value.
    if let Some(object) = value.as_object_mut() {
        object
            .entry("spec")
            .or_insert_with(|| Value::Object(Default::default()));
    }
    if value.get("apiVersion").and_then(Value::as_str) == Some(&*K::api_version(&())) {
        typed(value)
    } else {
        Ok(convert(&value)?)
    }
}

/// Drops `metadata.managedFields`: nothing reads it, and it is often the largest part of an object.
pub fn strip_managed_fields(value: &mut Value) {
    if let Some(meta) = value.get_mut("metadata").and_then(Value::as_object_mut) {
        meta.remove("managedFields");
    }
}

#[cfg(test)]
mod tests {
    use kruise_api::apps_v1beta1::CloneSet;
    use serde_json::json;

    use super::*;
    use crate::Kind;

    #[test]
    fn a_stored_custom_resource_without_spec_decodes() {
        let object = json!({"apiVersion": "apps.kruise.io/v1alpha1", "kind": "CloneSet",
            "metadata": {"name": "x", "namespace": "a"}});
        let set = CloneSet::decode(object).unwrap();
        assert_eq!(set.spec.replicas, None);
    }

    #[test]
    fn a_review_object_is_checked_with_the_field_path() {
        let pod = json!({"metadata": {"name": "p"}, "spec": {"containers": "nginx"}});
        let err = check::<k8s_openapi::api::core::v1::Pod>(&pod).unwrap_err();
        assert_eq!(err.path.as_deref(), Some("spec.containers"));
        assert!(
            err.to_string().starts_with("at spec.containers: invalid type"),
            "{err}"
        );
    }
}
