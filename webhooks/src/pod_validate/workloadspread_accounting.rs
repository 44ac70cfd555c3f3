//! WorkloadSpread accounting when a pod is deleted or evicted: the pod's subset gets
//! `deletingPods[<pod>] = now` and one more `missingReplicas`, so the webhook may place a replacement
//! there before the controller has noticed. Never denies; a failure to read what it needs is an error.

use std::collections::BTreeMap;

use k8s_openapi::apimachinery::pkg::apis::meta::v1::Time;
use k8s_openapi::jiff::Timestamp;
use kruise_api::PodRecord;
use kruise_api::apps_v1beta1::MATCHED_WORKLOADSPREAD_ANNOTATION;
use kruise_core::{
    StatusChange,
    workload_spread::{self, SubsetEvent, SubsetRecord},
};
use serde_json::Value;

use crate::{StatusWrite, WriteTarget, owner, view::ClusterView};
use kruise_core::pod_state::{annotation, is_active};

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

fn controller_kind(pod: &PodRecord) -> Option<&str> {
    pod.metadata
        .owner_references
        .iter()
        .flatten()
        .find(|r| r.controller == Some(true))
        .map(|r| r.kind.as_str())
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
    let namespace = kruise_core::pod_state::namespace_or(pod, namespace);
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
    let version = workload_spread::pod_version(controller_kind(pod), &pod.metadata.labels).to_string();
    let recorded = ws
        .status
        .as_ref()
        .and_then(|s| s.versioned_subset_statuses.as_ref())
        .and_then(|v| v.get(&version))
        .filter(|list| !list.is_empty());
    let initial = match recorded {
        Some(_) => None,
        None => {
            let replicas = owner::workload_replicas(view, &ws, namespace).map_err(|e| e.to_string())?;
            Some(workload_spread::initial_subset_statuses(&ws, replicas))
        }
    };
    let statuses = recorded.or(initial.as_ref()).map_or(&[][..], Vec::as_slice);
    let pod_name = pod.metadata.name.clone().unwrap_or_default();
    if statuses
        .iter()
        .any(|s| has_key(&s.creating_pods, &pod_name) || has_key(&s.deleting_pods, &pod_name))
    {
        return Ok(None);
    }
    let Some(subset) = statuses.iter().find(|s| s.name == subset_name) else {
        return Ok(None);
    };
    if subset.missing_replicas == -1 {
        return Ok(None);
    }
    Ok(Some(StatusWrite {
        target: WriteTarget {
            api_version: "apps.kruise.io/v1beta1".into(),
            kind: "WorkloadSpread".into(),
            plural: "workloadspreads".into(),
            namespace: namespace.to_string(),
            name: ws_name,
        },
        resource_version: Some(ws.metadata.resource_version.clone().unwrap_or_default()),
        change: StatusChange::RecordInSubset(Box::new(SubsetRecord {
            version,
            initial,
            subset: subset_name,
            pod: pod_name,
            event: SubsetEvent::Deleting,
            at: Time(Timestamp::from_second(now.as_second()).unwrap_or(now)),
        })),
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
}
