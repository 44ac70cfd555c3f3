//! Table tests of the SidecarSet planner. Pod patches are applied (a strategic merge of containers by
//! name and of annotations) and the resulting pods are checked.

use super::*;
use serde_json::{Value, json};

pub(crate) const NOW: &str = "2026-01-01T12:00:00Z";

pub(crate) fn now() -> Timestamp {
    NOW.parse().unwrap()
}

pub(crate) fn records(hash: &str) -> String {
    json!({"sc": {"updateTimestamp": "2025-12-01T00:00:00Z", "hash": hash, "sidecarSetName": "sc",
        "sidecarList": ["sidecar"], "controllerRevision": "sc-old"}})
    .to_string()
}

/// A ready pod injected by `sc` at hash `h1` (without image `w1`), ready since minute `ready_at`.
pub(crate) fn pod_json(i: usize, ready_at: u32) -> Value {
    json!({
        "metadata": {"name": format!("p{i}"), "namespace": "default", "uid": format!("u{i}"),
            "resourceVersion": format!("{}", 100 + i), "labels": {"app": "demo"},
            "creationTimestamp": "2025-12-01T00:00:00Z",
            "annotations": {"kruise.io/sidecarset-injected-list": "sc",
                "kruise.io/sidecarset-hash": records("h1"),
                "kruise.io/sidecarset-hash-without-image": records("w1")}},
        "spec": {"nodeName": "n1", "containers": [
            {"name": "app", "image": "app:v1"}, {"name": "sidecar", "image": "sidecar:v1"}]},
        "status": {"phase": "Running",
            "conditions": [{"type": "Ready", "status": "True",
                "lastTransitionTime": format!("2025-12-01T10:{ready_at:02}:00Z")}],
            "containerStatuses": [
                {"name": "app", "image": "app:v1", "imageID": "id-app-v1", "ready": true, "restartCount": 0},
                {"name": "sidecar", "image": "sidecar:v1", "imageID": "id-sidecar-v1", "ready": true, "restartCount": 0}]},
    })
}

pub(crate) fn pod(i: usize) -> PodRecord {
    serde_json::from_value(pod_json(i, i as u32)).unwrap()
}

pub(crate) fn with(mut v: Value, path: &[&str], value: Value) -> Value {
    let mut at = &mut v;
    for key in &path[..path.len() - 1] {
        at = &mut at[*key];
    }
    at[path[path.len() - 1]] = value;
    v
}

pub(crate) fn set(strategy: Value) -> SidecarSet {
    serde_json::from_value(json!({
        "apiVersion": "apps.kruise.io/v1beta1", "kind": "SidecarSet",
        "metadata": {"name": "sc", "generation": 2, "resourceVersion": "7",
            "annotations": {"kruise.io/sidecarset-hash": "h2", "kruise.io/sidecarset-hash-without-image": "w1"}},
        "spec": {"selector": {"matchLabels": {"app": "demo"}},
            "containers": [{"name": "sidecar", "image": "sidecar:v2"}],
            "updateStrategy": strategy},
    }))
    .unwrap()
}

pub(crate) fn run(set: &SidecarSet, pods: &[PodRecord], in_flight: &InFlight) -> Plan {
    let refs: Vec<&PodRecord> = pods.iter().collect();
    let facts = derive_all(set, &refs);
    plan(&Input {
        sidecar_set: set,
        pods: &seen(&refs, &facts),
        latest_revision: Some("sc-abc"),
        collision_count: 0,
        in_flight,
        now: now(),
        budget: None,
    })
    .unwrap()
}

pub(crate) fn chosen(plan: &Plan) -> Vec<&str> {
    plan.upgrades.iter().map(|u| u.pod.name.as_str()).collect()
}

pub(crate) fn progress(plan: &Plan) -> (&str, &str, &str) {
    let c = &plan.status.conditions.as_ref().unwrap()[0];
    (
        c.status.as_str(),
        c.reason.as_deref().unwrap(),
        c.message.as_deref().unwrap(),
    )
}

