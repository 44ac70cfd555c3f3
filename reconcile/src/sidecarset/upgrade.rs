//! The writes of an in-place sidecar upgrade (OpenKruise's `updatePodSidecarContainer` and
//! `updatePodSidecarSetUpgradableCondition`): the pod patch that sets the new images (cold sidecars, and the
//! target twin of a hot one) and records the upgrade, the hot-upgrade flip patch, and the
//! `SidecarSetUpgradable` pod condition.

use std::collections::BTreeMap;

use k8s_openapi::jiff::Timestamp;
use kruise_api::PodRecord;
use kruise_core::names::{SIDECARSET_HASH_ANNOTATION, SIDECARSET_HASH_WITHOUT_IMAGE_ANNOTATION};
use kruise_core::sidecarset::{UpgradeSpec, read_records, write_records};
use serde_json::{Map, Value, json};

use super::hot;
use super::pod_facts::{SIDECARSET_INPLACE_UPDATE_STATE, SetFacts};
use crate::inplace::{InPlaceUpdateState, LastContainerStatus};
use crate::pods;
use crate::rfc3339::rfc3339;

/// The pod condition that says whether every SidecarSet of the pod can upgrade it in place.
pub const SIDECARSET_UPGRADABLE: &str = "SidecarSetUpgradable";

/// What an upgrade needs besides the pod and the SidecarSet facts.
pub struct UpgradeContext<'a> {
    /// `status.latestRevision`, recorded as the pod's `controllerRevision`.
    pub latest_revision: &'a str,
    /// The SidecarSet's `sidecarList`.
    pub sidecar_list: &'a [String],
    /// Annotation values `patchPodMetadata` sets on this pod.
    pub metadata: BTreeMap<String, String>,
    /// Now.
    pub now: Timestamp,
}

/// The strategic-merge patch upgrading `pod`'s cold sidecars to the SidecarSet's images, conditional
/// on the pod's resourceVersion. Only images change in the spec; the annotations record the new hash,
/// the imageIDs before the change (how completion is judged) and `patchPodMetadata`.
pub fn pod_patch(facts: &SetFacts, pod: &PodRecord, cx: UpgradeContext<'_>) -> Value {
    let specs = pod.containers();
    let mut containers = Vec::new();
    let mut changed = Vec::new();
    for sidecar in facts.sidecars.iter().filter(|s| s.hot_empty_image.is_none()) {
        let current = specs.iter().find(|c| c.name == sidecar.name);
        if current.is_some_and(|c| c.image.as_deref() != Some(sidecar.image.as_str())) {
            containers.push(json!({"name": sidecar.name, "image": sidecar.image}));
            changed.push(sidecar.name.clone());
        }
    }
    let hot = hot::upgrade(facts, pod);
    for (name, image) in hot.images {
        containers.push(json!({"name": name, "image": image}));
        changed.push(name);
    }
    let mut annotations: Map<String, Value> = cx
        .metadata
        .into_iter()
        .chain(hot.annotations)
        .map(|(k, v)| (k, Value::String(v)))
        .collect();
    let now = rfc3339(cx.now);
    let raw_hash = pods::annotation(pod, SIDECARSET_HASH_ANNOTATION);
    let mut records = read_records(raw_hash).unwrap_or_default();
    records.insert(
        facts.name.clone(),
        UpgradeSpec {
            update_timestamp: Some(now.clone()),
            hash: facts.hash.clone(),
            sidecar_set_name: facts.name.clone(),
            sidecar_list: Some(cx.sidecar_list.to_vec()),
            controller_revision: cx.latest_revision.to_string(),
        },
    );
    annotations.insert(
        SIDECARSET_HASH_ANNOTATION.into(),
        Value::String(write_records(&records)),
    );
    // The legacy `{name: hash}` form is converted in both records, as OpenKruise's `GetPodSidecarSetRevision` reads it.
    if raw_hash.is_some_and(|raw| serde_json::from_str::<BTreeMap<String, String>>(raw).is_ok()) {
        let without =
            read_records(pods::annotation(pod, SIDECARSET_HASH_WITHOUT_IMAGE_ANNOTATION)).unwrap_or_default();
        annotations.insert(
            SIDECARSET_HASH_WITHOUT_IMAGE_ANNOTATION.into(),
            Value::String(write_records(&without)),
        );
    }
    annotations.insert(
        SIDECARSET_INPLACE_UPDATE_STATE.into(),
        Value::String(in_place_state(facts, pod, &changed, cx.now)),
    );
    let mut patch = json!({
        "metadata": {
            "annotations": annotations,
            "resourceVersion": pod.metadata.resource_version,
        },
    });
    if !containers.is_empty() {
        patch["spec"] = json!({ "containers": containers });
    }
    patch
}

