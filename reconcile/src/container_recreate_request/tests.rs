use serde_json::{Value, json};

use super::*;

fn at(s: &str) -> Timestamp {
    s.parse().unwrap()
}

const CREATED: &str = "2026-01-01T00:00:00Z";

fn crr(extra_spec: Value, status: Value) -> ContainerRecreateRequest {
    let mut spec = json!({"podName": "web-0", "containers": [{"name": "app"}, {"name": "side"}]});
    spec.as_object_mut()
        .unwrap()
        .extend(extra_spec.as_object().unwrap().clone());
    serde_json::from_value(
        json!({"apiVersion": "apps.kruise.io/v1beta1", "kind": "ContainerRecreateRequest",
        "metadata": {"name": "r", "namespace": "shop", "creationTimestamp": CREATED,
            "labels": {"crr.apps.kruise.io/pod-uid": "u1", "crr.apps.kruise.io/active": "true"}},
        "spec": spec, "status": status}),
    )
    .unwrap()
}

fn pod(extra: Value) -> PodRecord {
    let mut p = json!({"metadata": {"name": "web-0", "namespace": "shop", "uid": "u1"},
        "spec": {"containers": [{"name": "app"}, {"name": "side"}]},
        "status": {"containerStatuses": [
            {"name": "app", "ready": true, "restartCount": 1, "containerID": "containerd://new",
             "state": {"running": {"startedAt": "2026-01-01T00:00:05Z"}}},
            {"name": "side", "ready": true, "restartCount": 0, "containerID": "containerd://s",
             "state": {"running": {"startedAt": "2025-12-31T00:00:00Z"}}}]}});
    merge(&mut p, extra);
    serde_json::from_value(p).unwrap()
}

fn merge(a: &mut Value, b: Value) {
    match (a, b) {
        (Value::Object(a), Value::Object(b)) => {
            for (k, v) in b {
                merge(a.entry(k).or_insert(Value::Null), v);
            }
        }
        (a, b) => *a = b,
    }
}

fn run(crr: &ContainerRecreateRequest, pod: Option<&PodRecord>, now: &str) -> Plan {
    plan(&Input {
        crr,
        pod,
        now: at(now),
    })
}

fn completed_with(p: &Plan) -> Option<(String, String)> {
    let s = p.status.as_ref()?;
    (s.phase == Phase::Completed).then(|| {
        (
            s.message.clone(),
            s.completion_time
                .as_ref()
                .map(|t| t.0.to_string())
                .unwrap_or_default(),
        )
    })
}

#[test]
fn requests_complete_when_the_pod_is_gone_unanswered_or_past_the_deadline() {
    let now = "2026-01-01T00:00:10Z";
    let recreating = json!({"phase": "Recreating"});
    let replaced = pod(json!({"metadata": {"uid": "u2"}}));
    let deleting = pod(json!({"metadata": {"deletionTimestamp": "2026-01-01T00:00:09Z"}}));
    let cases: [(&str, Option<&PodRecord>); 3] = [
        ("pod missing", None),
        ("pod replaced (uid)", Some(&replaced)),
        ("pod deleting", Some(&deleting)),
    ];
    for (name, p) in cases {
        let got = run(&crr(json!({}), recreating.clone()), p, now);
        assert_eq!(
            completed_with(&got),
            Some((POD_GONE.into(), now.into())),
            "{name}"
        );
    }
    let p = pod(json!({}));
    let unanswered = run(&crr(json!({}), json!({})), Some(&p), "2026-01-01T00:01:01Z");
    assert_eq!(
        completed_with(&unanswered),
        Some((NO_RESPONSE.into(), "2026-01-01T00:01:01Z".into()))
    );
    let waiting = run(&crr(json!({}), json!({})), Some(&p), "2026-01-01T00:00:20Z");
    assert_eq!(waiting.status, None);
    assert_eq!(waiting.requeue_after, Some(Duration::from_secs(40)));
    let late = run(
        &crr(
            json!({"activeDeadlineSeconds": 5}),
            json!({"phase": "Recreating"}),
        ),
        Some(&p),
        now,
    );
    assert_eq!(
        completed_with(&late).map(|(m, _)| m),
        Some(DEADLINE_EXCEEDED.into())
    );
    let pending = run(
        &crr(json!({"activeDeadlineSeconds": 50}), json!({"phase": "Pending"})),
        Some(&p),
        now,
    );
    assert_eq!(
        (pending.status, pending.requeue_after),
        (None, Some(Duration::from_secs(40)))
    );
}

