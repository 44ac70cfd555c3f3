//! Where `explain` and `inject` read the cluster's state from: the API server (listed with kube and
//! fed to the same `MemoryView` as files are), or files (`--objects`).

use std::path::{Path, PathBuf};

use kube::{
    Api,
    api::{ApiResource, DynamicObject, ListParams},
};
use serde_json::Value;

use crate::{Error, client::Session};

/// `(group, version, kind, plural, namespaced)` of what the webhooks read.
const KINDS: &[(&str, &str, &str, &str, bool)] = &[
    ("", "v1", "Namespace", "namespaces", false),
    ("", "v1", "Node", "nodes", false),
    ("", "v1", "Pod", "pods", true),
    ("apps", "v1", "ControllerRevision", "controllerrevisions", true),
    ("apps", "v1", "Deployment", "deployments", true),
    ("apps", "v1", "ReplicaSet", "replicasets", true),
    ("apps", "v1", "StatefulSet", "statefulsets", true),
    ("batch", "v1", "Job", "jobs", true),
    ("apps.kruise.io", "v1beta1", "SidecarSet", "sidecarsets", false),
    (
        "policy.kruise.io",
        "v1beta1",
        "PodUnavailableBudget",
        "podunavailablebudgets",
        true,
    ),
    (
        "apps.kruise.io",
        "v1beta1",
        "WorkloadSpread",
        "workloadspreads",
        true,
    ),
    ("apps.kruise.io", "v1beta1", "CloneSet", "clonesets", true),
    ("apps.kruise.io", "v1beta1", "StatefulSet", "statefulsets", true),
];

/// The objects of the cluster the webhooks may read for a pod of `namespace`: cluster-scoped kinds,
/// that namespace's objects, and SidecarSet revisions in `kruise-system`. A kind the server does not
/// serve is skipped (404).
pub async fn cluster_objects(session: &Session, namespace: &str) -> Result<Vec<Value>, Error> {
    let mut out = Vec::new();
    for (group, version, kind, plural, namespaced) in KINDS {
        let api_version = if group.is_empty() {
            version.to_string()
        } else {
            format!("{group}/{version}")
        };
        let resource = ApiResource {
            group: group.to_string(),
            version: version.to_string(),
            api_version: api_version.clone(),
            kind: kind.to_string(),
            plural: plural.to_string(),
        };
        let mut namespaces = vec![namespace.to_string()];
        if *kind == "ControllerRevision" && namespace != "kruise-system" {
            namespaces.push("kruise-system".to_string());
        }
        let apis: Vec<Api<DynamicObject>> = if *namespaced {
            namespaces
                .iter()
                .map(|n| Api::namespaced_with(session.client.clone(), n, &resource))
                .collect()
        } else {
            vec![Api::all_with(session.client.clone(), &resource)]
        };
        for api in apis {
            let list = match api.list(&ListParams::default()).await {
                Ok(list) => list,
                Err(kube::Error::Api(s)) if s.code == 404 => continue,
                Err(e) => return Err(e.into()),
            };
            for item in list.items {
                let mut value = serde_json::to_value(item)?;
                if let Some(map) = value.as_object_mut() {
                    map.insert("apiVersion".into(), Value::String(api_version.clone()));
                    map.insert("kind".into(), Value::String(kind.to_string()));
                }
                out.push(value);
            }
        }
    }
    Ok(out)
}

/// Objects from files or directories (`--objects`), as `kruise admit --objects` reads them.
pub fn file_objects(paths: &[PathBuf]) -> Result<Vec<Value>, Error> {
    kruise_rs::objects::load_paths(paths).map_err(|e| Error::Failed(format!("{e:#}")))
}

/// The one Pod of a manifest (its namespace defaulted to `namespace`).
pub fn read_pod_manifest(path: &Path, namespace: &str) -> Result<Value, Error> {
    let objects = file_objects(&[path.to_path_buf()])?;
    let mut pods = objects
        .into_iter()
        .filter(|o| o.get("kind").and_then(Value::as_str) == Some("Pod"));
    let mut pod = pods
        .next()
        .ok_or_else(|| Error::Usage(format!("{} holds no Pod", path.display())))?;
    if pods.next().is_some() {
        return Err(Error::Usage(format!(
            "{} holds more than one Pod; explain takes one",
            path.display()
        )));
    }
    if let Some(meta) = pod.get_mut("metadata").and_then(Value::as_object_mut)
        && meta
            .get("namespace")
            .and_then(Value::as_str)
            .is_none_or(str::is_empty)
    {
        meta.insert("namespace".into(), Value::String(namespace.to_string()));
    }
    Ok(pod)
}
