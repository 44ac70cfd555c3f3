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

/// Served named groups and their versions, most preferred first.
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
    for versions in groups.values_mut() {
        versions.sort_by_key(|v| version_priority(v));
    }
    groups
}

/// Kubernetes' "kube-aware" version order as a sort key: GA before beta before alpha, higher numbers
/// first (`v2`, `v1`, `v1beta2`, `v1beta1`, `v1alpha1`), then other strings alphabetically. The first
/// is the group's preferred version, as kube-apiserver picks it for custom resources (so kubectl
/// uses `v1beta1` CloneSets, not `v1alpha1`).
fn version_priority(version: &str) -> (u8, std::cmp::Reverse<u64>, std::cmp::Reverse<u64>, String) {
    let parsed = version.strip_prefix('v').and_then(|rest| {
        let digits = rest.find(|c: char| !c.is_ascii_digit()).unwrap_or(rest.len());
        let major: u64 = rest[..digits].parse().ok()?;
        let (stability, minor) = match &rest[digits..] {
            "" => (0, "0"),
            tail => match (tail.strip_prefix("beta"), tail.strip_prefix("alpha")) {
                (Some(n), _) => (1, n),
                (_, Some(n)) => (2, n),
                _ => return None,
            },
        };
        Some((stability, major, minor.parse::<u64>().ok()?))
    });
    match parsed {
        Some((stability, major, minor)) => (
            stability,
            std::cmp::Reverse(major),
            std::cmp::Reverse(minor),
            String::new(),
        ),
        None => (3, std::cmp::Reverse(0), std::cmp::Reverse(0), version.to_string()),
    }
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

#[cfg(test)]
mod tests {
    use super::version_priority;

    #[test]
    fn versions_sort_as_kube_apiserver_prefers_them() {
        let mut versions = vec![
            "v1alpha1",
            "foo",
            "v1beta1",
            "v1",
            "v2beta1",
            "v1beta2",
            "v2",
            "v10alpha1",
        ];
        versions.sort_by_key(|v| version_priority(v));
        assert_eq!(
            versions,
            [
                "v2",
                "v1",
                "v2beta1",
                "v1beta2",
                "v1beta1",
                "v10alpha1",
                "v1alpha1",
                "foo"
            ]
        );
    }
}
