//! Simulated nodes and the scheduler: `nodes` Ready Node objects spread over three zones, and
//! pending pods bound to the node with the fewest pods among those passing the filters of
//! kube-scheduler's plugins `NodeUnschedulable` (a cordoned node only takes pods tolerating the
//! `node.kubernetes.io/unschedulable:NoSchedule` taint), `NodeAffinity` (`nodeSelector`, required
//! node affinity with `matchExpressions` on labels and `matchFields` on `metadata.name`) and
//! `TaintToleration` (every `NoSchedule`/`NoExecute` taint tolerated, including those the
//! `node_lifecycle` module sets for cordoned and NotReady nodes).

use std::collections::HashMap;

use serde_json::{Value, json};

use crate::api::{Api, UpdateMode};
use crate::meta;
use crate::store::ResKey;

/// The name of the `i`th simulated node (1-based).
pub fn node_name(i: usize) -> String {
    format!("playground-node-{i}")
}

/// The `topology.kubernetes.io/region` of every node.
pub const REGION: &str = "playground";

/// The `topology.kubernetes.io/zone` of the `i`th node (1-based): three zones, round robin.
pub fn zone(i: usize) -> String {
    let letter = ["a", "b", "c"][(i.max(1) - 1) % 3];
    format!("{REGION}-{letter}")
}

/// Creates `count` Ready nodes (if missing).
pub async fn create_nodes(api: &Api, count: usize) {
    let Some(def) = api.registry.find("", "v1", "nodes") else {
        return;
    };
    for i in 1..=count {
        let name = node_name(i);
        let node = json!({
            "metadata": {"name": name, "labels": {
                "kubernetes.io/hostname": name, "kubernetes.io/os": "linux",
                "kubernetes.io/arch": "amd64", "node.kubernetes.io/instance-type": "playground",
                "topology.kubernetes.io/region": REGION, "topology.kubernetes.io/zone": zone(i),
            }},
            "spec": {"podCIDR": format!("10.244.{i}.0/24")},
        });
        if api.create(&def, "", node, false).await.is_err() {
            continue;
        }
        let now = meta::now();
        let status = json!({"status": {
            "capacity": {"cpu": "8", "memory": "32Gi", "pods": "110"},
            "allocatable": {"cpu": "8", "memory": "32Gi", "pods": "110"},
            "conditions": [{"type": "Ready", "status": "True", "reason": "KubeletReady",
                            "message": "kubelet is posting ready status",
                            "lastHeartbeatTime": now, "lastTransitionTime": now}],
            "addresses": [{"type": "InternalIP", "address": format!("172.18.0.{}", i + 1)},
                          {"type": "Hostname", "address": name}],
            "nodeInfo": {"kubeletVersion": "v1.34.0-playground", "operatingSystem": "linux",
                         "architecture": "amd64", "containerRuntimeVersion": "playground://1"},
        }});
        let mut current = api
            .store
            .get(&ResKey::new("", "nodes"), "", &name)
            .unwrap_or_default();
        current["status"] = status["status"].clone();
        let _ = api
            .update(&def, "", &name, current, UpdateMode::Status, false)
            .await;
    }
}

fn label<'a>(node: &'a Value, key: &str) -> Option<&'a str> {
    node["metadata"]["labels"][key].as_str()
}

fn expression_matches(expr: &Value, node: &Value) -> bool {
    let key = expr["key"].as_str().unwrap_or_default();
    let value = label(node, key);
    let values: Vec<&str> = expr["values"]
        .as_array()
        .into_iter()
        .flatten()
        .filter_map(Value::as_str)
        .collect();
    let number = |s: Option<&str>| s.and_then(|s| s.parse::<i64>().ok());
    match expr["operator"].as_str().unwrap_or_default() {
        "In" => value.is_some_and(|v| values.contains(&v)),
        "NotIn" => value.is_none_or(|v| !values.contains(&v)),
        "Exists" => value.is_some(),
        "DoesNotExist" => value.is_none(),
        "Gt" => matches!((number(value), number(values.first().copied())), (Some(a), Some(b)) if a > b),
        "Lt" => matches!((number(value), number(values.first().copied())), (Some(a), Some(b)) if a < b),
        _ => false,
    }
}

/// A `matchFields` requirement: only `metadata.name` with `In`/`NotIn` is valid (apimachinery's
/// `nodeaffinity` package rejects other fields).
fn field_matches(expr: &Value, node: &Value) -> bool {
    let values = expr["values"].as_array();
    let listed = values.is_some_and(|v| v.iter().any(|v| v.as_str() == Some(meta::name(node))));
    match (expr["key"].as_str(), expr["operator"].as_str()) {
        (Some("metadata.name"), Some("In")) => listed,
        (Some("metadata.name"), Some("NotIn")) => !listed,
        _ => false,
    }
}

