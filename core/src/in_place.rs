//! When an in-place update of a pod has completed: OpenKruise's `CheckPodUpdateCompleted` /
//! `DefaultCheckInPlaceUpdateCompleted` (`pkg/util/inplaceupdate/inplace_update_defaults.go`), one rule
//! for the CloneSet and Advanced StatefulSet planners, the SidecarSet planner and PodUnavailableBudget's
//! "state consistent" (docs/cloneset-controller.md#in-place-update).
//!
//! Not computed: OpenKruise's short-cut that counts an update complete when the node agent reports
//! every container with kubelet's plain spec hash; the image check decides instead.

use std::collections::BTreeMap;

use kruise_api::PodRecord;
use kruise_api::common::{IN_PLACE_UPDATE_GRACE_KEY, IN_PLACE_UPDATE_STATE_KEY};
use serde::{Deserialize, Serialize};
use serde_json::Value;

use crate::containermeta::{self, RuntimeContainerMetaSet};

/// The state annotation older OpenKruise versions wrote.
pub const IN_PLACE_UPDATE_STATE_KEY_OLD: &str = "inplace-update-state";
/// The grace annotation older OpenKruise versions wrote.
pub const IN_PLACE_UPDATE_GRACE_KEY_OLD: &str = "inplace-update-grace";

/// One container's status before an in-place update (`lastContainerStatuses` of the state annotation).
#[derive(Debug, Clone, PartialEq, Eq, Default, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct LastContainerStatus {
    /// `imageID` before the update.
    #[serde(rename = "imageID", default, skip_serializing_if = "String::is_empty")]
    pub image_id: String,
}

/// What the completion rule reads of the state annotation; every field defaults, so a state written
/// by any OpenKruise version is read.
#[derive(Debug, Default, Deserialize)]
#[serde(rename_all = "camelCase")]
struct StateRead {
    #[serde(default)]
    last_container_statuses: Option<BTreeMap<String, LastContainerStatus>>,
    #[serde(default)]
    update_env_from_metadata: bool,
    #[serde(default)]
    next_container_images: Option<BTreeMap<String, Value>>,
    #[serde(default)]
    next_container_ref_metadata: Option<BTreeMap<String, Value>>,
    #[serde(default)]
    next_container_resources: Option<BTreeMap<String, Value>>,
}

impl StateRead {
    fn batches_left(&self) -> bool {
        let non_empty = |m: &Option<BTreeMap<String, Value>>| m.as_ref().is_some_and(|m| !m.is_empty());
        non_empty(&self.next_container_images)
            || non_empty(&self.next_container_ref_metadata)
            || non_empty(&self.next_container_resources)
    }
}

fn annotation<'a>(pod: &'a PodRecord, key: &str) -> Option<&'a str> {
    pod.metadata.annotations.get(key)
}

/// The pod waits out an in-place update's grace period (either annotation is set).
pub fn in_grace_period(pod: &PodRecord) -> bool {
    [IN_PLACE_UPDATE_GRACE_KEY, IN_PLACE_UPDATE_GRACE_KEY_OLD]
        .iter()
        .any(|key| annotation(pod, key).is_some_and(|v| !v.is_empty()))
}

/// The state annotation's text, under its current or its old key.
fn state_text(pod: &PodRecord) -> Option<&str> {
    annotation(pod, IN_PLACE_UPDATE_STATE_KEY).or_else(|| annotation(pod, IN_PLACE_UPDATE_STATE_KEY_OLD))
}

/// `CheckPodUpdateCompleted`: no grace period pending, no batch left, and the containers are done
/// ([`containers_completed`]). A pod without a state annotation has completed; one whose state cannot
/// be read has not.
pub fn update_completed(pod: &PodRecord) -> bool {
    if in_grace_period(pod) {
        return false;
    }
    match state_text(pod) {
        None => true,
        Some(text) => state_completed(pod, serde_json::from_str(text).ok().as_ref()),
    }
}

