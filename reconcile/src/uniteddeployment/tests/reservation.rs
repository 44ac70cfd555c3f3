//! Adaptive scheduling, reservation mode: pods that cannot run are kept as reserved pods (labelled),
//! their subset is marked unschedulable, temporary pods go to the next subsets, and the temporary pods
//! go once the reserved ones have run Ready for `unschedulableDuration`.

use std::collections::BTreeMap;
use std::time::Duration;

use k8s_openapi::api::apps::v1::ControllerRevision;
use k8s_openapi::jiff::Timestamp;
use kruise_api::PodRecord;
use kruise_api::apps_v1beta1::UnitedDeployment;
use serde_json::{Value, json};

use crate::uniteddeployment::{Input, Plan, PodLabel, SubsetWrite, plan};

const NOW: &str = "2026-11-29T12:00:00Z";
const LABEL: &str = "apps.kruise.io/united-deployment-reserved-pod";

fn at(seconds_ago: i64) -> String {
    let now: Timestamp = NOW.parse().unwrap();
    Timestamp::from_second(now.as_second() - seconds_ago)
        .unwrap()
        .to_string()
}

/// A UD of three CloneSet subsets under reservation; `conditions` are the stored `Schedulable`
/// conditions per subset as (status, seconds ago).
fn ud(replicas: i32, conditions: &[Option<(&str, i64)>; 3]) -> UnitedDeployment {
    let statuses: Vec<Value> = ["s0", "s1", "s2"]
        .iter()
        .zip(conditions)
        .map(|(name, c)| match c {
            Some((status, ago)) => json!({"name": name, "conditions": [{"type": "Schedulable",
                "status": status, "reason": "reschedule", "lastTransitionTime": at(*ago)}]}),
            None => json!({"name": name}),
        })
        .collect();
    serde_json::from_value(json!({
        "apiVersion": "apps.kruise.io/v1beta1", "kind": "UnitedDeployment",
        "metadata": {"name": "web", "namespace": "prod", "uid": "ud-uid", "generation": 1},
        "spec": {"replicas": replicas, "selector": {"matchLabels": {"app": "web"}},
            "template": {"cloneSetTemplate": {"metadata": {"labels": {"app": "web"}},
                "spec": {"template": {"metadata": {"labels": {"app": "web"}}, "spec": {"containers": [{"name": "c", "image": "nginx"}]}}}}},
            "topology": {"subsets": [{"name": "s0"}, {"name": "s1"}, {"name": "s2"}],
                "scheduleStrategy": {"type": "Adaptive", "adaptive": {"reserveUnschedulablePods": true,
                    "rescheduleCriticalSeconds": 30, "unschedulableDuration": 300}}}},
        "status": {"subsetStatuses": statuses},
    }))
    .unwrap()
}

/// The update revision the planner computes for [`ud`]'s template.
fn revision() -> String {
    run(&ud(2, &[None, None, None]), &[], &[]).revisions.update
}

fn workload(subset: &str, replicas: i64, ready: i64) -> Value {
    json!({"apiVersion": "apps.kruise.io/v1beta1", "kind": "CloneSet",
        "metadata": {"name": format!("web-{subset}-x"), "labels": {"apps.kruise.io/subset-name": subset,
            "apps.kruise.io/controller-revision-hash": revision()},
            "annotations": {"apps.kruise.io/subset-patch": ""},
            "ownerReferences": [{"apiVersion": "apps.kruise.io/v1beta1", "kind": "UnitedDeployment", "name": "web", "uid": "ud-uid", "controller": true}]},
        "spec": {"replicas": replicas, "updateStrategy": {"rollingUpdate": {"partition": 0}}},
        "status": {"replicas": replicas, "readyReplicas": ready}})
}

/// A pod of `subset`: `reserved` is its label (none when `None`); pending unschedulable since
/// `pending_ago`, or Running and Ready since `ready_ago`.
fn pod(name: &str, subset: &str, reserved: Option<bool>, state: Result<i64, i64>) -> PodRecord {
    let mut labels = json!({"app": "web", "apps.kruise.io/subset-name": subset,
        "apps.kruise.io/controller-revision-hash": revision()});
    if let Some(r) = reserved {
        labels[LABEL] = json!(r.to_string());
    }
    let (created, status) = match state {
        Err(pending_ago) => (
            pending_ago,
            json!({"phase": "Pending", "conditions": [{"type": "PodScheduled", "status": "False", "reason": "Unschedulable"}]}),
        ),
        Ok(ready_ago) => (
            ready_ago + 5,
            json!({"phase": "Running", "conditions": [{"type": "Ready", "status": "True", "lastTransitionTime": at(ready_ago)}]}),
        ),
    };
    serde_json::from_value(json!({"metadata": {"name": name, "namespace": "prod",
        "creationTimestamp": at(created), "labels": labels}, "status": status}))
    .unwrap()
}

fn run(ud: &UnitedDeployment, workloads: &[Value], pods: &[PodRecord]) -> Plan {
    run_with(ud, &[], workloads, pods)
}