/// Applies a strategic-merge pod patch as the API server would (containers merged by name).
pub(crate) fn apply(pod: &PodRecord, patch: &Value) -> PodRecord {
    let mut v = serde_json::to_value(pod).unwrap();
    for (k, val) in patch["metadata"]["annotations"].as_object().into_iter().flatten() {
        v["metadata"]["annotations"][k] = val.clone();
    }
    for c in patch["spec"]["containers"].as_array().into_iter().flatten() {
        let list = v["spec"]["containers"].as_array_mut().unwrap();
        let target = list.iter_mut().find(|x| x["name"] == c["name"]).unwrap();
        target["image"] = c["image"].clone();
    }
    for c in patch["status"]["conditions"].as_array().into_iter().flatten() {
        let list = v["status"]["conditions"].as_array_mut().unwrap();
        list.retain(|x| x["type"] != c["type"]);
        list.push(c.clone());
    }
    serde_json::from_value(v).unwrap()
}

/// Kubelet restarts the sidecar on its new image (`ready` as given).
pub(crate) fn restarted(pod: &PodRecord, ready: bool) -> PodRecord {
    let mut p = pod.clone();
    let status = p.status.as_mut().unwrap();
    for s in status.container_statuses.as_mut().unwrap() {
        if s.name == "sidecar" {
            s.image = "sidecar:v2".into();
            s.image_id = "id-sidecar-v2".into();
            s.ready = ready;
            s.restart_count += 1;
        }
    }
    if !ready {
        status.conditions.as_mut().unwrap()[0].status = "False".into();
    }
    p
}

pub(crate) fn annotation<'a>(pod: &'a PodRecord, key: &str) -> &'a str {
    pods::annotation(pod, key).unwrap()
}

#[test]
fn matched_pods_are_selected_active_injected_and_hold_the_sidecar() {
    let unlabelled: PodRecord =
        serde_json::from_value(with(pod_json(3, 3), &["metadata", "labels"], json!({}))).unwrap();
    let not_injected: PodRecord = serde_json::from_value(with(
        pod_json(4, 4),
        &["metadata", "annotations", "kruise.io/sidecarset-injected-list"],
        json!("other"),
    ))
    .unwrap();
    let no_container: PodRecord = serde_json::from_value(with(
        pod_json(5, 5),
        &["spec", "containers"],
        json!([{"name": "app", "image": "app:v1"}]),
    ))
    .unwrap();
    let deleting: PodRecord = serde_json::from_value(with(
        pod_json(6, 6),
        &["metadata", "deletionTimestamp"],
        json!("2026-01-01T11:00:00Z"),
    ))
    .unwrap();
    let pods = vec![
        pod(0),
        pod(1),
        pod(2),
        unlabelled,
        not_injected,
        no_container,
        deleting,
    ];
    let plan = run(&set(json!({})), &pods, &InFlight::default());
    let s = &plan.status;
    assert_eq!(
        (s.matched_pods, s.updated_pods, s.ready_pods, s.updated_ready_pods),
        (3, 0, 3, 0)
    );
    assert_eq!(s.observed_generation, 2);
    assert_eq!(s.latest_revision.as_deref(), Some("sc-abc"));
    assert_eq!(s.collision_count, Some(0));
    assert!(plan.status_changed);
}