/// [`update_completed`] over the pods of one pass, each distinct state annotation parsed once: the
/// pods updated in one pass carry equal texts, and parsing each was a large part of a plan.
#[derive(Debug, Default)]
pub struct Completion<'a> {
    states: foldhash::HashMap<&'a str, Option<StateRead>>,
}

impl<'a> Completion<'a> {
    /// [`update_completed`] of `pod`.
    pub fn update_completed(&mut self, pod: &'a PodRecord) -> bool {
        if in_grace_period(pod) {
            return false;
        }
        let Some(text) = state_text(pod) else {
            return true;
        };
        let state = self
            .states
            .entry(text)
            .or_insert_with(|| serde_json::from_str(text).ok());
        state_completed(pod, state.as_ref())
    }
}

/// The pod's containers are done with the update its (parsed) state describes; an unreadable state
/// (`None`) has not completed.
fn state_completed(pod: &PodRecord, state: Option<&StateRead>) -> bool {
    state.is_some_and(|state| {
        !state.batches_left()
            && containers_completed(
                pod,
                state.last_container_statuses.as_ref().unwrap_or(&BTreeMap::new()),
                state.update_env_from_metadata,
            )
    })
}

/// `defaultCheckContainersInPlaceUpdateCompleted`: with env fed from metadata, the node agent reports
/// every container restarted with the pod's current values ([`env_completed`]); and every container of
/// an applied batch (`last`) has a status whose imageID changed, or that reports the spec image
/// (`:latest` added to a tag-less one).
pub fn containers_completed(
    pod: &PodRecord,
    last: &BTreeMap<String, LastContainerStatus>,
    update_env_from_metadata: bool,
) -> bool {
    if update_env_from_metadata && !env_completed(pod) {
        return false;
    }
    let statuses = pod.container_statuses();
    let specs = pod.containers();
    last.iter().all(|(name, last)| {
        let Some(status) = statuses.iter().find(|s| &s.name == name) else {
            return false;
        };
        if status.image_id != last.image_id {
            return true;
        }
        let spec_image = specs
            .iter()
            .find(|c| &c.name == name)
            .and_then(|c| c.image.as_deref())
            .unwrap_or("");
        status.image == with_tag(spec_image)
    })
}

/// `image` as the kubelet reports it: `:latest` added when it has neither tag nor digest. (OpenKruise
/// looks for any `:`, so a tag-less image from a registry with a port never matched.)
fn with_tag(image: &str) -> String {
    let last_segment = image.rsplit('/').next().unwrap_or("");
    if last_segment.contains(':') || image.contains('@') {
        image.to_owned()
    } else {
        format!("{image}:latest")
    }
}

/// Every spec container has a status, and the node agent's entry for it
/// (`apps.kruise.io/runtime-containers-meta`) names the same containerID with the env hash the pod's
/// current labels and annotations give and, when the pod has `kubectl.kubernetes.io/restartedAt`, that
/// value recorded: the containers restarted with the new values (docs/env-from-metadata.md). False
/// without the annotation.
pub fn env_completed(pod: &PodRecord) -> bool {
    let Some(meta) = RuntimeContainerMetaSet::of(&pod.metadata.annotations) else {
        return false;
    };
    let statuses = pod.container_statuses();
    let containers = pod.containers();
    containers.iter().all(|c| {
        let Some(status) = statuses.iter().find(|s| s.name == c.name) else {
            return false;
        };
        let Some(entry) = meta.get(&c.name) else {
            return false;
        };
        let expected = containermeta::expected_hash(
            c.env.as_deref().unwrap_or_default(),
            &pod.metadata.labels,
            &pod.metadata.annotations,
        );
        status.container_id.as_deref() == Some(entry.container_id.as_str())
            && entry.hashes.extracted_env_from_metadata_hash == expected
            && entry.restarted_for(&pod.metadata.annotations)
    })
}

#[cfg(test)]
mod tests;
