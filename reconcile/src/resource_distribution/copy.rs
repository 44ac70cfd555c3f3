//! The copy of a distribution's resource in one namespace: built only from the distribution's own
//! `spec.resource` (never from another object), compared with what a namespace holds.

use std::collections::{BTreeMap, BTreeSet};

use base64::Engine as _;
use kruise_api::apps_v1beta1::{RESOURCE_FROM_ANNOTATION, RESOURCE_HASH_ANNOTATION, ResourceDistribution};
use serde_json::{Map, Value, json};

/// Label on every copy, valued with the distribution's UID: the controller lists and watches copies by
/// it, so it never caches other ConfigMaps or Secrets. A kruise-rs addition; the annotations are
/// OpenKruise's.
pub const COPY_LABEL: &str = "apps.kruise.io/resource-distribution";

/// The kinds a distribution may carry.
pub const SUPPORTED_KINDS: [&str; 2] = ["Secret", "ConfigMap"];

/// `spec.resource` cannot be distributed; the distribution waits for a spec change.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum InvalidResource {
    #[error("spec.resource is not an object")]
    NotAnObject,
    #[error("spec.resource must be a v1 Secret or ConfigMap, not {api_version} {kind}")]
    Unsupported { api_version: String, kind: String },
    #[error("spec.resource has no metadata.name")]
    NoName,
}

/// The resource of a distribution, prepared once per pass.
#[derive(Debug, Clone)]
pub struct Template {
    /// `ConfigMap` or `Secret`.
    pub kind: String,
    /// The name every copy has.
    pub name: String,
    /// Lowercase hex SHA-256 of `spec.resource` as the API server serializes it.
    pub hash: String,
    /// Every field but `metadata` and `status`, as the API server stores it.
    fields: Map<String, Value>,
    /// The template's metadata, without namespace and the fields merged below.
    metadata: Map<String, Value>,
    labels: BTreeMap<String, String>,
    annotations: BTreeMap<String, String>,
    finalizers: BTreeSet<String>,
    controller_ref: Value,
    uid: String,
    distributor: String,
}

fn string_map(v: Option<&Value>) -> BTreeMap<String, String> {
    v.and_then(Value::as_object)
        .map(|m| {
            m.iter()
                .filter_map(|(k, v)| Some((k.clone(), v.as_str()?.to_string())))
                .collect()
        })
        .unwrap_or_default()
}

fn string_set(v: Option<&Value>) -> BTreeSet<String> {
    v.and_then(Value::as_array)
        .map(|a| a.iter().filter_map(|s| s.as_str().map(str::to_string)).collect())
        .unwrap_or_default()
}

/// Lowercase hex SHA-256 of `resource` serialized as Go's `encoding/json` does (sorted keys, compact,
/// HTML characters escaped): the bytes the API server hands OpenKruise as `spec.resource`.
pub fn resource_hash(resource: &Value) -> String {
    let text = kruise_core::sidecarset::go_escape(resource.to_string());
    let digest = ring::digest::digest(&ring::digest::SHA256, text.as_bytes());
    digest.as_ref().iter().map(|b| format!("{b:02x}")).collect()
}

/// The fields of a ConfigMap or Secret as the API server stores them: no nulls, no empty maps, a
/// Secret's `stringData` merged into `data` (base64) and its `type` defaulted to `Opaque`.
fn stored_fields(kind: &str, resource: &Map<String, Value>) -> Map<String, Value> {
    let mut fields: Map<String, Value> = resource
        .iter()
        .filter(|(k, v)| !matches!(k.as_str(), "apiVersion" | "kind" | "metadata" | "status") && !v.is_null())
        .map(|(k, v)| (k.clone(), v.clone()))
        .collect();
    if kind == "Secret" {
        if let Some(Value::Object(text)) = fields.remove("stringData") {
            let data = fields.entry("data").or_insert_with(|| json!({}));
            if let Some(data) = data.as_object_mut() {
                for (k, v) in text {
                    if let Some(v) = v.as_str() {
                        data.insert(
                            k,
                            Value::String(base64::engine::general_purpose::STANDARD.encode(v)),
                        );
                    }
                }
            }
        }
        fields
            .entry("type")
            .or_insert_with(|| Value::String("Opaque".into()));
    }
    fields.retain(|_, v| !v.as_object().is_some_and(Map::is_empty));
    fields
}

impl Template {
    /// Reads a distribution's resource.
    pub fn new(rd: &ResourceDistribution) -> Result<Template, InvalidResource> {
        let resource = rd.spec.resource.as_object().ok_or(InvalidResource::NotAnObject)?;
        let text = |k: &str| resource.get(k).and_then(Value::as_str).unwrap_or("");
        let (api_version, kind) = (text("apiVersion"), text("kind"));
        if api_version != "v1" || !SUPPORTED_KINDS.contains(&kind) {
            return Err(InvalidResource::Unsupported {
                api_version: api_version.into(),
                kind: kind.into(),
            });
        }
        let mut metadata = resource
            .get("metadata")
            .and_then(Value::as_object)
            .cloned()
            .unwrap_or_default();
        let name = metadata
            .get("name")
            .and_then(Value::as_str)
            .unwrap_or("")
            .to_string();
        if name.is_empty() {
            return Err(InvalidResource::NoName);
        }
        let uid = rd.metadata.uid.clone().unwrap_or_default();
        let distributor = rd.metadata.name.clone().unwrap_or_default();
        let hash = resource_hash(&rd.spec.resource);
        let mut labels = string_map(metadata.get("labels"));
        labels.insert(COPY_LABEL.into(), uid.clone());
        let mut annotations = string_map(metadata.get("annotations"));
        annotations.insert(RESOURCE_HASH_ANNOTATION.into(), hash.clone());
        annotations.insert(RESOURCE_FROM_ANNOTATION.into(), distributor.clone());
        let finalizers = string_set(metadata.get("finalizers"));
        for key in [
            "namespace",
            "labels",
            "annotations",
            "finalizers",
            "ownerReferences",
            "resourceVersion",
            "uid",
            "creationTimestamp",
            "generation",
            "managedFields",
            "selfLink",
            "deletionTimestamp",
        ] {
            metadata.remove(key);
        }
        let controller_ref = json!({"apiVersion": "apps.kruise.io/v1beta1", "kind": "ResourceDistribution",
            "name": distributor, "uid": uid, "controller": true, "blockOwnerDeletion": true});
        Ok(Template {
            kind: kind.to_string(),
            fields: stored_fields(kind, resource),
            name,
            hash,
            metadata,
            labels,
            annotations,
            finalizers,
            controller_ref,
            uid,
            distributor,
        })
    }

