//! New pods and PVCs as OpenKruise creates them (docs/cloneset-controller.md#new-pods-and-pvcs, #pvcs).

use std::collections::{BTreeMap, BTreeSet};

use k8s_openapi::api::core::v1::{
    PersistentVolumeClaim, PersistentVolumeClaimVolumeSource, Pod, PodReadinessGate, PodTemplateSpec, Volume,
};
use k8s_openapi::apimachinery::pkg::apis::meta::v1::ObjectMeta;
use k8s_openapi::jiff::Timestamp;
use kruise_api::PodRecord;
use kruise_api::apps_v1beta1::{CLONESET_INSTANCE_ID, CloneSet};
use kruise_api::common::{IN_PLACE_UPDATE_READY, LIFECYCLE_STATE_KEY, LIFECYCLE_TIMESTAMP_KEY};
use kruise_core::selector::LabelSource;

use crate::cloneset::revision::owner_reference;
use crate::pods::{CONTROLLER_REVISION_HASH, POD_TEMPLATE_HASH, short_hash};

/// Length of an instance id.
pub const INSTANCE_ID_LEN: usize = 5;

/// The PVC name of a volumeClaimTemplate for an instance: `<vct>-<cloneset>-<id>`.
pub fn pvc_name(vct: &str, cloneset: &str, id: &str) -> String {
    format!("{vct}-{cloneset}-{id}")
}

/// The PVCs of instance `id`, keyed by volumeClaimTemplate name (`GetPersistentVolumeClaims`).
pub fn claims_for(cs: &CloneSet, id: &str) -> BTreeMap<String, PersistentVolumeClaim> {
    let cs_name = cs.metadata.name.as_deref().unwrap_or("");
    let mut labels = cs
        .spec
        .selector
        .as_ref()
        .and_then(|s| s.match_labels.clone())
        .unwrap_or_default();
    labels.insert(CLONESET_INSTANCE_ID.into(), id.into());
    cs.spec
        .volume_claim_templates
        .iter()
        .flatten()
        .map(|t| {
            let vct = t.metadata.name.clone().unwrap_or_default();
            let mut claim = t.clone();
            claim.metadata = ObjectMeta {
                name: Some(pvc_name(&vct, cs_name, id)),
                namespace: cs.metadata.namespace.clone(),
                labels: Some(labels.clone()),
                annotations: t.metadata.annotations.clone(),
                owner_references: Some(vec![owner_reference(cs)]),
                ..Default::default()
            };
            claim.status = None;
            (vct, claim)
        })
        .collect()
}

/// The pod of instance `id` at `revision` (full revision name) from `template`.
pub fn new_pod(cs: &CloneSet, template: &PodTemplateSpec, revision: &str, id: &str, now: Timestamp) -> Pod {
    let cs_name = cs.metadata.name.as_deref().unwrap_or("");
    let tmeta = template.metadata.clone().unwrap_or_default();
    let mut labels = tmeta.labels.unwrap_or_default();
    labels.insert(CONTROLLER_REVISION_HASH.into(), revision.into());
    labels.insert(POD_TEMPLATE_HASH.into(), short_hash(revision).into());
    labels.insert(CLONESET_INSTANCE_ID.into(), id.into());
    labels.insert(LIFECYCLE_STATE_KEY.into(), "PreparingNormal".into());
    let mut annotations = tmeta.annotations.unwrap_or_default();
    annotations.insert(LIFECYCLE_TIMESTAMP_KEY.into(), crate::rfc3339::rfc3339(now));
    let mut spec = template.spec.clone().unwrap_or_default();
    let gates = spec.readiness_gates.get_or_insert_default();
    if !gates.iter().any(|g| g.condition_type == IN_PLACE_UPDATE_READY) {
        gates.push(PodReadinessGate {
            condition_type: IN_PLACE_UPDATE_READY.into(),
        });
    }
    let claims = claims_for(cs, id);
    if !claims.is_empty() {
        let mut volumes: Vec<Volume> = claims
            .iter()
            .map(|(vct, claim)| Volume {
                name: vct.clone(),
                persistent_volume_claim: Some(PersistentVolumeClaimVolumeSource {
                    claim_name: claim.metadata.name.clone().unwrap_or_default(),
                    read_only: None,
                }),
                ..Default::default()
            })
            .collect();
        volumes.extend(
            spec.volumes
                .take()
                .into_iter()
                .flatten()
                .filter(|v| !claims.contains_key(&v.name)),
        );
        spec.volumes = Some(volumes);
    }
    Pod {
        metadata: ObjectMeta {
            name: Some(format!("{cs_name}-{id}")),
            namespace: cs.metadata.namespace.clone(),
            labels: Some(labels),
            annotations: Some(annotations),
            finalizers: tmeta.finalizers,
            owner_references: Some(vec![owner_reference(cs)]),
            ..Default::default()
        },
        spec: Some(spec),
        status: None,
    }
}

