//! kube-controller-manager's taint eviction controller (`pkg/controller/tainteviction`,
//! `NoExecuteTaintManager`): a pod bound to a node with `NoExecute` taints is deleted at once when
//! one of them is not tolerated, else when the shortest `tolerationSeconds` of the tolerations
//! that match has passed since the taint's `timeAdded`; tolerations without seconds keep it forever.
//! Pods get `tolerationSeconds: 300` for the not-ready and unreachable taints at creation
//! ([`crate::kinds`], kube-apiserver's `DefaultTolerationSeconds` admission plugin).
//!
//! kube adds a `DisruptionTarget` condition before deleting; the playground deletes only.

use serde_json::Value;
use time::{Duration, OffsetDateTime};

use crate::api::Api;
use crate::meta;
use crate::scheduler::tolerates;
use crate::store::ResKey;
use crate::workload;

/// When a pod on a node with these taints is to be deleted: `None` while tolerated for ever.
pub fn eviction_time(pod: &Value, taints: &[&Value]) -> Option<OffsetDateTime> {
    let tolerations = pod["spec"]["tolerations"]
        .as_array()
        .map(Vec::as_slice)
        .unwrap_or_default();
    let mut due: Option<OffsetDateTime> = None;
    for taint in taints {
        let matching = tolerations.iter().filter(|t| tolerates(t, taint));
        let mut seconds: Option<Option<i64>> = None;
        for t in matching {
            let s = t["tolerationSeconds"].as_i64();
            seconds = Some(match (seconds, s) {
                (None, s) => s,
                (Some(None), s) | (Some(s), None) => s,
                (Some(Some(a)), Some(b)) => Some(a.min(b)),
            });
        }
        let at = match seconds {
            None => OffsetDateTime::UNIX_EPOCH,
            Some(None) => continue,
            Some(Some(s)) => {
                let added = taint["timeAdded"].as_str().and_then(meta::parse_time);
                added.unwrap_or(OffsetDateTime::UNIX_EPOCH) + Duration::seconds(s.max(0))
            }
        };
        due = Some(due.map_or(at, |d| d.min(at)));
    }
    due
}

/// Deletes the pods whose `NoExecute` taints are no longer tolerated.
pub async fn sync(api: &Api) {
    let (nodes, _) = api.store.list_shared(&ResKey::new("", "nodes"), None);
    let no_execute = |n: &Value| -> Vec<Value> {
        let taints = n["spec"]["taints"].as_array().into_iter().flatten();
        taints.filter(|t| t["effect"] == "NoExecute").cloned().collect()
    };
    let tainted: Vec<(String, Vec<Value>)> = nodes
        .iter()
        .map(|n| (meta::name(n).to_string(), no_execute(n)))
        .filter(|(_, t)| !t.is_empty())
        .collect();
    if tainted.is_empty() {
        return;
    }
    let Some(def) = api.registry.find("", "v1", "pods") else {
        return;
    };
    let (pods, _) = api.store.list_shared(&ResKey::new("", "pods"), None);
    let now = OffsetDateTime::now_utc();
    for pod in pods.iter().filter(|p| !meta::is_deleting(p)) {
        let Some((_, taints)) = tainted
            .iter()
            .find(|(n, _)| pod["spec"]["nodeName"] == n.as_str())
        else {
            continue;
        };
        let taints: Vec<&Value> = taints.iter().collect();
        if eviction_time(pod, &taints).is_some_and(|at| at <= now) {
            workload::delete(api, &def, pod).await;
        }
    }
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    #[test]
    fn the_shortest_matching_toleration_decides() {
        let not_ready = json!({"key": "node.kubernetes.io/not-ready", "effect": "NoExecute",
            "timeAdded": "2026-01-01T00:00:00Z"});
        let dedicated = json!({"key": "dedicated", "value": "x", "effect": "NoExecute"});
        let pod = |tolerations: Value| json!({"spec": {"tolerations": tolerations}});
        let at = |p: &Value, taints: &[&Value]| eviction_time(p, taints).map(|t| t.unix_timestamp());
        let added = 1_767_225_600;
        let defaults = json!([
            {"key": "node.kubernetes.io/not-ready", "operator": "Exists", "effect": "NoExecute", "tolerationSeconds": 300},
            {"key": "node.kubernetes.io/not-ready", "operator": "Exists", "effect": "NoExecute", "tolerationSeconds": 60}]);
        assert_eq!(at(&pod(defaults), &[&not_ready]), Some(added + 60));
        let forever = json!([{"key": "node.kubernetes.io/not-ready", "operator": "Exists"}]);
        assert_eq!(at(&pod(forever.clone()), &[&not_ready]), None);
        // Not tolerated: at once.
        assert_eq!(at(&pod(forever), &[&not_ready, &dedicated]), Some(0));
        assert_eq!(at(&pod(json!([])), &[&dedicated]), Some(0));
        let everything = json!([{"operator": "Exists"}]);
        assert_eq!(at(&pod(everything), &[&not_ready, &dedicated]), None);
    }
}
