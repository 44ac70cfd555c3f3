//! Questions about one pod's state, asked by webhooks, planners and the binary alike: is it active, what
//! is its phase, is it ready (Kubernetes' notion, and PodUnavailableBudget's), and is its state
//! consistent (kubelet has caught up with the spec after an in-place update). The PUB notions follow
//! OpenKruise's `pkg/control/pubcontrol/pub_control.go` (`IsPodReady`, `IsPodStateConsistent`).

use std::collections::{BTreeMap, BTreeSet};

use kruise_api::{
    PodRecord,
    pod::{LabelledMeta, PodConditionRecord},
    policy_v1beta1::POD_UNAVAILABLE_LABEL_PREFIX as UNAVAILABLE_LABEL_PREFIX,
};
use serde::Deserialize;
use serde_json::Value;

use crate::in_place::{self, LastContainerStatus};
use crate::names::{SIDECAR_INJECTED_ENV, SIDECARSET_INJECTED_LIST_ANNOTATION};

const SIDECARSET_INPLACE_STATE: &str = "kruise.io/sidecarset-inplace-update-state";

/// The annotation `key` of an object.
pub fn annotation<'a>(meta: &'a impl LabelledMeta, key: &str) -> Option<&'a str> {
    meta.annotation(key)
}

/// True when a label key starts with `unavailable-pod.kruise.io/`.
pub fn has_unavailable_label(meta: &impl LabelledMeta) -> bool {
    meta.label_keys().any(|k| k.starts_with(UNAVAILABLE_LABEL_PREFIX))
}

/// Kubernetes' `IsPodActive`: not `Succeeded`, not `Failed`, not being deleted. Controllers count only
/// active pods; OpenKruise injects sidecars and books WorkloadSpread subsets only for them.
pub fn is_active(pod: &PodRecord) -> bool {
    active(Some(phase(pod)), pod.metadata.deletion_timestamp.is_some())
}

/// [`is_active`] of a pod as raw JSON (an admission request's object).
pub fn is_active_json(pod: &Value) -> bool {
    // `Value::pointer` would allocate for every token; this is on every pod review.
    let phase = pod
        .get("status")
        .and_then(|s| s.get("phase"))
        .and_then(Value::as_str);
    let deleting = pod
        .get("metadata")
        .and_then(|m| m.get("deletionTimestamp"))
        .is_some_and(|t| !t.is_null());
    active(phase, deleting)
}

fn active(phase: Option<&str>, deleting: bool) -> bool {
    !matches!(phase, Some("Succeeded" | "Failed")) && !deleting
}

/// The pod's namespace, or `fallback` (the request's) when the object leaves it empty, as objects of a
/// CREATE may.
pub fn namespace_or<'a>(pod: &'a PodRecord, fallback: &'a str) -> &'a str {
    pod.metadata
        .namespace
        .as_deref()
        .filter(|n| !n.is_empty())
        .unwrap_or(fallback)
}

/// `status.phase`, `""` when unset.
pub fn phase(pod: &PodRecord) -> &str {
    pod.status.as_ref().and_then(|s| s.phase.as_deref()).unwrap_or("")
}

/// A pod condition by type.
pub fn condition<'a>(pod: &'a PodRecord, type_: &str) -> Option<&'a PodConditionRecord> {
    pod.status
        .as_ref()?
        .conditions
        .as_ref()?
        .iter()
        .find(|c| c.type_ == type_)
}

/// Kubernetes' `IsPodReady`: condition `Ready=True`.
pub fn is_ready(pod: &PodRecord) -> bool {
    condition(pod, "Ready").is_some_and(|c| c.status == "True")
}

/// PodUnavailableBudget's notion of ready (OpenKruise's `pubcontrol` `IsPodReady`): running, condition
/// `Ready=True`, not being deleted, no unavailable label.
pub fn is_ready_for_pub(pod: &PodRecord) -> bool {
    phase(pod) == "Running"
        && is_ready(pod)
        && pod.metadata.deletion_timestamp.is_none()
        && !has_unavailable_label(&pod.metadata)
}

/// A parsed image reference: repository name, tag and digest (either may be empty).
#[derive(Debug, PartialEq, Eq)]
struct ImageRef<'a> {
    repo: &'a str,
    tag: &'a str,
    digest: &'a str,
}

