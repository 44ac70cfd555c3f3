use serde_json::{Value, json};

use super::*;

fn at(s: &str) -> Timestamp {
    s.parse().unwrap()
}

fn crr(name: &str, created: &str, strategy: Value, status: Value) -> ContainerRecreateRequest {
    serde_json::from_value(
        json!({"apiVersion": "apps.kruise.io/v1beta1", "kind": "ContainerRecreateRequest",
        "metadata": {"name": name, "namespace": "shop", "creationTimestamp": created},
        "spec": {"podName": "web-0", "strategy": strategy, "containers": [
            {"name": "app", "statusContext": {"containerID": "containerd://a1", "restartCount": 0}},
            {"name": "side", "statusContext": {"containerID": "containerd://s1", "restartCount": 0}}]},
        "status": status}),
    )
    .unwrap()
}

fn running(name: &str, id: &str, restarts: i32, started: &str) -> RuntimeContainer {
    RuntimeContainer {
        name: name.into(),
        id: format!("containerd://{id}"),
        restart_count: restarts,
        exited: false,
        started_at: Some(at(started)),
    }
}

fn st(name: &str, phase: Phase, killed: bool) -> State {
    State {
        name: name.into(),
        phase,
        message: String::new(),
        is_killed: killed,
    }
}

const NOW: &str = "2026-01-01T00:01:00Z";

/// A request for `containers` of the pod (ids `<name>1`).
fn crr_on(name: &str, created: &str, containers: &[&str], status: Value) -> ContainerRecreateRequest {
    let mut c = crr(name, created, json!({}), status);
    let template = c.spec.containers.clone();
    c.spec.containers = containers
        .iter()
        .map(|n| {
            let mut one = template[0].clone();
            one.name = (*n).into();
            one
        })
        .collect();
    c
}

fn phase(p: &str) -> Value {
    json!({"phase": p})
}

#[test]
fn requests_on_the_same_containers_run_one_at_a_time_oldest_first_and_later_ones_wait_pending() {
    let mut all = vec![
        crr("new-b", "2026-01-01T00:00:03Z", json!({}), json!({})),
        crr("done", "2026-01-01T00:00:00Z", json!({}), phase("Completed")),
        crr("new-a", "2026-01-01T00:00:02Z", json!({}), json!({})),
        crr("waiting", "2026-01-01T00:00:09Z", json!({}), phase("Pending")),
    ];
    order(&mut all);
    let names: Vec<_> = all.iter().map(|c| c.metadata.name.clone().unwrap()).collect();
    assert_eq!(names, ["done", "waiting", "new-a", "new-b"]);
    let waiting = waiting_message("waiting", "app");
    assert_eq!(
        pick(&all),
        Pick {
            work: vec![1],
            wait: vec![(2, waiting.clone()), (3, waiting.clone())]
        }
    );
    // Marked Pending with that message: not written again.
    for i in [2, 3] {
        all[i].status =
            Some(serde_json::from_value(json!({"phase": "Pending", "message": waiting})).unwrap());
    }
    assert_eq!(pick(&all).wait, vec![]);
    // Once the first completes, the next one is picked: nothing stays Pending for want of an event.
    all[1].status = Some(serde_json::from_value(phase("Completed")).unwrap());
    let next = waiting_message("new-a", "app");
    assert_eq!(
        pick(&all),
        Pick {
            work: vec![2],
            wait: vec![(3, next)]
        }
    );
}

