//! ControllerRevisions of a CloneSet, built, named and chosen as OpenKruise
//! does (docs/cloneset-controller.md#revisions).
//!
//! A revision's `data` is `{"spec":{"template":{…,"$patch":"replace"}}}`; its name is
//! `<cloneset>-<hash>`, hashed and named as Kubernetes' controller history does ([`crate::history`]).

use k8s_openapi::api::apps::v1::ControllerRevision;
use k8s_openapi::api::core::v1::{PersistentVolumeClaim, PodTemplateSpec};
use k8s_openapi::apimachinery::pkg::apis::meta::v1::{ObjectMeta, OwnerReference};
use k8s_openapi::apimachinery::pkg::runtime::RawExtension;
use kruise_api::PodRecord;
use kruise_api::apps_v1beta1::CloneSet;
use serde_json::{Value, json};

use crate::history::{
    Chosen, FNV_OFFSET, choose_update, go_json_bytes, hash_revision_data, revision_name, template_data,
    truncate,
};
use crate::pods::{CONTROLLER_REVISION_HASH, is_at_revision};

/// Revision annotation holding the hash of the volumeClaimTemplates.
pub const VCT_HASH_ANNOTATION: &str = "kruise.io/cloneset-volumeclaimtemplate-hash";

/// A revision that cannot be used.
#[derive(Debug, thiserror::Error)]
pub enum RevisionError {
    /// The revision's data has no `spec.template` object.
    #[error("ControllerRevision {0} has no spec.template in its data")]
    NoTemplate(String),
    /// The template does not decode as a pod template.
    #[error("ControllerRevision {name} holds an invalid pod template: {source}")]
    InvalidTemplate {
        /// Revision name.
        name: String,
        /// Decoding error.
        source: serde_json::Error,
    },
}

/// The revision data of a CloneSet: its template with the `"$patch":"replace"` marker.
pub fn revision_data(cs: &CloneSet) -> Value {
    template_data(&cs.spec.template)
}

/// The hash of the volumeClaimTemplates (name and spec, sorted by name), FNV-1a 32 of their JSON; `""`
/// without templates. Only compared between revisions built by kruise-rs.
pub fn vct_hash(templates: Option<&[PersistentVolumeClaim]>) -> String {
    let Some(templates) = templates.filter(|t| !t.is_empty()) else {
        return String::new();
    };
    let mut reduced: Vec<Value> = templates
        .iter()
        .map(|t| json!({"metadata": {"name": t.metadata.name, "creationTimestamp": null}, "spec": t.spec}))
        .collect();
    reduced.sort_by(|a, b| {
        a["metadata"]["name"]
            .as_str()
            .cmp(&b["metadata"]["name"].as_str())
    });
    let bytes = go_json_bytes(&Value::Array(reduced));
    let mut h: u32 = FNV_OFFSET;
    for b in bytes {
        h = (h ^ u32::from(b)).wrapping_mul(0x0100_0193);
    }
    h.to_string()
}

/// The controller ownerReference pointing at the CloneSet.
pub fn owner_reference(cs: &CloneSet) -> OwnerReference {
    OwnerReference {
        api_version: "apps.kruise.io/v1beta1".into(),
        kind: "CloneSet".into(),
        name: cs.metadata.name.clone().unwrap_or_default(),
        uid: cs.metadata.uid.clone().unwrap_or_default(),
        controller: Some(true),
        block_owner_deletion: Some(true),
    }
}

/// Builds the ControllerRevision of the CloneSet's current spec (`NewRevision`).
pub fn new_revision(cs: &CloneSet, number: i64, collision_count: Option<i32>) -> ControllerRevision {
    let data = revision_data(cs);
    let bytes = go_json_bytes(&data);
    let hash = hash_revision_data(&bytes, collision_count);
    let mut labels = cs
        .spec
        .template
        .metadata
        .as_ref()
        .and_then(|m| m.labels.clone())
        .unwrap_or_default();
    labels.insert(CONTROLLER_REVISION_HASH.into(), hash.clone());
    let mut annotations = cs.metadata.annotations.clone().unwrap_or_default();
    annotations.insert(
        VCT_HASH_ANNOTATION.into(),
        vct_hash(cs.spec.volume_claim_templates.as_deref()),
    );
    ControllerRevision {
        metadata: ObjectMeta {
            name: Some(revision_name(cs.metadata.name.as_deref().unwrap_or(""), &hash)),
            namespace: cs.metadata.namespace.clone(),
            labels: Some(labels),
            annotations: Some(annotations),
            owner_references: Some(vec![owner_reference(cs)]),
            ..Default::default()
        },
        data: RawExtension(data),
        revision: Some(number),
    }
}

