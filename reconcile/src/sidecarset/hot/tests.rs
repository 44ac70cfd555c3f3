//! Table tests of hot upgrade through the planner: every patch is applied to the pod, kubelet's answer is
//! simulated, and the next pass plans from the result.

use serde_json::{Value, json};

use super::super::tests::{annotation, apply, chosen, progress, records, run};
use super::*;
use crate::sidecarset::{InFlight, Plan};

const WORKING: &str = SIDECARSET_WORKING_HOTUPGRADE_CONTAINER;

/// A SidecarSet with one hot sidecar at `image`, hash `hash`, resourceVersion `rv`.
fn hot_set(image: &str, hash: &str, rv: &str) -> kruise_api::apps_v1beta1::SidecarSet {
    serde_json::from_value(json!({
        "apiVersion": "apps.kruise.io/v1beta1", "kind": "SidecarSet",
        "metadata": {"name": "sc", "generation": 2, "resourceVersion": rv,
            "annotations": {"kruise.io/sidecarset-hash": hash, "kruise.io/sidecarset-hash-without-image": "w1"}},
        "spec": {"selector": {"matchLabels": {"app": "demo"}},
            "containers": [{"name": "sidecar", "image": image,
                "upgradeStrategy": {"upgradeType": "HotUpgrade", "hotUpgradeEmptyImage": "empty:1"}}]},
    }))
    .unwrap()
}

/// A pod as injection leaves it: `sidecar-1` works on v1, `sidecar-2` idles on the empty image.
fn hot_pod(i: usize) -> PodRecord {
    let status = |name: &str, id: &str| json!({"name": name, "image": "", "imageID": id, "ready": true, "restartCount": 0});
    serde_json::from_value(json!({
        "metadata": {"name": format!("p{i}"), "namespace": "default", "uid": format!("u{i}"),
            "resourceVersion": format!("{}", 100 + i), "labels": {"app": "demo"},
            "creationTimestamp": "2025-12-01T00:00:00Z",
            "annotations": {"kruise.io/sidecarset-injected-list": "sc",
                "kruise.io/sidecarset-hash": records("h1"),
                "kruise.io/sidecarset-hash-without-image": records("w1"),
                WORKING: r#"{"sidecar":"sidecar-1"}"#,
                "version.sidecarset.kruise.io/sidecar-1": "1", "versionalt.sidecarset.kruise.io/sidecar-1": "0",
                "version.sidecarset.kruise.io/sidecar-2": "0", "versionalt.sidecarset.kruise.io/sidecar-2": "1"}},
        "spec": {"nodeName": "n1", "containers": [
            {"name": "app", "image": "app:v1"},
            {"name": "sidecar-1", "image": "sidecar:v1"},
            {"name": "sidecar-2", "image": "empty:1"}]},
        "status": {"phase": "Running",
            "conditions": [{"type": "Ready", "status": "True",
                "lastTransitionTime": format!("2025-12-01T10:{i:02}:00Z")}],
            "containerStatuses": [status("app", "id-app"), status("sidecar-1", "id-v1"), status("sidecar-2", "id-empty")]},
    }))
    .unwrap()
}

/// Kubelet restarts `container` on its spec image: imageID `id`, `ready` as given; the pod's Ready
/// condition follows its containers.
fn kubelet(pod: &PodRecord, container: &str, id: &str, ready: bool) -> PodRecord {
    let mut p = pod.clone();
    let status = p.status.as_mut().unwrap();
    let statuses = status.container_statuses.as_mut().unwrap();
    for s in statuses.iter_mut().filter(|s| s.name == container) {
        s.image_id = id.into();
        s.ready = ready;
        s.restart_count += 1;
    }
    let all_ready = statuses.iter().all(|s| s.ready);
    status.conditions.as_mut().unwrap()[0].status = if all_ready { "True" } else { "False" }.into();
    p
}

fn image(pod: &PodRecord, container: &str) -> String {
    let spec = pod.spec.as_ref().unwrap();
    let c = spec.containers.iter().find(|c| c.name == container).unwrap();
    c.image.clone().unwrap()
}

fn restarts(pod: &PodRecord, container: &str) -> i32 {
    let statuses = pod.status.as_ref().unwrap().container_statuses.as_ref().unwrap();
    statuses
        .iter()
        .find(|s| s.name == container)
        .unwrap()
        .restart_count
}