#[test]
fn an_upgrade_changes_only_the_sidecar_image_and_records_hash_state_and_condition() {
    let pods = vec![pod(0), pod(1), pod(2)];
    let plan = run(&set(json!({})), &pods, &InFlight::default());
    // maxUnavailable defaults to 1; the pod ready for the least time goes first.
    assert_eq!(chosen(&plan), ["p2"]);
    let upgrade = &plan.upgrades[0];
    assert_eq!(upgrade.patch["metadata"]["resourceVersion"], "102");
    let after = apply(&pods[2], &upgrade.patch);
    let images: Vec<_> = after
        .spec
        .as_ref()
        .unwrap()
        .containers
        .iter()
        .map(|c| c.image.clone().unwrap())
        .collect();
    assert_eq!(images, ["app:v1", "sidecar:v2"]);
    let hash: Value = serde_json::from_str(annotation(&after, "kruise.io/sidecarset-hash")).unwrap();
    assert_eq!(hash["sc"]["hash"], "h2");
    assert_eq!(hash["sc"]["controllerRevision"], "sc-abc");
    assert_eq!(hash["sc"]["sidecarList"], json!(["sidecar"]));
    assert_eq!(hash["sc"]["updateTimestamp"], NOW);
    let state: Value = serde_json::from_str(annotation(&after, SIDECARSET_INPLACE_UPDATE_STATE)).unwrap();
    assert_eq!(state["sc"]["revision"], "h2");
    assert_eq!(
        state["sc"]["lastContainerStatuses"],
        json!({"sidecar": {"imageID": "id-sidecar-v1"}})
    );
    let condition = upgrade.condition.as_ref().unwrap();
    let after = apply(&after, condition);
    let c = pods::condition(&after, SIDECARSET_UPGRADABLE).unwrap();
    assert_eq!(
        (c.status.as_str(), c.reason.as_deref()),
        ("True", Some("AllSidecarsetUpgradable"))
    );
    assert_eq!(c.message.as_deref(), Some(r#"{"sc":true}"#));
    assert_eq!(plan.in_flight.pods.get("u2"), Some(&("h2".to_string(), now())));
    assert_eq!(progress(&plan).1, "Updating");
}

#[test]
fn kubelet_running_the_new_image_id_completes_the_upgrade() {
    let pods = vec![pod(0)];
    let plan = run(&set(json!({})), &pods, &InFlight::default());
    let upgraded = apply(&pods[0], &plan.upgrades[0].patch);
    // Updated, but kubelet still runs the old image: not consistent, so not ready for the SidecarSet.
    let next = run(
        &set(json!({})),
        std::slice::from_ref(&upgraded),
        &InFlight::default(),
    );
    let s = &next.status;
    assert_eq!(
        (s.matched_pods, s.updated_pods, s.ready_pods, s.updated_ready_pods),
        (1, 1, 0, 0)
    );
    assert!(!pod_facts::is_consistent(
        &SetFacts::of(&set(json!({}))),
        &upgraded,
        &[]
    ));
    let done = restarted(&upgraded, true);
    let next = run(&set(json!({})), &[done], &InFlight::default());
    let s = &next.status;
    assert_eq!(
        (s.matched_pods, s.updated_pods, s.ready_pods, s.updated_ready_pods),
        (1, 1, 1, 1)
    );
    assert_eq!(
        progress(&next),
        ("True", "Complete", "all 1 matched pod(s) run the latest sidecars")
    );
}

#[test]
fn partition_keeps_the_last_candidates_on_old_sidecars() {
    let pods: Vec<PodRecord> = (0..5).map(pod).collect();
    let cases = [
        (json!(2), vec!["p4", "p3", "p2"]),
        (json!("50%"), vec!["p4", "p3"]), // 2.5 → 3 kept
        (json!("90%"), vec!["p4"]),       // 4.5 → 5 → capped to 4
        (json!("100%"), vec![]),
        (json!(9), vec![]),
    ];
    for (partition, expected) in cases {
        let strategy = json!({"partition": partition, "maxUnavailable": 5});
        let plan = run(&set(strategy), &pods, &InFlight::default());
        assert_eq!(chosen(&plan), expected, "partition {partition}");
    }
    // Once the rest are updated, the partition holds and says so.
    let mut pods = pods;
    for i in [2, 3, 4] {
        let patch = run(
            &set(json!({})),
            std::slice::from_ref(&pods[i]),
            &InFlight::default(),
        )
        .upgrades[0]
            .patch
            .clone();
        pods[i] = restarted(&apply(&pods[i], &patch), true);
    }
    let plan = run(&set(json!({"partition": 2})), &pods, &InFlight::default());
    assert!(plan.upgrades.is_empty());
    assert_eq!(
        progress(&plan),
        (
            "True",
            "PartitionReached",
            "partition keeps 2 pod(s) on older sidecars"
        )
    );
}

#[test]
fn not_update_and_paused_write_status_only_and_say_why() {
    let pods: Vec<PodRecord> = (0..2).map(pod).collect();
    let plan = run(&set(json!({"type": "NotUpdate"})), &pods, &InFlight::default());
    assert!(plan.upgrades.is_empty());
    assert_eq!(progress(&plan).1, "NotUpdate");
    let plan = run(&set(json!({"paused": true})), &pods, &InFlight::default());
    assert!(plan.upgrades.is_empty());
    assert_eq!(
        progress(&plan),
        (
            "False",
            "Paused",
            "updateStrategy.paused: 2 pod(s) wait for the latest sidecars"
        )
    );
    // The rollout stopping is an event once, when the condition turns False with this reason.
    assert_eq!(
        plan.events,
        [Event {
            warning: true,
            reason: "Paused".into(),
            message: "updateStrategy.paused: 2 pod(s) wait for the latest sidecars".into()
        }]
    );
    let mut stored = set(json!({"paused": true}));
    stored.status = Some(plan.status.clone());
    assert!(run(&stored, &pods, &InFlight::default()).events.is_empty());
    assert_eq!(plan.status.matched_pods, 2);
}

#[test]
fn a_non_image_change_is_never_applied_and_is_reported() {
    let mut changed = set(json!({}));
    changed
        .metadata
        .annotations
        .as_mut()
        .unwrap()
        .insert("kruise.io/sidecarset-hash-without-image".into(), "w2".into());
    let pods = vec![pod(0), pod(1)];
    let plan = run(&changed, &pods, &InFlight::default());
    assert!(plan.upgrades.is_empty());
    assert_eq!(plan.not_upgradable.len(), 2);
    let after = apply(&pods[0], &plan.not_upgradable[0].1);
    let c = pods::condition(&after, SIDECARSET_UPGRADABLE).unwrap();
    assert_eq!(
        (c.status.as_str(), c.reason.as_deref()),
        ("False", Some("UpdateImmutableField"))
    );
    assert_eq!(c.message.as_deref(), Some(r#"{"sc":false}"#));
    assert_eq!(plan.events[0].reason, "NotUpgradablePods");
    let (status, reason, message) = progress(&plan);
    assert_eq!((status, reason), ("False", "NotUpgradablePods"));
    assert!(
        message.starts_with("2 pod(s) cannot be updated in place"),
        "{message}"
    );
    // The condition already says so: no second patch.
    let plan = run(&changed, &[after], &InFlight::default());
    assert!(plan.not_upgradable.is_empty());
}

#[test]
fn upgrades_in_flight_hold_the_rollout_until_seen_gone_or_timed_out() {
    let pods: Vec<PodRecord> = (0..3).map(pod).collect();
    let since = |secs: i64| now().checked_sub(SignedDuration::from_secs(secs)).unwrap();
    let mut in_flight = InFlight::default();
    in_flight.pods.insert("u1".into(), ("h2".into(), since(5)));
    let plan = run(&set(json!({})), &pods, &in_flight);
    assert!(plan.upgrades.is_empty());
    assert_eq!(plan.requeue_after, Some(IN_FLIGHT_RECHECK));
    assert_eq!(plan.in_flight, in_flight);
    // Timed out, for a deleted pod, or for an older hash: forgotten, and the rollout goes on.
    for (uid, hash, age) in [("u1", "h2", 61), ("gone", "h2", 5), ("u1", "h1", 5)] {
        let mut in_flight = InFlight::default();
        in_flight.pods.insert(uid.into(), (hash.into(), since(age)));
        let plan = run(&set(json!({})), &pods, &in_flight);
        assert_eq!(chosen(&plan), ["p2"], "{uid} {hash} {age}");
        assert_eq!(plan.in_flight.pods.keys().collect::<Vec<_>>(), ["u2"]);
    }
}

#[test]
fn a_status_already_stored_is_not_written_again() {
    let pods = [pod(0)];
    let done = |p: &PodRecord| {
        let patch = run(&set(json!({})), std::slice::from_ref(p), &InFlight::default()).upgrades[0]
            .patch
            .clone();
        restarted(&apply(p, &patch), true)
    };
    let pods: Vec<PodRecord> = pods.iter().map(done).collect();
    let mut stored = set(json!({}));
    let first = run(&stored, &pods, &InFlight::default());
    assert!(first.status_changed);
    stored.status = Some(first.status.clone());
    let second = run(&stored, &pods, &InFlight::default());
    assert!(!second.status_changed, "{:?}", second.status);
}

#[test]
fn patch_pod_metadata_is_reapplied_on_upgrade() {
    let mut s = set(json!({}));
    s.spec.patch_pod_metadata = Some(vec![
        serde_json::from_value(json!(
        {"annotations": {"mesh/config": "{\"b\":2}"}, "patchPolicy": "MergePatchJson"}))
        .unwrap(),
    ]);
    let p: PodRecord = serde_json::from_value(with(
        pod_json(0, 0),
        &["metadata", "annotations", "mesh/config"],
        json!("{\"a\":1}"),
    ))
    .unwrap();
    let plan = run(&s, std::slice::from_ref(&p), &InFlight::default());
    let after = apply(&p, &plan.upgrades[0].patch);
    assert_eq!(annotation(&after, "mesh/config"), r#"{"a":1,"b":2}"#);
}

#[test]
fn a_pod_a_budget_protects_waits_without_a_write_and_the_condition_names_the_budget() {
    use kruise_core::pub_protection::{self, Outcome, PodOperation};
    let protected = |i: usize| -> PodRecord {
        serde_json::from_value(with(
            pod_json(i, i as u32),
            &["metadata", "annotations", "pub.kruise.io/related-pub"],
            json!("web-pub"),
        ))
        .unwrap()
    };
    let pods: Vec<PodRecord> = (0..3).map(protected).collect();
    let refs: Vec<&PodRecord> = pods.iter().collect();
    for (allowed, expected) in [(0, Vec::<&str>::new()), (1, vec!["p2"])] {
        let mut view = kruise_core::MemoryView::default();
        view.add(
            json!({"apiVersion": "policy.kruise.io/v1beta1", "kind": "PodUnavailableBudget",
            "metadata": {"name": "web-pub", "namespace": "default", "resourceVersion": "1"},
            "spec": {"selector": {"matchLabels": {"app": "demo"}}, "maxUnavailable": 1},
            "status": {"desiredAvailable": 2, "currentAvailable": 3, "totalReplicas": 3,
                "unavailableAllowed": allowed}}),
        )
        .unwrap();
        // The pod webhook's own rule, run dry.
        let budget = |p: &PodRecord| match pub_protection::check(
            p,
            "default",
            PodOperation::Update,
            true,
            &view,
            now(),
        ) {
            Ok(Outcome::Denied { pub_name, message }) => Some(Refusal {
                budget: format!("default/{pub_name}"),
                message,
            }),
            _ => None,
        };
        let s = set(json!({}));
        let facts = derive_all(&s, &refs);
        let plan = plan(&Input {
            sidecar_set: &s,
            pods: &seen(&refs, &facts),
            latest_revision: Some("sc-abc"),
            collision_count: 0,
            in_flight: &InFlight::default(),
            now: now(),
            budget: Some(&budget),
        })
        .unwrap();
        assert_eq!(chosen(&plan), expected);
        if allowed == 0 {
            let (status, reason, message) = progress(&plan);
            assert_eq!((status, reason), ("True", "PodUnavailableBudgetReached"));
            assert!(message.contains("default/web-pub"), "{message}");
            assert!(message.contains("is forbidden"), "{message}");
            assert_eq!(plan.requeue_after, Some(BUDGET_RECHECK));
            assert!(plan.in_flight.pods.is_empty());
        }
    }
}