/// The pod template stored in a revision.
pub fn template_of(rev: &ControllerRevision) -> Result<PodTemplateSpec, RevisionError> {
    let name = rev.metadata.name.clone().unwrap_or_default();
    let mut template = rev
        .data
        .0
        .get("spec")
        .and_then(|s| s.get("template"))
        .filter(|t| t.is_object())
        .cloned()
        .ok_or_else(|| RevisionError::NoTemplate(name.clone()))?;
    if let Some(obj) = template.as_object_mut() {
        obj.remove("$patch");
    }
    serde_json::from_value(template).map_err(|source| RevisionError::InvalidTemplate { name, source })
}

/// A write to ControllerRevisions.
#[derive(Debug, Clone, PartialEq)]
pub enum RevisionAction {
    /// Create this revision.
    Create(ControllerRevision),
    /// Replace this existing revision (a rollback bumps `.revision`, and may refresh the VCT hash).
    Update(ControllerRevision),
    /// Delete the revision of this name (history truncation).
    Delete(String),
}

/// The outcome of [`active_revisions`].
#[derive(Debug, Clone, PartialEq)]
pub struct ActiveRevisions {
    /// The revision pods are moving to.
    pub update: ControllerRevision,
    /// The revision the CloneSet is moving from (`update` when unknown).
    pub current: ControllerRevision,
    /// `status.collisionCount` after this pass.
    pub collision_count: Option<i32>,
    /// Writes needed to make `update` exist as described.
    pub actions: Vec<RevisionAction>,
}

/// OpenKruise's `getActiveRevisions`: reuse the newest equal revision, bump an older equal one
/// (rollback), or create a new one, stepping `collisionCount` on a name clash with different data.
/// `revisions` are those owned by the CloneSet, in any order.
pub fn active_revisions(cs: &CloneSet, revisions: &[ControllerRevision]) -> ActiveRevisions {
    let status = cs.status.as_ref();
    let (chosen, collision_count) = choose_update(
        revisions,
        &revision_data(cs),
        status.and_then(|s| s.collision_count),
        &|number, collisions| new_revision(cs, number, collisions),
    );
    let mut actions = Vec::new();
    let update = match chosen {
        Chosen::Existing(r) => r,
        Chosen::Bumped(mut bumped) => {
            let want = vct_hash(cs.spec.volume_claim_templates.as_deref());
            let annotations = bumped.metadata.annotations.get_or_insert_default();
            if annotations.get(VCT_HASH_ANNOTATION) != Some(&want) {
                annotations.insert(VCT_HASH_ANNOTATION.into(), want);
            }
            actions.push(RevisionAction::Update(bumped.clone()));
            bumped
        }
        Chosen::Created(r) => {
            actions.push(RevisionAction::Create(r.clone()));
            r
        }
    };
    let current_name = status.and_then(|s| s.current_revision.as_deref());
    let current = current_name
        .and_then(|n| revisions.iter().find(|r| r.metadata.name.as_deref() == Some(n)))
        .map_or_else(|| update.clone(), Clone::clone);
    ActiveRevisions {
        update,
        current,
        collision_count,
        actions,
    }
}

/// Revisions to delete so that at most `revisionHistoryLimit` (default 10) revisions that are neither
/// current, update, nor used by a pod remain; the oldest go first.
pub fn truncate_history(
    cs: &CloneSet,
    revisions: &[ControllerRevision],
    pods: &[&PodRecord],
    current: &str,
    update: &str,
) -> Vec<String> {
    let limit = usize::try_from(cs.spec.revision_history_limit.unwrap_or(10)).unwrap_or(0);
    truncate(
        revisions,
        current,
        update,
        &|n| pods.iter().any(|p| is_at_revision(p, n)),
        limit,
    )
}

/// Labels of a revision: kept for callers that index revisions by hash.
pub fn revision_hash(rev: &ControllerRevision) -> Option<&str> {
    rev.metadata
        .labels
        .as_ref()?
        .get(CONTROLLER_REVISION_HASH)
        .map(String::as_str)
}

#[cfg(test)]
mod tests;
