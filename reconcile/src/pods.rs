//! Questions the plan asks about one pod: its revision, lifecycle state, readiness and availability.
//!
//! Every function here reads a [`PodRecord`] and nothing else; time comes in as an argument.

use k8s_openapi::jiff::{SignedDuration, Timestamp};
use kruise_api::PodRecord;
use kruise_api::common::{IN_PLACE_UPDATE_GRACE_KEY, IN_PLACE_UPDATE_READY, LIFECYCLE_STATE_KEY};

/// Pod (and revision) label holding the ControllerRevision name (or its hash).
pub use kruise_core::names::CONTROLLER_REVISION_HASH_LABEL as CONTROLLER_REVISION_HASH;
/// Pod label holding the short revision hash.
pub use kruise_core::names::POD_TEMPLATE_HASH_LABEL as POD_TEMPLATE_HASH;
/// Pod label that asks the CloneSet to delete the pod (any value).
pub const SPECIFIED_DELETE: &str = "apps.kruise.io/specified-delete";
/// Pod annotation that orders deletion: lower cost goes first.
pub use kruise_core::names::POD_DELETION_COST_ANNOTATION as POD_DELETION_COST;
/// Activeness, phase, conditions and readiness live in `kruise_core::pod_state`; re-exported for the
/// planners that ask them with the other questions here.
pub use kruise_core::pod_state::{condition, is_active, is_ready, phase};

/// The lifecycle state label, `""` when absent.
pub fn lifecycle_state(pod: &PodRecord) -> &str {
    label(pod, LIFECYCLE_STATE_KEY).unwrap_or("")
}

/// A label of the pod.
pub fn label<'a>(pod: &'a PodRecord, key: &str) -> Option<&'a str> {
    pod.metadata.labels.get(key)
}

/// An annotation of the pod.
pub fn annotation<'a>(pod: &'a PodRecord, key: &str) -> Option<&'a str> {
    pod.metadata.annotations.get(key)
}

/// The pod's name (`""` when unset).
pub fn name(pod: &PodRecord) -> &str {
    pod.metadata.name.as_deref().unwrap_or("")
}

/// The segment of a revision name or hash after its last `-`.
pub fn short_hash(hash: &str) -> &str {
    // A plain backwards scan: names are short, and this runs for every pod.
    let bytes = hash.as_bytes();
    bytes
        .iter()
        .rposition(|b| *b == b'-')
        .map_or(hash, |i| &hash[i + 1..])
}

/// OpenKruise's `EqualToRevisionHash`: the pod's `controller-revision-hash` equals the revision name, or
/// their short hashes are equal.
pub fn is_at_revision(pod: &PodRecord, revision: &str) -> bool {
    revision_matches(label(pod, CONTROLLER_REVISION_HASH).unwrap_or(""), revision)
}

/// [`is_at_revision`] for a pod whose `controller-revision-hash` is `own`.
pub fn revision_matches(own: &str, revision: &str) -> bool {
    own == revision || short_hash(own) == short_hash(revision)
}

/// The labels every reconcile reads on every pod, found in one pass over the pod's labels.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct KeyLabels<'a> {
    /// The lifecycle state, `""` when absent.
    pub lifecycle_state: &'a str,
    /// `controller-revision-hash`, `""` when absent.
    pub revision: &'a str,
    /// `pod-template-hash` is present.
    pub has_template_hash: bool,
    /// `apps.kruise.io/specified-delete` is present.
    pub specified_delete: bool,
}

/// The pod's [`KeyLabels`].
pub fn key_labels(pod: &PodRecord) -> KeyLabels<'_> {
    let mut out = KeyLabels::default();
    for (k, v) in pod.metadata.labels.iter() {
        match k {
            LIFECYCLE_STATE_KEY => out.lifecycle_state = v,
            CONTROLLER_REVISION_HASH => out.revision = v,
            POD_TEMPLATE_HASH => out.has_template_hash = true,
            SPECIFIED_DELETE => out.specified_delete = true,
            _ => {}
        }
    }
    out
}