fn run_with(
    ud: &UnitedDeployment,
    revisions: &[ControllerRevision],
    workloads: &[Value],
    pods: &[PodRecord],
) -> Plan {
    let pods: Vec<&PodRecord> = pods.iter().collect();
    plan(Input {
        ud,
        revisions,
        workloads,
        pods: &pods,
        now: NOW.parse().unwrap(),
    })
}

fn replicas(plan: &Plan) -> Vec<i32> {
    plan.status.subset_statuses.iter().map(|s| s.replicas).collect()
}

fn reserved(plan: &Plan) -> Vec<i32> {
    plan.status
        .subset_statuses
        .iter()
        .map(|s| s.reserved_pods)
        .collect()
}

fn schedulable(plan: &Plan, i: usize) -> (String, String) {
    let c = &plan.status.subset_statuses[i].conditions[0];
    (c.status.clone(), c.message.clone())
}

fn labels(plan: &Plan) -> BTreeMap<String, bool> {
    plan.pod_labels
        .iter()
        .map(|PodLabel { pod, reserved }| (pod.clone(), *reserved))
        .collect()
}

fn updates(plan: &Plan) -> BTreeMap<String, Value> {
    plan.writes
        .iter()
        .filter_map(|w| match w {
            SubsetWrite::Update { subset, body, .. } => Some((subset.clone(), body.clone())),
            _ => None,
        })
        .collect()
}

#[test]
fn pods_pending_past_the_critical_time_are_reserved_and_duplicated_in_the_next_subset() {
    let workloads = [workload("s0", 2, 0), workload("s1", 2, 0), workload("s2", 0, 0)];
    let pods = [
        pod("s0-a", "s0", Some(false), Err(60)),
        pod("s0-b", "s0", Some(false), Err(60)),
        pod("s1-a", "s1", Some(false), Err(60)),
        pod("s1-b", "s1", None, Err(60)),
    ];
    let p = run(&ud(2, &[None, None, None]), &workloads, &pods);
    // Every pod is labelled reserved; both subsets are marked; s2 takes the two pods.
    assert_eq!(
        labels(&p),
        [("s0-a", true), ("s0-b", true), ("s1-a", true), ("s1-b", true)]
            .map(|(n, r)| (n.to_string(), r))
            .into()
    );
    assert_eq!(replicas(&p), [2, 2, 2]);
    assert_eq!(reserved(&p), [2, 2, 0]);
    assert_eq!(p.status.reserved_pods, 4);
    assert_eq!(p.status.replicas, 0, "reserved pods are not counted");
    assert!(
        p.status
            .label_selector
            .ends_with(",apps.kruise.io/united-deployment-reserved-pod=false")
    );
    assert_eq!(schedulable(&p, 0), ("False".into(), "reserved pods found".into()));
    assert_eq!(schedulable(&p, 2), ("True".into(), "no reserved pods".into()));
    assert_eq!(updates(&p)["s2"]["spec"]["replicas"], 2);
    assert_eq!(p.requeue_after, Some(Duration::from_secs(300)));
}

#[test]
fn pending_pods_not_yet_timed_out_are_not_reserved_and_requeue_at_their_deadline() {
    let workloads = [workload("s0", 2, 0), workload("s1", 0, 0), workload("s2", 0, 0)];
    let pods = [pod("s0-a", "s0", None, Err(10)), pod("s0-b", "s0", None, Err(20))];
    let p = run(&ud(2, &[None, None, None]), &workloads, &pods);
    assert_eq!(
        labels(&p),
        [("s0-a".into(), false), ("s0-b".into(), false)].into()
    );
    assert_eq!(replicas(&p), [2, 0, 0]);
    assert_eq!(p.requeue_after, Some(Duration::from_secs(10)));
}

#[test]
fn reserved_pods_stay_reserved_on_scale_up_and_the_temporary_subset_grows() {
    let workloads = [workload("s0", 2, 0), workload("s1", 2, 0), workload("s2", 2, 2)];
    let pods = [
        pod("s0-a", "s0", Some(true), Err(400)),
        pod("s0-b", "s0", Some(true), Err(400)),
        pod("s1-a", "s1", Some(true), Err(400)),
        pod("s1-b", "s1", Some(true), Err(400)),
        pod("s2-a", "s2", Some(false), Ok(100)),
        pod("s2-b", "s2", Some(false), Ok(100)),
    ];
    let marked = Some(("False", 100));
    let p = run(&ud(4, &[marked, marked, None]), &workloads, &pods);
    assert!(labels(&p).is_empty(), "no label changes");
    assert_eq!(replicas(&p), [2, 2, 4]);
    // The unschedulable subsets may replace all their not-ready pods: maxUnavailable = 2 − 0 + 0.
    let u = updates(&p);
    assert!(!u.contains_key("s0"), "s0 needs no update: {:?}", u.keys());
    assert_eq!(u["s2"]["spec"]["replicas"], 4);
    assert!(u["s2"]["spec"]["updateStrategy"]["rollingUpdate"]["maxUnavailable"].is_null());
}

