//! A pod's identity in an Advanced StatefulSet: its ordinal and name, the pod and claims created for
//! an ordinal, and the ownerReferences the claim retention policy wants (docs/advanced-statefulset.md).

use std::collections::BTreeSet;

use k8s_openapi::api::core::v1::{
    PersistentVolumeClaim, PersistentVolumeClaimVolumeSource, Pod, PodTemplateSpec, Volume,
};
use k8s_openapi::apimachinery::pkg::apis::meta::v1::{ObjectMeta, OwnerReference};
use k8s_openapi::jiff::Timestamp;
use kruise_api::PodRecord;
use kruise_api::apps_v1beta1::{
    POD_INDEX_LABEL, PersistentVolumeClaimRetentionPolicyType as Retention, STATEFULSET_POD_NAME_LABEL,
    StatefulSet,
};
use kruise_api::common::{LIFECYCLE_STATE_KEY, LIFECYCLE_TIMESTAMP_KEY};
use serde_json::{Value, json};

use crate::action::Action;
use crate::pods::CONTROLLER_REVISION_HASH;

/// The set's name (`""` when unset).
pub fn set_name(set: &StatefulSet) -> &str {
    set.metadata.name.as_deref().unwrap_or("")
}

/// The ordinal of a pod named `<set>-<N>`; `None` for any other name.
pub fn ordinal_of(set: &str, pod: &str) -> Option<i64> {
    let digits = pod.strip_prefix(set)?.strip_prefix('-')?;
    if digits.is_empty() || !digits.bytes().all(|b| b.is_ascii_digit()) {
        return None;
    }
    digits.parse().ok()
}

/// `<set>-<ordinal>`.
pub fn pod_name(set: &str, ordinal: i64) -> String {
    format!("{set}-{ordinal}")
}

/// `<claim>-<set>-<ordinal>`.
pub fn claim_name(claim: &str, set: &str, ordinal: i64) -> String {
    format!("{claim}-{set}-{ordinal}")
}

/// The first ordinal (`ordinals.start`, 0 without).
pub fn start(set: &StatefulSet) -> i64 {
    set.spec.ordinals.as_ref().map_or(0, |o| i64::from(o.start))
}

/// The reserved ordinals (an invalid range empties them, as OpenKruise does at runtime).
pub fn reserved(set: &StatefulSet) -> BTreeSet<i64> {
    let replicas = i64::from(set.spec.replicas.unwrap_or(1).max(0));
    let list = set.spec.reserve_ordinals.as_deref().unwrap_or_default();
    kruise_core::ordinals::reserved(list, start(set) + replicas + list.len() as i64 + 1)
}

/// The controller ownerReference pointing at the set.
pub fn owner_reference(set: &StatefulSet) -> OwnerReference {
    OwnerReference {
        api_version: "apps.kruise.io/v1beta1".into(),
        kind: "StatefulSet".into(),
        name: set_name(set).to_owned(),
        uid: set.metadata.uid.clone().unwrap_or_default(),
        controller: Some(true),
        block_owner_deletion: Some(true),
    }
}

/// The names of the volumeClaimTemplates.
pub fn template_claims(set: &StatefulSet) -> impl Iterator<Item = (&str, &PersistentVolumeClaim)> {
    set.spec
        .volume_claim_templates
        .iter()
        .flatten()
        .map(|t| (t.metadata.name.as_deref().unwrap_or(""), t))
}

/// The claims of `ordinal`: copies of the templates, labelled with the template's labels overlaid by
/// `selector.matchLabels`, without ownerReferences (retention adds them).
pub fn claims_for(set: &StatefulSet, ordinal: i64) -> Vec<PersistentVolumeClaim> {
    let selector_labels = set
        .spec
        .selector
        .as_ref()
        .and_then(|s| s.match_labels.clone())
        .unwrap_or_default();
    template_claims(set)
        .map(|(name, t)| {
            let mut labels = t.metadata.labels.clone().unwrap_or_default();
            labels.extend(selector_labels.clone());
            PersistentVolumeClaim {
                metadata: ObjectMeta {
                    name: Some(claim_name(name, set_name(set), ordinal)),
                    namespace: set.metadata.namespace.clone(),
                    labels: Some(labels),
                    annotations: t.metadata.annotations.clone(),
                    ..Default::default()
                },
                spec: t.spec.clone(),
                status: None,
            }
        })
        .collect()
}

