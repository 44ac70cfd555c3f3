//! Tests of the in-memory view: storing, status writes, lenient decoding.

use serde_json::json;

use super::*;
use crate::MemoryView;

#[test]
fn typed_and_raw_objects_are_indexed() {
    let mut view = MemoryView::default();
    view.add(json!({"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": "a"}}))
        .unwrap();
    for (ns, name) in [("a", "p1"), ("a", "p2"), ("ab", "p3")] {
        view.add(json!({"apiVersion": "v1", "kind": "Pod", "metadata": {"name": name, "namespace": ns}}))
            .unwrap();
    }
    view.add(json!({"apiVersion": "example.com/v1", "kind": "Foo", "metadata": {"name": "f"}}))
        .unwrap();
    view.add(
        json!({"apiVersion": "v1", "kind": "Node", "metadata": {"name": "n1", "labels": {"zone": "a"}}}),
    )
    .unwrap();
    assert!(view.namespace("a").is_some());
    assert_eq!(
        view.node("n1").unwrap().metadata.labels.as_ref().unwrap()["zone"],
        "a"
    );
    assert!(view.node("n2").is_none());
    assert_eq!(view.pods("a").len(), 2);
    assert_eq!(view.pods("ab").len(), 1);
    assert_eq!(view.custom_resource_count("example.com", "Foo"), Some(1));
    assert_eq!(view.custom_resource_count("example.com", "Bar"), Some(0));
}

