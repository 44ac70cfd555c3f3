//! ControllerRevisions of an Advanced StatefulSet: Kubernetes' controller history, as OpenKruise uses
//! it. Data `{"spec":{"template":{…,"$patch":"replace"}}}`, labels the template's plus
//! `controller.kubernetes.io/hash`, name `<set>-<hash>` with the collision count always hashed in.

use k8s_openapi::api::apps::v1::ControllerRevision;
use k8s_openapi::apimachinery::pkg::apis::meta::v1::ObjectMeta;
use k8s_openapi::apimachinery::pkg::runtime::RawExtension;
use kruise_api::PodRecord;
use kruise_api::apps_v1beta1::StatefulSet;

use crate::cloneset::revision::{ActiveRevisions, RevisionAction};
use crate::history::{
    Chosen, choose_update, go_json_bytes, hash_revision_data, revision_name, template_data, truncate,
};
use crate::pods::label;
use crate::statefulset::identity::owner_reference;

pub use crate::cloneset::revision::{RevisionError, template_of};
/// The revision label holding its hash.
pub use crate::sidecarset::revision::HASH_LABEL;

/// Builds the revision of the set's current template (`newRevision`).
pub fn new_revision(set: &StatefulSet, number: i64, collision_count: Option<i32>) -> ControllerRevision {
    let data = template_data(&set.spec.template);
    let hash = hash_revision_data(&go_json_bytes(&data), Some(collision_count.unwrap_or(0)));
    let mut labels = set
        .spec
        .template
        .metadata
        .as_ref()
        .and_then(|m| m.labels.clone())
        .unwrap_or_default();
    labels.insert(HASH_LABEL.into(), hash.clone());
    ControllerRevision {
        metadata: ObjectMeta {
            name: Some(revision_name(set.metadata.name.as_deref().unwrap_or(""), &hash)),
            namespace: set.metadata.namespace.clone(),
            labels: Some(labels),
            annotations: set.metadata.annotations.clone(),
            owner_references: Some(vec![owner_reference(set)]),
            ..Default::default()
        },
        data: RawExtension(data),
        revision: Some(number),
    }
}

/// The update revision (reused, bumped for a rollback, or created) and the current one
/// (`status.currentRevision` when it still exists, else the update revision).
pub fn active_revisions(set: &StatefulSet, revisions: &[ControllerRevision]) -> ActiveRevisions {
    let status = set.status.as_ref();
    let (chosen, collision_count) = choose_update(
        revisions,
        &template_data(&set.spec.template),
        status.and_then(|s| s.collision_count),
        &|number, collisions| new_revision(set, number, collisions),
    );
    let mut actions = Vec::new();
    let update = match chosen {
        Chosen::Existing(r) => r,
        Chosen::Bumped(r) => {
            actions.push(RevisionAction::Update(r.clone()));
            r
        }
        Chosen::Created(r) => {
            actions.push(RevisionAction::Create(r.clone()));
            r
        }
    };
    let current = status
        .and_then(|s| s.current_revision.as_deref())
        .and_then(|n| revisions.iter().find(|r| r.metadata.name.as_deref() == Some(n)))
        .map_or_else(|| update.clone(), Clone::clone);
    ActiveRevisions {
        update,
        current,
        collision_count: Some(collision_count.unwrap_or(0)),
        actions,
    }
}

/// Revisions to delete: beyond `revisionHistoryLimit` (default 10), the oldest of those that are
/// neither current, update, nor named by a pod.
pub fn truncate_history(
    set: &StatefulSet,
    revisions: &[ControllerRevision],
    pods: &[&PodRecord],
    current: &str,
    update: &str,
) -> Vec<String> {
    let limit = usize::try_from(set.spec.revision_history_limit.unwrap_or(10)).unwrap_or(0);
    truncate(
        revisions,
        current,
        update,
        &|n| {
            pods.iter()
                .any(|p| label(p, crate::pods::CONTROLLER_REVISION_HASH) == Some(n))
        },
        limit,
    )
}
