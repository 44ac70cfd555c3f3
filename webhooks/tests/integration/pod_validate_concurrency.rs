//! Concurrent evictions against one PodUnavailableBudget, run the way the binary runs them: decide against
//! a snapshot of the view, apply the status writes with their resourceVersion precondition, and on a
//! conflict decide again (bounded); only then answer. The budget must never be overspent.

use std::sync::{
    Barrier, Mutex,
    atomic::{AtomicUsize, Ordering},
};

static CONFLICTS: AtomicUsize = AtomicUsize::new(0);

use k8s_openapi::jiff::Timestamp;
use kruise_webhooks::{
    AdmissionRequest, ClusterView, Decision, MemoryView, Settings, pod_validate, view::WriteError,
};
use serde_json::{Value, json};

const PODS: usize = 100;
const BUDGET: i32 = 3;
const MESSAGE: &str =
    "podunavailablebudget.policy.kruise.io \"web-pub\" is forbidden: pub unavailable allowed is negative";

fn cluster() -> MemoryView {
    let mut view = MemoryView::default();
    view.add(
        json!({"apiVersion": "policy.kruise.io/v1beta1", "kind": "PodUnavailableBudget",
        "metadata": {"name": "web-pub", "namespace": "shop", "resourceVersion": "1"},
        "spec": {"selector": {"matchLabels": {"app": "web"}}, "maxUnavailable": BUDGET},
        "status": {"unavailableAllowed": BUDGET, "desiredAvailable": PODS as i32 - BUDGET,
            "currentAvailable": PODS, "totalReplicas": PODS}}),
    )
    .unwrap();
    for i in 0..PODS {
        view.add(json!({"apiVersion": "v1", "kind": "Pod",
            "metadata": {"name": format!("web-{i}"), "namespace": "shop", "labels": {"app": "web"},
                "annotations": {"pub.kruise.io/related-pub": "web-pub"}},
            "spec": {"containers": [{"name": "app", "image": "nginx:1.0"}]},
            "status": {"phase": "Running", "conditions": [{"type": "Ready", "status": "True"}],
                "containerStatuses": [{"name": "app", "image": "nginx:1.0", "imageID": "nginx@sha256:1",
                    "ready": true, "restartCount": 0}]}}))
            .unwrap();
    }
    view
}

fn eviction(i: usize) -> AdmissionRequest {
    serde_json::from_value(json!({"uid": format!("u-{i}"),
        "kind": {"group": "policy", "version": "v1", "kind": "Eviction"},
        "resource": {"group": "", "version": "v1", "resource": "pods"}, "subResource": "eviction",
        "name": format!("web-{i}"), "namespace": "shop", "operation": "CREATE",
        "object": {"apiVersion": "policy/v1", "kind": "Eviction", "metadata": {"name": format!("web-{i}"), "namespace": "shop"}},
        "options": {"kind": "CreateOptions", "apiVersion": "meta.k8s.io/v1"}}))
    .unwrap()
}

/// One admission as the binary performs it: decide on a snapshot, write, re-decide on conflict.
fn admit(state: &Mutex<MemoryView>, request: &AdmissionRequest, max_attempts: usize) -> Decision {
    let now: Timestamp = "2024-05-01T10:00:00Z".parse().unwrap();
    let mut last_conflict = None;
    for _ in 0..max_attempts {
        let snapshot = state.lock().unwrap().clone();
        let decision = pod_validate::validate_at(request, &snapshot, &Settings::default(), now);
        if !decision.allowed() {
            return decision;
        }
        // The status write is a round trip to the apiserver: others decide meanwhile.
        std::thread::sleep(std::time::Duration::from_millis(2));
        let mut guard = state.lock().unwrap();
        let mut conflicted = None;
        for write in &decision.writes {
            match guard.apply_status(write) {
                Ok(()) => {}
                Err(WriteError::Conflict { .. }) => {
                    conflicted = Some(write.clone());
                    break;
                }
                Err(e) => panic!("unexpected write error: {e}"),
            }
        }
        drop(guard);
        match conflicted {
            None => return decision,
            Some(write) => {
                CONFLICTS.fetch_add(1, Ordering::Relaxed);
                last_conflict = Some(write);
            }
        }
        std::thread::yield_now();
    }
    pod_validate::conflict_denial(&last_conflict.expect("only conflicts lead here"))
}

fn run(max_attempts: usize) -> (Vec<(usize, Decision)>, Value) {
    let state = Mutex::new(cluster());
    let barrier = Barrier::new(PODS);
    let results = std::thread::scope(|scope| {
        let handles: Vec<_> = (0..PODS)
            .map(|i| {
                let (state, barrier) = (&state, &barrier);
                scope.spawn(move || {
                    let request = eviction(i);
                    barrier.wait();
                    (i, admit(state, &request, max_attempts))
                })
            })
            .collect();
        handles.into_iter().map(|h| h.join().unwrap()).collect::<Vec<_>>()
    });
    let view = state.into_inner().unwrap();
    let status = serde_json::to_value(&*view.pod_unavailable_budgets("shop")[0]).unwrap()["status"].clone();
    (results, status)
}

#[test]
fn a_hundred_concurrent_evictions_against_a_budget_of_three() {
    let (results, status) = run(20);
    let allowed: Vec<String> = results
        .iter()
        .filter(|(_, d)| d.allowed())
        .map(|(i, _)| format!("web-{i}"))
        .collect();
    assert_eq!(allowed.len(), BUDGET as usize, "allowed: {allowed:?}");
    for (i, d) in results.iter().filter(|(_, d)| !d.allowed()) {
        let denial = d.denial.as_ref().unwrap();
        assert_eq!(
            (denial.code, denial.reason.as_str(), denial.message.as_str()),
            (429, "TooManyRequests", MESSAGE),
            "web-{i}"
        );
    }
    assert_eq!(results.len() - allowed.len(), PODS - BUDGET as usize);
    assert_eq!(status["unavailableAllowed"], 0);
    let recorded: Vec<String> = status["disruptedPods"]
        .as_object()
        .unwrap()
        .keys()
        .cloned()
        .collect();
    let mut expected = allowed.clone();
    expected.sort();
    assert_eq!(recorded, expected, "exactly the allowed pods are recorded");
    assert_eq!(status["unavailablePods"], json!({}));
    eprintln!(
        "write conflicts seen (both tests): {}",
        CONFLICTS.load(Ordering::Relaxed)
    );
}

#[test]
fn exhausted_retries_deny_rather_than_overspend() {
    // One attempt only: a conflicting request is refused with 429, never allowed unrecorded.
    let (results, status) = run(1);
    let allowed = results.iter().filter(|(_, d)| d.allowed()).count();
    assert!((1..=BUDGET as usize).contains(&allowed), "allowed {allowed}");
    let recorded = status["disruptedPods"].as_object().unwrap().len();
    assert_eq!(
        recorded, allowed,
        "every allowed eviction is recorded, nothing more"
    );
    assert_eq!(status["unavailableAllowed"], BUDGET as i64 - allowed as i64);
    for (i, d) in results.iter().filter(|(_, d)| !d.allowed()) {
        assert_eq!(d.denial.as_ref().unwrap().code, 429, "web-{i}");
    }
}
