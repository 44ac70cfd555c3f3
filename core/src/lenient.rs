//! [`Lenient`]: an object of a registered kind as a watch delivers it, decoded or skipped with the
//! reason, so one object that does not decode never stops a list or a watch.

use std::{borrow::Cow, sync::Arc};

use k8s_openapi::apimachinery::pkg::apis::meta::v1::ObjectMeta;
use serde::{Deserialize, Deserializer, Serialize, Serializer};
use serde_json::Value;

use crate::{
    decode::{DecodeError, strip_managed_fields},
    kind::Kind,
};

/// An object of kind `K` as a watch delivers it: decoded, or — when it does not decode — its metadata
/// and the reason, so the cache can skip it, count it and say which object and field are wrong.
/// Decoding a `Lenient` never fails for a JSON object, so one bad object never stops a list or a watch.
#[derive(Clone, Debug)]
pub enum Lenient<K> {
    Decoded(Arc<K>),
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
            Ok(object) => Lenient::Decoded(Arc::new(object)),
            Err(e) => Lenient::Skipped(Box::new((meta, e))),
        }
    }

    /// The decoded object, if any.
    pub fn decoded(&self) -> Option<&Arc<K>> {
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

/// Serialises the decoded object, or the metadata kept of one that did not decode.
impl<K: Serialize> Serialize for Lenient<K> {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        match self {
            Lenient::Decoded(object) => object.serialize(serializer),
            Lenient::Skipped(skipped) => serde_json::json!({"metadata": skipped.0}).serialize(serializer),
        }
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
            Lenient::Decoded(object) => Arc::make_mut(object).meta_mut(),
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
}
