//! The apps/v1 DaemonSet controller, after `pkg/controller/daemon` in k8s.io/kubernetes:
//!
//! - a node should run the daemon pod when the template (with the tolerations the controller
//!   adds, `AddOrUpdateDaemonPodTolerations`) fits it: `nodeSelector`, required node affinity,
//!   taints; a pod already there keeps running unless a `NoExecute` taint is not tolerated or the
//!   affinity no longer matches (`NodeShouldRunDaemonPod`);
//! - one pod per such node, created through the API and pinned to it with the required node
//!   affinity term `matchFields: metadata.name In [node]` that replaces the template's terms
//!   (`ReplaceDaemonSetPodNodeNameNodeAffinity`); the default scheduler binds it; labels
//!   `controller-revision-hash` and `pod-template-generation`;
//! - extra pods on a node, pods on nodes that should not run one, failed pods: deleted;
//! - `RollingUpdate`: old pods that are not available are replaced at once; available ones while
//!   fewer than `maxUnavailable` daemon pods are unavailable (`maxSurge` is treated as 0).
//!   `OnDelete`: replaced only when deleted;
//! - status: desired/current/updated numberScheduled, numberMisscheduled, numberReady,
//!   numberAvailable, numberUnavailable, observedGeneration.

use std::collections::HashMap;

use serde_json::{Value, json};

use crate::api::Api;
use crate::meta;
use crate::resources::ResourceDef;
use crate::scheduler;
use crate::store::ResKey;
use crate::workload::{self, is_available, is_finished, is_ready};

/// The tolerations the controller adds to every daemon pod (`util.AddOrUpdateDaemonPodTolerations`);
/// `network-unavailable` only with `hostNetwork`.
pub fn daemon_tolerations(host_network: bool) -> Vec<Value> {
    let mut out: Vec<Value> = [
        ("node.kubernetes.io/not-ready", "NoExecute"),
        ("node.kubernetes.io/unreachable", "NoExecute"),
        ("node.kubernetes.io/disk-pressure", "NoSchedule"),
        ("node.kubernetes.io/memory-pressure", "NoSchedule"),
        ("node.kubernetes.io/pid-pressure", "NoSchedule"),
        ("node.kubernetes.io/unschedulable", "NoSchedule"),
    ]
    .iter()
    .map(|(k, e)| json!({"key": k, "operator": "Exists", "effect": e}))
    .collect();
    if host_network {
        out.push(json!({"key": "node.kubernetes.io/network-unavailable", "operator": "Exists", "effect": "NoSchedule"}));
    }
    out
}

/// The template's pod spec with the added tolerations (kept if already there).
fn with_tolerations(template: &Value) -> Value {
    let mut pod = json!({"spec": template["spec"].clone()});
    let host_network = pod["spec"]["hostNetwork"] == true;
    let list = &mut pod["spec"]["tolerations"];
    if !list.is_array() {
        *list = json!([]);
    }
    if let Some(list) = list.as_array_mut() {
        for t in daemon_tolerations(host_network) {
            if !list
                .iter()
                .any(|o| o["key"] == t["key"] && o["effect"] == t["effect"])
            {
                list.push(t);
            }
        }
    }
    pod
}

/// `(should run, should keep running)` for a node.
fn node_should_run(pod: &Value, node: &Value) -> (bool, bool) {
    let run = scheduler::fits(pod, node);
    // Only NoExecute taints (and affinity) stop a pod that already runs.
    let mut lenient = node.clone();
    if let Some(taints) = lenient["spec"]["taints"].as_array_mut() {
        taints.retain(|t| t["effect"] == "NoExecute");
    }
    lenient["spec"]["unschedulable"] = json!(false);
    (run, run || scheduler::fits(pod, &lenient))
}

/// The node a daemon pod is on or pinned to.
fn node_of(pod: &Value) -> Option<&str> {
    if let Some(n) = pod["spec"]["nodeName"].as_str().filter(|n| !n.is_empty()) {
        return Some(n);
    }
    let terms = &pod["spec"]["affinity"]["nodeAffinity"]["requiredDuringSchedulingIgnoredDuringExecution"]["nodeSelectorTerms"];
    terms.as_array()?.iter().find_map(|t| {
        t["matchFields"].as_array()?.iter().find_map(|f| {
            (f["key"] == "metadata.name" && f["operator"] == "In")
                .then(|| f["values"][0].as_str())
                .flatten()
        })
    })
}