fn valid_digest(digest: &str) -> bool {
    let Some((algorithm, hex)) = digest.split_once(':') else {
        return false;
    };
    let len = match algorithm {
        "sha256" => 64,
        "sha384" => 96,
        "sha512" => 128,
        _ => return false,
    };
    hex.len() == len
        && hex
            .bytes()
            .all(|b| b.is_ascii_digit() || (b'a'..=b'f').contains(&b))
}

fn valid_tag(tag: &str) -> bool {
    let mut bytes = tag.bytes();
    let word = |b: u8| b.is_ascii_alphanumeric() || b == b'_';
    tag.len() <= 128 && bytes.next().is_some_and(word) && bytes.all(|b| word(b) || b == b'.' || b == b'-')
}

fn valid_name(name: &str) -> bool {
    !name.is_empty()
        && !name.starts_with('/')
        && !name.ends_with('/')
        && !name.contains("//")
        && name
            .bytes()
            .all(|b| b.is_ascii_lowercase() || b.is_ascii_digit() || b"._-/:".contains(&b))
}

/// Parses `name[:tag][@digest]` like the distribution reference parser (no normalisation: `busybox`
/// stays `busybox`). `None` when it is not a valid reference.
fn parse_image(image: &str) -> Option<ImageRef<'_>> {
    let (rest, digest) = match image.split_once('@') {
        Some((rest, digest)) => (rest, digest),
        None => (image, ""),
    };
    if !digest.is_empty() && !valid_digest(digest) {
        return None;
    }
    let (repo, tag) = match rest.rfind(':') {
        Some(i) if !rest[i + 1..].contains('/') => (&rest[..i], &rest[i + 1..]),
        _ => (rest, ""),
    };
    if !valid_name(repo) || (rest.len() > repo.len() && !valid_tag(tag)) {
        return None;
    }
    Some(ImageRef { repo, tag, digest })
}

/// True when the image is pinned by digest (`…@sha256:…`).
fn is_digest(image: &str) -> bool {
    parse_image(image).is_some_and(|r| !r.digest.is_empty())
}

/// Image equality as OpenKruise compares a spec image with a status imageID: repository and digest when
/// both are digests, else repository and tag.
fn images_equal(a: &str, b: &str) -> bool {
    match (parse_image(a), parse_image(b)) {
        (Some(a), Some(b)) if !a.digest.is_empty() && !b.digest.is_empty() => {
            a.repo == b.repo && a.digest == b.digest
        }
        (Some(a), Some(b)) => a.repo == b.repo && a.tag == b.tag,
        _ => false,
    }
}

fn strip_scheme(image_id: &str) -> &str {
    image_id.split_once("://").map_or(image_id, |(_, rest)| rest)
}

/// What [`sidecars_consistent`] reads of one SidecarSet's in-place update state.
#[derive(Deserialize, Default)]
#[serde(rename_all = "camelCase")]
struct SidecarUpdateState {
    #[serde(default)]
    last_container_statuses: Option<BTreeMap<String, LastContainerStatus>>,
}

/// True when kubelet runs what the spec asks for (OpenKruise "IsPodStateConsistent").
pub fn is_state_consistent(pod: &PodRecord) -> bool {
    let containers = pod.containers();
    let statuses = pod.container_statuses();
    let mut all_digest = true;
    for c in containers {
        let image = c.image.as_deref().unwrap_or_default();
        if !is_digest(image) {
            all_digest = false;
            continue;
        }
        let Some(status) = statuses.iter().find(|s| s.name == c.name) else {
            return false;
        };
        if !images_equal(image, strip_scheme(&status.image_id)) {
            return false;
        }
    }
    if all_digest {
        return true;
    }
    sidecars_consistent(pod) && in_place::update_completed(pod)
}

