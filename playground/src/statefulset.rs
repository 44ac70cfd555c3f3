//! The apps/v1 StatefulSet controller, after `pkg/controller/statefulset` in k8s.io/kubernetes:
//!
//! - pods `<set>-<ordinal>` with the labels `statefulset.kubernetes.io/pod-name`,
//!   `apps.kubernetes.io/pod-index` and `controller-revision-hash` (the revision's name),
//!   `hostname`/`subdomain` set, and one PVC `<claim>-<set>-<ordinal>` per
//!   `volumeClaimTemplates` entry created before the pod;
//! - `persistentVolumeClaimRetentionPolicy` (`claimOwnerMatchesSetAndPod`): a claim is owned by
//!   the set when `whenDeleted` is `Delete`, and — once its pod's ordinal is scaled away — by the
//!   pod instead when `whenScaled` is `Delete`, so the garbage collector removes it with its owner;
//! - ControllerRevisions `<set>-<hash>` of the template; `currentRevision`/`updateRevision`;
//! - `OrderedReady`: one pod at a time, in ordinal order, each Running and Ready before the next;
//!   scale-down from the highest ordinal, one at a time; `Parallel`: all at once;
//! - failed or succeeded pods are deleted and created again;
//! - `RollingUpdate`: the highest ordinal ≥ `partition` not at the update revision is deleted
//!   (and recreated at it) once every pod is Running and Ready; pods below the partition are
//!   created at the current revision. `OnDelete`: pods change revision only when deleted;
//! - status: replicas, readyReplicas, availableReplicas (`minReadySeconds`), currentReplicas,
//!   updatedReplicas, currentRevision, updateRevision, observedGeneration, collisionCount; the
//!   update revision becomes current once every pod is updated and ready (`completeRollingUpdate`).

use std::collections::BTreeMap;

use serde_json::{Value, json};

use crate::api::{Api, UpdateMode};
use crate::meta;
use crate::resources::ResourceDef;
use crate::store::ResKey;
use crate::workload::{self, is_finished, is_ready};

/// The label with a StatefulSet pod's own name.
pub const POD_NAME_LABEL: &str = "statefulset.kubernetes.io/pod-name";
/// The label with a pod's ordinal (`apps.kubernetes.io/pod-index`).
pub const POD_INDEX_LABEL: &str = "apps.kubernetes.io/pod-index";

struct Defs {
    sets: ResourceDef,
    pods: ResourceDef,
    claims: ResourceDef,
}

/// One pass over every StatefulSet.
pub async fn sync(api: &Api) {
    let (sets, _) = api.store.list_shared(&ResKey::new("apps", "statefulsets"), None);
    if sets.is_empty() {
        return;
    }
    let (Some(s), Some(p), Some(c)) = (
        api.registry.find("apps", "v1", "statefulsets"),
        api.registry.find("", "v1", "pods"),
        api.registry.find("", "v1", "persistentvolumeclaims"),
    ) else {
        return;
    };
    let defs = Defs {
        sets: s,
        pods: p,
        claims: c,
    };
    let (pods, _) = api.store.list_shared(&ResKey::new("", "pods"), None);
    let owned = workload::by_controller(&pods);
    for set in sets.iter().filter(|s| !meta::is_deleting(s)) {
        let mine = owned.get(meta::uid_of(set)).cloned().unwrap_or_default();
        sync_set(api, &defs, set, &mine).await;
    }
}

/// The ordinal of a pod named `<set>-<n>`.
fn ordinal(set: &Value, pod: &Value) -> Option<i64> {
    let prefix = format!("{}-", meta::name(set));
    meta::name(pod).strip_prefix(&prefix)?.parse().ok()
}

fn revision_of(pod: &Value) -> &str {
    pod["metadata"]["labels"]["controller-revision-hash"]
        .as_str()
        .unwrap_or_default()
}

fn healthy(pod: &Value) -> bool {
    pod["status"]["phase"] == "Running" && is_ready(pod) && !meta::is_deleting(pod)
}

