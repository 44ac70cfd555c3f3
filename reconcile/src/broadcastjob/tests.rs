//! Table tests of the BroadcastJob planner: each case is a job, its pods and the nodes, and what
//! one pass decides.

use std::time::Duration;

use k8s_openapi::api::core::v1::{Node, Pod};
use k8s_openapi::jiff::{SignedDuration, Timestamp};
use kruise_api::PodRecord;
use kruise_api::apps_v1alpha1::{BroadcastJob, BroadcastJobPhase, BroadcastJobStatus};
use serde_json::{Value, json};

use super::*;
use crate::action::Action;

fn t0() -> Timestamp {
    "2026-01-01T00:00:00Z".parse().unwrap()
}

fn at(secs: i64) -> Timestamp {
    t0().checked_add(SignedDuration::from_secs(secs)).unwrap()
}

fn job(spec: Value, status: Value) -> BroadcastJob {
    let mut spec = spec;
    spec["template"] = json!({"spec": {"restartPolicy": "Never",
        "containers": [{"name": "c", "image": "busybox"}]}});
    serde_json::from_value(json!({
        "apiVersion": "apps.kruise.io/v1alpha1", "kind": "BroadcastJob",
        "metadata": {"name": "j", "namespace": "ns", "uid": "uid-j"},
        "spec": spec, "status": status,
    }))
    .unwrap()
}

fn node(name: &str) -> Node {
    serde_json::from_value(json!({"metadata": {"name": name}})).unwrap()
}

fn nodes(n: usize) -> Vec<Node> {
    (1..=n).map(|i| node(&format!("n{i}"))).collect()
}

fn pod(name: &str, node: &str, phase: &str) -> PodRecord {
    serde_json::from_value(json!({
        "metadata": {"name": name, "namespace": "ns", "uid": format!("uid-{name}")},
        "spec": {"nodeName": node, "restartPolicy": "Never", "containers": [{"name": "c"}]},
        "status": {"phase": phase},
    }))
    .unwrap()
}

fn running() -> Value {
    json!({"phase": "running", "startTime": "2026-01-01T00:00:00Z"})
}

fn run(job: &BroadcastJob, pods: &[PodRecord], nodes: &[Node], now: Timestamp) -> Plan {
    let mut e = NodeExpectations::default();
    e.observe(pods, now);
    plan(
        &Input {
            job,
            pods,
            nodes,
            now,
        },
        &e,
    )
}

fn created_on(plan: &Plan) -> Vec<String> {
    plan.actions
        .iter()
        .filter_map(|a| match a {
            Action::CreatePodOnNode { template, node } => {
                Action::pod_on_node(template, node).spec.and_then(|s| s.node_name)
            }
            _ => None,
        })
        .collect()
}

fn deleted(plan: &Plan) -> Vec<String> {
    plan.actions
        .iter()
        .filter_map(|a| match a {
            Action::DeletePod { name, .. } => Some(name.clone()),
            _ => None,
        })
        .collect()
}

fn events(plan: &Plan) -> Vec<&'static str> {
    plan.actions
        .iter()
        .filter_map(|a| match a {
            Action::Event { reason, .. } => Some(*reason),
            _ => None,
        })
        .collect()
}

fn status(plan: &Plan) -> &BroadcastJobStatus {
    plan.status.as_ref().unwrap()
}

/// Counts as (desired, active, succeeded, failed).
fn counts(plan: &Plan) -> (i32, i32, i32, i32) {
    let s = status(plan);
    (s.desired, s.active, s.succeeded, s.failed)
}

fn condition(plan: &Plan) -> Option<(String, String)> {
    status(plan)
        .conditions
        .last()
        .map(|c| (c.type_.to_string(), c.reason.clone()))
}