/// Kubernetes' `IsPodAvailable` on a running pod: Ready, for longer than `min_ready_seconds`.
pub fn is_running_and_available(pod: &PodRecord, min_ready_seconds: i32, now: Timestamp) -> bool {
    if phase(pod) != "Running" {
        return false;
    }
    let Some(ready) = condition(pod, "Ready").filter(|c| c.status == "True") else {
        return false;
    };
    if min_ready_seconds <= 0 {
        return true;
    }
    ready.last_transition_time.as_ref().is_some_and(|t| {
        t.0.checked_add(SignedDuration::from_secs(i64::from(min_ready_seconds)))
            .is_ok_and(|at| at < now)
    })
}

/// `IsPodUpdateReady`: running and available, and `InPlaceUpdateReady` absent or True.
pub fn is_update_ready(pod: &PodRecord, min_ready_seconds: i32, now: Timestamp) -> bool {
    is_running_and_available(pod, min_ready_seconds, now)
        && condition(pod, IN_PLACE_UPDATE_READY).is_none_or(|c| c.status == "True")
}

/// `IsPodAvailable` of the CloneSet controller: lifecycle `""`/`Normal` and update-ready.
pub fn is_available(pod: &PodRecord, min_ready_seconds: i32, now: Timestamp) -> bool {
    matches!(lifecycle_state(pod), "" | "Normal") && is_update_ready(pod, min_ready_seconds, now)
}

/// The pod carries the `apps.kruise.io/specified-delete` label.
pub fn has_specified_delete_label(pod: &PodRecord) -> bool {
    label(pod, SPECIFIED_DELETE).is_some()
}

/// The pod still waits out an in-place grace period.
pub fn in_grace_period(pod: &PodRecord) -> bool {
    annotation(pod, IN_PLACE_UPDATE_GRACE_KEY).is_some_and(|v| !v.is_empty())
}

/// `spec.nodeName` is set.
pub fn is_scheduled(pod: &PodRecord) -> bool {
    pod.spec
        .as_ref()
        .and_then(|s| s.node_name.as_deref())
        .is_some_and(|n| !n.is_empty())
}

/// The highest restart count among the pod's containers.
pub fn max_restarts(pod: &PodRecord) -> i32 {
    pod.status
        .as_ref()
        .and_then(|s| s.container_statuses.as_ref())
        .map(|all| all.iter().map(|c| c.restart_count).max().unwrap_or(0))
        .unwrap_or(0)
}

/// When the pod last became Ready (`None` if it is not ready).
pub fn ready_since(pod: &PodRecord) -> Option<Timestamp> {
    condition(pod, "Ready")
        .filter(|c| c.status == "True")
        .and_then(|c| c.last_transition_time.as_ref())
        .map(|t| t.0)
}

/// `metadata.creationTimestamp`.
pub fn created(pod: &PodRecord) -> Option<Timestamp> {
    pod.metadata.creation_timestamp.as_ref().map(|t| t.0)
}

/// The key of [`active_pods_less`], packed into integers so that comparing is cheap: scheduled, phase
/// rank and ready (as bits of one byte), ready time (newest first), restarts (most first), creation
/// (newest first). A missing time sorts before every time.
pub type ActiveOrderKey = (u8, i128, i64, i128);

/// A time "newest first": `None` smallest, then later times before earlier ones.
fn newest_first(t: Option<Timestamp>) -> i128 {
    t.map_or(i128::MIN, |t| -t.as_nanosecond())
}

/// The sort key of [`active_pods_less`] (smaller first), for sorting many pods.
pub fn active_order_key(p: &PodRecord) -> ActiveOrderKey {
    let phase_rank: u8 = match phase(p) {
        "Pending" => 0,
        "Unknown" => 1,
        "Running" => 2,
        _ => 0,
    };
    let ready = condition(p, "Ready").filter(|c| c.status == "True");
    let ready_since = ready.and_then(|c| c.last_transition_time.as_ref()).map(|t| t.0);
    (
        u8::from(is_scheduled(p)) << 3 | phase_rank << 1 | u8::from(ready.is_some()),
        newest_first(ready_since),
        -i64::from(max_restarts(p)),
        newest_first(created(p)),
    )
}

