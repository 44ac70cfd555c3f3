//! UnitedDeployment revisions (OpenKruise's `revision.go`; docs/uniteddeployment.md, "Revisions"):
//! only `spec.template` is recorded, so topology changes (replicas, subsets, patches) never make a
//! revision. Revisions are the ControllerRevisions the UD controls, whatever their labels (OpenKruise
//! lists them by the UD selector, which misses every CloneSet-template revision).

use std::collections::BTreeMap;

use k8s_openapi::api::apps::v1::ControllerRevision;
use k8s_openapi::apimachinery::pkg::apis::meta::v1::ObjectMeta;
use k8s_openapi::apimachinery::pkg::runtime::RawExtension;
use kruise_api::apps_v1beta1::UnitedDeployment;
use serde_json::{Value, json};

use crate::history::{Chosen, choose_update, go_json_bytes, hash_revision_data, revision_name, truncate};

/// Label carrying a revision's hash (`controller.kubernetes.io/hash`).
pub const HASH_LABEL: &str = "controller.kubernetes.io/hash";

/// The data of a revision: `{"spec":{"template":{…spec.template…,"$patch":"replace"}}}`.
pub fn revision_data(ud: &UnitedDeployment) -> Value {
    let mut template = serde_json::to_value(&ud.spec.template).unwrap_or_else(|_| json!({}));
    if let Some(t) = template.as_object_mut() {
        t.insert("$patch".into(), json!("replace"));
    }
    json!({"spec": {"template": template}})
}

/// A write to the revision history.
#[derive(Debug, Clone, PartialEq)]
pub enum RevisionWrite {
    /// Create the update revision.
    Create(ControllerRevision),
    /// A rollback: an older revision gets the next `.revision`.
    Update(ControllerRevision),
    /// Delete an old revision (history beyond `revisionHistoryLimit`).
    Delete(String),
}

/// The revisions of one pass.
#[derive(Debug, Clone, PartialEq)]
pub struct Revisions {
    /// Name of the revision subsets are updated to.
    pub update: String,
    /// Name of the revision pods were at before the update (`status.currentRevision`, else `update`).
    pub current: String,
    /// `status.collisionCount` after this pass.
    pub collision_count: Option<i32>,
    /// Deletions first, then the create or update.
    pub writes: Vec<RevisionWrite>,
}

/// Truncates the history (before anything is created, as OpenKruise does) and finds or makes the
/// update revision. `existing` are the revisions the UD controls.
pub fn revisions(ud: &UnitedDeployment, existing: &[ControllerRevision]) -> Revisions {
    let status = ud.status.as_ref();
    let current_name = status.map(|s| s.current_revision.as_str()).unwrap_or_default();
    let updated_name = status.map(|s| s.updated_revision.as_str()).unwrap_or_default();
    let limit = usize::try_from(ud.spec.revision_history_limit.unwrap_or(10)).unwrap_or(0);
    let dead = truncate(existing, current_name, updated_name, &|_| false, limit);
    let kept: Vec<ControllerRevision> = existing
        .iter()
        .filter(|r| {
            !dead
                .iter()
                .any(|d| Some(d.as_str()) == r.metadata.name.as_deref())
        })
        .cloned()
        .collect();
    let mut writes: Vec<RevisionWrite> = dead.into_iter().map(RevisionWrite::Delete).collect();
    let (chosen, collision_count) = choose_update(
        &kept,
        &revision_data(ud),
        status.and_then(|s| s.collision_count),
        &|number, collisions| new_revision(ud, number, collisions),
    );
    let update = match chosen {
        Chosen::Existing(r) => r,
        Chosen::Bumped(r) => {
            writes.push(RevisionWrite::Update(r.clone()));
            r
        }
        Chosen::Created(r) => {
            writes.push(RevisionWrite::Create(r.clone()));
            r
        }
    };
    let update = update.metadata.name.unwrap_or_default();
    let current = kept
        .iter()
        .filter_map(|r| r.metadata.name.as_deref())
        .find(|n| !current_name.is_empty() && *n == current_name)
        .map_or_else(|| update.clone(), str::to_string);
    Revisions {
        update,
        current,
        collision_count,
        writes,
    }
}

/// A new revision numbered `number`: named `<ud>-<hash>`, labelled with the workload template's labels
/// and the hash, controlled by the UD.
fn new_revision(ud: &UnitedDeployment, number: i64, collisions: Option<i32>) -> ControllerRevision {
    let data = revision_data(ud);
    let hash = hash_revision_data(&go_json_bytes(&data), collisions);
    let ud_name = ud.metadata.name.clone().unwrap_or_default();
    let mut labels: BTreeMap<String, String> = ud
        .spec
        .template
        .first()
        .and_then(|(_, t)| t.metadata.labels.clone())
        .unwrap_or_default();
    labels.insert(HASH_LABEL.into(), hash.clone());
    ControllerRevision {
        metadata: ObjectMeta {
            name: Some(revision_name(&ud_name, &hash)),
            namespace: ud.metadata.namespace.clone(),
            labels: Some(labels),
            owner_references: Some(vec![super::claim::controller_reference(ud)]),
            ..ObjectMeta::default()
        },
        data: RawExtension(data),
        revision: Some(number),
    }
}
