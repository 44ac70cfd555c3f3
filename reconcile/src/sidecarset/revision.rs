//! A SidecarSet's ControllerRevisions (docs/sidecarset-controller.md, "ControllerRevisions"; OpenKruise's `registerLatestRevision`,
//! `pkg/control/sidecarcontrol/history_control.go`): kept in kruise-rs's namespace, named
//! `<sidecarset>-<hash>`, holding what injection needs to restore a revision
//! (`injectionStrategy.revision`). The latest is reused when equal, bumped on a rollback, or created;
//! old ones are truncated past `revisionHistoryLimit`, never one a pod or the injection strategy names.

use std::collections::{BTreeMap, BTreeSet};

use k8s_openapi::api::apps::v1::ControllerRevision;
use k8s_openapi::apimachinery::pkg::apis::meta::v1::{ObjectMeta, OwnerReference};
use k8s_openapi::apimachinery::pkg::runtime::RawExtension;
use kruise_api::PodRecord;
use kruise_api::apps_v1beta1::{SIDECARSET_CUSTOM_VERSION_LABEL, SidecarSet};
use serde_json::{Map, Value};

use super::pod_facts;
use crate::history::{go_json_bytes, hash_revision_data, revision_name};

/// The label naming a revision's SidecarSet.
pub const SIDECARSET_NAME_LABEL: &str = "kruise.io/sidecarset-name";
/// The label holding a revision's hash.
pub const HASH_LABEL: &str = "controller.kubernetes.io/hash";
/// Revisions kept without `revisionHistoryLimit`.
const DEFAULT_HISTORY: i32 = 10;

/// A write to ControllerRevisions.
#[derive(Debug, Clone, PartialEq)]
pub enum RevisionWrite {
    Create(ControllerRevision),
    /// Replace: a rollback's new `.revision`, or a new custom-version label.
    Update(ControllerRevision),
    Delete(String),
}

/// The latest revision and the writes that make the history as it should be.
#[derive(Debug, Clone, PartialEq)]
pub struct Revisions {
    pub latest: ControllerRevision,
    pub collision_count: i32,
    pub writes: Vec<RevisionWrite>,
}

/// The revision data: `{"spec":{"$patch":"replace", …}}` with the fields injection restores
/// (absent ones `null`).
pub fn revision_data(set: &SidecarSet) -> Value {
    let spec = serde_json::to_value(&set.spec).unwrap_or_default();
    let mut out = Map::new();
    out.insert("$patch".into(), Value::String("replace".into()));
    for key in [
        "containers",
        "imagePullSecrets",
        "initContainers",
        "patchPodMetadata",
        "volumes",
    ] {
        out.insert(key.into(), spec.get(key).cloned().unwrap_or(Value::Null));
    }
    serde_json::json!({ "spec": out })
}

fn new_revision(set: &SidecarSet, namespace: &str, number: i64, collision_count: i32) -> ControllerRevision {
    let data = revision_data(set);
    let hash = hash_revision_data(&go_json_bytes(&data), Some(collision_count));
    let name = set.metadata.name.clone().unwrap_or_default();
    let mut labels = set.metadata.labels.clone().unwrap_or_default();
    labels.insert(SIDECARSET_NAME_LABEL.into(), name.clone());
    labels.insert(HASH_LABEL.into(), hash.clone());
    if let Some(version) = set.spec.custom_version.as_ref().filter(|v| !v.is_empty()) {
        labels.insert(SIDECARSET_CUSTOM_VERSION_LABEL.into(), version.clone());
    }
    ControllerRevision {
        metadata: ObjectMeta {
            name: Some(revision_name(&name, &hash)),
            namespace: Some(namespace.to_string()),
            labels: Some(labels),
            annotations: set.metadata.annotations.clone(),
            owner_references: Some(vec![OwnerReference {
                api_version: "apps.kruise.io/v1beta1".into(),
                kind: "SidecarSet".into(),
                name,
                uid: set.metadata.uid.clone().unwrap_or_default(),
                controller: Some(true),
                block_owner_deletion: Some(true),
            }]),
            ..ObjectMeta::default()
        },
        data: RawExtension(data),
        revision: Some(number),
    }
}

fn label<'a>(r: &'a ControllerRevision, key: &str) -> Option<&'a str> {
    r.metadata.labels.as_ref()?.get(key).map(String::as_str)
}

