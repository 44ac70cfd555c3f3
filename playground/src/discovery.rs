//! Discovery: `/version`, `/api`, `/apis`, `/apis/<group>`, `/api/v1`, `/apis/<group>/<version>`.
//!
//! Aggregated discovery (`Accept: ...;as=APIGroupDiscoveryList`) is not implemented: the plain
//! types are answered with `Content-Type: application/json`, which is kube-apiserver's fallback and
//! what kubectl and kube-rs accept.

use std::collections::BTreeMap;

use serde_json::{Value, json};

use crate::api::Api;
use crate::error::ApiError;

/// The `version.Info` of the simulated server.
pub fn version() -> Value {
    json!({
        "major": "1", "minor": "32", "gitVersion": "v1.32.0-kruise-playground",
        "gitCommit": "0000000000000000000000000000000000000000", "gitTreeState": "clean",
        "buildDate": "2025-01-01T00:00:00Z", "goVersion": "go1.23.0", "compiler": "gc",
        "platform": "linux/amd64",
    })
}

/// `/api`: the core group's versions.
pub fn api_versions() -> Value {
    json!({
        "kind": "APIVersions", "versions": ["v1"],
        "serverAddressByClientCIDRs": [{"clientCIDR": "0.0.0.0/0", "serverAddress": "127.0.0.1:6443"}],
    })
}

/// Served named groups and their versions, in registration order.
fn named_groups(api: &Api) -> BTreeMap<String, Vec<String>> {
    let mut groups: BTreeMap<String, Vec<String>> = BTreeMap::new();
    for d in api.registry.all() {
        if d.group.is_empty() {
            continue;
        }
        let versions = groups.entry(d.group.clone()).or_default();
        if !versions.contains(&d.version) {
            versions.push(d.version.clone());
        }
    }
    groups
}

fn group_json(name: &str, versions: &[String]) -> Value {
    let vs: Vec<Value> = versions
        .iter()
        .map(|v| json!({"groupVersion": format!("{name}/{v}"), "version": v}))
        .collect();
    json!({"name": name, "versions": vs, "preferredVersion": vs.first().cloned().unwrap_or_default()})
}

/// `/apis`: an `APIGroupList`.
pub fn groups(api: &Api) -> Value {
    let list: Vec<Value> = named_groups(api)
        .iter()
        .map(|(g, vs)| group_json(g, vs))
        .collect();
    json!({"kind": "APIGroupList", "apiVersion": "v1", "groups": list})
}

/// `/apis/<group>`: an `APIGroup`.
pub fn group(api: &Api, name: &str) -> Result<Value, ApiError> {
    let groups = named_groups(api);
    let versions = groups.get(name).ok_or_else(ApiError::path_not_found)?;
    let mut g = group_json(name, versions);
    g["kind"] = json!("APIGroup");
    g["apiVersion"] = json!("v1");
    Ok(g)
}

/// `/api/v1` or `/apis/<group>/<version>`: an `APIResourceList`.
pub fn resources(api: &Api, group: &str, version: &str) -> Result<Value, ApiError> {
    if !api.registry.serves(group, version) {
        return Err(ApiError::path_not_found());
    }
    let resources: Vec<Value> = api
        .registry
        .all()
        .iter()
        .filter(|d| d.group == group && d.version == version)
        .flat_map(|d| d.discovery())
        .collect();
    let gv = if group.is_empty() {
        version.to_string()
    } else {
        format!("{group}/{version}")
    };
    Ok(json!({"kind": "APIResourceList", "apiVersion": "v1", "groupVersion": gv, "resources": resources}))
}