/// The taint a cordoned node carries (`corev1.TaintNodeUnschedulable`).
pub const UNSCHEDULABLE_TAINT: &str = "node.kubernetes.io/unschedulable";

/// `NodeUnschedulable`, `NodeAffinity` (terms ORed, requirements ANDed, an empty term matches
/// nothing) and `TaintToleration`.
pub fn fits(pod: &Value, node: &Value) -> bool {
    let spec = &pod["spec"];
    let tolerations: Vec<&Value> = spec["tolerations"].as_array().into_iter().flatten().collect();
    let cordon = json!({"key": UNSCHEDULABLE_TAINT, "effect": "NoSchedule"});
    if node["spec"]["unschedulable"] == true && !tolerations.iter().any(|t| tolerates(t, &cordon)) {
        return false;
    }
    let selector_ok = spec["nodeSelector"]
        .as_object()
        .into_iter()
        .flatten()
        .all(|(k, v)| label(node, k) == v.as_str());
    let required = &spec["affinity"]["nodeAffinity"]["requiredDuringSchedulingIgnoredDuringExecution"];
    let affinity_ok = match required["nodeSelectorTerms"].as_array() {
        None => true,
        Some(terms) => terms.iter().any(|t| {
            let exprs = t["matchExpressions"].as_array().map_or(&[][..], Vec::as_slice);
            let fields = t["matchFields"].as_array().map_or(&[][..], Vec::as_slice);
            !(exprs.is_empty() && fields.is_empty())
                && exprs.iter().all(|e| expression_matches(e, node))
                && fields.iter().all(|e| field_matches(e, node))
        }),
    };
    let taints_ok = node["spec"]["taints"]
        .as_array()
        .into_iter()
        .flatten()
        .filter(|t| matches!(t["effect"].as_str(), Some("NoSchedule" | "NoExecute")))
        .all(|t| tolerations.iter().any(|tol| tolerates(tol, t)));
    selector_ok && affinity_ok && taints_ok
}

/// Whether a toleration tolerates a taint (`v1.Toleration.ToleratesTaint`).
pub fn tolerates(toleration: &Value, taint: &Value) -> bool {
    let key_ok = match toleration["key"].as_str() {
        None | Some("") => toleration["operator"] == "Exists",
        Some(k) => Some(k) == taint["key"].as_str(),
    };
    let effect_ok = match toleration["effect"].as_str() {
        None | Some("") => true,
        Some(e) => Some(e) == taint["effect"].as_str(),
    };
    let value_ok = toleration["operator"] == "Exists" || toleration["value"] == taint["value"];
    key_ok && effect_ok && value_ok
}

/// Binds every pending pod that fits a node: sets `spec.nodeName` as `pods/binding` does (a
/// direct store write: bindings are not admitted here).
pub async fn schedule(api: &Api) {
    let (nodes, _) = api.store.list_shared(&ResKey::new("", "nodes"), None);
    if nodes.is_empty() {
        return;
    }
    let (pods, _) = api.store.list_shared(&ResKey::new("", "pods"), None);
    let pending: Vec<&Value> = pods.iter().map(|p| &**p).filter(|p| waits_for_us(p)).collect();
    if pending.is_empty() {
        return;
    }
    // Pods per node, in one walk of the pods (50,000 pods on 50 nodes: not one walk per node).
    let mut bound: HashMap<&str, usize> = HashMap::new();
    for pod in &pods {
        if let Some(node) = pod["spec"]["nodeName"].as_str() {
            *bound.entry(node).or_default() += 1;
        }
    }
    let mut load: Vec<usize> = nodes
        .iter()
        .map(|n| bound.get(meta::name(n)).copied().unwrap_or_default())
        .collect();
    let Some(def) = api.registry.find("", "v1", "pods") else {
        return;
    };
    for pod in pending {
        let best = (0..nodes.len())
            .filter(|&i| fits(pod, &nodes[i]))
            .min_by_key(|&i| (load[i], i));
        let Some(i) = best else {
            mark_unschedulable(api, &def, pod, nodes.len());
            continue;
        };
        let mut next = Value::clone(pod);
        next["spec"]["nodeName"] = json!(meta::name(&nodes[i]));
        let (ns, name) = (meta::namespace(pod), meta::name(pod));
        // The binding subresource only sets spec.nodeName; a direct write keeps this simple.
        if api
            .store
            .update(&crate::api::key(&def), meta::resource_version(pod), next)
            .is_ok()
        {
            load[i] += 1;
            if let Some(stored) = api.store.get(&crate::api::key(&def), ns, name) {
                api.after_write(&def, &stored);
            }
        }
    }
}

/// An unbound pod for the default scheduler, not being deleted.
fn waits_for_us(pod: &Value) -> bool {
    let bound = pod["spec"]["nodeName"].as_str().is_some_and(|n| !n.is_empty());
    let ours = pod["spec"]["schedulerName"]
        .as_str()
        .is_none_or(|s| s == "default-scheduler");
    !bound && ours && !meta::is_deleting(pod)
}