/// Injected sidecars (env `IS_INJECTED=true`) of the SidecarSets listed on the pod have left the image
/// they had before their last in-place upgrade.
fn sidecars_consistent(pod: &PodRecord) -> bool {
    let sets: BTreeSet<&str> = annotation(&pod.metadata, SIDECARSET_INJECTED_LIST_ANNOTATION)
        .filter(|v| !v.is_empty())
        .map(|v| v.split(',').collect())
        .unwrap_or_default();
    let containers = pod.containers();
    let sidecars: BTreeSet<&str> = containers
        .iter()
        .filter(|c| {
            c.env
                .iter()
                .flatten()
                .find(|e| e.name == SIDECAR_INJECTED_ENV)
                .and_then(|e| e.value.as_deref())
                == Some("true")
        })
        .map(|c| c.name.as_str())
        .collect();
    if sets.is_empty() || sidecars.is_empty() {
        return true;
    }
    let Some(raw) = annotation(&pod.metadata, SIDECARSET_INPLACE_STATE) else {
        return true;
    };
    let Ok(states) = serde_json::from_str::<Option<BTreeMap<String, Option<SidecarUpdateState>>>>(raw) else {
        return false;
    };
    let mut last: BTreeMap<&str, &str> = BTreeMap::new();
    let states = states.unwrap_or_default();
    for set in &sets {
        if let Some(Some(state)) = states.get(*set) {
            for (name, status) in state.last_container_statuses.iter().flatten() {
                last.insert(name, &status.image_id);
            }
        }
    }
    let statuses = pod.container_statuses();
    for cs in statuses.iter().filter(|cs| sidecars.contains(cs.name.as_str())) {
        let spec_image = containers
            .iter()
            .find(|c| c.name == cs.name)
            .and_then(|c| c.image.as_deref())
            .unwrap_or_default();
        if last.get(cs.name.as_str()).is_some_and(|old| *old == cs.image_id) && spec_image != cs.image {
            return false;
        }
    }
    true
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    const D: &str = "sha256:a9286defaba7b3a519d585ba0e37d0b2cbee74ebfe590960b0b1d6a5e97d1e1d";

    #[test]
    fn active_means_not_succeeded_not_failed_not_deleting() {
        for (phase, deleting, active) in [
            ("Running", false, true),
            ("Pending", false, true),
            ("", false, true),
            ("Succeeded", false, false),
            ("Failed", false, false),
            ("Running", true, false),
        ] {
            let mut value = serde_json::json!({"metadata": {"name": "a"}, "status": {"phase": phase}});
            if deleting {
                value["metadata"]["deletionTimestamp"] = serde_json::json!("2026-01-01T00:00:00Z");
            }
            assert_eq!(
                is_active_json(&value),
                active,
                "json: {phase} deleting={deleting}"
            );
            assert_eq!(is_active(&pod(value)), active, "{phase} deleting={deleting}");
        }
        let unset = serde_json::json!({"metadata": {"deletionTimestamp": null}});
        assert!(is_active_json(&unset), "a null deletionTimestamp is no deletion");
    }

    fn pod(v: serde_json::Value) -> PodRecord {
        serde_json::from_value(v).unwrap()
    }

    #[test]
    fn image_references() {
        let r = parse_image("docker.io/busybox:1.0").unwrap();
        assert_eq!((r.repo, r.tag, r.digest), ("docker.io/busybox", "1.0", ""));
        let with_port = parse_image("reg:5000/a/b").unwrap();
        assert_eq!((with_port.repo, with_port.tag), ("reg:5000/a/b", ""));
        assert!(is_digest(&format!("busybox@{D}")));
        assert!(!is_digest("busybox@sha256:abc"));
        assert!(!is_digest("busybox:1.0"));
        assert!(parse_image("Busybox").is_none());
        assert!(images_equal(&format!("busybox@{D}"), &format!("busybox@{D}")));
        assert!(!images_equal(
            &format!("busybox@{D}"),
            &format!("docker.io/library/busybox@{D}")
        ));
    }

    #[test]
    fn ready_needs_running_ready_no_deletion_no_unavailable_label() {
        let base = json!({"metadata": {"name": "p"}, "status": {"phase": "Running",
            "conditions": [{"type": "Ready", "status": "True"}]}});
        assert!(is_ready_for_pub(&pod(base.clone())));
        let mut v = base.clone();
        v["status"]["phase"] = json!("Pending");
        assert!(
            is_ready(&pod(v.clone())),
            "Kubernetes' notion: the Ready condition alone"
        );
        assert!(!is_ready_for_pub(&pod(v)));
        let mut v = base.clone();
        v["status"]["conditions"][0]["status"] = json!("False");
        assert!(!is_ready_for_pub(&pod(v)));
        let mut v = base.clone();
        v["metadata"]["deletionTimestamp"] = json!("2024-01-01T00:00:00Z");
        assert!(!is_ready_for_pub(&pod(v)));
        let mut v = base;
        v["metadata"]["labels"] = json!({"unavailable-pod.kruise.io/drain": "x"});
        assert!(!is_ready_for_pub(&pod(v)));
    }

    #[test]
    fn digest_images_must_match_their_image_ids() {
        let p = |image_id: &str| {
            pod(json!({"metadata": {"name": "p"},
                "spec": {"containers": [{"name": "a", "image": format!("busybox@{D}")}]},
                "status": {"containerStatuses": [{"name": "a", "image": "x", "imageID": image_id,
                    "ready": true, "restartCount": 0}]}}))
        };
        assert!(is_state_consistent(&p(&format!("docker-pullable://busybox@{D}"))));
        assert!(!is_state_consistent(&p(&format!(
            "busybox@sha256:{}",
            "b".repeat(64)
        ))));
        let missing = pod(json!({"metadata": {"name": "p"},
            "spec": {"containers": [{"name": "a", "image": format!("busybox@{D}")}]}}));
        assert!(!is_state_consistent(&missing));
    }

    #[test]
    fn in_place_update_state_decides_for_tagged_images() {
        let p = |annotations: serde_json::Value, status_image: &str, image_id: &str| {
            pod(json!({"metadata": {"name": "p", "annotations": annotations},
                "spec": {"containers": [{"name": "a", "image": "nginx:1.2"}]},
                "status": {"containerStatuses": [{"name": "a", "image": status_image, "imageID": image_id,
                    "ready": true, "restartCount": 0}]}}))
        };
        assert!(is_state_consistent(&p(json!({}), "nginx:1.1", "id1")));
        let state = json!({"apps.kruise.io/inplace-update-state":
            r#"{"revision":"r","updateTimestamp":"2024-01-01T00:00:00Z","lastContainerStatuses":{"a":{"imageID":"id1"}}}"#});
        assert!(
            !is_state_consistent(&p(state.clone(), "nginx:1.1", "id1")),
            "kubelet not done"
        );
        assert!(
            is_state_consistent(&p(state.clone(), "nginx:1.1", "id2")),
            "imageID changed"
        );
        assert!(
            is_state_consistent(&p(state, "nginx:1.2", "id1")),
            "status image is the spec image"
        );
        assert!(!is_state_consistent(&p(
            json!({"apps.kruise.io/inplace-update-grace": "{}"}),
            "nginx:1.2",
            "id"
        )));
        assert!(!is_state_consistent(&p(
            json!({"inplace-update-state": "{bad"}),
            "nginx:1.2",
            "id"
        )));
        let next = json!({"apps.kruise.io/inplace-update-state":
            r#"{"revision":"r","lastContainerStatuses":{},"nextContainerImages":{"b":"x:1"}}"#});
        assert!(!is_state_consistent(&p(next, "nginx:1.2", "id")));
        let lost = json!({"apps.kruise.io/inplace-update-state":
            r#"{"revision":"r","lastContainerStatuses":{"gone":{"imageID":"x"}}}"#});
        assert!(!is_state_consistent(&p(lost, "nginx:1.2", "id")));
    }

    #[test]
    fn sidecar_upgrade_in_progress_is_inconsistent() {
        let p = |state: &str, image_id: &str| {
            pod(json!({"metadata": {"name": "p", "annotations": {
                    "kruise.io/sidecarset-injected-list": "log",
                    "kruise.io/sidecarset-inplace-update-state": state}},
                "spec": {"containers": [{"name": "app", "image": "app:1"},
                    {"name": "log", "image": "log:2", "env": [{"name": "IS_INJECTED", "value": "true"}]}]},
                "status": {"containerStatuses": [
                    {"name": "app", "image": "app:1", "imageID": "a", "ready": true, "restartCount": 0},
                    {"name": "log", "image": "log:1", "imageID": image_id, "ready": true, "restartCount": 0}]}}))
        };
        let state = r#"{"log":{"revision":"r","updateTimestamp":"2024-01-01T00:00:00Z","lastContainerStatuses":{"log":{"imageID":"old"}}}}"#;
        assert!(!is_state_consistent(&p(state, "old")));
        assert!(is_state_consistent(&p(state, "new")));
        assert!(!is_state_consistent(&p("not json", "new")));
    }
}