#[test]
fn requests_on_disjoint_containers_of_one_pod_run_together() {
    let mut all = vec![
        crr_on("app", "2026-01-01T00:00:01Z", &["app"], phase("Recreating")),
        crr_on("side", "2026-01-01T00:00:02Z", &["side"], json!({})),
        crr_on("both", "2026-01-01T00:00:03Z", &["side", "log"], json!({})),
        crr_on("log", "2026-01-01T00:00:04Z", &["log"], json!({})),
        crr_on("other", "2026-01-01T00:00:05Z", &["metrics"], phase("Pending")),
    ];
    order(&mut all);
    let names: Vec<_> = all.iter().map(|c| c.metadata.name.clone().unwrap()).collect();
    assert_eq!(names, ["app", "other", "side", "both", "log"]);
    // `side` runs beside `app`; `both` waits for `side`; `log` waits for `both` (the earlier claim on
    // `log`), though `log` itself is free: later requests never overtake earlier ones on a container.
    assert_eq!(
        pick(&all),
        Pick {
            work: vec![0, 1, 2],
            wait: vec![
                (3, waiting_message("side", "side")),
                (4, waiting_message("both", "log"))
            ]
        }
    );
    // `side` completes: `both` runs, `log` still waits for it.
    all[2].status = Some(serde_json::from_value(phase("Completed")).unwrap());
    assert_eq!(pick(&all).work, vec![0, 1, 3]);
    // Two Recreating requests on one container (left by an agent of another version): the later one
    // keeps its phase and waits, unmarked.
    let mut odd = vec![
        crr_on("a", "2026-01-01T00:00:01Z", &["app"], phase("Recreating")),
        crr_on("b", "2026-01-01T00:00:02Z", &["app"], phase("Recreating")),
    ];
    order(&mut odd);
    assert_eq!(
        pick(&odd),
        Pick {
            work: vec![0],
            wait: vec![]
        }
    );
}

#[test]
fn runtime_mismatches_are_reported_with_openkruises_messages() {
    let c = crr("r", NOW, json!({}), json!({}));
    assert_eq!(runtime_mismatch(&c, "containerd"), None);
    assert_eq!(
        runtime_mismatch(&c, "cri-o").as_deref(),
        Some("not found runtime service for containerd in daemon")
    );
    let mut mixed = c.clone();
    mixed.spec.containers[1]
        .status_context
        .as_mut()
        .unwrap()
        .container_id = "docker://x".into();
    assert_eq!(
        runtime_mismatch(&mixed, "containerd").as_deref(),
        Some("has different runtime types containerd, docker in Pod")
    );
    let mut empty = c.clone();
    empty.spec.containers[0].status_context = None;
    assert_eq!(
        runtime_mismatch(&empty, "containerd").as_deref(),
        Some("no statusContext or empty containerID in app container")
    );
}

#[test]
fn container_states_follow_the_runtime() {
    let base = crr(
        "r",
        "2026-01-01T00:00:00Z",
        json!({"minStartedSeconds": 5}),
        json!({"phase": "Recreating"}),
    );
    let old = [
        running("app", "a1", 0, "2025-12-31T00:00:00Z"),
        running("side", "s1", 0, "2025-12-31T00:00:00Z"),
    ];
    assert_eq!(
        container_states(&base, &old, at(NOW)),
        [
            st("app", Phase::Pending, false),
            st("side", Phase::Pending, false)
        ]
    );
    let mut exited = old.clone();
    exited[0].exited = true;
    assert_eq!(
        container_states(&base, &exited, at(NOW))[0],
        st("app", Phase::Recreating, false)
    );
    let missing = container_states(&base, &old[1..], at(NOW));
    assert_eq!(
        (missing[0].phase.clone(), missing[0].message.as_str()),
        (Phase::Pending, NOT_FOUND)
    );
    // A new container is Recreating until the manager's snapshot shows it ready long enough.
    let new = [running("app", "a2", 1, "2026-01-01T00:00:50Z"), old[1].clone()];
    assert_eq!(container_states(&base, &new, at(NOW))[0].phase, Phase::Recreating);
    let mut seen = base.clone();
    seen.status.as_mut().unwrap().container_status_snapshot = vec![
        serde_json::from_value(
            json!({"name": "app", "ready": true, "restartCount": 1, "containerID": "containerd://a2"}),
        )
        .unwrap(),
    ];
    assert_eq!(container_states(&seen, &new, at(NOW))[0].phase, Phase::Succeeded);
    assert_eq!(
        container_states(&seen, &new, at("2026-01-01T00:00:54Z"))[0].phase,
        Phase::Recreating,
        "minStartedSeconds not yet"
    );
    // forceRecreate: a restart since creation is not enough, this request must stop it itself.
    let force = crr(
        "r",
        "2026-01-01T00:00:00Z",
        json!({"forceRecreate": true}),
        json!({"phase": "Recreating"}),
    );
    assert_eq!(
        container_states(&force, &new, at(NOW))[0],
        st("app", Phase::Pending, false)
    );
}