fn versions(pod: &PodRecord) -> [&str; 4] {
    [
        annotation(pod, "version.sidecarset.kruise.io/sidecar-1"),
        annotation(pod, "versionalt.sidecarset.kruise.io/sidecar-1"),
        annotation(pod, "version.sidecarset.kruise.io/sidecar-2"),
        annotation(pod, "versionalt.sidecarset.kruise.io/sidecar-2"),
    ]
}

fn upgraded(plan: &Plan, pod: &PodRecord) -> PodRecord {
    let u = plan
        .upgrades
        .iter()
        .find(|u| u.pod.name == pods::name(pod))
        .unwrap();
    apply(pod, &u.patch)
}

fn flipped(plan: &Plan, pod: &PodRecord) -> PodRecord {
    let (_, patch) = plan
        .flips
        .iter()
        .find(|(r, _)| r.name == pods::name(pod))
        .unwrap();
    assert_eq!(
        patch["metadata"]["resourceVersion"],
        json!(pod.metadata.resource_version)
    );
    apply(pod, patch)
}

#[test]
fn a_hot_upgrade_moves_the_working_twin_then_resets_the_old_one_and_the_next_pod_follows() {
    let v2 = hot_set("sidecar:v2", "h2", "7");
    let pods = [hot_pod(0), hot_pod(1)];
    // 1. The idle twin gets the new image and becomes the working one (maxUnavailable 1: one pod).
    let plan = run(&v2, &pods, &InFlight::default());
    assert_eq!(chosen(&plan), ["p1"]);
    assert!(plan.flips.is_empty());
    let p1 = upgraded(&plan, &pods[1]);
    assert_eq!(
        (image(&p1, "sidecar-1"), image(&p1, "sidecar-2")),
        ("sidecar:v1".into(), "sidecar:v2".into())
    );
    assert_eq!(annotation(&p1, WORKING), r#"{"sidecar":"sidecar-2"}"#);
    assert_eq!(versions(&p1), ["1", "7", "7", "1"]);
    // 2. Kubelet has not restarted the new twin yet: no flip, and the pod holds the budget.
    let pods = [pods[0].clone(), p1];
    let plan = run(&v2, &pods, &plan.in_flight);
    assert!(plan.upgrades.is_empty() && plan.flips.is_empty());
    assert_eq!(progress(&plan).1, "MaxUnavailableReached");
    // 3. The new twin runs v2 and is ready: the old twin is reset to the empty image, nothing else.
    let p1 = kubelet(&pods[1], "sidecar-2", "id-v2", true);
    let plan = run(&v2, &[pods[0].clone(), p1.clone()], &InFlight::default());
    assert!(plan.upgrades.is_empty());
    assert_eq!(progress(&plan).1, "Updating");
    let p1 = flipped(&plan, &p1);
    assert_eq!(
        (image(&p1, "sidecar-1"), image(&p1, "sidecar-2")),
        ("empty:1".into(), "sidecar:v2".into())
    );
    assert_eq!(annotation(&p1, WORKING), r#"{"sidecar":"sidecar-2"}"#);
    assert_eq!(versions(&p1), ["0", "7", "7", "0"]);
    let state: Value =
        serde_json::from_str(annotation(&p1, "kruise.io/sidecarset-inplace-update-state")).unwrap();
    assert_eq!(
        state["sc"]["lastContainerStatuses"]["sidecar-1"]["imageID"],
        "id-v1"
    );
    // 4. Until kubelet runs the empty image the pod is not consistent: no second flip, no next pod.
    let plan = run(&v2, &[pods[0].clone(), p1.clone()], &InFlight::default());
    assert!(plan.flips.is_empty() && plan.upgrades.is_empty());
    // 5. Once it does, the pod is ready and updated, and the next pod is upgraded.
    let p1 = kubelet(&p1, "sidecar-1", "id-empty", true);
    let plan = run(&v2, &[pods[0].clone(), p1.clone()], &InFlight::default());
    assert_eq!(plan.status.updated_ready_pods, 1);
    assert_eq!(chosen(&plan), ["p0"]);
    assert_eq!(restarts(&p1, "app"), 0);
    // 6. The next version goes into the twin on the empty image, which works again.
    let v3 = hot_set("sidecar:v3", "h3", "8");
    let plan = run(&v3, std::slice::from_ref(&p1), &InFlight::default());
    let p1 = upgraded(&plan, &p1);
    assert_eq!(
        (image(&p1, "sidecar-1"), image(&p1, "sidecar-2")),
        ("sidecar:v3".into(), "sidecar:v2".into())
    );
    assert_eq!(annotation(&p1, WORKING), r#"{"sidecar":"sidecar-1"}"#);
    assert_eq!(versions(&p1), ["8", "7", "7", "8"]);
    let p1 = kubelet(&p1, "sidecar-1", "id-v3", true);
    let plan = run(&v3, std::slice::from_ref(&p1), &InFlight::default());
    let p1 = flipped(&plan, &p1);
    assert_eq!(
        (image(&p1, "sidecar-1"), image(&p1, "sidecar-2")),
        ("sidecar:v3".into(), "empty:1".into())
    );
    assert_eq!(versions(&p1), ["8", "0", "0", "8"]);
}

#[test]
fn a_failed_image_stalls_at_its_pod_and_a_fixed_image_goes_to_the_same_twin() {
    let bad = hot_set("sidecar:bad", "h2", "7");
    let pods = [hot_pod(0), hot_pod(1)];
    let plan = run(&bad, &pods, &InFlight::default());
    let p1 = upgraded(&plan, &pods[1]);
    // The new twin never becomes ready: never flipped, the budget stays spent, the old twin keeps serving.
    let p1 = kubelet(&p1, "sidecar-2", "", false);
    for _ in 0..2 {
        let plan = run(&bad, &[pods[0].clone(), p1.clone()], &InFlight::default());
        assert!(plan.flips.is_empty() && plan.upgrades.is_empty());
        assert_eq!(progress(&plan).1, "MaxUnavailableReached");
    }
    assert_eq!(image(&p1, "sidecar-1"), "sidecar:v1");
    // A fixed image targets the twin that is not ready, not the serving one.
    let fixed = hot_set("sidecar:v3", "h3", "8");
    let plan = run(&fixed, &[pods[0].clone(), p1.clone()], &InFlight::default());
    let p1 = upgraded(&plan, &p1);
    assert_eq!(
        (image(&p1, "sidecar-1"), image(&p1, "sidecar-2")),
        ("sidecar:v1".into(), "sidecar:v3".into())
    );
    assert_eq!(annotation(&p1, WORKING), r#"{"sidecar":"sidecar-2"}"#);
    let p1 = kubelet(&p1, "sidecar-2", "id-v3", true);
    let plan = run(&fixed, &[pods[0].clone(), p1.clone()], &InFlight::default());
    let p1 = flipped(&plan, &p1);
    assert_eq!(image(&p1, "sidecar-1"), "empty:1");
}

#[test]
fn the_target_twin_is_the_empty_one_then_the_not_ready_one_then_the_idle_one() {
    let set = hot_set("sidecar:v2", "h2", "7");
    let facts = SetFacts::of(&set);
    let sidecar = &facts.sidecars[0];
    let pod = hot_pod(0);
    assert_eq!(
        target_twin(&facts, sidecar, &pod),
        ("sidecar-2".into(), "sidecar-1".into())
    );
    // Neither twin on the empty image, sidecar-1 not ready: sidecar-1.
    let mut both: Value = serde_json::to_value(&pod).unwrap();
    both["spec"]["containers"][2]["image"] = json!("sidecar:v0");
    let both: PodRecord = serde_json::from_value(both).unwrap();
    let not_ready = kubelet(&both, "sidecar-1", "id-x", false);
    assert_eq!(
        target_twin(&facts, sidecar, &not_ready),
        ("sidecar-1".into(), "sidecar-2".into())
    );
    // Both ready and consistent: the idle one (sidecar-2, as sidecar-1 works).
    assert_eq!(
        target_twin(&facts, sidecar, &both),
        ("sidecar-2".into(), "sidecar-1".into())
    );
}

#[test]
fn rolling_back_before_the_flip_only_moves_annotations() {
    let v2 = hot_set("sidecar:v2", "h2", "7");
    let pods = [hot_pod(0)];
    let plan = run(&v2, &pods, &InFlight::default());
    let p0 = kubelet(&upgraded(&plan, &pods[0]), "sidecar-2", "", false);
    // Back to v1 (a new hash): the other twin already runs v1, so no container changes.
    let v1 = hot_set("sidecar:v1", "h4", "9");
    let plan = run(&v1, std::slice::from_ref(&p0), &InFlight::default());
    let u = &plan.upgrades[0];
    assert!(u.patch.get("spec").is_none(), "{}", u.patch);
    let after = apply(&p0, &u.patch);
    let hash: Value = serde_json::from_str(annotation(&after, "kruise.io/sidecarset-hash")).unwrap();
    assert_eq!(hash["sc"]["hash"], "h4");
}
