//! Registered kinds kruise-rs has no typed struct for yet: typed metadata, everything else kept as the
//! API server sent it. They get what every registered kind gets (storage, a watch, loading from files,
//! readiness) and are read as JSON.

use k8s_openapi::apimachinery::pkg::apis::meta::v1::ObjectMeta;
use serde::{Deserialize, Serialize};
use serde_json::{Map, Value};

/// OpenKruise's Advanced StatefulSet (`apps.kruise.io/v1beta1` `statefulsets`; `v1alpha1` has the same
/// shape), a WorkloadSpread and PodUnavailableBudget target. Its CRD is OpenKruise's, so it is optional.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct AdvancedStatefulSet {
    #[serde(default)]
    pub metadata: ObjectMeta,
    /// Every other field (`apiVersion`, `kind`, `spec`, `status`), raw.
    #[serde(flatten)]
    pub rest: Map<String, Value>,
}

impl AdvancedStatefulSet {
    /// `spec.replicas`, `None` when unset or not an integer.
    pub fn replicas(&self) -> Option<i64> {
        self.rest.get("spec")?.get("replicas")?.as_i64()
    }

    /// The object as JSON.
    pub fn to_json(&self) -> Value {
        serde_json::to_value(self).unwrap_or(Value::Null)
    }
}

impl k8s_openapi::Resource for AdvancedStatefulSet {
    const API_VERSION: &'static str = "apps.kruise.io/v1beta1";
    const GROUP: &'static str = "apps.kruise.io";
    const KIND: &'static str = "StatefulSet";
    const VERSION: &'static str = "v1beta1";
    const URL_PATH_SEGMENT: &'static str = "statefulsets";
    type Scope = k8s_openapi::NamespaceResourceScope;
}

impl k8s_openapi::Metadata for AdvancedStatefulSet {
    type Ty = ObjectMeta;

    fn metadata(&self) -> &ObjectMeta {
        &self.metadata
    }

    fn metadata_mut(&mut self) -> &mut ObjectMeta {
        &mut self.metadata
    }
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    #[test]
    fn an_advanced_stateful_set_round_trips_and_reads_its_replicas() {
        let object = json!({"apiVersion": "apps.kruise.io/v1beta1", "kind": "StatefulSet",
            "metadata": {"name": "web", "namespace": "shop"},
            "spec": {"replicas": 3, "selector": {"matchLabels": {"app": "web"}}}});
        let set: AdvancedStatefulSet = serde_json::from_value(object.clone()).unwrap();
        assert_eq!(set.metadata.name.as_deref(), Some("web"));
        assert_eq!(set.replicas(), Some(3));
        assert_eq!(set.to_json(), object);
    }
}