/// The SidecarSet's revisions among `all`: labelled with its name, owned by it or by nobody.
pub fn owned<'a>(set: &SidecarSet, all: &'a [impl AsRef<ControllerRevision>]) -> Vec<&'a ControllerRevision> {
    let name = set.metadata.name.as_deref().unwrap_or_default();
    all.iter()
        .map(AsRef::as_ref)
        .filter(|r| label(r, SIDECARSET_NAME_LABEL) == Some(name))
        .filter(|r| {
            let controller = r
                .metadata
                .owner_references
                .iter()
                .flatten()
                .find(|o| o.controller == Some(true));
            controller.is_none_or(|o| Some(&o.uid) == set.metadata.uid.as_ref())
        })
        .collect()
}

/// Registers the latest revision of `set` among its `revisions` (in `namespace`) and truncates the
/// history; `pods` are the matched pods (the revisions they record are kept).
pub fn plan_revisions(
    set: &SidecarSet,
    revisions: &[&ControllerRevision],
    pods: &[&PodRecord],
    namespace: &str,
) -> Revisions {
    let mut sorted: Vec<ControllerRevision> = revisions.iter().map(|r| (*r).clone()).collect();
    sorted.sort_by_key(|r| r.revision.unwrap_or(0));
    let next = sorted.last().map_or(0, |r| r.revision.unwrap_or(0)) + 1;
    let mut collision_count = set.status.as_ref().and_then(|s| s.collision_count).unwrap_or(0);
    let data = revision_data(set);
    let mut writes = Vec::new();
    let equal = sorted.iter().rposition(|r| r.data.0 == data);
    let mut latest = match equal {
        Some(i) if i + 1 == sorted.len() => sorted[i].clone(),
        Some(i) => {
            // A rollback: the equal revision becomes the newest.
            let mut bumped = sorted.remove(i);
            bumped.revision = Some(next);
            writes.push(RevisionWrite::Update(bumped.clone()));
            sorted.push(bumped.clone());
            bumped
        }
        None => loop {
            let candidate = new_revision(set, namespace, next, collision_count);
            if !sorted.iter().any(|r| r.metadata.name == candidate.metadata.name) {
                writes.push(RevisionWrite::Create(candidate.clone()));
                sorted.push(candidate.clone());
                break candidate;
            }
            collision_count = collision_count.saturating_add(1);
        },
    };
    if let Some(version) = set.spec.custom_version.as_ref().filter(|v| !v.is_empty())
        && label(&latest, SIDECARSET_CUSTOM_VERSION_LABEL) != Some(version.as_str())
    {
        latest
            .metadata
            .labels
            .get_or_insert_with(BTreeMap::new)
            .insert(SIDECARSET_CUSTOM_VERSION_LABEL.into(), version.clone());
        match writes.last_mut() {
            Some(RevisionWrite::Create(r) | RevisionWrite::Update(r)) => *r = latest.clone(),
            _ => writes.push(RevisionWrite::Update(latest.clone())),
        }
    }
    writes.extend(
        truncate(set, &sorted, pods)
            .into_iter()
            .map(RevisionWrite::Delete),
    );
    Revisions {
        latest,
        collision_count,
        writes,
    }
}

