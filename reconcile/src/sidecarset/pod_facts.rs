//! What a SidecarSet asks of one pod (OpenKruise's `pkg/control/sidecarcontrol/util.go` and
//! `sidecarset_control.go`): is it matched, updated, upgradable, mid-upgrade, consistent, ready.

use std::collections::BTreeMap;

use kruise_api::PodRecord;
use kruise_api::apps_v1beta1::{SidecarContainerUpgradeType, SidecarSet};
use kruise_core::names::{
    SIDECARSET_HASH_ANNOTATION, SIDECARSET_HASH_WITHOUT_IMAGE_ANNOTATION,
    SIDECARSET_INJECTED_LIST_ANNOTATION as SIDECARSET_INJECTED_LIST,
};
use kruise_core::selector::selects_non_empty;
use kruise_core::sidecarset::{
    SIDECARSET_WORKING_HOTUPGRADE_CONTAINER, read_records, stamped_or_computed_hashes,
};

use crate::inplace::{self, InPlaceUpdateState};
use crate::pods;

/// The pod annotation recording, per SidecarSet, the imageIDs its sidecars had before an in-place
/// upgrade (`kruise.io/sidecarset-inplace-update-state`).
pub const SIDECARSET_INPLACE_UPDATE_STATE: &str = "kruise.io/sidecarset-inplace-update-state";

/// One sidecar container of the SidecarSet (`spec.containers[]`).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Sidecar {
    /// The SidecarSet's name for it.
    pub name: String,
    /// The image the SidecarSet wants.
    pub image: String,
    /// `Some(empty image)` for a hot-upgrade pair (`<name>-1`, `<name>-2`).
    pub hot_empty_image: Option<String>,
}

/// The SidecarSet as the per-pod checks need it, read once per pass.
#[derive(Debug, Clone)]
pub struct SetFacts {
    /// `metadata.name`.
    pub name: String,
    /// `kruise.io/sidecarset-hash` (the latest).
    pub hash: String,
    /// `kruise.io/sidecarset-hash-without-image`.
    pub hash_without_image: String,
    /// `spec.containers`.
    pub sidecars: Vec<Sidecar>,
    /// `metadata.resourceVersion`: the version a hot-upgraded twin records.
    pub resource_version: String,
}

impl SetFacts {
    /// The facts of `set`; hashes the SidecarSet webhook did not stamp are computed as it would.
    pub fn of(set: &SidecarSet) -> SetFacts {
        let (hash, hash_without_image) =
            stamped_or_computed_hashes(set.metadata.annotations.as_ref(), &set.spec);
        let sidecars = set
            .spec
            .containers
            .iter()
            .flatten()
            .map(|c| Sidecar {
                name: c.container.name.clone(),
                image: c.container.image.clone().unwrap_or_default(),
                hot_empty_image: (c.upgrade_strategy.upgrade_type
                    == Some(SidecarContainerUpgradeType::HotUpgrade))
                .then(|| {
                    c.upgrade_strategy
                        .hot_upgrade_empty_image
                        .clone()
                        .unwrap_or_default()
                }),
            })
            .collect();
        SetFacts {
            name: set.metadata.name.clone().unwrap_or_default(),
            hash,
            hash_without_image,
            sidecars,
            resource_version: set.metadata.resource_version.clone().unwrap_or_default(),
        }
    }

    /// Whether any sidecar is upgraded hot (a pair of twins).
    pub fn has_hot_upgrade(&self) -> bool {
        self.sidecars.iter().any(|s| s.hot_empty_image.is_some())
    }

    /// The names the sidecars have in pods (`C`, or `C-1` and `C-2`): `GetSidecarContainersInPod`.
    pub fn pod_container_names(&self) -> Vec<String> {
        let mut names = Vec::new();
        for s in &self.sidecars {
            match s.hot_empty_image {
                Some(_) => names.extend([format!("{}-1", s.name), format!("{}-2", s.name)]),
                None => names.push(s.name.clone()),
            }
        }
        names
    }
}

/// A's record of `key` for SidecarSet `name`, its hash (`""` without one).
fn recorded_hash(pod: &PodRecord, key: &str, name: &str) -> String {
    read_records(pods::annotation(pod, key))
        .ok()
        .and_then(|mut records| records.remove(name))
        .map(|r| r.hash)
        .unwrap_or_default()
}

/// The pod's `controllerRevision` record for SidecarSet `name` (`""` without one).
pub fn recorded_revision(pod: &PodRecord, name: &str) -> String {
    read_records(pods::annotation(pod, SIDECARSET_HASH_ANNOTATION))
        .ok()
        .and_then(|mut records| records.remove(name))
        .map(|r| r.controller_revision)
        .unwrap_or_default()
}

fn has_container(pod: &PodRecord, name: &str) -> bool {
    pod.spec
        .as_ref()
        .is_some_and(|s| s.containers.iter().any(|c| c.name == name))
}

/// The working-twin map of `kruise.io/sidecarset-working-hotupgrade-container`.
fn working_twins(pod: &PodRecord) -> BTreeMap<String, String> {
    pods::annotation(pod, SIDECARSET_WORKING_HOTUPGRADE_CONTAINER)
        .and_then(|v| serde_json::from_str(v).ok())
        .unwrap_or_default()
}

