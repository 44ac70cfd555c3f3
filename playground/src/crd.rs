//! What a CustomResourceDefinition says about serving its custom resources beyond names: the
//! storage version, the conversion strategy and the OpenAPI v3 schema of each version. Built once
//! per CRD write and shared (`Arc`) by every [`ResourceDef`](crate::resources::ResourceDef) of
//! the CRD, so requests never read the (large) CRD object again.

use serde_json::Value;

/// How objects change version (`spec.conversion`).
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Conversion {
    /// `strategy: None`: only `apiVersion` is rewritten.
    None,
    /// `strategy: Webhook`: the `spec.conversion.webhook` block (`clientConfig`,
    /// `conversionReviewVersions`).
    Webhook(Value),
}

/// The serving facts of one CRD version.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct CrdInfo {
    /// The CRD's name (`<plural>.<group>`).
    pub name: String,
    /// The version objects are stored in (`storage: true`).
    pub storage_version: String,
    /// Every served version.
    pub served_versions: Vec<String>,
    /// How to convert.
    pub conversion: Conversion,
    /// The `schema.openAPIV3Schema` of this version, if any.
    pub schema: Option<Value>,
}

impl CrdInfo {
    /// The facts of `version` of a CRD object.
    pub fn of(crd: &Value, version: &Value) -> CrdInfo {
        let spec = &crd["spec"];
        let versions = spec["versions"].as_array().map(Vec::as_slice).unwrap_or_default();
        let storage_version = versions
            .iter()
            .find(|v| v["storage"] == true)
            .or(versions.first())
            .and_then(|v| v["name"].as_str())
            .unwrap_or_default()
            .to_string();
        let served_versions = versions
            .iter()
            .filter(|v| v["served"].as_bool().unwrap_or(true))
            .filter_map(|v| v["name"].as_str().map(String::from))
            .collect();
        let conversion = match spec["conversion"]["strategy"].as_str() {
            Some("Webhook") => Conversion::Webhook(spec["conversion"]["webhook"].clone()),
            _ => Conversion::None,
        };
        let schema = version["schema"]["openAPIV3Schema"].clone();
        CrdInfo {
            name: crate::meta::name(crd).to_string(),
            storage_version,
            served_versions,
            conversion,
            schema: (!schema.is_null()).then_some(schema),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn storage_version_and_strategy() {
        let crd = json!({"metadata": {"name": "foos.x.io"}, "spec": {
        "conversion": {"strategy": "Webhook", "webhook": {"conversionReviewVersions": ["v1"]}},
        "versions": [
            {"name": "v1alpha1", "served": true, "storage": false, "schema": {"openAPIV3Schema": {"type": "object"}}},
            {"name": "v1beta1", "served": true, "storage": true},
            {"name": "v0", "served": false, "storage": false},
        ]}});
        let info = CrdInfo::of(&crd, &crd["spec"]["versions"][0]);
        assert_eq!(info.name, "foos.x.io");
        assert_eq!(info.storage_version, "v1beta1");
        assert_eq!(info.served_versions, ["v1alpha1", "v1beta1"]);
        assert!(matches!(info.conversion, Conversion::Webhook(_)));
        assert_eq!(info.schema, Some(json!({"type": "object"})));
        assert_eq!(CrdInfo::of(&crd, &crd["spec"]["versions"][1]).schema, None);
    }
}