#[test]
fn a_recovered_subset_takes_its_pods_back_and_new_pods_start_reserved() {
    let workloads = [workload("s0", 2, 2), workload("s1", 2, 0), workload("s2", 4, 4)];
    let pods = [
        // Ready for 400 s > unschedulableDuration: no longer reserved.
        pod("s0-a", "s0", Some(true), Ok(400)),
        pod("s0-b", "s0", Some(true), Ok(400)),
        pod("s1-a", "s1", Some(true), Err(900)),
        pod("s1-b", "s1", Some(true), Err(900)),
    ];
    let marked = Some(("False", 900));
    let p = run(&ud(4, &[marked, marked, None]), &workloads, &pods);
    assert_eq!(
        labels(&p),
        [("s0-a".into(), false), ("s0-b".into(), false)].into()
    );
    // s0 was marked: it counts only the 2 pods it runs, gets 4, and is marked again so that its two new
    // pods start reserved; the temporary pods of s2 stay until those are healthy.
    assert_eq!(replicas(&p), [4, 2, 2]);
    assert_eq!(
        schedulable(&p, 0),
        ("False".into(), "subset just recovered scaled up".into())
    );
    assert_eq!(reserved(&p), [0, 2, 0]);
    // Next pass: the two new pods of s0 (no label yet) are reserved at once.
    let workloads = [workload("s0", 4, 2), workload("s1", 2, 0), workload("s2", 2, 2)];
    let mut pods = pods.to_vec();
    pods[0] = pod("s0-a", "s0", Some(false), Ok(400));
    pods[1] = pod("s0-b", "s0", Some(false), Ok(400));
    pods.push(pod("s0-c", "s0", None, Err(5)));
    pods.push(pod("s0-d", "s0", None, Err(5)));
    let just = Some(("False", 0));
    let p = run(&ud(4, &[just, marked, None]), &workloads, &pods);
    assert_eq!(labels(&p), [("s0-c".into(), true), ("s0-d".into(), true)].into());
    assert_eq!(reserved(&p), [2, 2, 0]);
    // s0 holds 4 (2 reserved), the temporary pods in s2 stay.
    assert_eq!(replicas(&p), [4, 2, 2]);
    assert!(
        !updates(&p).contains_key("s0"),
        "nothing else changed in s0: no write"
    );
}

#[test]
fn a_subset_added_later_starts_marked_unschedulable() {
    let mut two = ud(2, &[None, None, None]);
    two.status.as_mut().unwrap().subset_statuses.truncate(2);
    let p = run(&two, &[workload("s0", 2, 2), workload("s1", 0, 0)], &[]);
    let c = &p.status.subset_statuses[2].conditions[0];
    assert_eq!((c.status.as_str(), c.reason.as_str()), ("False", "created"));
    // The very first subsets start schedulable.
    let mut fresh = ud(2, &[None, None, None]);
    fresh.status = None;
    let p = run(&fresh, &[], &[]);
    assert!(p.status.subset_statuses.iter().all(|s| s.conditions.is_empty()));
}

#[test]
fn old_revision_pods_are_reserved_once_the_update_has_run_past_the_critical_time() {
    let mut u = ud(2, &[None, None, None]);
    let status = u.status.as_mut().unwrap();
    status.current_revision = "web-old".into();
    status.updated_revision = "web-old".into();
    status.conditions = serde_json::from_value(json!([{"type": "UnitedDeploymentUpdated",
        "status": "False", "reason": "UnitedDeploymentRevisionUpdating", "lastTransitionTime": at(60)}]))
    .unwrap();
    let workloads = [workload("s0", 2, 1), workload("s1", 0, 0), workload("s2", 0, 0)];
    let mut old = pod("s0-a", "s0", Some(false), Ok(100));
    old.metadata
        .labels
        .insert("apps.kruise.io/controller-revision-hash".into(), "web-old".into());
    let old_revision: ControllerRevision = serde_json::from_value(json!({
        "metadata": {"name": "web-old", "namespace": "prod",
            "ownerReferences": [{"apiVersion": "apps.kruise.io/v1beta1", "kind": "UnitedDeployment", "name": "web", "uid": "ud-uid", "controller": true}]},
        "revision": 1, "data": {"spec": {"template": {"$patch": "replace"}}}}))
    .unwrap();
    let pods = [old, pod("s0-b", "s0", Some(false), Ok(100))];
    let p = run_with(&u, &[old_revision], &workloads, &pods);
    assert_eq!(p.revisions.current, "web-old");
    assert_eq!(labels(&p), [("s0-a".into(), true)].into());
    assert_eq!(reserved(&p), [1, 0, 0]);
    // The update of s0 may replace the reserved pod: maxUnavailable = 2 − 1 ready + 1 timed out.
    let body = &updates(&p)["s0"];
    assert_eq!(
        body["spec"]["updateStrategy"]["rollingUpdate"]["maxUnavailable"],
        2
    );
}