/// `(working, idle)` twin of hot sidecar `name` (`GetPodHotUpgradeContainers`).
pub fn hot_twins(pod: &PodRecord, name: &str) -> (String, String) {
    let (first, second) = (format!("{name}-1"), format!("{name}-2"));
    match working_twins(pod).get(name) {
        Some(w) if *w == second => (second, first),
        _ => (first, second),
    }
}

/// Matched (docs/sidecarset-controller.md, "Which pods"): selected by `spec.selector`, active, injected by this SidecarSet, and holding each of its
/// containers (both twins and a working-twin entry for a hot one).
pub fn is_matched(set: &SidecarSet, facts: &SetFacts, pod: &PodRecord) -> bool {
    if !selects_non_empty(set.spec.selector.as_ref(), &pod.metadata.labels).unwrap_or(false)
        || !pods::is_active(pod)
    {
        return false;
    }
    let injected = pods::annotation(pod, SIDECARSET_INJECTED_LIST)
        .is_some_and(|list| list.split(',').any(|n| n == facts.name));
    if !injected {
        return false;
    }
    let working = working_twins(pod);
    facts.sidecars.iter().all(|s| match s.hot_empty_image {
        Some(_) => {
            working.contains_key(&s.name)
                && has_container(pod, &format!("{}-1", s.name))
                && has_container(pod, &format!("{}-2", s.name))
        }
        None => has_container(pod, &s.name),
    })
}

/// "updated": the pod records the SidecarSet's latest hash.
pub fn is_updated(facts: &SetFacts, pod: &PodRecord) -> bool {
    recorded_hash(pod, SIDECARSET_HASH_ANNOTATION, &facts.name) == facts.hash
}

/// "upgradable": only images changed since the pod was injected (its without-image hash is the
/// SidecarSet's), so the change can be applied in place.
pub fn is_upgradable(facts: &SetFacts, pod: &PodRecord) -> bool {
    recorded_hash(pod, SIDECARSET_HASH_WITHOUT_IMAGE_ANNOTATION, &facts.name) == facts.hash_without_image
}

/// "in flight": a sidecar container is ready but kubelet has not yet run its new image.
pub fn is_mid_upgrade(facts: &SetFacts, pod: &PodRecord) -> bool {
    let statuses = pods_statuses(pod);
    facts.pod_container_names().iter().any(|name| {
        statuses.iter().any(|s| s.name == *name && s.ready) && !is_consistent(facts, pod, &[name.as_str()])
    })
}

fn pods_statuses(pod: &PodRecord) -> &[kruise_api::pod::ContainerStatusRecord] {
    pod.container_statuses()
}

/// An image pinned by digest (`repo@sha256:…`).
fn is_digest(image: &str) -> bool {
    image.contains("@sha256:")
}

/// `IsPodStateConsistent` over `containers` (every sidecar of the SidecarSet when empty): kubelet
/// runs what the spec says. Digest images are compared with the imageIDs; otherwise each container
/// the last upgrade changed must report a new imageID (or the spec image) — the CloneSet's in-place
/// completion check.
pub fn is_consistent(facts: &SetFacts, pod: &PodRecord, containers: &[&str]) -> bool {
    let specs = pod.containers();
    let statuses = pods_statuses(pod);
    if specs.len() != statuses.len() {
        return false;
    }
    let all = facts.pod_container_names();
    let wanted: Vec<&str> = if containers.is_empty() {
        all.iter().map(String::as_str).collect()
    } else {
        containers.to_vec()
    };
    let sidecar_specs: Vec<_> = specs
        .iter()
        .filter(|c| wanted.contains(&c.name.as_str()))
        .collect();
    let all_digest = sidecar_specs
        .iter()
        .all(|c| is_digest(c.image.as_deref().unwrap_or("")));
    if all_digest {
        return sidecar_specs.iter().all(|c| {
            let image = c.image.as_deref().unwrap_or("");
            let digest = image.rsplit_once('@').map_or(image, |(_, d)| d);
            statuses
                .iter()
                .find(|s| s.name == c.name)
                .is_some_and(|s| s.image_id.ends_with(digest))
        });
    }
    let Some(raw) = pods::annotation(pod, SIDECARSET_INPLACE_UPDATE_STATE) else {
        return true;
    };
    let Ok(mut states) = serde_json::from_str::<BTreeMap<String, InPlaceUpdateState>>(raw) else {
        return false;
    };
    let Some(mut state) = states.remove(&facts.name) else {
        return true;
    };
    state
        .last_container_statuses
        .retain(|name, _| wanted.contains(&name.as_str()) && statuses.iter().any(|s| s.name == *name));
    inplace::containers_completed(pod, &state)
}

/// `IsPodReady` of the SidecarSet: running and Ready, and every idle hot twin runs the empty image.
pub fn is_ready(facts: &SetFacts, pod: &PodRecord) -> bool {
    let specs = pod.containers();
    let idle_twins_empty = facts.sidecars.iter().all(|s| {
        let Some(empty) = s.hot_empty_image.as_deref().filter(|e| !e.is_empty()) else {
            return true;
        };
        let (_, idle) = hot_twins(pod, &s.name);
        specs
            .iter()
            .find(|c| c.name == idle)
            .is_none_or(|c| c.image.as_deref() == Some(empty))
    });
    idle_twins_empty && pods::phase(pod) == "Running" && pods::is_ready(pod)
}