/// The flip patch of a hot-upgraded pod (docs/sidecarset-controller.md, "Hot upgrade"), conditional on its resourceVersion: the idle twins
/// get the empty image, their versions `"0"`, and their imageIDs are recorded so the restart is
/// judged complete as an upgrade is. The hash records are not touched. `None` when nothing is to flip.
pub fn flip_patch(facts: &SetFacts, pod: &PodRecord, now: Timestamp) -> Option<Value> {
    let flip = hot::flip(facts, pod);
    if flip.images.is_empty() {
        return None;
    }
    let changed: Vec<String> = flip.images.iter().map(|(n, _)| n.clone()).collect();
    let containers: Vec<Value> = flip
        .images
        .into_iter()
        .map(|(name, image)| json!({"name": name, "image": image}))
        .collect();
    let mut annotations: Map<String, Value> = flip
        .annotations
        .into_iter()
        .map(|(k, v)| (k, Value::String(v)))
        .collect();
    annotations.insert(
        SIDECARSET_INPLACE_UPDATE_STATE.into(),
        Value::String(in_place_state(facts, pod, &changed, now)),
    );
    Some(json!({
        "metadata": {
            "annotations": annotations,
            "resourceVersion": pod.metadata.resource_version,
        },
        "spec": { "containers": containers },
    }))
}

/// `UpdatePodAnnotationsInUpgrade`: this SidecarSet's entry gets the imageIDs the changed containers
/// run now; an entry already there keeps its revision and timestamp (OpenKruise's quirk).
fn in_place_state(facts: &SetFacts, pod: &PodRecord, changed: &[String], now: Timestamp) -> String {
    let mut states: BTreeMap<String, InPlaceUpdateState> =
        pods::annotation(pod, SIDECARSET_INPLACE_UPDATE_STATE)
            .and_then(|raw| serde_json::from_str(raw).ok())
            .unwrap_or_default();
    let state = states
        .entry(facts.name.clone())
        .or_insert_with(|| InPlaceUpdateState::new(&facts.hash, now));
    let statuses = pod.container_statuses();
    for name in changed {
        let image_id = statuses
            .iter()
            .find(|s| s.name == *name)
            .map(|s| s.image_id.clone())
            .unwrap_or_default();
        state
            .last_container_statuses
            .insert(name.clone(), LastContainerStatus { image_id });
    }
    serde_json::to_string(&states).unwrap_or_default()
}

/// The `pods/status` patch recording whether SidecarSet `name` can upgrade the pod, or `None` when the
/// condition would not change. Its message is the JSON map of every SidecarSet's verdict; it is True
/// (`AllSidecarsetUpgradable`) only when all are true, else False (`UpdateImmutableField`).
pub fn upgradable_condition(pod: &PodRecord, name: &str, upgradable: bool, now: Timestamp) -> Option<Value> {
    let old = pods::condition(pod, SIDECARSET_UPGRADABLE);
    let mut verdicts: BTreeMap<String, bool> = old
        .and_then(|c| c.message.as_deref())
        .filter(|m| !m.is_empty())
        .and_then(|m| serde_json::from_str(m).ok())
        .unwrap_or_default();
    verdicts.insert(name.to_string(), upgradable);
    let all = verdicts.values().all(|v| *v);
    let (status, reason) = if all {
        ("True", "AllSidecarsetUpgradable")
    } else {
        ("False", "UpdateImmutableField")
    };
    let message = serde_json::to_string(&verdicts).unwrap_or_default();
    if let Some(old) = old
        && old.status == status
        && old.reason.as_deref() == Some(reason)
        && old.message.as_deref() == Some(message.as_str())
    {
        return None;
    }
    let transition = match old {
        Some(old) if old.status == status => old.last_transition_time.as_ref().map(|t| rfc3339(t.0)),
        _ => None,
    }
    .unwrap_or_else(|| rfc3339(now));
    Some(json!({"status": {"conditions": [{
        "type": SIDECARSET_UPGRADABLE,
        "status": status,
        "reason": reason,
        "message": message,
        "lastTransitionTime": transition,
    }]}}))
}