#[test]
fn invalid_objects_are_named_in_the_error() {
    let mut view = MemoryView::default();
    let err = view
        .add(json!({"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "p"}, "spec": {"containers": 3}}))
        .unwrap_err();
    assert!(err.to_string().starts_with("Pod p is not a valid Pod"), "{err}");
    assert!(matches!(
        view.add(json!({"kind": "Pod"})),
        Err(ViewError::MissingName { .. })
    ));
}

fn budget_view() -> MemoryView {
    let mut view = MemoryView::default();
    view.add(
        json!({"apiVersion": "policy.kruise.io/v1alpha1", "kind": "PodUnavailableBudget",
        "metadata": {"name": "web", "namespace": "shop", "resourceVersion": "7"},
        "spec": {"maxUnavailable": 1}, "status": {"unavailableAllowed": 1, "desiredAvailable": 2, "currentAvailable": 3, "totalReplicas": 3}}),
    )
    .unwrap();
    view
}

fn budget_write(resource_version: Option<&str>, allowed: i32) -> StatusWrite {
    StatusWrite {
        target: WriteTarget {
            api_version: "policy.kruise.io/v1beta1".into(),
            kind: "PodUnavailableBudget".into(),
            plural: "podunavailablebudgets".into(),
            namespace: "shop".into(),
            name: "web".into(),
        },
        resource_version: resource_version.map(String::from),
        change: StatusChange::Replace(json!({"unavailableAllowed": allowed, "desiredAvailable": 2,
            "currentAvailable": 3, "totalReplicas": 3})),
    }
}

#[test]
fn kruise_objects_of_either_version_are_stored_as_v1beta1() {
    let view = budget_view();
    let pubs = view.pod_unavailable_budgets("shop");
    assert_eq!(pubs.len(), 1);
    assert_eq!(pubs[0].metadata.name.as_deref(), Some("web"));
}

#[test]
fn a_status_write_replaces_status_and_bumps_the_resource_version() {
    let mut view = budget_view();
    view.apply_status(&budget_write(Some("7"), 0)).unwrap();
    let stored = serde_json::to_value(&*view.pod_unavailable_budgets("shop")[0]).unwrap();
    assert_eq!(stored["status"]["unavailableAllowed"], 0);
    assert_eq!(stored["metadata"]["resourceVersion"], "8");
    assert_eq!(stored["spec"]["maxUnavailable"], 1, "spec untouched");
}

#[test]
fn a_stale_or_misdirected_write_changes_nothing() {
    let mut view = budget_view();
    view.apply_status(&budget_write(Some("7"), 0)).unwrap();
    let err = view.apply_status(&budget_write(Some("7"), 5)).unwrap_err();
    assert!(matches!(err, WriteError::Conflict { .. }), "{err}");
    let stored = serde_json::to_value(&*view.pod_unavailable_budgets("shop")[0]).unwrap();
    assert_eq!(stored["status"]["unavailableAllowed"], 0);
    let mut missing = budget_write(None, 0);
    missing.target.name = "gone".into();
    assert!(matches!(
        view.apply_status(&missing),
        Err(WriteError::NotFound { .. })
    ));
    let mut bad = budget_write(None, 0);
    bad.change = StatusChange::Replace(json!({"unavailableAllowed": "lots"}));
    assert!(matches!(view.apply_status(&bad), Err(WriteError::Invalid { .. })));
}

fn spend(pod: &str, resource_version: &str) -> StatusWrite {
    StatusWrite {
        change: StatusChange::SpendBudget(Box::new(crate::pub_protection::BudgetSpend {
            pod: pod.into(),
            operation: crate::pub_protection::PodOperation::Evict,
            at: k8s_openapi::apimachinery::pkg::apis::meta::v1::Time(
                k8s_openapi::jiff::Timestamp::from_second(1_700_000_000).unwrap(),
            ),
        })),
        ..budget_write(Some(resource_version), 0)
    }
}

#[test]
fn a_delta_write_changes_the_stored_object_as_its_full_status_would() {
    let mut view = budget_view();
    let first = spend("web-0", "7");
    // What a cluster write would send, computed before the in-place change.
    let full = first.new_status(&view).unwrap();
    assert_eq!(full["unavailableAllowed"], 0);
    assert_eq!(full["disruptedPods"]["web-0"], "2023-11-14T22:13:20Z");
    assert_eq!(full["unavailablePods"], json!({}));
    let reader = view.pod_unavailable_budgets("shop");
    view.apply_status(&first).unwrap();
    let stored = serde_json::to_value(&*view.pod_unavailable_budgets("shop")[0]).unwrap();
    assert_eq!(stored["status"], full);
    assert_eq!(stored["metadata"]["resourceVersion"], "8");
    assert_eq!(
        reader[0].status.as_ref().unwrap().unavailable_allowed,
        1,
        "a reader holding the old object keeps it"
    );
    // Decided on resourceVersion 7: refused now, in memory and against a cluster alike.
    let stale = spend("web-1", "7");
    assert!(matches!(
        view.apply_status(&stale),
        Err(WriteError::Conflict { .. })
    ));
    assert!(matches!(
        stale.new_status(&view),
        Err(WriteError::Conflict { .. })
    ));
    let mut gone = spend("web-1", "8");
    gone.target.name = "gone".into();
    assert!(matches!(
        view.apply_status(&gone),
        Err(WriteError::NotFound { .. })
    ));
}

#[test]
fn registered_kinds_are_counted_as_custom_resources() {
    let mut view = MemoryView::default();
    for (name, deleting) in [("a", false), ("b", true)] {
        let mut set = json!({"apiVersion": "apps.kruise.io/v1beta1", "kind": "StatefulSet",
            "metadata": {"name": name, "namespace": "shop"}, "spec": {"replicas": 2}});
        if deleting {
            set["metadata"]["deletionTimestamp"] = json!("2024-01-01T00:00:00Z");
        }
        view.add(set).unwrap();
    }
    assert!(
        view.others_of("apps.kruise.io", "StatefulSet").is_none(),
        "stored as a registered kind"
    );
    let set = crate::view::get::<kruise_api::apps_v1beta1::StatefulSet>(&view, "shop", "a").unwrap();
    assert_eq!(set.spec.replicas, Some(2));
    assert_eq!(
        view.custom_resource_count("apps.kruise.io", "StatefulSet"),
        Some(2)
    );
    assert_eq!(
        view.active_custom_resource_count("apps.kruise.io", "StatefulSet"),
        Some(1)
    );
    assert_eq!(view.custom_resource_count("apps.kruise.io", "CloneSet"), Some(0));
}

#[test]
fn records_past_their_timeouts_are_expired_in_place() {
    let mut view = budget_view();
    view.add(
        json!({"apiVersion": "apps.kruise.io/v1beta1", "kind": "WorkloadSpread",
        "metadata": {"name": "zones", "namespace": "shop", "resourceVersion": "3"},
        "spec": {"subsets": [{"name": "a", "maxReplicas": 3}]},
        "status": {"versionedSubsetStatuses": {"versionIgnored": [{"name": "a", "missingReplicas": 1,
            "creatingPods": {"p1": "2023-11-14T22:13:20Z", "p2": "2023-11-14T22:14:00Z"}}]}}}),
    )
    .unwrap();
    view.apply_status(&spend("web-0", "7")).unwrap();
    let at = |s: i64| k8s_openapi::jiff::Timestamp::from_second(1_700_000_000 + s).unwrap();
    // p1 was booked at +0, p2 at +40, web-0 spent at +0.
    assert_eq!(view.expire_admission_records(at(20)), 0, "nothing is due yet");
    assert_eq!(view.expire_admission_records(at(31)), 2, "p1 and web-0");
    let ws = &view.workload_spreads("shop")[0];
    let subset = &ws
        .status
        .as_ref()
        .unwrap()
        .versioned_subset_statuses
        .as_ref()
        .unwrap()["versionIgnored"][0];
    assert_eq!(subset.missing_replicas, 2);
    assert_eq!(subset.creating_pods.as_ref().unwrap().len(), 1);
    assert_eq!(ws.metadata.resource_version.as_deref(), Some("4"));
    let budget = view.pod_unavailable_budgets("shop")[0].status.clone().unwrap();
    assert_eq!(budget.unavailable_allowed, 1, "the unit is back");
    assert!(budget.disrupted_pods.unwrap().is_empty());
    assert_eq!(view.expire_admission_records(at(71)), 1, "p2");
}

fn booking(pod: &str, subset: &str, event: crate::workload_spread::SubsetEvent) -> StatusChange {
    StatusChange::RecordInSubset(Box::new(crate::workload_spread::SubsetRecord {
        version: "versionIgnored".into(),
        initial: None,
        subset: subset.into(),
        pod: pod.into(),
        event,
        at: k8s_openapi::apimachinery::pkg::apis::meta::v1::Time(
            k8s_openapi::jiff::Timestamp::from_second(1_700_000_000).unwrap(),
        ),
    }))
}

#[test]
fn a_grouped_status_takes_each_delta_only_while_it_still_holds() {
    use crate::workload_spread::SubsetEvent::{Creating, Deleting};
    let mut view = budget_view();
    // A budget of 2 (the view's 1, plus one): two different pods spend it, a pod twice or a third not.
    view.apply_status(&budget_write(Some("7"), 2)).unwrap();
    let spends = [spend("a", "8"), spend("a", "8"), spend("b", "8"), spend("c", "8")];
    let changes: Vec<&StatusChange> = spends.iter().map(|w| &w.change).collect();
    let target = spends[0].target.clone();
    let grouped = grouped_status(&view, &target, &changes).unwrap();
    assert_eq!(grouped.accepted, [true, false, true, false]);
    assert_eq!(grouped.resource_version, "8");
    assert_eq!(grouped.status["unavailableAllowed"], 0);
    let recorded: Vec<&String> = grouped.status["disruptedPods"]
        .as_object()
        .unwrap()
        .keys()
        .collect();
    assert_eq!(recorded, ["a", "b"]);

    view.add(
        json!({"apiVersion": "apps.kruise.io/v1beta1", "kind": "WorkloadSpread",
        "metadata": {"name": "zones", "namespace": "shop", "resourceVersion": "3"},
        "spec": {"subsets": [{"name": "a", "maxReplicas": 2}, {"name": "b"}]},
        "status": {"versionedSubsetStatuses": {"versionIgnored": [
            {"name": "a", "missingReplicas": 1, "creatingPods": {"p0": "2023-11-14T22:13:20Z"}},
            {"name": "b", "missingReplicas": -1}]}}}),
    )
    .unwrap();
    let target = WriteTarget {
        api_version: "apps.kruise.io/v1beta1".into(),
        kind: "WorkloadSpread".into(),
        plural: "workloadspreads".into(),
        namespace: "shop".into(),
        name: "zones".into(),
    };
    let changes = [
        booking("p1", "a", Creating),
        booking("p2", "a", Creating),
        booking("p1", "b", Creating),
        booking("q", "a", Deleting),
        booking("p3", "a", Creating),
        booking("p4", "z", Creating),
        spends[0].change.clone(),
    ];
    let grouped = grouped_status(&view, &target, &changes.iter().collect::<Vec<_>>()).unwrap();
    assert_eq!(
        grouped.accepted,
        [true, false, false, true, true, false, false],
        "p2: a is full; p1 again: recorded; q's deletion gives a replica back to p3; no subset z; a spend is not a booking"
    );
    let a = &grouped.status["versionedSubsetStatuses"]["versionIgnored"][0];
    assert_eq!(a["missingReplicas"], 0);
    let creating: Vec<&String> = a["creatingPods"].as_object().unwrap().keys().collect();
    assert_eq!(creating, ["p0", "p1", "p3"]);
    assert_eq!(grouped.resource_version, "3");
}