/// One pass over every DaemonSet.
pub async fn sync(api: &Api) {
    let (sets, _) = api.store.list_shared(&ResKey::new("apps", "daemonsets"), None);
    if sets.is_empty() {
        return;
    }
    let (Some(dsdef), Some(pdef)) = (
        api.registry.find("apps", "v1", "daemonsets"),
        api.registry.find("", "v1", "pods"),
    ) else {
        return;
    };
    let (nodes, _) = api.store.list_shared(&ResKey::new("", "nodes"), None);
    let (pods, _) = api.store.list_shared(&ResKey::new("", "pods"), None);
    let owned = workload::by_controller(&pods);
    for ds in sets.iter().filter(|s| !meta::is_deleting(s)) {
        let mine = owned.get(meta::uid_of(ds)).cloned().unwrap_or_default();
        sync_set(api, &dsdef, &pdef, ds, &nodes, &mine).await;
    }
}

async fn sync_set(
    api: &Api,
    dsdef: &ResourceDef,
    pdef: &ResourceDef,
    ds: &Value,
    nodes: &[std::sync::Arc<Value>],
    pods: &[&Value],
) {
    let template = &ds["spec"]["template"];
    let Some(revision) = workload::ensure_revision(api, ds, "DaemonSet", template).await else {
        return;
    };
    let hash = revision["metadata"]["labels"]["controller-revision-hash"]
        .as_str()
        .unwrap_or_default()
        .to_string();
    let probe = with_tolerations(template);
    let min_ready = ds["spec"]["minReadySeconds"].as_i64().unwrap_or(0);
    let mut on_node: HashMap<&str, Vec<&Value>> = HashMap::new();
    for pod in pods.iter().filter(|p| !meta::is_deleting(p)) {
        on_node
            .entry(node_of(pod).unwrap_or_default())
            .or_default()
            .push(pod);
    }
    let (mut desired, mut current, mut misscheduled, mut ready, mut available, mut updated) =
        (0, 0, 0, 0, 0, 0);
    let mut old_available: Vec<&Value> = vec![];
    let mut unavailable = 0;
    for node in nodes {
        let name = meta::name(node);
        let (run, keep) = node_should_run(&probe, node);
        let mut here = on_node.remove(name).unwrap_or_default();
        // Failed pods go first; the oldest healthy one is kept (`podsShouldBeOnNode`).
        let (failed, mut live): (Vec<&Value>, Vec<&Value>) = here.drain(..).partition(|p| is_finished(p));
        for pod in &failed {
            workload::delete(api, pdef, pod).await;
        }
        live.sort_by(|a, b| {
            let key = |p: &Value| {
                (
                    p["metadata"]["creationTimestamp"]
                        .as_str()
                        .unwrap_or("")
                        .to_string(),
                    meta::name(p).to_string(),
                )
            };
            key(a).cmp(&key(b))
        });
        if !keep || !run && live.is_empty() {
            for pod in &live {
                workload::delete(api, pdef, pod).await;
            }
            misscheduled += i64::from(!live.is_empty() && !run);
            continue;
        }
        if !run {
            misscheduled += i64::from(!live.is_empty());
            continue;
        }
        desired += 1;
        for extra in live.iter().skip(1) {
            workload::delete(api, pdef, extra).await;
        }
        let Some(pod) = live.first() else {
            create_pod(api, pdef, ds, template, &hash, name).await;
            unavailable += 1;
            continue;
        };
        current += 1;
        ready += i64::from(is_ready(pod));
        let is_new = pod["metadata"]["labels"]["controller-revision-hash"] == hash.as_str();
        updated += i64::from(is_new);
        if is_available(pod, min_ready) {
            available += 1;
            if !is_new {
                old_available.push(pod);
            }
        } else {
            unavailable += 1;
            if !is_new && rolling(ds) {
                workload::delete(api, pdef, pod).await;
            }
        }
    }
    // Pods on nodes that are gone.
    for pods in on_node.values() {
        for pod in pods {
            workload::delete(api, pdef, pod).await;
        }
    }
    if rolling(ds) {
        let max = workload::scaled(
            &ds["spec"]["updateStrategy"]["rollingUpdate"]["maxUnavailable"],
            desired,
            true,
        )
        .max(1);
        for pod in old_available.iter().take((max - unavailable).max(0) as usize) {
            workload::delete(api, pdef, pod).await;
        }
    }
    let status = json!({
        "observedGeneration": ds["metadata"]["generation"], "desiredNumberScheduled": desired,
        "currentNumberScheduled": current, "numberMisscheduled": misscheduled, "numberReady": ready,
        "numberAvailable": available, "numberUnavailable": (desired - available).max(0),
        "updatedNumberScheduled": updated,
    });
    let status = strip_zero_unavailable(status);
    workload::set_status(api, dsdef, ds, status).await;
    workload::prune_revisions(api, ds, &[meta::name(&revision)]).await;
}