async fn sync_set(api: &Api, defs: &Defs, set: &Value, pods: &[&Value]) {
    let spec = &set["spec"];
    let Some(update) = workload::ensure_revision(api, set, "StatefulSet", &spec["template"]).await else {
        return;
    };
    let update_rev = meta::name(&update).to_string();
    let revisions = workload::revisions_of(api, set);
    let current = set["status"]["currentRevision"]
        .as_str()
        .and_then(|c| revisions.iter().find(|r| meta::name(r) == c))
        .unwrap_or(&update)
        .clone();
    let current_rev = meta::name(&current).to_string();
    let replicas = spec["replicas"].as_i64().unwrap_or(1).max(0);
    let ordered = spec["podManagementPolicy"].as_str() != Some("Parallel");
    let rolling = spec["updateStrategy"]["type"].as_str() != Some("OnDelete");
    let partition = spec["updateStrategy"]["rollingUpdate"]["partition"]
        .as_i64()
        .unwrap_or(0);
    let by_ordinal: BTreeMap<i64, &Value> = pods
        .iter()
        .filter_map(|p| ordinal(set, p).map(|o| (o, *p)))
        .collect();

    // Create, replace and wait, in ordinal order (`processReplica`).
    let mut blocked = false;
    for o in 0..replicas {
        if blocked {
            break;
        }
        match by_ordinal.get(&o) {
            None => {
                let (rev, template) = if rolling && o < partition {
                    (&current_rev, workload::revision_template(&current))
                } else {
                    (&update_rev, spec["template"].clone())
                };
                create_pod(api, defs, set, o, rev, &template).await;
                blocked = ordered;
            }
            Some(pod) if is_finished(pod) && !meta::is_deleting(pod) => {
                workload::delete(api, &defs.pods, pod).await;
                blocked = ordered;
            }
            Some(pod) => blocked = ordered && !healthy(pod),
        }
    }
    // Claim owners first, so a condemned pod's claim goes with it.
    retain_claims(api, defs, set, &by_ordinal, replicas).await;
    // Scale down from the highest ordinal (`processCondemned`).
    let condemned: Vec<&Value> = by_ordinal.range(replicas..).rev().map(|(_, p)| *p).collect();
    let all_healthy = by_ordinal.values().all(|p| healthy(p));
    for pod in condemned {
        if meta::is_deleting(pod) {
            if ordered {
                break;
            }
            continue;
        }
        if ordered && (blocked || !all_healthy) && !is_finished(pod) {
            break;
        }
        workload::delete(api, &defs.pods, pod).await;
        if ordered {
            break;
        }
    }
    // Rolling update: the highest ordinal not at the update revision, when all are healthy.
    let complete = (0..replicas).all(|o| by_ordinal.contains_key(&o));
    if rolling && !blocked && complete {
        for o in (partition.max(0)..replicas).rev() {
            let pod = by_ordinal[&o];
            if revision_of(pod) != update_rev && !meta::is_deleting(pod) {
                if by_ordinal.values().all(|p| healthy(p)) {
                    workload::delete(api, &defs.pods, pod).await;
                }
                break;
            }
            if !healthy(pod) {
                break;
            }
        }
    }
    let in_use: Vec<&str> = [current_rev.as_str(), update_rev.as_str()]
        .into_iter()
        .chain(pods.iter().map(|p| revision_of(p)))
        .collect();
    workload::prune_revisions(api, set, &in_use).await;
    write_status(api, defs, set, pods, &current_rev, &update_rev).await;
}