/// `n` instance ids for new pods (`getOrGenAvailableIDs`): ids of PVCs without a pod first (sorted),
/// then fresh ones from `generate`, unique among the ids of pods and PVCs.
pub fn available_ids(
    n: usize,
    pods: &[&PodRecord],
    pvcs: &[&PersistentVolumeClaim],
    generate: &mut dyn FnMut() -> String,
) -> Vec<String> {
    let id_of = |labels: &dyn LabelSource| labels.label(CLONESET_INSTANCE_ID).map(str::to_owned);
    let mut existing: BTreeSet<String> = BTreeSet::new();
    let mut free: BTreeSet<String> = BTreeSet::new();
    for id in pvcs
        .iter()
        .filter_map(|p| id_of(&p.metadata.labels))
        .filter(|id| !id.is_empty())
    {
        existing.insert(id.clone());
        free.insert(id);
    }
    for id in pods
        .iter()
        .filter_map(|p| id_of(&p.metadata.labels))
        .filter(|id| !id.is_empty())
    {
        free.remove(&id);
        existing.insert(id);
    }
    let mut out: Vec<String> = free.into_iter().take(n).collect();
    while out.len() < n {
        let id = generate();
        if existing.insert(id.clone()) {
            out.push(id);
        }
    }
    out.sort();
    out
}

/// A deterministic id generator over the instance-id alphabet (a 64-bit LCG), for callers that want
/// reproducible ids; production passes a random source.
pub fn seeded_ids(seed: u64) -> impl FnMut() -> String {
    let mut state = seed;
    move || {
        (0..INSTANCE_ID_LEN)
            .map(|_| {
                state = state
                    .wrapping_mul(6_364_136_223_846_793_005)
                    .wrapping_add(1_442_695_040_888_963_407);
                let alphabet = crate::history::SAFE_ALPHABET;
                alphabet[((state >> 33) % alphabet.len() as u64) as usize] as char
            })
            .collect()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::cloneset::testing::cloneset;
    use crate::pods::fixtures::{now, pod};
    use k8s_openapi::api::core::v1::EmptyDirVolumeSource;

    fn with_vct() -> CloneSet {
        let mut cs = cloneset(2);
        cs.spec.volume_claim_templates = Some(vec![PersistentVolumeClaim {
            metadata: ObjectMeta {
                name: Some("data".into()),
                ..Default::default()
            },
            ..Default::default()
        }]);
        cs.spec.template.spec.as_mut().unwrap().volumes = Some(vec![
            Volume {
                name: "data".into(),
                empty_dir: Some(EmptyDirVolumeSource::default()),
                ..Default::default()
            },
            Volume {
                name: "tmp".into(),
                empty_dir: Some(EmptyDirVolumeSource::default()),
                ..Default::default()
            },
        ]);
        cs
    }

    #[test]
    fn a_new_pod_carries_what_openkruise_puts_on_it() {
        let cs = with_vct();
        let p = new_pod(&cs, &cs.spec.template, "demo-5547d45546", "x7k2q", now());
        let m = &p.metadata;
        assert_eq!(m.name.as_deref(), Some("demo-x7k2q"));
        assert_eq!(m.namespace.as_deref(), Some("ns"));
        let labels = m.labels.as_ref().unwrap();
        for (k, v) in [
            ("app", "demo"),
            (CONTROLLER_REVISION_HASH, "demo-5547d45546"),
            (POD_TEMPLATE_HASH, "5547d45546"),
            (CLONESET_INSTANCE_ID, "x7k2q"),
            (LIFECYCLE_STATE_KEY, "PreparingNormal"),
        ] {
            assert_eq!(labels.get(k).map(String::as_str), Some(v), "{k}");
        }
        assert_eq!(
            m.annotations.as_ref().unwrap()[LIFECYCLE_TIMESTAMP_KEY],
            "2026-01-01T12:00:00Z"
        );
        assert_eq!(m.owner_references.as_ref().unwrap()[0].uid, "cs-uid");
        let spec = p.spec.unwrap();
        assert_eq!(
            spec.readiness_gates.unwrap()[0].condition_type,
            IN_PLACE_UPDATE_READY
        );
        let volumes = spec.volumes.unwrap();
        assert_eq!(
            volumes.len(),
            2,
            "the claim replaces the template volume of the same name"
        );
        assert_eq!(
            volumes[0].persistent_volume_claim.as_ref().unwrap().claim_name,
            "data-demo-x7k2q"
        );
        assert_eq!(volumes[1].name, "tmp");
    }

    #[test]
    fn claims_are_named_labelled_and_owned() {
        let claims = claims_for(&with_vct(), "x7k2q");
        let c = &claims["data"];
        assert_eq!(c.metadata.name.as_deref(), Some("data-demo-x7k2q"));
        let labels = c.metadata.labels.as_ref().unwrap();
        assert_eq!(labels["app"], "demo");
        assert_eq!(labels[CLONESET_INSTANCE_ID], "x7k2q");
        assert_eq!(c.metadata.owner_references.as_ref().unwrap()[0].kind, "CloneSet");
    }

    #[test]
    fn ids_reuse_free_pvcs_first_and_never_collide() {
        let pods = [pod("demo-aaaaa", "r")];
        let pvc = |id: &str| PersistentVolumeClaim {
            metadata: ObjectMeta {
                labels: Some([(CLONESET_INSTANCE_ID.to_string(), id.to_string())].into()),
                ..Default::default()
            },
            ..Default::default()
        };
        let pvcs = [pvc("aaaaa"), pvc("zzzzz")];
        let mut fresh = ["aaaaa", "zzzzz", "bbbbb", "ccccc"].into_iter().map(String::from);
        let (pods, pvcs): (Vec<_>, Vec<_>) = (pods.iter().collect(), pvcs.iter().collect());
        let ids = available_ids(2, &pods, &pvcs, &mut || fresh.next().unwrap());
        assert_eq!(ids, vec!["bbbbb".to_string(), "zzzzz".to_string()]);
        let mut ids = seeded_ids(7);
        let a = ids();
        assert_eq!(a.len(), INSTANCE_ID_LEN);
        assert_ne!(a, ids());
    }
}