/// Kubernetes' `ActivePods` order ("delete or update first" comes first): unscheduled before scheduled,
/// Pending (and any other phase) before Unknown before Running, not ready before ready, more recently ready first, more
/// restarts first, newer first.
pub fn active_pods_less(a: &PodRecord, b: &PodRecord) -> std::cmp::Ordering {
    use std::cmp::Ordering;
    let phase_rank = |p: &PodRecord| match phase(p) {
        "Pending" => 0,
        "Unknown" => 1,
        "Running" => 2,
        _ => 0,
    };
    is_scheduled(a)
        .cmp(&is_scheduled(b))
        .then_with(|| phase_rank(a).cmp(&phase_rank(b)))
        .then_with(|| is_ready(a).cmp(&is_ready(b)))
        .then_with(|| match (ready_since(a), ready_since(b)) {
            (Some(x), Some(y)) => y.cmp(&x),
            _ => Ordering::Equal,
        })
        .then_with(|| max_restarts(b).cmp(&max_restarts(a)))
        .then_with(|| match (created(a), created(b)) {
            (Some(x), Some(y)) => y.cmp(&x),
            _ => Ordering::Equal,
        })
}

#[cfg(test)]
pub(crate) mod fixtures {
    //! Small pod builders shared by the table tests.
    use k8s_openapi::apimachinery::pkg::apis::meta::v1::Time;
    use k8s_openapi::jiff::Timestamp;
    use kruise_api::PodRecord;
    use kruise_api::pod::PodConditionRecord;
    use kruise_api::pod::{PodRecordSpec, PodRecordStatus};

    /// A fixed "now" for tests.
    pub fn now() -> Timestamp {
        "2026-01-01T12:00:00Z".parse().unwrap()
    }

    /// A running, ready, available pod at `revision` (scheduled, ready for an hour).
    pub fn pod(name: &str, revision: &str) -> PodRecord {
        let mut p = PodRecord::default();
        p.metadata.name = Some(name.into());
        p.metadata.uid = Some(format!("uid-{name}"));
        p.metadata.labels = kruise_api::pod::InternedMap::from(Some(
            [
                ("app".to_string(), "demo".to_string()),
                (super::CONTROLLER_REVISION_HASH.to_string(), revision.to_string()),
                (
                    super::POD_TEMPLATE_HASH.to_string(),
                    super::short_hash(revision).to_string(),
                ),
                (
                    kruise_api::apps_v1beta1::CLONESET_INSTANCE_ID.to_string(),
                    name.rsplit('-').next().unwrap().to_string(),
                ),
            ]
            .into(),
        ));
        p.spec = Some(PodRecordSpec {
            node_name: Some("node-1".into()),
            ..Default::default()
        });
        let since = Time(
            now()
                .checked_sub(k8s_openapi::jiff::SignedDuration::from_hours(1))
                .unwrap(),
        );
        p.status = Some(PodRecordStatus {
            phase: Some("Running".into()),
            conditions: Some(vec![PodConditionRecord {
                type_: "Ready".into(),
                status: "True".into(),
                last_transition_time: Some(since),
                ..Default::default()
            }]),
            ..Default::default()
        });
        p
    }

    /// The same pod, not ready.
    pub fn unready(mut p: PodRecord) -> PodRecord {
        let status = p.status.as_mut().unwrap();
        status.conditions.as_mut().unwrap()[0].status = "False".into();
        p
    }

    /// The same pod with a label.
    pub fn labelled(mut p: PodRecord, key: &str, value: &str) -> PodRecord {
        p.metadata.labels.insert(key.into(), value.into());
        p
    }

    /// The same pod with an annotation.
    pub fn annotated(mut p: PodRecord, key: &str, value: &str) -> PodRecord {
        p.metadata.annotations.insert(key.into(), value.into());
        p
    }
}

#[cfg(test)]
mod tests {
    use super::fixtures::*;
    use super::*;

