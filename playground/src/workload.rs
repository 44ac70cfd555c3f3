//! What the built-in workload controllers share: owner references, pods grouped by their
//! controller, pod readiness and availability, status writes, pods from templates and
//! ControllerRevisions (`pkg/controller/history` in k8s.io/kubernetes).

use std::collections::HashMap;
use std::sync::Arc;

use serde_json::{Value, json};

use crate::api::{Api, UpdateMode};
use crate::meta;
use crate::resources::ResourceDef;
use crate::store::ResKey;

/// A controller owner reference to `owner`.
pub fn owner_ref(owner: &Value, api_version: &str, kind: &str) -> Value {
    json!({"apiVersion": api_version, "kind": kind, "name": meta::name(owner), "uid": meta::uid_of(owner),
           "controller": true, "blockOwnerDeletion": true})
}

/// The uid of an object's controller (its owner reference with `controller: true`).
pub fn controller_uid(obj: &Value) -> Option<&str> {
    obj["metadata"]["ownerReferences"]
        .as_array()?
        .iter()
        .find(|r| r["controller"] == true)?["uid"]
        .as_str()
}

/// Objects grouped by the uid of their controller; one pass over `items`.
pub fn by_controller(items: &[Arc<Value>]) -> HashMap<&str, Vec<&Value>> {
    let mut out: HashMap<&str, Vec<&Value>> = HashMap::new();
    for item in items {
        if let Some(uid) = controller_uid(item) {
            out.entry(uid).or_default().push(item);
        }
    }
    out
}

/// The condition `kind` of an object's status is `True`.
pub fn has_condition(obj: &Value, kind: &str) -> bool {
    obj["status"]["conditions"]
        .as_array()
        .into_iter()
        .flatten()
        .any(|c| c["type"] == kind && c["status"] == "True")
}

/// A pod's Ready condition is True.
pub fn is_ready(pod: &Value) -> bool {
    has_condition(pod, "Ready")
}

/// A pod in phase Succeeded or Failed.
pub fn is_finished(pod: &Value) -> bool {
    matches!(pod["status"]["phase"].as_str(), Some("Succeeded" | "Failed"))
}

/// Ready for at least `min_ready_seconds` (`podutil.IsPodAvailable`).
pub fn is_available(pod: &Value, min_ready_seconds: i64) -> bool {
    let Some(ready) = pod["status"]["conditions"]
        .as_array()
        .into_iter()
        .flatten()
        .find(|c| c["type"] == "Ready" && c["status"] == "True")
    else {
        return false;
    };
    if min_ready_seconds <= 0 {
        return true;
    }
    let since = ready["lastTransitionTime"].as_str().and_then(meta::parse_time);
    since.is_some_and(|t| (time::OffsetDateTime::now_utc() - t).whole_seconds() >= min_ready_seconds)
}

/// Merges `status` into the object's status and writes it if anything changed.
pub async fn set_status(api: &Api, def: &ResourceDef, obj: &Value, status: Value) {
    let mut merged = obj["status"].clone();
    if !merged.is_object() {
        merged = json!({});
    }
    for (k, v) in status.as_object().into_iter().flatten() {
        if v.is_null() {
            merged.as_object_mut().map(|m| m.remove(k));
        } else {
            merged[k] = v.clone();
        }
    }
    if merged == obj["status"] {
        return;
    }
    let mut next = obj.clone();
    next["status"] = merged;
    let (ns, name) = (meta::namespace(obj), meta::name(obj));
    if let Err(e) = api.update(def, ns, name, next, UpdateMode::Status, false).await {
        tracing::debug!(error = %e, "{} status update failed", def.kind);
    }
}

/// A pod from a pod template, owned by `owner_ref`, in `ns`.
pub fn pod_from_template(template: &Value, ns: &str, owner_ref: Value) -> Value {
    let mut metadata = template["metadata"].clone();
    if !metadata.is_object() {
        metadata = json!({});
    }
    metadata["namespace"] = json!(ns);
    metadata["ownerReferences"] = json!([owner_ref]);
    json!({"metadata": metadata, "spec": template["spec"].clone()})
}

/// Deletes an object in the background, logging a failure.
pub async fn delete(api: &Api, def: &ResourceDef, obj: &Value) {
    let opts = crate::api::delete::DeleteOptions {
        propagation_policy: Some("Background".into()),
        ..Default::default()
    };
    if let Err(e) = api
        .delete(def, meta::namespace(obj), meta::name(obj), &opts)
        .await
    {
        tracing::debug!(error = %e, "{} delete failed", def.kind);
    }
}

/// apimachinery's `rand.SafeEncodeString` alphabet (no vowels, no confusable digits).
const SAFE_ALPHABET: &[u8] = b"bcdfghjklmnpqrstvwxz2456789";

/// The hash of a ControllerRevision's data as `controller.ComputeHash` renders it: FNV-32a of the
/// data, its decimal digits mapped through the safe alphabet.
pub fn revision_hash(data: &Value) -> String {
    let text = serde_json::to_string(data).unwrap_or_default();
    let mut hash: u32 = 0x811c_9dc5;
    for b in text.bytes() {
        hash ^= u32::from(b);
        hash = hash.wrapping_mul(0x0100_0193);
    }
    hash.to_string()
        .bytes()
        .map(|b| SAFE_ALPHABET[usize::from(b) % SAFE_ALPHABET.len()] as char)
        .collect()
}

