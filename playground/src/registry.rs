//! The set of served resources: the built-ins plus one entry per served version of every stored
//! CustomResourceDefinition.

use std::sync::RwLock;

use serde_json::Value;

use crate::resources::{PrinterColumn, ResourceDef, ScalePaths, Subresource, builtins};

/// Served resources; CRDs are added and removed as their objects are written.
#[derive(Debug)]
pub struct Registry {
    builtins: Vec<ResourceDef>,
    custom: RwLock<Vec<ResourceDef>>,
}

impl Default for Registry {
    fn default() -> Self {
        Registry {
            builtins: builtins(),
            custom: RwLock::default(),
        }
    }
}

impl Registry {
    /// Every served resource, built-ins first.
    pub fn all(&self) -> Vec<ResourceDef> {
        let mut out = self.builtins.clone();
        out.extend(
            self.custom
                .read()
                .unwrap_or_else(|e| e.into_inner())
                .iter()
                .cloned(),
        );
        out
    }

    /// The resource served at `group/version/plural`.
    pub fn find(&self, group: &str, version: &str, plural: &str) -> Option<ResourceDef> {
        self.all()
            .into_iter()
            .find(|d| d.group == group && d.version == version && d.plural == plural)
    }

    /// Whether anything is served in the group version.
    pub fn serves(&self, group: &str, version: &str) -> bool {
        self.all()
            .iter()
            .any(|d| d.group == group && d.version == version)
    }

    /// Replaces the definitions derived from one CRD (by its name) with `defs`.
    pub fn set_crd(&self, crd_name: &str, defs: Vec<ResourceDef>) {
        let mut custom = self.custom.write().unwrap_or_else(|e| e.into_inner());
        custom.retain(|d| format!("{}.{}", d.plural, d.group) != crd_name);
        custom.extend(defs);
    }
}

fn strings(v: &Value) -> Vec<String> {
    v.as_array()
        .map(|a| a.iter().filter_map(|s| s.as_str().map(String::from)).collect())
        .unwrap_or_default()
}

/// The resources a CRD object serves: one per version with `served: true`. A CRD being deleted
/// serves nothing.
pub fn crd_resources(crd: &Value) -> Vec<ResourceDef> {
    let spec = &crd["spec"];
    let names = &spec["names"];
    let Some(plural) = names["plural"].as_str() else {
        return vec![];
    };
    let kind = names["kind"].as_str().unwrap_or_default().to_string();
    let group = spec["group"].as_str().unwrap_or_default().to_string();
    let versions = spec["versions"].as_array().cloned().unwrap_or_default();
    versions
        .iter()
        .filter(|v| v["served"].as_bool().unwrap_or(true))
        .filter_map(|v| {
            let version = v["name"].as_str()?.to_string();
            let subs = &v["subresources"];
            let mut subresources = vec![];
            if subs.get("status").is_some() {
                subresources.push(Subresource::Status);
            }
            let scale = subs.get("scale").map(|s| ScalePaths {
                spec_replicas: s["specReplicasPath"].as_str().unwrap_or(".spec.replicas").into(),
                status_replicas: s["statusReplicasPath"]
                    .as_str()
                    .unwrap_or(".status.replicas")
                    .into(),
                label_selector: s["labelSelectorPath"].as_str().map(String::from),
            });
            if scale.is_some() {
                subresources.push(Subresource::Scale);
            }
            let printer_columns = v["additionalPrinterColumns"]
                .as_array()
                .map(|cols| {
                    cols.iter()
                        .map(|c| PrinterColumn {
                            name: c["name"].as_str().unwrap_or_default().into(),
                            type_: c["type"].as_str().unwrap_or("string").into(),
                            json_path: c["jsonPath"].as_str().unwrap_or_default().into(),
                            priority: c["priority"].as_i64().unwrap_or(0),
                        })
                        .collect()
                })
                .unwrap_or_else(|| {
                    vec![PrinterColumn {
                        name: "Age".into(),
                        type_: "date".into(),
                        json_path: ".metadata.creationTimestamp".into(),
                        priority: 0,
                    }]
                });
            Some(ResourceDef {
                group: group.clone(),
                version,
                plural: plural.to_string(),
                singular: names["singular"]
                    .as_str()
                    .map(String::from)
                    .unwrap_or_else(|| kind.to_lowercase()),
                kind: kind.clone(),
                namespaced: spec["scope"].as_str() != Some("Cluster"),
                short_names: strings(&names["shortNames"]),
                categories: strings(&names["categories"]),
                subresources,
                scale,
                builtin: false,
                has_generation: true,
                return_deleted_object: false,
                printer_columns,
                crd: Some(std::sync::Arc::new(crate::crd::CrdInfo::of(crd, v))),
            })
        })
        .collect()
}

/// The status a CRD gets once the server serves it (`Established`, `NamesAccepted`).
pub fn crd_status(crd: &Value, now: &str) -> Value {
    let spec = &crd["spec"];
    let condition = |t: &str, reason: &str, message: &str| {
        serde_json::json!({"type": t, "status": "True", "lastTransitionTime": now,
            "reason": reason, "message": message})
    };
    let stored: Vec<Value> = spec["versions"]
        .as_array()
        .map(|vs| {
            vs.iter()
                .filter(|v| v["storage"] == true)
                .map(|v| v["name"].clone())
                .collect()
        })
        .unwrap_or_default();
    serde_json::json!({
        "acceptedNames": spec["names"],
        "conditions": [
            condition("NamesAccepted", "NoConflicts", "no conflicts found"),
            condition("Established", "InitialNamesAccepted", "the initial names have been accepted"),
        ],
        "storedVersions": stored,
    })
}