async fn write_status(api: &Api, defs: &Defs, set: &Value, pods: &[&Value], current: &str, update: &str) {
    let live: Vec<&&Value> = pods.iter().filter(|p| !meta::is_deleting(p)).collect();
    let min_ready = set["spec"]["minReadySeconds"].as_i64().unwrap_or(0);
    let count = |f: &dyn Fn(&Value) -> bool| live.iter().filter(|p| f(p)).count() as i64;
    let replicas = live.len() as i64;
    let ready = count(&|p| is_ready(p));
    let updated = count(&|p| revision_of(p) == update);
    let (mut current, mut current_replicas) = (current.to_string(), count(&|p| revision_of(p) == current));
    if set["spec"]["updateStrategy"]["type"].as_str() != Some("OnDelete")
        && updated == replicas
        && ready == replicas
    {
        current = update.to_string();
        current_replicas = updated;
    }
    let status = json!({
        "observedGeneration": set["metadata"]["generation"], "replicas": replicas,
        "readyReplicas": ready, "currentReplicas": current_replicas, "updatedReplicas": updated,
        "availableReplicas": count(&|p| workload::is_available(p, min_ready)),
        "currentRevision": current, "updateRevision": update, "collisionCount": 0,
    });
    workload::set_status(api, &defs.sets, set, status).await;
}

/// The pod of ordinal `o` at revision `rev` (`newVersionedStatefulSetPod`), after its claims.
async fn create_pod(api: &Api, defs: &Defs, set: &Value, o: i64, rev: &str, template: &Value) {
    let (ns, set_name) = (meta::namespace(set), meta::name(set));
    let name = format!("{set_name}-{o}");
    let mut pod =
        workload::pod_from_template(template, ns, workload::owner_ref(set, "apps/v1", "StatefulSet"));
    pod["metadata"]["name"] = json!(name);
    let labels = &mut pod["metadata"]["labels"];
    if !labels.is_object() {
        *labels = json!({});
    }
    labels[POD_NAME_LABEL] = json!(name);
    labels[POD_INDEX_LABEL] = json!(o.to_string());
    labels["controller-revision-hash"] = json!(rev);
    pod["spec"]["hostname"] = json!(name);
    if let Some(service) = set["spec"]["serviceName"].as_str().filter(|s| !s.is_empty()) {
        pod["spec"]["subdomain"] = json!(service);
    }
    for claim in set["spec"]["volumeClaimTemplates"]
        .as_array()
        .into_iter()
        .flatten()
    {
        let claim_name = format!("{}-{name}", meta::name(claim));
        ensure_claim(api, defs, set, claim, &claim_name).await;
        let volume = json!({"name": meta::name(claim), "persistentVolumeClaim": {"claimName": claim_name}});
        let volumes = &mut pod["spec"]["volumes"];
        if !volumes.is_array() {
            *volumes = json!([]);
        }
        if let Some(list) = volumes.as_array_mut() {
            list.retain(|v| v["name"] != claim["metadata"]["name"]);
            list.push(volume);
        }
    }
    if let Err(e) = api.create(&defs.pods, ns, pod, false).await {
        tracing::debug!(error = %e, "statefulset pod create failed");
    }
}

/// Creates the claim `<claim>-<pod>` if missing: the template's metadata and spec, the set's
/// selector labels (`getPersistentVolumeClaims`).
async fn ensure_claim(api: &Api, defs: &Defs, set: &Value, claim: &Value, name: &str) {
    let ns = meta::namespace(set);
    if api
        .store
        .get(&ResKey::new("", "persistentvolumeclaims"), ns, name)
        .is_some()
    {
        return;
    }
    let mut metadata = claim["metadata"].clone();
    if !metadata.is_object() {
        metadata = json!({});
    }
    metadata["name"] = json!(name);
    metadata["namespace"] = json!(ns);
    if !metadata["labels"].is_object() {
        metadata["labels"] = json!({});
    }
    for (k, v) in set["spec"]["selector"]["matchLabels"]
        .as_object()
        .into_iter()
        .flatten()
    {
        metadata["labels"][k] = v.clone();
    }
    if claim_owners(set, false).0 {
        metadata["ownerReferences"] = json!([workload::owner_ref(set, "apps/v1", "StatefulSet")]);
    }
    let pvc = json!({"metadata": metadata, "spec": claim["spec"].clone()});
    if let Err(e) = api.create(&defs.claims, ns, pvc, false).await {
        tracing::debug!(error = %e, "statefulset claim create failed");
    }
}

