//! WorkloadSpread accounting when a pod is deleted or evicted: the pod's subset gets
//! `deletingPods[<pod>] = now` and one more `missingReplicas`, so the webhook may place a replacement
//! there before the controller has noticed. Never denies; a failure to read what it needs is an error.

use std::collections::BTreeMap;

use k8s_openapi::apimachinery::pkg::apis::meta::v1::Time;
use k8s_openapi::jiff::Timestamp;
use kruise_api::PodRecord;
use kruise_api::apps_v1beta1::{
    MATCHED_WORKLOADSPREAD_ANNOTATION, WorkloadSpread, WorkloadSpreadSubsetStatus,
};
use kruise_core::{
    intstr::{self, Round},
    names,
};
use serde_json::Value;

use crate::{StatusWrite, WriteTarget, view::ClusterView};
use kruise_core::pod_state::annotation;

/// The version key of pods whose workload does not use versioned subset statuses.
pub const VERSION_IGNORED: &str = "versionIgnored";

/// Owner kinds (lower-case) whose pods are counted per version: OpenKruise's default
/// `--ws-enabled-versioned-status=deployment,replicaset`.
const VERSIONED_KINDS: [&str; 2] = ["deployment", "replicaset"];

/// The subset recorded in `apps.kruise.io/matched-workloadspread`, decoded like Go's `encoding/json`
/// (keys match case-insensitively; `null` or anything undecodable means "not matched").
fn matched(pod: &PodRecord) -> Option<(String, String)> {
    let raw = annotation(&pod.metadata, MATCHED_WORKLOADSPREAD_ANNOTATION).filter(|s| !s.is_empty())?;
    let Value::Object(map) = serde_json::from_str::<Value>(raw).ok()? else {
        return None;
    };
    let mut name = String::new();
    let mut subset = String::new();
    let field = |wanted: &str| {
        map.get(wanted).or_else(|| {
            map.iter()
                .find(|(k, _)| k.eq_ignore_ascii_case(wanted))
                .map(|(_, v)| v)
        })
    };
    for (key, slot) in [
        ("name", &mut name),
        ("subset", &mut subset),
        ("uid", &mut String::new()),
    ] {
        match field(key) {
            None | Some(Value::Null) => {}
            Some(Value::String(s)) => *slot = s.clone(),
            Some(_) => return None,
        }
    }
    Some((name, subset))
}

fn is_active(pod: &PodRecord) -> bool {
    let phase = pod.status.as_ref().and_then(|s| s.phase.as_deref());
    !matches!(phase, Some("Succeeded" | "Failed")) && pod.metadata.deletion_timestamp.is_none()
}

fn controller_kind(pod: &PodRecord) -> Option<&str> {
    pod.metadata
        .owner_references
        .iter()
        .flatten()
        .find(|r| r.controller == Some(true))
        .map(|r| r.kind.as_str())
}

/// The pod's version key in `status.versionedSubsetStatuses`.
pub fn pod_version(pod: &PodRecord) -> String {
    let versioned =
        controller_kind(pod).is_some_and(|k| VERSIONED_KINDS.contains(&k.to_lowercase().as_str()));
    if !versioned {
        return VERSION_IGNORED.into();
    }
    let labels = pod.metadata.labels.as_ref();
    if let Some(v) = labels.and_then(|l| l.get(names::POD_TEMPLATE_HASH_LABEL)) {
        return v.clone();
    }
    if let Some(v) = labels.and_then(|l| l.get(names::CONTROLLER_REVISION_HASH_LABEL)) {
        return v.rsplit('-').next().unwrap_or_default().to_string();
    }
    VERSION_IGNORED.into()
}

/// The integer at a dot path (array indexes allowed), as OpenKruise's `NestedField[int64]`: a missing
/// key gives 0; anything else that is not an integer is an error.
fn replicas_at(object: &Value, path: &str) -> Result<i32, String> {
    if path.is_empty() {
        return Ok(0);
    }
    let mut current = object;
    for token in path.split('.') {
        current = match current {
            Value::Object(map) => match map.get(token) {
                Some(v) => v,
                None => return Ok(0),
            },
            Value::Array(items) => {
                let i: usize = token.parse().map_err(|e| format!("{path}: {e}"))?;
                items.get(i).ok_or_else(|| format!("index {i} out of range"))?
            }
            _ => return Err("object is not deep enough".into()),
        };
    }
    current
        .as_i64()
        .map(|v| v as i32)
        .ok_or_else(|| "object type error".to_string())
}