/// The pod of `ordinal` at `revision` (full revision name) from `template`. Its lifecycle state is
/// `PreparingNormal` while a `preNormal` hook is not all-hooked on it, else `Normal`.
pub fn new_pod(
    set: &StatefulSet,
    template: &PodTemplateSpec,
    revision: &str,
    ordinal: i64,
    now: Timestamp,
) -> Pod {
    let name = pod_name(set_name(set), ordinal);
    let tmeta = template.metadata.clone().unwrap_or_default();
    let mut labels = tmeta.labels.unwrap_or_default();
    labels.insert(STATEFULSET_POD_NAME_LABEL.into(), name.clone());
    labels.insert(POD_INDEX_LABEL.into(), ordinal.to_string());
    labels.insert(CONTROLLER_REVISION_HASH.into(), revision.into());
    let mut annotations = tmeta.annotations.unwrap_or_default();
    annotations.insert(LIFECYCLE_TIMESTAMP_KEY.into(), crate::rfc3339::rfc3339(now));
    let mut record = PodRecord::default();
    record.metadata.labels = labels.iter().collect();
    record.metadata.finalizers = tmeta.finalizers.clone();
    let pre_normal = set.spec.lifecycle.as_ref().and_then(|l| l.pre_normal.as_ref());
    let state = if pre_normal.is_some() && !crate::lifecycle::is_all_hooked(pre_normal, &record) {
        "PreparingNormal"
    } else {
        "Normal"
    };
    labels.insert(LIFECYCLE_STATE_KEY.into(), state.into());
    let mut spec = template.spec.clone().unwrap_or_default();
    spec.hostname = Some(name.clone());
    if !set.spec.service_name.is_empty() {
        spec.subdomain = Some(set.spec.service_name.clone());
    }
    let claims: Vec<(String, String)> = template_claims(set)
        .map(|(vct, _)| (vct.to_owned(), claim_name(vct, set_name(set), ordinal)))
        .collect();
    if !claims.is_empty() {
        let mut volumes: Vec<Volume> = spec
            .volumes
            .take()
            .into_iter()
            .flatten()
            .filter(|v| !claims.iter().any(|(vct, _)| vct == &v.name))
            .collect();
        volumes.extend(claims.into_iter().map(|(vct, claim)| Volume {
            name: vct,
            persistent_volume_claim: Some(PersistentVolumeClaimVolumeSource {
                claim_name: claim,
                read_only: None,
            }),
            ..Default::default()
        }));
        spec.volumes = Some(volumes);
    }
    Pod {
        metadata: ObjectMeta {
            name: Some(name),
            generate_name: Some(format!("{}-", set_name(set))),
            namespace: set.metadata.namespace.clone(),
            labels: Some(labels),
            annotations: Some(annotations),
            finalizers: tmeta.finalizers,
            owner_references: Some(vec![owner_reference(set)]),
            ..Default::default()
        },
        spec: Some(spec),
        status: None,
    }
}

/// Which plain ownerReferences a claim of a pod should carry: (the set, the pod). `scaled_down` when
/// the pod's ordinal left the range.
pub fn wanted_claim_owners(set: &StatefulSet, scaled_down: bool) -> (bool, bool) {
    let policy = set.spec.persistent_volume_claim_retention_policy.as_ref();
    let deleted = policy.and_then(|p| p.when_deleted.as_ref()) == Some(&Retention::Delete);
    let scaled = policy.and_then(|p| p.when_scaled.as_ref()) == Some(&Retention::Delete);
    match (deleted, scaled) {
        (false, false) => (false, false),
        (true, false) => (true, false),
        (false, true) => (false, scaled_down),
        (true, true) => (!scaled_down, scaled_down),
    }
}