/// Whether a claim should be owned by (the set, its pod) under the set's
/// `persistentVolumeClaimRetentionPolicy`, the pod's ordinal being scaled away or not.
fn claim_owners(set: &Value, scaled_down: bool) -> (bool, bool) {
    let policy = &set["spec"]["persistentVolumeClaimRetentionPolicy"];
    let when_deleted = policy["whenDeleted"] == "Delete";
    let when_scaled = policy["whenScaled"] == "Delete";
    match (when_deleted, when_scaled) {
        (false, false) => (false, false),
        (true, false) => (true, false),
        (false, true) => (false, scaled_down),
        (true, true) => (!scaled_down, scaled_down),
    }
}

/// A claim's owner references with those to the set and the pod as [`claim_owners`] wants them
/// (`updateClaimOwnerRefForSetAndPod`); other owners are kept.
fn claim_refs(claim: &Value, set: &Value, pod: &Value, scaled_down: bool) -> Vec<Value> {
    let (by_set, by_pod) = claim_owners(set, scaled_down);
    let ours = |r: &Value| r["uid"] == meta::uid_of(set) || r["uid"] == meta::uid_of(pod);
    let mut refs: Vec<Value> = claim["metadata"]["ownerReferences"]
        .as_array()
        .into_iter()
        .flatten()
        .filter(|r| !ours(r))
        .cloned()
        .collect();
    if by_set {
        refs.push(workload::owner_ref(set, "apps/v1", "StatefulSet"));
    }
    if by_pod {
        refs.push(workload::owner_ref(pod, "v1", "Pod"));
    }
    refs
}

/// Brings the owners of every pod's claims in line with the retention policy.
async fn retain_claims(api: &Api, defs: &Defs, set: &Value, pods: &BTreeMap<i64, &Value>, replicas: i64) {
    let Some(templates) = set["spec"]["volumeClaimTemplates"].as_array() else {
        return;
    };
    let ns = meta::namespace(set);
    for (&o, pod) in pods {
        for template in templates {
            let name = format!("{}-{}", meta::name(template), meta::name(pod));
            let Some(claim) = api
                .store
                .get(&ResKey::new("", "persistentvolumeclaims"), ns, &name)
            else {
                continue;
            };
            let want = claim_refs(&claim, set, pod, o >= replicas);
            let have = claim["metadata"]["ownerReferences"]
                .as_array()
                .cloned()
                .unwrap_or_default();
            if want == have {
                continue;
            }
            let mut next = Value::clone(&claim);
            next["metadata"]["ownerReferences"] = json!(want);
            if let Err(e) = api
                .update(&defs.claims, ns, &name, next, UpdateMode::Main, false)
                .await
            {
                tracing::debug!(error = %e, "statefulset claim owner update failed");
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn claim_owners_follow_the_retention_policy() {
        let set = |deleted: &str, scaled: &str| {
            json!({"metadata": {"name": "db", "uid": "s"}, "spec": {"persistentVolumeClaimRetentionPolicy":
                {"whenDeleted": deleted, "whenScaled": scaled}}})
        };
        let pod = json!({"metadata": {"name": "db-2", "uid": "p"}});
        let other = json!({"uid": "x", "kind": "Other"});
        let claim = json!({"metadata": {"ownerReferences": [other, {"uid": "s"}]}});
        let owners = |s: &Value, down: bool| -> Vec<String> {
            claim_refs(&claim, s, &pod, down)
                .iter()
                .map(|r| r["uid"].as_str().unwrap().to_string())
                .collect()
        };
        assert_eq!(owners(&set("Retain", "Retain"), true), ["x"]);
        assert_eq!(owners(&set("Delete", "Retain"), true), ["x", "s"]);
        assert_eq!(owners(&set("Retain", "Delete"), false), ["x"]);
        assert_eq!(owners(&set("Retain", "Delete"), true), ["x", "p"]);
        assert_eq!(owners(&set("Delete", "Delete"), false), ["x", "s"]);
        assert_eq!(owners(&set("Delete", "Delete"), true), ["x", "p"]);
        assert_eq!(
            claim_refs(&claim, &set("Delete", "Delete"), &pod, true)[1]["kind"],
            "Pod"
        );
    }
}