#[test]
fn recreating_requests_snapshot_containers_started_after_creation() {
    let p = pod(json!({}));
    let c = crr(json!({}), json!({"phase": "Recreating"}));
    let plan = run(&c, Some(&p), "2026-01-01T00:00:10Z");
    assert_eq!(plan.requeue_after, Some(RECREATING_RESYNC));
    let status = plan.status.expect("snapshot written");
    assert_eq!(
        status.container_status_snapshot,
        [Snapshot {
            name: "app".into(),
            ready: true,
            restart_count: 1,
            container_id: "containerd://new".into()
        }]
    );
    // Written once: the next pass with it stored changes nothing.
    let stored = crr(json!({}), serde_json::to_value(&status).unwrap());
    assert_eq!(run(&stored, Some(&p), "2026-01-01T00:00:11Z").status, None);
    // Between the old container's exit and the new one's start, the old snapshot stays.
    let exited = pod(json!({"status": {"containerStatuses": [
        {"name": "app", "ready": false, "restartCount": 1, "state": {"terminated": {"exitCode": 137}}}]}}));
    assert_eq!(run(&stored, Some(&exited), "2026-01-01T00:00:12Z").status, None);
}

#[test]
fn the_unready_drain_holds_a_gated_pod_not_ready_then_releases_it() {
    let gated = pod(
        json!({"spec": {"readinessGates": [{"conditionType": "KruisePodReady"}]},
        "status": {"conditions": [{"type": "KruisePodReady", "status": "True"}]}}),
    );
    let c = crr(
        json!({"strategy": {"unreadyGracePeriodSeconds": 3}}),
        json!({"phase": "Recreating"}),
    );
    let first = run(&c, Some(&gated), "2026-01-01T00:00:01Z");
    assert_eq!(
        (first.finalizer, first.status.is_none()),
        (Some(true), true),
        "finalizer first"
    );

    let mut held = c.clone();
    held.metadata.finalizers = Some(vec![CRR_UNREADY_ACQUIRED_KEY.into()]);
    let second = run(&held, Some(&gated), "2026-01-01T00:00:01Z");
    let Some(Action::PatchPodStatus { name, patch }) = &second.pod_status else {
        panic!("{second:?}")
    };
    assert_eq!(name, "web-0");
    assert_eq!(
        patch["status"]["conditions"][0]["message"],
        r#"[{"userAgent":"ContainerRecreateRequest","key":"shop/r"}]"#
    );
    assert_eq!(patch["status"]["conditions"][0]["status"], "False");
    let cond = grace_acquired(second.status.as_ref().unwrap()).expect("condition");
    assert_eq!(cond.last_transition_time.0, at("2026-01-01T00:00:01Z"));
    assert_eq!(cond.message, CRR_PRE_RECREATE_GRACE_MESSAGE);

    // Completed: the key goes, then the finalizer, in one pass.
    let unready: PodRecord = {
        let mut v = serde_json::to_value(&gated).unwrap();
        v["status"]["conditions"] = json!([{"type": "KruisePodReady", "status": "False",
            "message": r#"[{"userAgent":"ContainerRecreateRequest","key":"shop/r"}]"#}]);
        serde_json::from_value(v).unwrap()
    };
    let mut done = held.clone();
    done.status.as_mut().unwrap().phase = Phase::Completed;
    let release = run(&done, Some(&unready), "2026-01-01T00:00:09Z");
    assert_eq!(release.finalizer, Some(false));
    let Some(Action::PatchPodStatus { patch, .. }) = &release.pod_status else {
        panic!("{release:?}")
    };
    assert_eq!(patch["status"]["conditions"][0]["status"], "True");

    // Without the gate: no finalizer, no pod write, the condition all the same.
    let plain = pod(json!({}));
    let ungated = run(&c, Some(&plain), "2026-01-01T00:00:01Z");
    assert_eq!((ungated.finalizer, &ungated.pod_status), (None, &None));
    assert!(grace_acquired(ungated.status.as_ref().unwrap()).is_some());
}

#[test]
fn completed_requests_lose_the_active_label_then_go_after_their_ttl() {
    let done = json!({"phase": "Completed", "completionTime": "2026-01-01T00:00:10Z"});
    let c = crr(json!({"ttlSecondsAfterFinished": 30}), done.clone());
    assert!(run(&c, None, "2026-01-01T00:00:11Z").remove_active_label);
    let mut inactive = c.clone();
    inactive
        .metadata
        .labels
        .as_mut()
        .unwrap()
        .remove(CRR_ACTIVE_LABEL);
    let early = run(&inactive, None, "2026-01-01T00:00:20Z");
    assert_eq!(
        (early.delete, early.requeue_after),
        (false, Some(Duration::from_secs(20)))
    );
    assert!(run(&inactive, None, "2026-01-01T00:00:40Z").delete);
    let mut no_ttl = crr(json!({}), done);
    no_ttl.metadata.labels.as_mut().unwrap().remove(CRR_ACTIVE_LABEL);
    assert_eq!(run(&no_ttl, None, "2026-01-02T00:00:00Z"), Plan::default());
    let mut deleting = inactive.clone();
    deleting.metadata.deletion_timestamp = Some(Time(at("2026-01-01T00:00:30Z")));
    assert_eq!(run(&deleting, None, "2026-01-01T00:00:40Z"), Plan::default());
}