#[test]
fn a_new_job_starts_and_creates_one_pod_per_node_up_to_parallelism() {
    let j = job(json!({"parallelism": 2}), json!({}));
    let p = run(&j, &[], &nodes(5), t0());
    assert_eq!(created_on(&p), ["n1", "n2"]);
    let s = status(&p);
    assert_eq!(s.phase, BroadcastJobPhase::Running);
    assert_eq!(s.start_time.as_ref().unwrap().0, t0());
    assert_eq!(
        counts(&p),
        (5, 0, 0, 0),
        "creates are not counted before the cache shows them"
    );
    let Action::CreatePodOnNode { template, node } = &p.actions[0] else {
        panic!()
    };
    let pod: &Pod = &Action::pod_on_node(template, node);
    assert_eq!(pod.metadata.generate_name.as_deref(), Some("j-"));
    let labels = pod.metadata.labels.as_ref().unwrap();
    assert_eq!(labels["broadcastjob-name"], "j");
    assert_eq!(labels["broadcastjob-controller-uid"], "uid-j");
    let owner = &pod.metadata.owner_references.as_ref().unwrap()[0];
    assert_eq!(
        (owner.kind.as_str(), owner.uid.as_str(), owner.controller),
        ("BroadcastJob", "uid-j", Some(true))
    );
}