/// The revision data of a workload: its template as a strategic-merge patch replacing it, as the
/// StatefulSet and DaemonSet controllers store it (`getPatch`).
pub fn revision_data(template: &Value) -> Value {
    let mut t = template.clone();
    if t.is_object() {
        t["$patch"] = json!("replace");
    }
    json!({"spec": {"template": t}})
}

/// The template stored in a revision's data.
pub fn revision_template(revision: &Value) -> Value {
    let mut t = revision["data"]["spec"]["template"].clone();
    t.as_object_mut().map(|m| m.remove("$patch"));
    t
}

/// The ControllerRevisions of `owner` (by controller uid), oldest revision first.
pub fn revisions_of(api: &Api, owner: &Value) -> Vec<Value> {
    let (all, _) = api.store.list(
        &ResKey::new("apps", "controllerrevisions"),
        Some(meta::namespace(owner)),
    );
    let mut out: Vec<Value> = all
        .into_iter()
        .filter(|r| controller_uid(r) == Some(meta::uid_of(owner)))
        .collect();
    out.sort_by_key(|r| r["revision"].as_i64().unwrap_or(0));
    out
}

/// Makes sure the revision of `template` exists, named `<owner>-<hash>` and numbered after the
/// newest (an older revision coming back gets the next number, as `history` does on rollback);
/// returns it (`None` if it could not be written).
pub async fn ensure_revision(api: &Api, owner: &Value, kind: &str, template: &Value) -> Option<Value> {
    let def = api.registry.find("apps", "v1", "controllerrevisions")?;
    let data = revision_data(template);
    let hash = revision_hash(&data);
    let name = format!("{}-{hash}", meta::name(owner));
    let existing = revisions_of(api, owner);
    let newest = existing.last().and_then(|r| r["revision"].as_i64()).unwrap_or(0);
    let ns = meta::namespace(owner);
    if let Some(found) = existing.iter().find(|r| meta::name(r) == name) {
        if found["revision"].as_i64() == Some(newest) {
            return Some(found.clone());
        }
        let mut next = found.clone();
        next["revision"] = json!(newest + 1);
        return api
            .update(&def, ns, &name, next, UpdateMode::Main, false)
            .await
            .ok();
    }
    let mut labels = template["metadata"]["labels"].clone();
    if !labels.is_object() {
        labels = json!({});
    }
    labels["controller-revision-hash"] = json!(hash);
    let revision = json!({
        "metadata": {"name": name, "namespace": ns, "labels": labels,
                     "ownerReferences": [owner_ref(owner, "apps/v1", kind)]},
        "data": data, "revision": newest + 1,
    });
    api.create(&def, ns, revision, false).await.ok()
}

/// Deletes the oldest revisions beyond `spec.revisionHistoryLimit` (default 10) that no live
/// revision name in `in_use` refers to.
pub async fn prune_revisions(api: &Api, owner: &Value, in_use: &[&str]) {
    let Some(def) = api.registry.find("apps", "v1", "controllerrevisions") else {
        return;
    };
    let limit = owner["spec"]["revisionHistoryLimit"]
        .as_i64()
        .unwrap_or(10)
        .max(0) as usize;
    let revisions = revisions_of(api, owner);
    let unused: Vec<&Value> = revisions
        .iter()
        .filter(|r| !in_use.contains(&meta::name(r)))
        .collect();
    for r in unused.iter().take(unused.len().saturating_sub(limit)) {
        delete(api, &def, r).await;
    }
}

/// `intstr.GetScaledValueFromIntOrPercent`: an int, or a percentage of `total` rounded up or down.
pub fn scaled(value: &Value, total: i64, round_up: bool) -> i64 {
    if let Some(n) = value.as_i64() {
        return n;
    }
    let Some(p) = value
        .as_str()
        .and_then(|s| s.strip_suffix('%'))
        .and_then(|p| p.parse::<i64>().ok())
    else {
        return 0;
    };
    if round_up {
        (p * total + 99) / 100
    } else {
        p * total / 100
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn hashes_use_the_safe_alphabet_and_follow_the_data() {
        let a = revision_hash(&json!({"spec": {"template": {"a": 1}}}));
        let b = revision_hash(&json!({"spec": {"template": {"a": 2}}}));
        assert_ne!(a, b);
        assert!(a.bytes().all(|c| SAFE_ALPHABET.contains(&c)), "{a}");
        assert!((1..=10).contains(&a.len()));
    }

    #[test]
    fn revision_data_round_trips() {
        let t = json!({"metadata": {"labels": {"a": "b"}}, "spec": {"containers": []}});
        let rev = json!({"data": revision_data(&t)});
        assert_eq!(rev["data"]["spec"]["template"]["$patch"], "replace");
        assert_eq!(revision_template(&rev), t);
    }

    #[test]
    fn int_or_percent() {
        assert_eq!(scaled(&json!(2), 10, true), 2);
        assert_eq!(scaled(&json!("25%"), 10, true), 3);
        assert_eq!(scaled(&json!("25%"), 10, false), 2);
        assert_eq!(scaled(&json!("x"), 10, false), 0);
    }
}