    #[test]
    fn revision_equality_compares_full_names_or_short_hashes() {
        let p = pod("cs-abcde", "cs-7f9c");
        assert!(is_at_revision(&p, "cs-7f9c"));
        assert!(is_at_revision(&p, "7f9c"));
        assert!(!is_at_revision(&p, "cs-7f9d"));
        assert!(!is_at_revision(
            &labelled(p, CONTROLLER_REVISION_HASH, ""),
            "cs-7f9c"
        ));
    }

    #[test]
    fn availability_needs_normal_lifecycle_ready_and_min_ready_seconds() {
        let p = pod("cs-a", "r");
        assert!(is_available(&p, 0, now()));
        assert!(is_available(&p, 3599, now()));
        assert!(
            !is_available(&p, 3600, now()),
            "ready exactly minReadySeconds ago is not yet available"
        );
        assert!(!is_available(&unready(p.clone()), 0, now()));
        let preparing = labelled(p.clone(), LIFECYCLE_STATE_KEY, "PreparingNormal");
        assert!(!is_available(&preparing, 0, now()));
        assert!(
            is_update_ready(&preparing, 0, now()),
            "readiness ignores the lifecycle state"
        );
    }

    #[test]
    fn key_labels_are_read_in_one_pass() {
        let bare = labelled(pod("cs-a", "cs-7f9c"), POD_TEMPLATE_HASH, "");
        let mut no_hash = bare.clone();
        no_hash.metadata.labels.remove(POD_TEMPLATE_HASH);
        assert_eq!(
            key_labels(&no_hash),
            KeyLabels {
                revision: "cs-7f9c",
                ..KeyLabels::default()
            }
        );
        let full = labelled(
            labelled(bare, LIFECYCLE_STATE_KEY, "Updating"),
            SPECIFIED_DELETE,
            "",
        );
        assert_eq!(
            key_labels(&full),
            KeyLabels {
                lifecycle_state: "Updating",
                revision: "cs-7f9c",
                has_template_hash: true,
                specified_delete: true,
            }
        );
    }

    #[test]
    fn the_packed_active_order_key_sorts_as_active_pods_less() {
        use k8s_openapi::apimachinery::pkg::apis::meta::v1::Time;
        let at = |secs: i64| Some(Time(Timestamp::from_second(secs).unwrap()));
        let mut pods = Vec::new();
        for (i, (node, phase, ready, since, restarts, created)) in [
            ("", "Running", true, 100, 0, 10),
            ("n", "Pending", true, 100, 0, 10),
            ("n", "Unknown", true, 100, 0, 10),
            ("n", "Running", false, 100, 0, 10),
            ("n", "Running", true, 100, 0, 10),
            ("n", "Running", true, 200, 0, 10),
            ("n", "Running", true, 100, 3, 10),
            ("n", "Running", true, 100, 0, 20),
            ("n", "Succeeded", true, -5, 1, -20),
        ]
        .into_iter()
        .enumerate()
        {
            let mut p = pod(&format!("p-{i}"), "r");
            p.metadata.creation_timestamp = at(created);
            p.spec.as_mut().unwrap().node_name = Some(node.into());
            let status = p.status.as_mut().unwrap();
            status.phase = Some(phase.into());
            let cond = &mut status.conditions.as_mut().unwrap()[0];
            cond.status = if ready { "True" } else { "False" }.into();
            cond.last_transition_time = at(since);
            status.container_statuses = Some(vec![kruise_api::pod::ContainerStatusRecord {
                restart_count: restarts,
                ..Default::default()
            }]);
            pods.push(p);
        }
        for a in &pods {
            for b in &pods {
                assert_eq!(
                    active_order_key(a).cmp(&active_order_key(b)),
                    active_pods_less(a, b),
                    "{} vs {}",
                    name(a),
                    name(b)
                );
            }
        }
    }

    #[test]
    fn a_false_in_place_update_ready_condition_makes_the_pod_not_update_ready() {
        let mut p = pod("cs-a", "r");
        p.status
            .as_mut()
            .unwrap()
            .conditions
            .as_mut()
            .unwrap()
            .push(kruise_api::pod::PodConditionRecord {
                type_: IN_PLACE_UPDATE_READY.into(),
                status: "False".into(),
                ..Default::default()
            });
        assert!(!is_update_ready(&p, 0, now()));
    }
}
