//! Built-in workload controllers: Deployment → ReplicaSet (named `<deployment>-<pod-template-hash>`)
//! → Pods. Simplified: a changed template gets a new ReplicaSet with all the replicas at once and
//! the old ones are scaled to zero (no surge/unavailability pacing).

use std::borrow::Borrow;

use serde_json::{Value, json};

use crate::api::{Api, UpdateMode};
use crate::meta;
use crate::store::ResKey;
use crate::workload::{self, is_ready};

const HASH_ALPHABET: &[u8] = b"bcdfghjklmnpqrstvwxz2456789";

/// A 10-character `pod-template-hash` of a pod template.
pub fn template_hash(template: &Value) -> String {
    let text = serde_json::to_string(template).unwrap_or_default();
    let digest = ring::digest::digest(&ring::digest::SHA256, text.as_bytes());
    digest.as_ref()[..10]
        .iter()
        .map(|b| HASH_ALPHABET[usize::from(*b) % HASH_ALPHABET.len()] as char)
        .collect()
}

fn owner_ref(owner: &Value, kind: &str) -> Value {
    workload::owner_ref(owner, "apps/v1", kind)
}

fn owned_by<'a, V: std::borrow::Borrow<Value>>(items: &'a [V], owner: &Value) -> Vec<&'a Value> {
    let uid = meta::uid_of(owner);
    items
        .iter()
        .map(Borrow::borrow)
        .filter(|o: &&Value| {
            o["metadata"]["ownerReferences"]
                .as_array()
                .into_iter()
                .flatten()
                .any(|r| r["uid"] == uid && r["controller"] == true)
        })
        .collect()
}

fn replicas(obj: &Value) -> i64 {
    obj["spec"]["replicas"].as_i64().unwrap_or(1)
}

/// Deployments: one ReplicaSet per template, the current one at `spec.replicas`.
pub async fn deployments(api: &Api) {
    let (Some(ddef), Some(rdef)) = (
        api.registry.find("apps", "v1", "deployments"),
        api.registry.find("apps", "v1", "replicasets"),
    ) else {
        return;
    };
    let (deploys, _) = api.store.list(&ResKey::new("apps", "deployments"), None);
    let (sets, _) = api.store.list(&ResKey::new("apps", "replicasets"), None);
    for d in deploys.iter().filter(|d| !meta::is_deleting(d)) {
        let ns = meta::namespace(d);
        let hash = template_hash(&d["spec"]["template"]);
        let owned = owned_by(&sets, d);
        let want = if d["spec"]["paused"] == true {
            None
        } else {
            Some(replicas(d))
        };
        let mut found = false;
        for rs in &owned {
            let current = rs["metadata"]["labels"]["pod-template-hash"] == hash.as_str();
            found |= current;
            let target = if current { want.unwrap_or(replicas(rs)) } else { 0 };
            if replicas(rs) != target {
                let mut next = (*rs).clone();
                next["spec"]["replicas"] = json!(target);
                let _ = api
                    .update(&rdef, ns, meta::name(rs), next, UpdateMode::Main, false)
                    .await;
            }
        }
        if !found {
            let mut template = d["spec"]["template"].clone();
            template["metadata"]["labels"]["pod-template-hash"] = json!(hash);
            let mut selector = d["spec"]["selector"].clone();
            selector["matchLabels"]["pod-template-hash"] = json!(hash);
            let mut labels = d["spec"]["template"]["metadata"]["labels"].clone();
            labels["pod-template-hash"] = json!(hash);
            let rs = json!({
                "metadata": {"name": format!("{}-{hash}", meta::name(d)), "namespace": ns, "labels": labels,
                             "ownerReferences": [owner_ref(d, "Deployment")]},
                "spec": {"replicas": want.unwrap_or(0), "selector": selector, "template": template},
            });
            let _ = api.create(&rdef, ns, rs, false).await;
        }
        let (sets, _) = api.store.list(&ResKey::new("apps", "replicasets"), Some(ns));
        let owned = owned_by(&sets, d);
        let sum = |f: &str| {
            owned
                .iter()
                .map(|r| r["status"][f].as_i64().unwrap_or(0))
                .sum::<i64>()
        };
        let updated: i64 = owned
            .iter()
            .filter(|r| r["metadata"]["labels"]["pod-template-hash"] == hash.as_str())
            .map(|r| r["status"]["replicas"].as_i64().unwrap_or(0))
            .sum();
        let available = sum("availableReplicas");
        let now = meta::now();
        let ok = available >= replicas(d);
        let status = json!({
            "observedGeneration": d["metadata"]["generation"], "replicas": sum("replicas"),
            "updatedReplicas": updated, "readyReplicas": sum("readyReplicas"),
            "availableReplicas": available, "unavailableReplicas": (replicas(d) - available).max(0),
            "conditions": [{"type": "Available", "status": if ok { "True" } else { "False" },
                            "reason": if ok { "MinimumReplicasAvailable" } else { "MinimumReplicasUnavailable" },
                            "lastUpdateTime": now, "lastTransitionTime": now}],
        });
        let same = d["status"]["conditions"][0]["status"] == status["conditions"][0]["status"];
        let mut status = status;
        if same {
            status["conditions"] = d["status"]["conditions"].clone();
        }
        workload::set_status(api, &ddef, d, status).await;
    }
}

/// ReplicaSets: create or delete owned pods to reach `spec.replicas`.
pub async fn replica_sets(api: &Api) {
    let (Some(rdef), Some(pdef)) = (
        api.registry.find("apps", "v1", "replicasets"),
        api.registry.find("", "v1", "pods"),
    ) else {
        return;
    };
    let (sets, _) = api.store.list(&ResKey::new("apps", "replicasets"), None);
    let (pods, _) = api.store.list_shared(&ResKey::new("", "pods"), None);
    for rs in sets.iter().filter(|r| !meta::is_deleting(r)) {
        let ns = meta::namespace(rs);
        let live: Vec<&Value> = owned_by(&pods, rs)
            .into_iter()
            .filter(|p| !meta::is_deleting(p))
            .collect();
        let want = replicas(rs);
        let have = live.len() as i64;
        for _ in have..want {
            let template = &rs["spec"]["template"];
            let mut pod = json!({"metadata": template["metadata"].clone(), "spec": template["spec"].clone()});
            pod["metadata"]["generateName"] = json!(format!("{}-", meta::name(rs)));
            pod["metadata"]["namespace"] = json!(ns);
            pod["metadata"]["ownerReferences"] = json!([owner_ref(rs, "ReplicaSet")]);
            if let Err(e) = api.create(&pdef, ns, pod, false).await {
                tracing::debug!(error = %e, "replicaset pod create failed");
                break;
            }
        }
        for pod in live.iter().rev().take((have - want).max(0) as usize) {
            let opts = crate::api::delete::DeleteOptions::default();
            let _ = api.delete(&pdef, ns, meta::name(pod), &opts).await;
        }
        let ready = live.iter().filter(|p| is_ready(p)).count() as i64;
        let status = json!({"replicas": have.min(want.max(have)), "readyReplicas": ready,
                            "availableReplicas": ready, "fullyLabeledReplicas": have,
                            "observedGeneration": rs["metadata"]["generation"]});
        workload::set_status(api, &rdef, rs, status).await;
    }
}
