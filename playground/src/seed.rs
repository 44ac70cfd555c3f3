//! Test hook: [`Api::seed`] stores an object as another writer left it in etcd, for states a
//! client cannot create through the API — a `creationTimestamp` in the past, a status present from
//! the start, a chosen uid. Watchers see it ADDED like any other create; no defaulting, admission
//! or validation runs.

use serde_json::{Value, json};

use crate::api::{Api, key};
use crate::error::{ApiError, GroupResource};
use crate::meta;

impl Api {
    /// Stores `object` (its `apiVersion` and `kind` name a served resource) as given, filling only
    /// what every stored object has: `resourceVersion`, and `uid`, `creationTimestamp` (and
    /// `generation: 1` for kinds with one) when missing. Returns the stored object.
    pub fn seed(&self, mut object: Value) -> Result<Value, ApiError> {
        let api_version = object["apiVersion"].as_str().unwrap_or_default();
        let kind = object["kind"].as_str().unwrap_or_default();
        let def = self
            .registry
            .all()
            .into_iter()
            .find(|d| d.api_version() == api_version && d.kind == kind)
            .ok_or_else(|| ApiError::bad_request(format!("no resource serves {api_version} {kind}")))?;
        let name = meta::name(&object).to_string();
        let metadata = meta::metadata_mut(&mut object);
        metadata.entry("uid").or_insert_with(|| json!(meta::uid()));
        metadata
            .entry("creationTimestamp")
            .or_insert_with(|| json!(meta::now()));
        if def.has_generation {
            metadata.entry("generation").or_insert(json!(1));
        }
        let stored = self
            .store
            .create(&key(&def), object)
            .map_err(|_| ApiError::already_exists(&GroupResource::new(&def.group, &def.plural), &name))?;
        self.after_write(&def, &stored);
        Ok(stored)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_object_is_stored_as_given_with_what_every_object_has() {
        let api = Api::new(10, vec![]);
        let pod = json!({"apiVersion": "v1", "kind": "Pod",
            "metadata": {"name": "web", "namespace": "default", "creationTimestamp": "2020-01-01T00:00:00Z"},
            "status": {"phase": "Running"}});
        let stored = api.seed(pod).unwrap();
        assert_eq!(stored["metadata"]["creationTimestamp"], "2020-01-01T00:00:00Z");
        assert_eq!(stored["status"]["phase"], "Running");
        assert_eq!(stored["metadata"]["generation"], 1);
        assert!(!meta::uid_of(&stored).is_empty());
        assert!(!meta::resource_version(&stored).is_empty());
        let again = json!({"apiVersion": "v1", "kind": "Pod",
            "metadata": {"name": "web", "namespace": "default"}});
        assert_eq!(api.seed(again).unwrap_err().code, 409);
        let unknown = json!({"apiVersion": "example.com/v1", "kind": "Thing", "metadata": {"name": "x"}});
        assert_eq!(api.seed(unknown).unwrap_err().code, 400);
    }
}