/// The oldest revisions past `max(1, revisionHistoryLimit)`, never the newest nor one in use: named
/// by a pod's record, by `injectionStrategy.revision.revisionName`, or the newest carrying
/// `injectionStrategy.revision.customVersion`.
fn truncate(set: &SidecarSet, sorted: &[ControllerRevision], pods: &[&PodRecord]) -> Vec<String> {
    let limit = set.spec.revision_history_limit.unwrap_or(DEFAULT_HISTORY).max(1) as usize;
    if sorted.len() <= limit {
        return Vec::new();
    }
    let name = set.metadata.name.as_deref().unwrap_or_default();
    let mut active: BTreeSet<String> = pods
        .iter()
        .map(|p| pod_facts::recorded_revision(p, name))
        .filter(|r| !r.is_empty())
        .collect();
    if let Some(pin) = &set.spec.injection_strategy.revision {
        active.extend(pin.revision_name.clone());
        if let Some(version) = &pin.custom_version
            && let Some(r) = sorted
                .iter()
                .rev()
                .find(|r| label(r, SIDECARSET_CUSTOM_VERSION_LABEL) == Some(version.as_str()))
        {
            active.extend(r.metadata.name.clone());
        }
    }
    let mut excess = sorted.len() - limit;
    let mut out = Vec::new();
    for r in &sorted[..sorted.len() - 1] {
        if excess == 0 {
            break;
        }
        let n = r.metadata.name.clone().unwrap_or_default();
        if !active.contains(&n) {
            out.push(n);
            excess -= 1;
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn set(image: &str, limit: i32) -> SidecarSet {
        serde_json::from_value(json!({"metadata": {"name": "sc", "uid": "s-1", "labels": {"team": "a"}},
            "spec": {"selector": {}, "containers": [{"name": "c", "image": image}], "revisionHistoryLimit": limit}}))
        .unwrap()
    }

    /// Applies the writes to the stored revisions, as the loop would.
    fn store(stored: &mut Vec<ControllerRevision>, writes: &[RevisionWrite]) {
        for w in writes {
            match w {
                RevisionWrite::Create(r) => stored.push(r.clone()),
                RevisionWrite::Update(r) => {
                    let at = stored
                        .iter()
                        .position(|s| s.metadata.name == r.metadata.name)
                        .unwrap();
                    stored[at] = r.clone();
                }
                RevisionWrite::Delete(n) => stored.retain(|s| s.metadata.name.as_ref() != Some(n)),
            }
        }
    }

    fn edit(stored: &mut Vec<ControllerRevision>, set: &SidecarSet) -> Revisions {
        let refs: Vec<&ControllerRevision> = stored.iter().collect();
        let out = plan_revisions(set, &refs, &[], "kruise-system");
        store(stored, &out.writes);
        out
    }

    #[test]
    fn a_revision_is_created_named_labelled_and_owned() {
        let mut stored = Vec::new();
        let out = edit(&mut stored, &set("v1", 10));
        let r = &out.latest;
        let hash = label(r, HASH_LABEL).unwrap().to_string();
        assert_eq!(r.metadata.name.as_deref(), Some(format!("sc-{hash}").as_str()));
        assert_eq!(r.metadata.namespace.as_deref(), Some("kruise-system"));
        assert_eq!(
            (label(r, SIDECARSET_NAME_LABEL), label(r, "team")),
            (Some("sc"), Some("a"))
        );
        assert_eq!(r.metadata.owner_references.as_ref().unwrap()[0].uid, "s-1");
        assert_eq!(r.revision, Some(1));
        assert_eq!(r.data.0["spec"]["$patch"], "replace");
        assert_eq!(r.data.0["spec"]["volumes"], Value::Null);
        // The same spec again: nothing to write.
        assert!(edit(&mut stored, &set("v1", 10)).writes.is_empty());
    }

    #[test]
    fn fifteen_edits_keep_ten_and_a_rollback_renumbers_the_old_revision() {
        let mut stored = Vec::new();
        for i in 1..=15 {
            edit(&mut stored, &set(&format!("v{i}"), 10));
        }
        let numbers: Vec<i64> = stored.iter().map(|r| r.revision.unwrap()).collect();
        assert_eq!(numbers, (6..=15).collect::<Vec<_>>());
        let out = edit(&mut stored, &set("v12", 10));
        assert_eq!(out.latest.revision, Some(16));
        let mut numbers: Vec<i64> = stored.iter().map(|r| r.revision.unwrap()).collect();
        numbers.sort();
        assert_eq!(numbers, [6, 7, 8, 9, 10, 11, 13, 14, 15, 16]);
    }

    #[test]
    fn revisions_in_use_are_never_truncated() {
        let mut stored = Vec::new();
        let first = edit(&mut stored, &set("v1", 1)).latest;
        let pod: PodRecord = serde_json::from_value(json!({"metadata": {"name": "p", "annotations": {
            "kruise.io/sidecarset-hash": json!({"sc": {"hash": "h", "sidecarSetName": "sc",
                "controllerRevision": first.metadata.name}}).to_string()}}}))
        .unwrap();
        let refs: Vec<&ControllerRevision> = stored.iter().collect();
        let out = plan_revisions(&set("v2", 1), &refs, &[&pod], "kruise-system");
        assert!(!out.writes.iter().any(|w| matches!(w, RevisionWrite::Delete(_))));
        let out = plan_revisions(&set("v2", 1), &refs, &[], "kruise-system");
        assert!(
            out.writes
                .contains(&RevisionWrite::Delete(first.metadata.name.unwrap()))
        );
    }
}