#[test]
fn the_walk_stops_one_container_per_sync_in_order_and_completes() {
    let old = [
        running("app", "a1", 0, "2025-12-31T00:00:00Z"),
        running("side", "s1", 0, "2025-12-31T00:00:00Z"),
    ];
    let fresh = crr(
        "r",
        "2026-01-01T00:00:00Z",
        json!({}),
        json!({"phase": "Recreating"}),
    );
    // First the states are written, then the first container is stopped.
    let Step::States(states) = next(&fresh, &old, at(NOW)) else {
        panic!()
    };
    let mut c = fresh.clone();
    c.status.as_mut().unwrap().container_recreate_states = states;
    let Step::Kill { index, id, states } = next(&c, &old, at(NOW)) else {
        panic!()
    };
    assert_eq!((index, id.as_str()), (0, "containerd://a1"));
    assert_eq!(
        states[..],
        [
            st("app", Phase::Recreating, true),
            st("side", Phase::Pending, false)
        ]
    );
    c.status.as_mut().unwrap().container_recreate_states = states;
    // Unordered: the second is stopped while the first is recreated.
    let exited = [
        RuntimeContainer {
            exited: true,
            ..old[0].clone()
        },
        old[1].clone(),
    ];
    let Step::Kill { index, .. } = next(&c, &exited, at(NOW)) else {
        panic!()
    };
    assert_eq!(index, 1);
    // Ordered: it waits.
    let mut ordered = c.clone();
    ordered.spec.strategy = Some(serde_json::from_value(json!({"orderedRecreate": true})).unwrap());
    assert_eq!(next(&ordered, &exited, at(NOW)), Step::Wait(None));
    // Both done → Completed with no message.
    let mut done = c.clone();
    done.status.as_mut().unwrap().container_recreate_states = vec![
        st("app", Phase::Succeeded, true),
        st("side", Phase::Succeeded, true),
    ];
    assert_eq!(
        next(&done, &old, at(NOW)),
        Step::Complete(
            done.status.clone().unwrap().container_recreate_states,
            String::new()
        )
    );
    // A failure completes at once under Fail, not under Ignore.
    let mut failed = c.clone();
    failed.status.as_mut().unwrap().container_recreate_states = kill_failed(
        vec![
            st("app", Phase::Recreating, true),
            st("side", Phase::Pending, false),
        ],
        0,
        "boom",
    );
    let Step::Complete(_, message) = next(&failed, &old, at(NOW)) else {
        panic!()
    };
    assert_eq!(message, "container app failed: kill container error: boom");
    failed.spec.strategy = Some(serde_json::from_value(json!({"failurePolicy": "Ignore"})).unwrap());
    let Step::Kill { index, .. } = next(&failed, &old, at(NOW)) else {
        panic!()
    };
    assert_eq!(index, 1);
}

#[test]
fn the_drain_holds_the_stop_until_its_grace_has_passed() {
    let none = crr("r", NOW, json!({}), json!({}));
    assert_eq!(drain_left(&none, at(NOW)), None);
    let asked = crr(
        "r",
        NOW,
        json!({"unreadyGracePeriodSeconds": 5}),
        json!({"phase": "Recreating"}),
    );
    assert_eq!(drain_left(&asked, at(NOW)), Some(None), "not acquired yet");
    let acquired = crr(
        "r",
        NOW,
        json!({"unreadyGracePeriodSeconds": 5}),
        json!({"phase": "Recreating",
        "conditions": [{"type": "PreRecreateGrace", "status": "True", "reason": "PreRecreateGrace", "message": "m",
            "lastTransitionTime": "2026-01-01T00:01:00Z"}]}),
    );
    assert_eq!(
        drain_left(&acquired, at("2026-01-01T00:01:02Z")),
        Some(Some(Duration::from_millis(3100)))
    );
    assert_eq!(drain_left(&acquired, at("2026-01-01T00:01:05Z")), None);
}
