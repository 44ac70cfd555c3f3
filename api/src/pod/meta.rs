//! [`PodMeta`]: a pod's metadata as the cache keeps it — `ObjectMeta` without `managedFields`, with the
//! labels and annotations in [`InternedMap`]s.

use std::ops::{Deref, DerefMut};

use k8s_openapi::apimachinery::pkg::apis::meta::v1::{ObjectMeta, OwnerReference, Time};
use serde::{Deserialize, Deserializer, Serialize, Serializer};

use super::interned::InternedMap;

/// A pod's metadata. Every `ObjectMeta` field but `labels` and `annotations` is read through `Deref`
/// (where those two are always `None`); they are this type's own fields.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct PodMeta {
    /// Everything else, without `managedFields`.
    rest: ObjectMeta,
    /// `metadata.labels`.
    pub labels: InternedMap,
    /// `metadata.annotations`.
    pub annotations: InternedMap,
}

impl PodMeta {
    /// The metadata as Kubernetes' own type (without `managedFields`).
    pub fn to_object_meta(&self) -> ObjectMeta {
        ObjectMeta {
            labels: self.labels.to_btree_map(),
            annotations: self.annotations.to_btree_map(),
            ..self.rest.clone()
        }
    }

    /// The fields other than labels and annotations, for kube's `Resource::meta`.
    pub(super) fn rest(&self) -> &ObjectMeta {
        &self.rest
    }

    /// See [`PodMeta::rest`].
    pub(super) fn rest_mut(&mut self) -> &mut ObjectMeta {
        &mut self.rest
    }
}

/// Every field but `labels` and `annotations`, which are `None` here. A function that takes `&ObjectMeta`
/// and reads either must take `&impl` [`LabelledMeta`] instead, or a pod's would read as absent.
impl Deref for PodMeta {
    type Target = ObjectMeta;

    fn deref(&self) -> &ObjectMeta {
        &self.rest
    }
}

impl DerefMut for PodMeta {
    fn deref_mut(&mut self) -> &mut ObjectMeta {
        &mut self.rest
    }
}

/// The labels and annotations of an object's metadata, whichever type keeps them.
pub trait LabelledMeta {
    /// The value of label `key`.
    fn label(&self, key: &str) -> Option<&str>;
    /// The value of annotation `key`.
    fn annotation(&self, key: &str) -> Option<&str>;
    /// Every label key.
    fn label_keys(&self) -> impl Iterator<Item = &str>;
}

impl LabelledMeta for ObjectMeta {
    fn label(&self, key: &str) -> Option<&str> {
        self.labels.as_ref()?.get(key).map(String::as_str)
    }

    fn annotation(&self, key: &str) -> Option<&str> {
        self.annotations.as_ref()?.get(key).map(String::as_str)
    }

    fn label_keys(&self) -> impl Iterator<Item = &str> {
        self.labels.iter().flatten().map(|(k, _)| k.as_str())
    }
}

impl LabelledMeta for PodMeta {
    fn label(&self, key: &str) -> Option<&str> {
        self.labels.get(key)
    }

    fn annotation(&self, key: &str) -> Option<&str> {
        self.annotations.get(key)
    }

    fn label_keys(&self) -> impl Iterator<Item = &str> {
        self.labels.iter().map(|(k, _)| k)
    }
}

impl Serialize for PodMeta {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        self.to_object_meta().serialize(s)
    }
}

/// Decodes the labels and annotations straight into interned texts, and skips `managedFields` without
/// building it: no map, string or managed-fields entry is allocated only to be dropped.
impl<'de> Deserialize<'de> for PodMeta {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        let wire = Wire::deserialize(d)?;
        let rest = ObjectMeta {
            creation_timestamp: wire.creation_timestamp,
            deletion_grace_period_seconds: wire.deletion_grace_period_seconds,
            deletion_timestamp: wire.deletion_timestamp,
            finalizers: wire.finalizers,
            generate_name: wire.generate_name,
            generation: wire.generation,
            name: wire.name,
            namespace: wire.namespace,
            owner_references: wire.owner_references,
            resource_version: wire.resource_version,
            self_link: wire.self_link,
            uid: wire.uid,
            ..ObjectMeta::default()
        };
        Ok(Self {
            rest,
            labels: wire.labels,
            annotations: wire.annotations,
        })
    }
}

/// `ObjectMeta` as it arrives, without `managedFields` (skipped) and with the two maps interned.
#[derive(Deserialize)]
#[serde(rename_all = "camelCase")]
struct Wire {
    #[serde(default)]
    labels: InternedMap,
    #[serde(default)]
    annotations: InternedMap,
    creation_timestamp: Option<Time>,
    deletion_grace_period_seconds: Option<i64>,
    deletion_timestamp: Option<Time>,
    finalizers: Option<Vec<String>>,
    generate_name: Option<String>,
    generation: Option<i64>,
    name: Option<String>,
    namespace: Option<String>,
    owner_references: Option<Vec<OwnerReference>>,
    resource_version: Option<String>,
    self_link: Option<String>,
    uid: Option<String>,
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn labels_and_annotations_read_the_same_through_either_type() {
        let raw = json!({"name": "p", "namespace": "ns", "resourceVersion": "7",
            "labels": {"app": "web", "unavailable-pod.kruise.io/drain": "true"},
            "annotations": {"a": "1"},
            "managedFields": [{"manager": "kubectl", "operation": "Update"}]});
        let full: ObjectMeta = serde_json::from_value(raw.clone()).unwrap();
        let pod: PodMeta = serde_json::from_value(raw).unwrap();
        for key in ["app", "unavailable-pod.kruise.io/drain", "missing"] {
            assert_eq!(pod.label(key), full.label(key));
        }
        assert_eq!(pod.annotation("a"), Some("1"));
        assert_eq!(pod.annotation("a"), full.annotation("a"));
        assert_eq!(
            pod.label_keys().collect::<Vec<_>>(),
            full.label_keys().collect::<Vec<_>>()
        );
        // What kube's `Resource::meta` sees: every other field, and neither map.
        assert_eq!(
            (pod.name.as_deref(), pod.resource_version.as_deref()),
            (Some("p"), Some("7"))
        );
        assert_eq!(
            (pod.rest().labels.as_ref(), pod.rest().annotations.as_ref()),
            (None, None)
        );
        assert_eq!(pod.managed_fields, None);
        let back = pod.to_object_meta();
        assert_eq!(
            back,
            ObjectMeta {
                managed_fields: None,
                ..full
            }
        );
    }
}