/// The claim patch (strategic merge, ownerReferences keyed by uid) that gives `claim` the owners the
/// retention policy wants for `pod`, or `None` when it has them. A claim ownerReference to another
/// pod of the same name (an older incarnation) is left alone.
pub fn retention_patch(
    set: &StatefulSet,
    pod: &PodRecord,
    claim: &PersistentVolumeClaim,
    scaled_down: bool,
) -> Option<Action> {
    let (want_set, want_pod) = wanted_claim_owners(set, scaled_down);
    let owners = claim.metadata.owner_references.as_deref().unwrap_or_default();
    let set_uid = set.metadata.uid.as_deref().unwrap_or("");
    let pod_uid = pod.metadata.uid.as_deref().unwrap_or("");
    let has = |uid: &str| !uid.is_empty() && owners.iter().any(|o| o.uid == uid);
    let mut refs: Vec<Value> = Vec::new();
    if want_set != has(set_uid) && !set_uid.is_empty() {
        refs.push(if want_set {
            json!({"apiVersion": "apps.kruise.io/v1beta1", "kind": "StatefulSet",
                "name": set_name(set), "uid": set_uid})
        } else {
            json!({"$patch": "delete", "uid": set_uid})
        });
    }
    if want_pod != has(pod_uid) && !pod_uid.is_empty() {
        refs.push(if want_pod {
            json!({"apiVersion": "v1", "kind": "Pod", "name": crate::pods::name(pod), "uid": pod_uid})
        } else {
            json!({"$patch": "delete", "uid": pod_uid})
        });
    }
    (!refs.is_empty()).then(|| Action::PatchPvc {
        name: claim.metadata.name.clone().unwrap_or_default(),
        patch: json!({"metadata": {"ownerReferences": refs}}),
    })
}

/// The claim still belongs to an older pod of the same name (a Pod ownerReference whose uid is not
/// `pod_uid`); the set waits for the garbage collector before reusing the name.
pub fn owned_by_older_pod(claim: &PersistentVolumeClaim, pod_name: &str, pod_uid: Option<&str>) -> bool {
    claim
        .metadata
        .owner_references
        .iter()
        .flatten()
        .any(|o| o.kind == "Pod" && o.name == pod_name && Some(o.uid.as_str()) != pod_uid)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::statefulset::testing::set;

    #[test]
    fn ordinals_are_parsed_from_names_of_the_set_only() {
        let cases = [
            ("web-0", Some(0)),
            ("web-12", Some(12)),
            ("web-", None),
            ("web-1a", None),
            ("web--1", None),
            ("webx-1", None),
            ("web-a-1", None),
        ];
        for (name, want) in cases {
            assert_eq!(ordinal_of("web", name), want, "{name}");
        }
    }

    #[test]
    fn retention_owners_follow_the_policy_table() {
        let p = |d: &str, s: &str| {
            let mut x = set(3);
            x.spec.persistent_volume_claim_retention_policy = Some(
                kruise_api::apps_v1beta1::StatefulSetPersistentVolumeClaimRetentionPolicy {
                    when_deleted: Some(if d == "Delete" {
                        Retention::Delete
                    } else {
                        Retention::Retain
                    }),
                    when_scaled: Some(if s == "Delete" {
                        Retention::Delete
                    } else {
                        Retention::Retain
                    }),
                },
            );
            x
        };
        let cases = [
            ("Retain", "Retain", false, (false, false)),
            ("Retain", "Retain", true, (false, false)),
            ("Delete", "Retain", false, (true, false)),
            ("Delete", "Retain", true, (true, false)),
            ("Retain", "Delete", false, (false, false)),
            ("Retain", "Delete", true, (false, true)),
            ("Delete", "Delete", false, (true, false)),
            ("Delete", "Delete", true, (false, true)),
        ];
        for (d, s, down, want) in cases {
            assert_eq!(
                wanted_claim_owners(&p(d, s), down),
                want,
                "{d}/{s} scaled down {down}"
            );
        }
    }
}