/// `numberAvailable`/`numberUnavailable` are omitted when 0 (`omitempty` in the Go type).
fn strip_zero_unavailable(mut status: Value) -> Value {
    for k in ["numberAvailable", "numberUnavailable"] {
        if status[k] == 0 {
            status[k] = Value::Null;
        }
    }
    status
}

fn rolling(ds: &Value) -> bool {
    ds["spec"]["updateStrategy"]["type"].as_str() != Some("OnDelete")
}

/// A daemon pod for `node`: the template with the added tolerations, pinned with `matchFields`.
async fn create_pod(api: &Api, pdef: &ResourceDef, ds: &Value, template: &Value, hash: &str, node: &str) {
    let ns = meta::namespace(ds);
    let mut pod = workload::pod_from_template(template, ns, workload::owner_ref(ds, "apps/v1", "DaemonSet"));
    pod["metadata"]["generateName"] = json!(format!("{}-", meta::name(ds)));
    if !pod["metadata"]["labels"].is_object() {
        pod["metadata"]["labels"] = json!({});
    }
    pod["metadata"]["labels"]["controller-revision-hash"] = json!(hash);
    let generation = ds["metadata"]["generation"].as_i64().unwrap_or(1).to_string();
    pod["metadata"]["labels"]["pod-template-generation"] = json!(generation);
    pod["spec"]["tolerations"] = with_tolerations(template)["spec"]["tolerations"].take();
    let pin = json!({"nodeSelectorTerms": [{"matchFields": [
        {"key": "metadata.name", "operator": "In", "values": [node]}]}]});
    let affinity = &mut pod["spec"]["affinity"];
    if !affinity.is_object() {
        *affinity = json!({});
    }
    if !affinity["nodeAffinity"].is_object() {
        affinity["nodeAffinity"] = json!({});
    }
    affinity["nodeAffinity"]["requiredDuringSchedulingIgnoredDuringExecution"] = pin;
    if let Err(e) = api.create(pdef, ns, pod, false).await {
        tracing::debug!(error = %e, "daemonset pod create failed");
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn daemon_pods_tolerate_cordons_but_not_other_taints() {
        let probe = with_tolerations(&json!({"spec": {"containers": []}}));
        let cordoned = json!({"metadata": {"name": "n"}, "spec": {"unschedulable": true,
            "taints": [{"key": "node.kubernetes.io/unschedulable", "effect": "NoSchedule"}]}});
        assert_eq!(node_should_run(&probe, &cordoned), (true, true));
        let tainted =
            json!({"metadata": {"name": "n"}, "spec": {"taints": [{"key": "gpu", "effect": "NoSchedule"}]}});
        assert_eq!(
            node_should_run(&probe, &tainted),
            (false, true),
            "running pods stay"
        );
        let evicting =
            json!({"metadata": {"name": "n"}, "spec": {"taints": [{"key": "gpu", "effect": "NoExecute"}]}});
        assert_eq!(node_should_run(&probe, &evicting), (false, false));
    }

    #[test]
    fn pinned_pods_name_their_node() {
        let pod = json!({"spec": {"affinity": {"nodeAffinity": {"requiredDuringSchedulingIgnoredDuringExecution":
            {"nodeSelectorTerms": [{"matchFields": [{"key": "metadata.name", "operator": "In", "values": ["n2"]}]}]}}}}});
        assert_eq!(node_of(&pod), Some("n2"));
    }
}
