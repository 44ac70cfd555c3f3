//! ControllerRevisions of an Advanced DaemonSet, upstream DaemonSet style: data
//! `{"spec":{"template":{…,"$patch":"replace"}}}`, labels the template's plus
//! `controller-revision-hash`, name `<ds>-<hash>`. An existing revision with the same data is reused
//! with its own label hash (Kubernetes' `ComputeHash` hashes Go structs and cannot be reproduced), so a
//! DaemonSet taken over from OpenKruise keeps its pods' hash.

use k8s_openapi::api::apps::v1::ControllerRevision;
use k8s_openapi::apimachinery::pkg::apis::meta::v1::{ObjectMeta, OwnerReference};
use k8s_openapi::apimachinery::pkg::runtime::RawExtension;
use kruise_api::apps_v1beta1::DaemonSet;

use crate::history::{
    Chosen, choose_update, go_json_bytes, hash_revision_data, revision_name, template_data, truncate,
};
use crate::pods::CONTROLLER_REVISION_HASH;

/// The DaemonSet's name (`""` when unset).
pub fn ds_name(ds: &DaemonSet) -> &str {
    ds.metadata.name.as_deref().unwrap_or("")
}

/// The controller ownerReference of the DaemonSet's pods and revisions.
pub fn owner_reference(ds: &DaemonSet) -> OwnerReference {
    OwnerReference {
        api_version: "apps.kruise.io/v1beta1".into(),
        kind: "DaemonSet".into(),
        name: ds_name(ds).to_owned(),
        uid: ds.metadata.uid.clone().unwrap_or_default(),
        controller: Some(true),
        block_owner_deletion: Some(true),
    }
}

/// The hash a revision carries in its `controller-revision-hash` label, else its name (an unlabelled
/// revision is known by its name, as upstream relabels it).
pub fn hash_of(revision: &ControllerRevision) -> &str {
    revision
        .metadata
        .labels
        .as_ref()
        .and_then(|l| l.get(CONTROLLER_REVISION_HASH))
        .map(String::as_str)
        .or(revision.metadata.name.as_deref())
        .unwrap_or("")
}

/// A new revision of the DaemonSet's template with `.revision` `number`.
pub fn new_revision(ds: &DaemonSet, number: i64, collision_count: Option<i32>) -> ControllerRevision {
    let data = template_data(&ds.spec.template);
    let hash = hash_revision_data(&go_json_bytes(&data), collision_count);
    let mut labels = ds
        .spec
        .template
        .metadata
        .as_ref()
        .and_then(|m| m.labels.clone())
        .unwrap_or_default();
    labels.insert(CONTROLLER_REVISION_HASH.into(), hash.clone());
    ControllerRevision {
        metadata: ObjectMeta {
            name: Some(revision_name(ds_name(ds), &hash)),
            namespace: ds.metadata.namespace.clone(),
            labels: Some(labels),
            annotations: ds.metadata.annotations.clone(),
            owner_references: Some(vec![owner_reference(ds)]),
            ..Default::default()
        },
        data: RawExtension(data),
        revision: Some(number),
    }
}

/// The current revision and what to write for it.
#[derive(Debug, Clone)]
pub struct Current {
    /// The revision of the current template.
    pub revision: ControllerRevision,
    /// Its hash (`status.updateRevision`, the pods' `controller-revision-hash`).
    pub hash: String,
    /// A revision to create, or an older one with a bumped `.revision` to update.
    pub write: Option<(bool, ControllerRevision)>,
    /// `status.collisionCount` after the choice.
    pub collision_count: Option<i32>,
}

/// Chooses the current revision: the newest with the template's data, an older one bumped (a
/// rollback), or a new one.
pub fn current(ds: &DaemonSet, revisions: &[ControllerRevision]) -> Current {
    let collisions = ds.status.as_ref().and_then(|s| s.collision_count);
    let (chosen, collision_count) = choose_update(
        revisions,
        &template_data(&ds.spec.template),
        collisions,
        &|number, c| new_revision(ds, number, c),
    );
    let (revision, write) = match chosen {
        Chosen::Existing(r) => (r, None),
        Chosen::Bumped(r) => (r.clone(), Some((false, r))),
        Chosen::Created(r) => (r.clone(), Some((true, r))),
    };
    Current {
        hash: hash_of(&revision).to_owned(),
        revision,
        write,
        collision_count,
    }
}

/// Revisions to delete beyond `revisionHistoryLimit` (default 10): the oldest that are not current and
/// whose hash no pod carries.
pub fn truncate_history(
    ds: &DaemonSet,
    revisions: &[ControllerRevision],
    current: &str,
    pod_hashes: &dyn Fn(&str) -> bool,
) -> Vec<String> {
    let limit = usize::try_from(ds.spec.revision_history_limit.unwrap_or(10)).unwrap_or(0);
    let in_use = |name: &str| {
        revisions
            .iter()
            .find(|r| r.metadata.name.as_deref() == Some(name))
            .is_some_and(|r| pod_hashes(hash_of(r)))
    };
    truncate(revisions, current, current, &in_use, limit)
}