    /// Whether the distribution controls `object` (its controller reference: by UID when both have one,
    /// else by kind and name).
    pub fn controls(&self, object: &Value) -> bool {
        let owners = object
            .get("metadata")
            .and_then(|m| m.get("ownerReferences"))
            .and_then(Value::as_array);
        let Some(controller) = owners
            .into_iter()
            .flatten()
            .find(|o| o.get("controller").and_then(Value::as_bool) == Some(true))
        else {
            return false;
        };
        let text = |k: &str| controller.get(k).and_then(Value::as_str).unwrap_or("");
        if !text("uid").is_empty() && !self.uid.is_empty() {
            return text("uid") == self.uid;
        }
        text("kind") == "ResourceDistribution" && text("name") == self.distributor
    }

    /// Whether a copy this distribution controls already says what the template says: the same fields,
    /// and the template's labels, annotations and finalizers (others may be added by hand and stay).
    pub fn in_sync(&self, copy: &Value) -> bool {
        let Some(object) = copy.as_object() else {
            return false;
        };
        let fields = object
            .iter()
            .filter(|(k, v)| {
                !matches!(k.as_str(), "apiVersion" | "kind" | "metadata" | "status") && !v.is_null()
            })
            .filter(|(_, v)| !v.as_object().is_some_and(Map::is_empty));
        if fields.clone().count() != self.fields.len()
            || fields.into_iter().any(|(k, v)| self.fields.get(k) != Some(v))
        {
            return false;
        }
        let meta = object.get("metadata");
        let has_all = |key: &str, want: &BTreeMap<String, String>| {
            let got = meta.and_then(|m| m.get(key)).and_then(Value::as_object);
            want.iter()
                .all(|(k, v)| got.and_then(|g| g.get(k)).and_then(Value::as_str) == Some(v))
        };
        let finalizers_ok = self.finalizers.is_empty()
            || self
                .finalizers
                .is_subset(&string_set(meta.and_then(|m| m.get("finalizers"))));
        let owned = meta
            .and_then(|m| m.get("ownerReferences"))
            .and_then(Value::as_array)
            .is_some_and(|o| o.contains(&self.controller_ref));
        has_all("labels", &self.labels)
            && has_all("annotations", &self.annotations)
            && finalizers_ok
            && owned
            && self
                .metadata
                .iter()
                .all(|(k, v)| meta.and_then(|m| m.get(k)) == Some(v))
    }

    /// The object to write into `namespace`: the template, merged over `existing` (its labels,
    /// annotations and owner references the template does not set are kept, finalizers united, its
    /// resourceVersion carried as the update's precondition).
    pub fn body(&self, namespace: &str, existing: Option<&Value>) -> Value {
        let old = existing.and_then(|e| e.get("metadata"));
        let mut labels = string_map(old.and_then(|m| m.get("labels")));
        labels.extend(self.labels.clone());
        let mut annotations = string_map(old.and_then(|m| m.get("annotations")));
        annotations.extend(self.annotations.clone());
        let mut finalizers = string_set(old.and_then(|m| m.get("finalizers")));
        finalizers.extend(self.finalizers.iter().cloned());
        let mut owners: Vec<Value> = old
            .and_then(|m| m.get("ownerReferences"))
            .and_then(Value::as_array)
            .cloned()
            .unwrap_or_default();
        match owners
            .iter_mut()
            .find(|o| o.get("uid").and_then(Value::as_str) == Some(self.uid.as_str()))
        {
            Some(o) => *o = self.controller_ref.clone(),
            None => owners.push(self.controller_ref.clone()),
        }
        let mut metadata = self.metadata.clone();
        metadata.insert("name".into(), Value::String(self.name.clone()));
        metadata.insert("namespace".into(), Value::String(namespace.to_string()));
        metadata.insert("labels".into(), json!(labels));
        metadata.insert("annotations".into(), json!(annotations));
        if !finalizers.is_empty() {
            metadata.insert("finalizers".into(), json!(finalizers));
        }
        metadata.insert("ownerReferences".into(), Value::Array(owners));
        if let Some(rv) = old.and_then(|m| m.get("resourceVersion")) {
            metadata.insert("resourceVersion".into(), rv.clone());
        }
        let mut body = self.fields.clone();
        body.insert("apiVersion".into(), Value::String("v1".into()));
        body.insert("kind".into(), Value::String(self.kind.clone()));
        body.insert("metadata".into(), Value::Object(metadata));
        Value::Object(body)
    }
}