/// The replica count percent `maxReplicas` are scaled against (only looked up when a subset uses a
/// percentage). OpenKruise recognises the typed kinds by their exact `targetRef.apiVersion`; anything
/// else is a custom workload, which counts 0 here (the custom-workload whitelist ConfigMap is not read).
fn workload_replicas(ws: &WorkloadSpread, namespace: &str, view: &impl ClusterView) -> Result<i32, String> {
    let Some(target) = &ws.spec.target_reference else {
        return Ok(0);
    };
    if !ws
        .spec
        .subsets
        .iter()
        .any(|s| s.max_replicas.as_ref().is_some_and(intstr::is_percent))
    {
        return Ok(0);
    }
    let name = target.name.as_str();
    fn to_value<T: serde::Serialize>(object: &T) -> Value {
        serde_json::to_value(object).unwrap_or_default()
    }
    let object: Option<(Value, i32)> = match (target.api_version.as_str(), target.kind.as_str()) {
        ("apps/v1", "Deployment") => view.deployment(namespace, name).map(|d| {
            let r = d.spec.replicas.unwrap_or(1);
            (to_value(&*d), r)
        }),
        ("apps/v1", "ReplicaSet") => view.replica_set(namespace, name).map(|d| {
            let r = d.spec.replicas.unwrap_or(1);
            (to_value(&*d), r)
        }),
        ("apps/v1", "StatefulSet") => view.stateful_set(namespace, name).map(|d| {
            let r = d.spec.replicas.unwrap_or(1);
            (to_value(&*d), r)
        }),
        ("batch/v1", "Job") => view.job(namespace, name).map(|d| {
            let r = d.spec.as_ref().and_then(|s| s.parallelism).unwrap_or(1);
            (to_value(&*d), r)
        }),
        ("apps.kruise.io/v1alpha1", "CloneSet") => view
            .clone_set(namespace, name)
            .map(|d| (to_value(&*d), d.spec.replicas.unwrap_or(1))),
        ("apps.kruise.io/v1alpha1" | "apps.kruise.io/v1beta1", "StatefulSet") => view
            .object("apps.kruise.io", "StatefulSet", namespace, name)
            .map(|o| {
                let r = o.pointer("/spec/replicas").and_then(Value::as_i64).unwrap_or(1) as i32;
                ((*o).clone(), r)
            }),
        (api_version, kind) => {
            let group = api_version.rsplit_once('/').map_or("", |(g, _)| g);
            view.object(group, kind, namespace, name)
                .map(|o| ((*o).clone(), 0))
        }
    };
    let Some((object, replicas)) = object else {
        return Ok(0);
    };
    let paths = ws
        .spec
        .target_filter
        .as_ref()
        .and_then(|f| f.replicas_path_list.as_deref())
        .unwrap_or_default();
    if paths.is_empty() {
        return Ok(replicas);
    }
    paths
        .iter()
        .try_fold(0i32, |sum, p| Ok(sum.wrapping_add(replicas_at(&object, p)?)))
}

fn has_key(m: &Option<BTreeMap<String, Time>>, key: &str) -> bool {
    m.as_ref().is_some_and(|m| m.contains_key(key))
}

