//! Hot upgrade of a sidecar `C` injected as twins `C-1`/`C-2` (OpenKruise's
//! `pkg/control/sidecarcontrol/util_hotupgrade.go` and `pkg/controller/sidecarset/sidecarset_hotupgrade.go`;
//! docs/sidecarset-controller.md "Hot upgrade").
//!
//! An upgrade puts the new image into the target twin (the one running the empty image; else the only one
//! not ready-and-consistent; else the idle one), makes it the working twin and moves the version
//! annotations the twins read through `SIDECARSET_VERSION`/`SIDECARSET_VERSION_ALT`. Once the pod is
//! consistent and ready without its idle twin, the flip resets the idle (old) twin to the empty image.

use std::collections::BTreeMap;

use kruise_api::PodRecord;
use kruise_core::sidecarset::{
    SIDECARSET_WORKING_HOTUPGRADE_CONTAINER, version_alt_annotation, version_annotation,
};

use super::pod_facts::{self, SetFacts, Sidecar, hot_twins};
use crate::pods;

/// What a hot upgrade or a flip changes on a pod: container images and annotation values.
#[derive(Debug, Default, PartialEq)]
pub struct TwinChanges {
    /// `(container, new image)`.
    pub images: Vec<(String, String)>,
    pub annotations: BTreeMap<String, String>,
}

fn image_of<'a>(pod: &'a PodRecord, container: &str) -> &'a str {
    pod.spec
        .as_ref()
        .and_then(|s| s.containers.iter().find(|c| c.name == container))
        .and_then(|c| c.image.as_deref())
        .unwrap_or("")
}

fn ready_and_consistent(facts: &SetFacts, pod: &PodRecord, container: &str) -> bool {
    let ready = pod
        .container_statuses()
        .iter()
        .any(|s| s.name == container && s.ready);
    ready && pod_facts::is_consistent(facts, pod, &[container])
}

/// `findContainerToHotUpgrade`: `(twin to upgrade, the other twin)`.
pub fn target_twin(facts: &SetFacts, sidecar: &Sidecar, pod: &PodRecord) -> (String, String) {
    let (first, second) = (format!("{}-1", sidecar.name), format!("{}-2", sidecar.name));
    let empty = sidecar.hot_empty_image.as_deref().unwrap_or("");
    if image_of(pod, &first) == empty {
        return (first, second);
    }
    if image_of(pod, &second) == empty {
        return (second, first);
    }
    match (
        ready_and_consistent(facts, pod, &first),
        ready_and_consistent(facts, pod, &second),
    ) {
        (true, false) => (second, first),
        (false, true) => (first, second),
        _ => {
            let (working, idle) = hot_twins(pod, &sidecar.name);
            (idle, working)
        }
    }
}

/// The working-twin map with `changes` applied over the pod's.
fn working_map(pod: &PodRecord, changes: &BTreeMap<String, String>) -> BTreeMap<String, String> {
    changes
        .get(SIDECARSET_WORKING_HOTUPGRADE_CONTAINER)
        .map(String::as_str)
        .or_else(|| pods::annotation(pod, SIDECARSET_WORKING_HOTUPGRADE_CONTAINER))
        .and_then(|v| serde_json::from_str(v).ok())
        .unwrap_or_default()
}

/// The hot half of an upgrade (docs/sidecarset-controller.md, "Hot upgrade") for every hot sidecar whose target twin's image would change:
/// target image := new, working := target, `version[target]` := the SidecarSet's resourceVersion,
/// `versionalt[target]` := `version[other]`, `versionalt[other]` := that resourceVersion.
pub fn upgrade(facts: &SetFacts, pod: &PodRecord) -> TwinChanges {
    let mut out = TwinChanges::default();
    for sidecar in facts.sidecars.iter().filter(|s| s.hot_empty_image.is_some()) {
        let (target, other) = target_twin(facts, sidecar, pod);
        if image_of(pod, &other) == sidecar.image {
            // Already running this image in the other twin: nothing restarts (the hash is still recorded).
            continue;
        }
        out.images.push((target.clone(), sidecar.image.clone()));
        let mut working = working_map(pod, &out.annotations);
        working.insert(sidecar.name.clone(), target.clone());
        out.annotations.insert(
            SIDECARSET_WORKING_HOTUPGRADE_CONTAINER.into(),
            serde_json::to_string(&working).unwrap_or_default(),
        );
        let other_version = pods::annotation(pod, &version_annotation(&other))
            .unwrap_or_default()
            .to_string();
        out.annotations
            .insert(version_annotation(&target), facts.resource_version.clone());
        out.annotations
            .insert(version_alt_annotation(&target), other_version);
        out.annotations
            .insert(version_alt_annotation(&other), facts.resource_version.clone());
    }
    out
}

/// The idle twins of the pod's hot sidecars.
pub fn idle_twins(facts: &SetFacts, pod: &PodRecord) -> Vec<String> {
    facts
        .sidecars
        .iter()
        .filter(|s| s.hot_empty_image.is_some())
        .map(|s| hot_twins(pod, &s.name).1)
        .collect()
}

/// `isPodSidecarInHotUpgrading`: some idle twin does not run the empty image.
pub fn is_hot_upgrading(facts: &SetFacts, pod: &PodRecord) -> bool {
    facts.sidecars.iter().any(|s| match s.hot_empty_image.as_deref() {
        Some(empty) => image_of(pod, &hot_twins(pod, &s.name).1) != empty,
        None => false,
    })
}

/// The flip condition (docs/sidecarset-controller.md, "Hot upgrade"): the pod is hot upgrading, consistent without its idle twins, and Running+Ready or every
/// container but the idle twins is ready (`isHotUpgradingReady`).
pub fn is_due_flip(facts: &SetFacts, pod: &PodRecord) -> bool {
    if !is_hot_upgrading(facts, pod) {
        return false;
    }
    let idle = idle_twins(facts, pod);
    let names = facts.pod_container_names();
    let busy: Vec<&str> = names
        .iter()
        .map(String::as_str)
        .filter(|n| !idle.iter().any(|i| i == n))
        .collect();
    if !pod_facts::is_consistent(facts, pod, &busy) {
        return false;
    }
    let running_ready = pods::phase(pod) == "Running" && pods::is_ready(pod);
    running_ready
        || pod
            .container_statuses()
            .iter()
            .filter(|s| !idle.contains(&s.name))
            .all(|s| s.ready)
}

/// The flip (`flipPodSidecarContainerDo`): each idle twin not on the empty image gets it,
/// `version[idle]` and `versionalt[working]` become `"0"`.
pub fn flip(facts: &SetFacts, pod: &PodRecord) -> TwinChanges {
    let mut out = TwinChanges::default();
    for sidecar in &facts.sidecars {
        let Some(empty) = sidecar.hot_empty_image.as_deref() else {
            continue;
        };
        let (working, idle) = hot_twins(pod, &sidecar.name);
        if image_of(pod, &idle) == empty {
            continue;
        }
        out.images.push((idle.clone(), empty.to_string()));
        out.annotations.insert(version_annotation(&idle), "0".into());
        out.annotations
            .insert(version_alt_annotation(&working), "0".into());
    }
    out
}

#[cfg(test)]
mod tests;