#[test]
fn parallelism_cases() {
    type Case = (&'static str, Value, usize, usize, usize);
    // (name, parallelism, nodes, active pods, expected creates)
    let cases: &[Case] = &[
        ("absent: every node at once", Value::Null, 4, 0, 4),
        ("an int caps the running pods", json!(2), 4, 1, 1),
        ("a percent of desired nodes rounds up", json!("30%"), 4, 0, 2),
        ("no room left", json!(2), 4, 2, 0),
        ("zero creates nothing", json!(0), 4, 0, 0),
    ];
    for (name, parallelism, n, active, want) in cases {
        let spec = if parallelism.is_null() {
            json!({})
        } else {
            json!({"parallelism": parallelism})
        };
        let j = job(spec, running());
        let pods: Vec<_> = (1..=*active)
            .map(|i| pod(&format!("p{i}"), &format!("n{i}"), "Running"))
            .collect();
        let p = run(&j, &pods, &nodes(*n), at(1));
        assert_eq!(created_on(&p).len(), *want, "{name}");
    }
}

#[test]
fn counts_come_from_the_pods_every_pass() {
    // The stored status says otherwise (openkruise/kruise#1704); the pods win.
    let j = job(
        json!({}),
        json!({"phase": "running", "startTime": "2026-01-01T00:00:00Z",
        "active": 7, "succeeded": 9, "failed": 3, "desired": 1}),
    );
    let pods = [
        pod("a", "n1", "Succeeded"),
        pod("b", "n2", "Running"),
        pod("c", "n3", "Pending"),
    ];
    let p = run(&j, &pods, &nodes(3), at(1));
    assert_eq!(counts(&p), (3, 2, 1, 0));
}

#[test]
fn a_failed_create_is_not_counted_and_is_retried() {
    // openkruise/kruise#2414: a refused create counted as active starved parallelism.
    let j = job(json!({"parallelism": 2}), running());
    let mut e = NodeExpectations::default();
    let first = plan(
        &Input {
            job: &j,
            pods: &[],
            nodes: &nodes(3),
            now: at(1),
        },
        &e,
    );
    assert_eq!(created_on(&first), ["n1", "n2"]);
    for a in &first.actions {
        e.expect(a, at(1));
    }
    e.forget(&first.actions[1]); // the API server refused n2's pod
    let pods = [pod("a", "n1", "Running")];
    e.observe(&pods, at(2));
    let second = plan(
        &Input {
            job: &j,
            pods: &pods,
            nodes: &nodes(3),
            now: at(2),
        },
        &e,
    );
    assert!(!second.waiting);
    assert_eq!(counts(&second), (3, 1, 0, 0));
    assert_eq!(created_on(&second), ["n2"]);
}

#[test]
fn unobserved_creates_hold_the_pass_until_they_time_out() {
    // openkruise/kruise#1289: expectations never observed left the job stuck for ever.
    let j = job(json!({}), running());
    let mut e = NodeExpectations::default();
    let first = plan(
        &Input {
            job: &j,
            pods: &[],
            nodes: &nodes(1),
            now: at(0),
        },
        &e,
    );
    e.expect(&first.actions[0], at(0));
    e.observe(&[], at(10));
    let held = plan(
        &Input {
            job: &j,
            pods: &[],
            nodes: &nodes(1),
            now: at(10),
        },
        &e,
    );
    assert!(held.waiting && held.actions.is_empty() && held.status.is_none());
    assert_eq!(held.requeue_after, Some(Duration::from_secs(290)));
    e.observe(&[], at(301));
    let after = plan(
        &Input {
            job: &j,
            pods: &[],
            nodes: &nodes(1),
            now: at(301),
        },
        &e,
    );
    assert!(!after.waiting);
    assert_eq!(created_on(&after), ["n1"], "planning carries on from the cache");
}

#[test]
fn every_node_ran_completes_the_job_and_the_ttl_deletes_it() {
    let j = job(
        json!({"completionPolicy": {"type": "Always", "ttlSecondsAfterFinished": 30}}),
        running(),
    );
    let pods = [pod("a", "n1", "Succeeded"), pod("b", "n2", "Failed")];
    let j = BroadcastJob {
        spec: {
            let mut s = j.spec.clone();
            s.failure_policy.type_ = Some("Continue".into());
            s
        },
        ..j
    };
    let p = run(&j, &pods, &nodes(2), at(5));
    assert_eq!(status(&p).phase, BroadcastJobPhase::Completed);
    assert_eq!(condition(&p), Some(("Complete".into(), "Complete".into())));
    assert_eq!(status(&p).completion_time.as_ref().unwrap().0, at(5));
    assert_eq!(events(&p), ["JobComplete"]);
    assert_eq!(p.requeue_after, Some(Duration::from_secs(31)));

    let mut finished = j.clone();
    finished.status = p.status.clone();
    let waiting = run(&finished, &pods, &nodes(2), at(20));
    assert!(!waiting.delete_job && waiting.actions.is_empty());
    assert_eq!(waiting.requeue_after, Some(Duration::from_secs(15)));
    assert!(run(&finished, &pods, &nodes(2), at(35)).delete_job);
}

#[test]
fn a_failed_pod_under_fail_fast_fails_the_job_and_deletes_the_active_pods() {
    let j = job(json!({"failurePolicy": {"type": "FailFast"}}), running());
    let pods = [pod("a", "n1", "Failed"), pod("b", "n2", "Running")];
    let p = run(&j, &pods, &nodes(3), at(1));
    assert_eq!(deleted(&p), ["b"]);
    assert!(created_on(&p).is_empty());
    assert_eq!(status(&p).phase, BroadcastJobPhase::Failed);
    assert_eq!(counts(&p), (3, 0, 0, 2), "a deleted active pod counts as failed");
    assert_eq!(condition(&p), Some(("Failed".into(), "FailedPodFound".into())));
}

#[test]
fn failure_policies() {
    type Case = (&'static str, Value, BroadcastJobPhase, usize, Vec<&'static str>);
    let cases: Vec<Case> = vec![
        (
            "Continue keeps going",
            json!({"type": "Continue"}),
            BroadcastJobPhase::Running,
            1,
            vec![],
        ),
        (
            "Pause pauses",
            json!({"type": "Pause"}),
            BroadcastJobPhase::Paused,
            0,
            vec!["Paused"],
        ),
        (
            "FailFast fails",
            json!({"type": "FailFast"}),
            BroadcastJobPhase::Failed,
            0,
            vec!["FailedPodFound"],
        ),
        (
            "the default is FailFast",
            json!({}),
            BroadcastJobPhase::Failed,
            0,
            vec!["FailedPodFound"],
        ),
    ];
    for (name, policy, phase, creates, want_events) in cases {
        let j = job(json!({"failurePolicy": policy}), running());
        let p = run(&j, &[pod("a", "n1", "Failed")], &nodes(2), at(1));
        assert_eq!(status(&p).phase, phase, "{name}");
        assert_eq!(created_on(&p).len(), creates, "{name}");
        assert_eq!(events(&p), want_events, "{name}");
    }
}

#[test]
fn an_on_failure_pod_restarted_past_the_limit_counts_as_failed() {
    let restarted = |restarts: i32| -> PodRecord {
        serde_json::from_value(json!({
            "metadata": {"name": "a", "uid": "u"},
            "spec": {"nodeName": "n1", "restartPolicy": "OnFailure", "containers": [{"name": "c"}]},
            "status": {"phase": "Running", "containerStatuses": [
                {"name": "c", "image": "i", "imageID": "", "ready": true, "restartCount": restarts}]},
        }))
        .unwrap()
    };
    let j = job(
        json!({"failurePolicy": {"type": "Continue", "restartLimit": 2}}),
        running(),
    );
    assert_eq!(counts(&run(&j, &[restarted(2)], &nodes(1), at(1))), (1, 1, 0, 0));
    assert_eq!(counts(&run(&j, &[restarted(3)], &nodes(1), at(1))), (1, 0, 0, 1));
    let j = job(json!({"failurePolicy": {"type": "Continue"}}), running());
    assert_eq!(
        counts(&run(&j, &[restarted(1)], &nodes(1), at(1))),
        (1, 0, 0, 1),
        "limit 0: the first restart fails it"
    );
}

#[test]
fn the_active_deadline_fails_an_always_job() {
    let j = job(
        json!({"completionPolicy": {"activeDeadlineSeconds": 60}}),
        running(),
    );
    let pods = [pod("a", "n1", "Running")];
    let early = run(&j, &pods, &nodes(1), at(10));
    assert_eq!(early.requeue_after, Some(Duration::from_secs(50)));
    assert_eq!(status(&early).phase, BroadcastJobPhase::Running);
    let late = run(&j, &pods, &nodes(1), at(60));
    assert_eq!(status(&late).phase, BroadcastJobPhase::Failed);
    assert_eq!(
        condition(&late),
        Some(("Failed".into(), "DeadlineExceeded".into()))
    );
    assert_eq!(deleted(&late), ["a"]);
}

#[test]
fn never_follows_new_and_untainted_nodes_and_never_completes() {
    let j = job(json!({"completionPolicy": {"type": "Never"}}), running());
    let pods = [pod("a", "n1", "Succeeded")];
    let p = run(&j, &pods, &nodes(1), at(1));
    assert_eq!(status(&p).phase, BroadcastJobPhase::Running);
    assert!(status(&p).conditions.is_empty());
    let mut grown = nodes(2);
    grown[1] = serde_json::from_value(json!({"metadata": {"name": "n2"},
        "spec": {"taints": [{"key": "k", "effect": "NoSchedule"}]}}))
    .unwrap();
    assert!(
        created_on(&run(&j, &pods, &grown, at(2))).is_empty(),
        "tainted: not eligible"
    );
    grown[1] = node("n2");
    assert_eq!(
        created_on(&run(&j, &pods, &grown, at(3))),
        ["n2"],
        "untainted: gets a pod"
    );
}

#[test]
fn paused_stops_creating_and_unpausing_continues() {
    let j = job(json!({"paused": true}), running());
    let p = run(&j, &[], &nodes(2), at(1));
    assert!(created_on(&p).is_empty());
    assert_eq!(status(&p).phase, BroadcastJobPhase::Paused);
    let j = job(
        json!({}),
        json!({"phase": "paused", "startTime": "2026-01-01T00:00:00Z"}),
    );
    let p = run(&j, &[], &nodes(2), at(2));
    assert_eq!(status(&p).phase, BroadcastJobPhase::Running);
    assert_eq!(events(&p), ["Continue"]);
    assert_eq!(created_on(&p), ["n1", "n2"]);
}

#[test]
fn ineligible_nodes_are_not_desired_and_pods_on_no_execute_tainted_nodes_go() {
    let mut j = job(json!({}), running());
    j.spec.template.spec.as_mut().unwrap().node_selector =
        Some([("role".to_string(), "batch".to_string())].into());
    let labelled = |name: &str, taint: Option<&str>| -> Node {
        let mut n = json!({"metadata": {"name": name, "labels": {"role": "batch"}}});
        if let Some(effect) = taint {
            n["spec"] = json!({"taints": [{"key": "k", "effect": effect}]});
        }
        serde_json::from_value(n).unwrap()
    };
    let all = [
        labelled("n1", None),
        node("n2"),
        labelled("n3", Some("NoExecute")),
        labelled("n4", Some("NoSchedule")),
    ];
    let pods = [pod("c", "n3", "Running"), pod("d", "n4", "Running")];
    let p = run(&j, &pods, &all, at(1));
    assert_eq!(created_on(&p), ["n1"]);
    assert_eq!(
        deleted(&p),
        ["c"],
        "NoExecute removes the pod; NoSchedule lets it finish"
    );
    assert_eq!(status(&p).desired, 2);
}

#[test]
fn a_finished_job_without_ttl_is_left_alone() {
    let j = job(
        json!({}),
        json!({"phase": "completed", "conditions": [{"type": "Complete", "status": "True"}],
        "completionTime": "2026-01-01T00:00:00Z"}),
    );
    assert_eq!(run(&j, &[], &nodes(3), at(1)), Plan::default());
}