/// The WorkloadSpread status write for deleting or evicting `pod`, if any. `namespace` is the request's
/// (used when the pod has none).
pub fn account(
    pod: &PodRecord,
    namespace: &str,
    view: &impl ClusterView,
    now: Timestamp,
) -> Result<Option<StatusWrite>, String> {
    let Some((ws_name, subset_name)) = matched(pod) else {
        return Ok(None);
    };
    if !is_active(pod) || controller_kind(pod).is_none() {
        return Ok(None);
    }
    let namespace = pod
        .metadata
        .namespace
        .as_deref()
        .filter(|n| !n.is_empty())
        .unwrap_or(namespace);
    let Some(ws) = view
        .workload_spreads(namespace)
        .into_iter()
        .find(|w| w.metadata.name.as_deref() == Some(ws_name.as_str()))
    else {
        return Ok(None);
    };
    let subsets = &ws.spec.subsets;
    if subsets.len() == 1 && subsets[0].max_replicas.is_none() {
        return Ok(None);
    }
    match ws.spec.target_reference.as_ref().map(|t| t.kind.as_str()) {
        None | Some("StatefulSet") => return Ok(None),
        Some(_) => {}
    }
    let version = pod_version(pod);
    let mut status = ws.status.clone().unwrap_or_default();
    let mut statuses = status
        .versioned_subset_statuses
        .as_ref()
        .and_then(|v| v.get(&version))
        .cloned()
        .unwrap_or_default();
    if statuses.is_empty() {
        let replicas = workload_replicas(&ws, namespace, view)?;
        statuses = subsets
            .iter()
            .map(|s| WorkloadSpreadSubsetStatus {
                name: s.name.clone(),
                // OpenKruise ignores the error (the value counts 0) and narrows to int32.
                missing_replicas: s.max_replicas.as_ref().map_or(-1, |m| {
                    intstr::scaled(m, i64::from(replicas), Round::Up).unwrap_or(0) as i32
                }),
                ..Default::default()
            })
            .collect();
    }
    let pod_name = pod.metadata.name.clone().unwrap_or_default();
    if statuses
        .iter()
        .any(|s| has_key(&s.creating_pods, &pod_name) || has_key(&s.deleting_pods, &pod_name))
    {
        return Ok(None);
    }
    let Some(subset) = statuses.iter_mut().find(|s| s.name == subset_name) else {
        return Ok(None);
    };
    if subset.missing_replicas == -1 {
        return Ok(None);
    }
    let stamp = Time(Timestamp::from_second(now.as_second()).unwrap_or(now));
    subset
        .deleting_pods
        .get_or_insert_with(BTreeMap::new)
        .insert(pod_name, stamp);
    if subset.missing_replicas >= 0 {
        subset.missing_replicas += 1;
    }
    status
        .versioned_subset_statuses
        .get_or_insert_with(BTreeMap::new)
        .insert(version, statuses);
    let status = serde_json::to_value(&status).map_err(|e| e.to_string())?;
    Ok(Some(StatusWrite {
        target: WriteTarget {
            api_version: "apps.kruise.io/v1beta1".into(),
            kind: "WorkloadSpread".into(),
            plural: "workloadspreads".into(),
            namespace: namespace.to_string(),
            name: ws_name,
        },
        resource_version: Some(ws.metadata.resource_version.clone().unwrap_or_default()),
        status,
    }))
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn pod(annotation: &str) -> PodRecord {
        serde_json::from_value(json!({"metadata": {"name": "p", "annotations": {
            "apps.kruise.io/matched-workloadspread": annotation}}}))
        .unwrap()
    }

    #[test]
    fn the_annotation_decodes_like_go() {
        assert_eq!(
            matched(&pod(r#"{"name":"ws","subset":"a"}"#)),
            Some(("ws".into(), "a".into()))
        );
        assert_eq!(
            matched(&pod(r#"{"Name":"ws","SUBSET":"a"}"#)),
            Some(("ws".into(), "a".into()))
        );
        assert_eq!(matched(&pod("null")), None);
        assert_eq!(matched(&pod("{bad")), None);
        assert_eq!(matched(&pod(r#"{"name":5}"#)), None);
    }

    #[test]
    fn replica_paths() {
        let o = json!({"spec": {"a": {"replicas": 3}, "list": [{"r": 2}], "s": "x"}});
        assert_eq!(replicas_at(&o, "spec.a.replicas"), Ok(3));
        assert_eq!(replicas_at(&o, "spec.list.0.r"), Ok(2));
        assert_eq!(replicas_at(&o, "spec.missing"), Ok(0));
        assert!(replicas_at(&o, "spec.s").is_err());
        assert!(replicas_at(&o, "spec.list.4.r").is_err());
    }

    #[test]
    fn versions() {
        let p = |owner: &str, labels: serde_json::Value| -> PodRecord {
            serde_json::from_value(
                json!({"metadata": {"name": "p", "labels": labels, "ownerReferences": [
                {"apiVersion": "apps/v1", "kind": owner, "name": "o", "uid": "u", "controller": true}]}}),
            )
            .unwrap()
        };
        assert_eq!(
            pod_version(&p("ReplicaSet", json!({"pod-template-hash": "abc"}))),
            "abc"
        );
        assert_eq!(
            pod_version(&p(
                "ReplicaSet",
                json!({"controller-revision-hash": "web-5474f59575"})
            )),
            "5474f59575"
        );
        assert_eq!(
            pod_version(&p("CloneSet", json!({"pod-template-hash": "abc"}))),
            VERSION_IGNORED
        );
    }
}
