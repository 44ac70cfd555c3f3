//! Adaptive scheduling (default mode): pending pods past `rescheduleCriticalSeconds` make their subset
//! unschedulable for `unschedulableDuration`; the allocation moves the pods; the subset recovers.

use std::time::Duration;

use k8s_openapi::jiff::Timestamp;
use kruise_api::PodRecord;
use kruise_api::apps_v1beta1::UnitedDeployment;
use serde_json::{Value, json};

use crate::uniteddeployment::adaptive::pending_timeout;
use crate::uniteddeployment::{Input, Plan, SubsetWrite, plan};

const NOW: &str = "2026-11-29T12:00:00Z";

fn at(seconds_ago: i64) -> String {
    let now: Timestamp = NOW.parse().unwrap();
    Timestamp::from_second(now.as_second() - seconds_ago)
        .unwrap()
        .to_string()
}

fn ud(b_condition: Option<(&str, i64)>) -> UnitedDeployment {
    let b_conditions = match b_condition {
        Some((status, ago)) => json!([{"type": "Schedulable", "status": status, "reason": "reschedule",
            "lastTransitionTime": at(ago)}]),
        None => json!([]),
    };
    serde_json::from_value(json!({
        "apiVersion": "apps.kruise.io/v1beta1", "kind": "UnitedDeployment",
        "metadata": {"name": "web", "namespace": "prod", "uid": "ud-uid"},
        "spec": {"replicas": 3, "selector": {"matchLabels": {"app": "web"}},
            "template": {"deploymentTemplate": {"metadata": {"labels": {"app": "web"}},
                "spec": {"template": {"spec": {"containers": [{"name": "c"}]}}}}},
            "topology": {"subsets": [{"name": "a", "maxReplicas": 2}, {"name": "b", "maxReplicas": 2}, {"name": "c"}],
                "scheduleStrategy": {"type": "Adaptive", "adaptive": {"rescheduleCriticalSeconds": 30, "unschedulableDuration": 300}}}},
        "status": {"subsetStatuses": [{"name": "a"}, {"name": "b", "conditions": b_conditions}, {"name": "c"}]},
    }))
    .unwrap()
}

fn workload(subset: &str, replicas: i64, ready: i64) -> Value {
    json!({"apiVersion": "apps/v1", "kind": "Deployment",
        "metadata": {"name": format!("web-{subset}-x"), "labels": {"apps.kruise.io/subset-name": subset},
            "ownerReferences": [{"apiVersion": "apps.kruise.io/v1beta1", "kind": "UnitedDeployment", "name": "web", "uid": "ud-uid", "controller": true}]},
        "spec": {"replicas": replicas}, "status": {"replicas": replicas, "readyReplicas": ready}})
}

fn pending(subset: &str, created_ago: i64) -> PodRecord {
    serde_json::from_value(json!({"metadata": {"name": format!("{subset}-p"), "namespace": "prod",
        "creationTimestamp": at(created_ago), "labels": {"app": "web", "apps.kruise.io/subset-name": subset}},
        "status": {"phase": "Pending", "conditions": [{"type": "PodScheduled", "status": "False", "reason": "Unschedulable"}]}}))
    .unwrap()
}

fn run(ud: &UnitedDeployment, workloads: &[Value], pods: &[PodRecord]) -> Plan {
    let pods: Vec<&PodRecord> = pods.iter().collect();
    plan(Input {
        ud,
        revisions: &[],
        workloads,
        pods: &pods,
        now: NOW.parse().unwrap(),
    })
}

fn replicas(plan: &Plan) -> Vec<i32> {
    plan.status.subset_statuses.iter().map(|s| s.replicas).collect()
}

fn b_condition(plan: &Plan) -> (String, String) {
    let c = &plan.status.subset_statuses[1].conditions[0];
    (c.status.clone(), c.reason.clone())
}

#[test]
fn a_pending_pod_past_the_critical_time_moves_to_the_next_subset() {
    let workloads = [workload("a", 2, 2), workload("b", 1, 0), workload("c", 0, 0)];
    // Pending for 10 s: not yet; look again when it times out.
    let early = run(&ud(None), &workloads, &[pending("b", 10)]);
    assert_eq!(replicas(&early), [2, 1, 0]);
    assert_eq!(early.requeue_after, Some(Duration::from_secs(20)));
    assert!(early.status.subset_statuses[1].conditions.is_empty());
    // Pending for 60 s: b is unschedulable, c takes the pod.
    let late = run(&ud(None), &workloads, &[pending("b", 60)]);
    assert_eq!(replicas(&late), [2, 0, 1]);
    assert_eq!(b_condition(&late), ("False".into(), "reschedule".into()));
    assert_eq!(late.requeue_after, Some(Duration::from_secs(300)));
    let scaled: std::collections::BTreeMap<&str, i64> = late
        .writes
        .iter()
        .filter_map(|w| match w {
            SubsetWrite::Update { subset, body, .. } => {
                Some((subset.as_str(), body["spec"]["replicas"].as_i64().unwrap()))
            }
            _ => None,
        })
        .collect();
    assert_eq!((scaled.get("b"), scaled.get("c")), (Some(&0), Some(&1)));
}

#[test]
fn an_unschedulable_subset_waits_then_recovers() {
    let workloads = [workload("a", 2, 2), workload("b", 0, 0), workload("c", 1, 1)];
    // Marked 100 s ago: still unschedulable for 200 s; scale-up goes to c.
    let mut marked = ud(Some(("False", 100)));
    marked.spec.replicas = Some(5);
    let waiting = run(&marked, &workloads, &[]);
    assert_eq!(replicas(&waiting), [2, 0, 3]);
    assert_eq!(waiting.requeue_after, Some(Duration::from_secs(200)));
    // Marked 400 s ago: recovered, b is tried again.
    let mut recovered = ud(Some(("False", 400)));
    recovered.spec.replicas = Some(5);
    let again = run(&recovered, &workloads, &[]);
    assert_eq!(b_condition(&again), ("True".into(), "recover".into()));
    assert_eq!(replicas(&again), [2, 2, 1]);
}

#[test]
fn only_unbound_unschedulable_pending_pods_count() {
    let now: Timestamp = NOW.parse().unwrap();
    assert_eq!(pending_timeout(&pending("b", 60), 30, now), (true, None));
    assert_eq!(pending_timeout(&pending("b", 10), 30, now), (false, Some(20)));
    let mut bound = pending("b", 60);
    bound.spec = Some(serde_json::from_value(json!({"nodeName": "n1", "containers": []})).unwrap());
    assert_eq!(pending_timeout(&bound, 30, now), (false, None));
    let mut running = pending("b", 60);
    running.status.as_mut().unwrap().phase = Some("Running".into());
    assert_eq!(pending_timeout(&running, 30, now), (false, None));
}