/// A pod no node takes gets `PodScheduled=False`, reason `Unschedulable`, as kube-scheduler reports it
/// (once: an unchanged condition is not written again).
fn mark_unschedulable(api: &Api, def: &crate::resources::ResourceDef, pod: &Value, nodes: usize) {
    let conditions = pod["status"]["conditions"]
        .as_array()
        .cloned()
        .unwrap_or_default();
    let scheduled = |c: &&Value| c["type"] == "PodScheduled";
    if conditions
        .iter()
        .find(scheduled)
        .is_some_and(|c| c["reason"] == "Unschedulable")
    {
        return;
    }
    let mut next = Value::clone(pod);
    let mut kept: Vec<Value> = conditions
        .into_iter()
        .filter(|c| c["type"] != "PodScheduled")
        .collect();
    kept.push(json!({"type": "PodScheduled", "status": "False", "reason": "Unschedulable",
        "message": format!("0/{nodes} nodes are available: {nodes} node(s) didn't match the pod's requirements."),
        "lastProbeTime": null, "lastTransitionTime": crate::meta::now()}));
    next["status"]["conditions"] = Value::Array(kept);
    let (ns, name) = (meta::namespace(pod), meta::name(pod));
    if api
        .store
        .update(&crate::api::key(def), meta::resource_version(pod), next)
        .is_ok()
        && let Some(stored) = api.store.get(&crate::api::key(def), ns, name)
    {
        api.after_write(def, &stored);
    }
}

#[cfg(test)]
mod tests {
    use super::fits;
    use serde_json::json;

    #[test]
    fn selector_affinity_and_taints() {
        let node = json!({"metadata": {"labels": {"zone": "a", "size": "5"}},
                          "spec": {"taints": [{"key": "dedicated", "value": "x", "effect": "NoSchedule"}]}});
        let tolerate =
            json!([{"key": "dedicated", "operator": "Equal", "value": "x", "effect": "NoSchedule"}]);
        assert!(!fits(&json!({"spec": {}}), &node), "untolerated taint");
        assert!(fits(&json!({"spec": {"tolerations": tolerate}}), &node));
        let pod = json!({"spec": {"tolerations": tolerate, "nodeSelector": {"zone": "b"}}});
        assert!(!fits(&pod, &node));
        let affinity = |op: &str, v: &str| {
            json!({"spec": {"tolerations": tolerate, "affinity": {"nodeAffinity": {
            "requiredDuringSchedulingIgnoredDuringExecution": {"nodeSelectorTerms": [
                {"matchExpressions": [{"key": "size", "operator": op, "values": [v]}]}]}}}}})
        };
        assert!(fits(&affinity("Gt", "3"), &node));
        assert!(!fits(&affinity("Lt", "3"), &node));
        assert!(fits(&affinity("In", "5"), &node));
        assert!(!fits(&affinity("NotIn", "5"), &node));
        let exists = json!({"spec": {"tolerations": [{"operator": "Exists"}]}});
        assert!(fits(&exists, &node));
    }

    /// DaemonSet pods are pinned with `matchFields` on `metadata.name` (the daemon controller's
    /// `ReplaceDaemonSetPodNodeNameNodeAffinity`); empty terms match nothing (core/v1 API docs).
    #[test]
    fn match_fields_and_empty_terms() {
        let node = json!({"metadata": {"name": "n1", "labels": {}}, "spec": {}});
        let pinned = |op: &str, name: &str| {
            json!({"spec": {"affinity": {"nodeAffinity": {"requiredDuringSchedulingIgnoredDuringExecution":
                {"nodeSelectorTerms": [{"matchFields": [{"key": "metadata.name", "operator": op, "values": [name]}]}]}}}}})
        };
        assert!(fits(&pinned("In", "n1"), &node));
        assert!(!fits(&pinned("In", "n2"), &node));
        assert!(fits(&pinned("NotIn", "n2"), &node));
        let empty = json!({"spec": {"affinity": {"nodeAffinity": {"requiredDuringSchedulingIgnoredDuringExecution":
            {"nodeSelectorTerms": [{}]}}}}});
        assert!(!fits(&empty, &node));
    }

    /// `NodeUnschedulable`: a cordoned node takes only pods tolerating its taint.
    #[test]
    fn cordoned_nodes_take_tolerating_pods_only() {
        let node = json!({"metadata": {"name": "n1"}, "spec": {"unschedulable": true}});
        assert!(!fits(&json!({"spec": {}}), &node));
        let tolerating = json!({"spec": {"tolerations": [
            {"key": "node.kubernetes.io/unschedulable", "operator": "Exists", "effect": "NoSchedule"}]}});
        assert!(fits(&tolerating, &node));
    }
}
