//! Decoding what Kubernetes stores.
//!
//! Objects in a cluster come from older OpenKruise versions, from other writers and from before
//! defaulting. The types in `kruise-api` give every field Go's decoder would leave at its zero value a
//! default, so such objects decode. An object that still cannot be decoded is reported with the field
//! path ([`DecodeError`]); where the cluster is read ([`Lenient`]) it is skipped rather than stopping
//! the watch. See `docs/adding-a-kind.md`.

use std::borrow::Cow;

use k8s_openapi::apimachinery::pkg::apis::meta::v1::ObjectMeta;
use serde::{Deserialize, Deserializer, de::DeserializeOwned};
use serde_json::Value;

use crate::kinds::Kind;

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
pub fn converted<K: Kind>(
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

/// An object of kind `K` as a watch delivers it: decoded, or — when it does not decode — its metadata
/// and the reason, so the cache can skip it, count it and say which object and field are wrong.
/// Decoding a `Lenient` never fails for a JSON object, so one bad object never stops a list or a watch.
#[derive(Clone, Debug)]
pub enum Lenient<K> {
    Decoded(std::sync::Arc<K>),
    Skipped(Box<(ObjectMeta, DecodeError)>),
}

impl<K: Kind> Lenient<K> {
    /// Decodes a stored object (managed fields dropped).
    pub fn decode(mut value: Value) -> Self {
        strip_managed_fields(&mut value);
        // What identifies the object in the store and in the log, read before decoding consumes it.
        let field = |name: &str| {
            value
                .pointer(&format!("/metadata/{name}"))
                .and_then(Value::as_str)
                .map(String::from)
        };
        let meta = ObjectMeta {
            name: field("name"),
            namespace: field("namespace"),
            resource_version: field("resourceVersion"),
            uid: field("uid"),
            ..ObjectMeta::default()
        };
        match K::decode(value) {
            Ok(object) => Lenient::Decoded(std::sync::Arc::new(object)),
            Err(e) => Lenient::Skipped(Box::new((meta, e))),
        }
    }

    /// The decoded object, if any.
    pub fn decoded(&self) -> Option<&std::sync::Arc<K>> {
        match self {
            Lenient::Decoded(object) => Some(object),
            Lenient::Skipped(_) => None,
        }
    }
}

impl<'de, K: Kind> Deserialize<'de> for Lenient<K> {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        Ok(Lenient::decode(Value::deserialize(deserializer)?))
    }
}

impl<K: Kind> kube::Resource for Lenient<K> {
    type DynamicType = ();
    type Scope = K::Scope;

    fn kind(_: &()) -> Cow<'_, str> {
        K::kind(&())
    }
    fn group(_: &()) -> Cow<'_, str> {
        K::group(&())
    }
    fn version(_: &()) -> Cow<'_, str> {
        K::version(&())
    }
    fn plural(_: &()) -> Cow<'_, str> {
        K::plural(&())
    }
    fn meta(&self) -> &ObjectMeta {
        match self {
            Lenient::Decoded(object) => object.meta(),
            Lenient::Skipped(skipped) => &skipped.0,
        }
    }
    fn meta_mut(&mut self) -> &mut ObjectMeta {
        match self {
            Lenient::Decoded(object) => std::sync::Arc::make_mut(object).meta_mut(),
            Lenient::Skipped(skipped) => &mut skipped.0,
        }
    }
}

#[cfg(test)]
mod tests {
    use kruise_api::apps_v1beta1::CloneSet;
    use serde_json::json;

    use super::*;

    #[test]
    fn a_list_with_one_bad_object_decodes_the_others_and_names_the_bad_field() {
        let items = json!([
            {"apiVersion": "apps.kruise.io/v1beta1", "kind": "CloneSet",
             "metadata": {"name": "good", "namespace": "a", "managedFields": [{"manager": "x"}]},
             "status": {"replicas": 1}},
            {"apiVersion": "apps.kruise.io/v1beta1", "kind": "CloneSet",
             "metadata": {"name": "bad", "namespace": "a", "resourceVersion": "9"},
             "spec": {"replicas": "three"}},
        ]);
        let decoded: Vec<Lenient<CloneSet>> = serde_json::from_value(items).unwrap();
        let good = decoded[0].decoded().expect("decoded");
        assert_eq!(good.status.as_ref().unwrap().available_replicas, 0);
        assert!(good.metadata.managed_fields.is_none());
        let Lenient::Skipped(skipped) = &decoded[1] else {
            panic!("the bad object decoded");
        };
        let (meta, error) = &**skipped;
        assert_eq!(meta.name.as_deref(), Some("bad"));
        assert_eq!(meta.resource_version.as_deref(), Some("9"));
        assert_eq!(error.path.as_deref(), Some("spec.replicas"));
        use kube::Resource;
        assert_eq!(
            decoded[1].meta().namespace.as_deref(),
            Some("a"),
            "keyed in the store"
        );
    }

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
