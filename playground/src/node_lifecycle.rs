//! The taints kube-controller-manager's node lifecycle controller keeps on nodes
//! (`pkg/controller/nodelifecycle` in k8s.io/kubernetes, `doNoScheduleTaintingPass` and
//! `doNoExecuteTaintingPass`):
//!
//! - `spec.unschedulable` (`kubectl cordon`) → `node.kubernetes.io/unschedulable:NoSchedule`;
//! - `Ready` condition `False` → `node.kubernetes.io/not-ready`, `NoSchedule` and `NoExecute`;
//! - `Ready` condition `Unknown` (or missing) → `node.kubernetes.io/unreachable`, both effects.
//!
//! Other taints are kept. Pods on a node with a `NoExecute` taint are evicted by
//! [`crate::taint_eviction`].

use serde_json::{Value, json};

use crate::api::{Api, UpdateMode};
use crate::meta;
use crate::scheduler::UNSCHEDULABLE_TAINT;
use crate::store::ResKey;

/// `corev1.TaintNodeNotReady`.
pub const NOT_READY_TAINT: &str = "node.kubernetes.io/not-ready";
/// `corev1.TaintNodeUnreachable`.
pub const UNREACHABLE_TAINT: &str = "node.kubernetes.io/unreachable";

const MANAGED: [&str; 3] = [UNSCHEDULABLE_TAINT, NOT_READY_TAINT, UNREACHABLE_TAINT];

/// The taints `node` should carry: its own, and those its state calls for.
pub fn taints(node: &Value, now: &str) -> Vec<Value> {
    let current: Vec<Value> = node["spec"]["taints"].as_array().cloned().unwrap_or_default();
    let mut want: Vec<(&str, &str)> = vec![];
    if node["spec"]["unschedulable"] == true {
        want.push((UNSCHEDULABLE_TAINT, "NoSchedule"));
    }
    let ready = node["status"]["conditions"]
        .as_array()
        .into_iter()
        .flatten()
        .find(|c| c["type"] == "Ready")
        .and_then(|c| c["status"].as_str());
    match ready {
        Some("True") => {}
        Some("False") => want.extend([(NOT_READY_TAINT, "NoSchedule"), (NOT_READY_TAINT, "NoExecute")]),
        _ => want.extend([
            (UNREACHABLE_TAINT, "NoSchedule"),
            (UNREACHABLE_TAINT, "NoExecute"),
        ]),
    }
    let managed = |t: &Value| MANAGED.iter().any(|k| t["key"] == *k);
    let wanted = |t: &Value| want.iter().any(|(k, e)| t["key"] == *k && t["effect"] == *e);
    let mut out: Vec<Value> = current.into_iter().filter(|t| !managed(t) || wanted(t)).collect();
    for (key, effect) in want {
        if !out.iter().any(|t| t["key"] == key && t["effect"] == effect) {
            let mut taint = json!({"key": key, "effect": effect});
            if effect == "NoExecute" {
                taint["timeAdded"] = json!(now);
            }
            out.push(taint);
        }
    }
    out
}

/// Brings every node's taints in line with its state.
pub async fn sync(api: &Api) {
    let Some(def) = api.registry.find("", "v1", "nodes") else {
        return;
    };
    let (nodes, _) = api.store.list_shared(&ResKey::new("", "nodes"), None);
    let now = meta::now();
    for node in nodes.iter().filter(|n| !meta::is_deleting(n)) {
        // A node whose status was not reported yet is being registered, not unreachable.
        if !node["status"]["conditions"].is_array() {
            continue;
        }
        let want = taints(node, &now);
        let have = node["spec"]["taints"].as_array().cloned().unwrap_or_default();
        if want == have {
            continue;
        }
        let mut next = Value::clone(node);
        next["spec"]["taints"] = json!(want);
        if want.is_empty()
            && let Some(spec) = next["spec"].as_object_mut()
        {
            spec.remove("taints");
        }
        let _ = api
            .update(&def, "", meta::name(node), next, UpdateMode::Main, false)
            .await;
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn node(unschedulable: bool, ready: &str) -> Value {
        json!({"spec": {"unschedulable": unschedulable,
                        "taints": [{"key": "dedicated", "value": "x", "effect": "NoSchedule"}]},
               "status": {"conditions": [{"type": "Ready", "status": ready}]}})
    }

    #[test]
    fn cordon_and_readiness_taints() {
        let keys = |n: &Value| -> Vec<String> {
            taints(n, "t")
                .iter()
                .map(|t| format!("{}:{}", t["key"].as_str().unwrap(), t["effect"].as_str().unwrap()))
                .collect()
        };
        assert_eq!(keys(&node(false, "True")), ["dedicated:NoSchedule"]);
        assert_eq!(
            keys(&node(true, "True")),
            [
                "dedicated:NoSchedule",
                "node.kubernetes.io/unschedulable:NoSchedule"
            ]
        );
        assert_eq!(
            keys(&node(false, "False")),
            [
                "dedicated:NoSchedule",
                "node.kubernetes.io/not-ready:NoSchedule",
                "node.kubernetes.io/not-ready:NoExecute"
            ]
        );
        assert_eq!(
            keys(&node(false, "Unknown"))[1],
            "node.kubernetes.io/unreachable:NoSchedule"
        );
        // Uncordoned and Ready again: the managed taints go, the others stay.
        let mut n = node(true, "False");
        n["spec"]["taints"] = json!(taints(&n, "t"));
        n["spec"]["unschedulable"] = json!(false);
        n["status"]["conditions"][0]["status"] = json!("True");
        assert_eq!(keys(&n), ["dedicated:NoSchedule"]);
    }
}
