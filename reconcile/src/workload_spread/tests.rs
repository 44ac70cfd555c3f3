use super::*;
use serde_json::json;

fn t(s: &str) -> Timestamp {
    s.parse().unwrap()
}

const NOW: &str = "2026-01-01T00:01:00Z";
static NO_NODES: BTreeMap<String, Arc<Node>> = BTreeMap::new();

fn spread(kind: &str, subsets: Value, status: Value) -> WorkloadSpread {
    serde_json::from_value(json!({
        "apiVersion": "apps.kruise.io/v1beta1", "kind": "WorkloadSpread",
        "metadata": {"name": "ws", "namespace": "ns", "generation": 2, "resourceVersion": "5"},
        "spec": {"targetRef": {"apiVersion": if kind == "CloneSet" { "apps.kruise.io/v1beta1" } else { "apps/v1" },
            "kind": kind, "name": "web"}, "subsets": subsets},
        "status": status,
    }))
    .unwrap()
}

/// A running pod of subset `subset` (ready unless `ready` is false), owned by `owner` kind.
fn pod(name: &str, subset: Option<&str>, ready: bool, owner: &str, hash: Option<&str>) -> Arc<PodRecord> {
    let mut labels = json!({"app": "web"});
    if let Some(h) = hash {
        labels["pod-template-hash"] = json!(h);
    }
    let annotations = match subset {
        Some(s) => json!({MATCHED_WORKLOADSPREAD_ANNOTATION: json!({"name": "ws", "subset": s}).to_string()}),
        None => json!({}),
    };
    Arc::new(
        serde_json::from_value(json!({
            "metadata": {"name": name, "namespace": "ns", "labels": labels, "annotations": annotations,
                "ownerReferences": [{"apiVersion": "apps/v1", "kind": owner, "name": "web-x", "uid": "o", "controller": true}]},
            "spec": {"nodeName": "n1", "containers": [{"name": "main"}]},
            "status": {"phase": "Running", "conditions": [{"type": "Ready", "status": if ready { "True" } else { "False" }}]},
        }))
        .unwrap(),
    )
}

fn observed<'a>(pods: &'a [Arc<PodRecord>], replicas: i32, latest: Option<&'static str>) -> Observed<'a> {
    Observed {
        pods,
        replicas,
        latest_version: latest,
        nodes: &NO_NODES,
        now: t(NOW),
    }
}

fn costs(plan: &Plan) -> BTreeMap<String, String> {
    plan.deletion_costs.iter().cloned().collect()
}

#[test]
fn deletion_cost_prefers_the_last_subsets_and_the_excess_of_full_ones() {
    // e2e: two subsets: the pods of subset 0 carry 200, those of subset 1 carry 100.
    let ws = spread("CloneSet", json!([{"name": "a"}, {"name": "b"}]), Value::Null);
    let pods = [
        pod("a1", Some("a"), true, "CloneSet", None),
        pod("b1", Some("b"), true, "CloneSet", None),
    ];
    let plan = super::plan(&ws, &observed(&pods, 2, Some(VERSION_IGNORED))).unwrap();
    assert_eq!(
        costs(&plan),
        BTreeMap::from([("a1".into(), "200".into()), ("b1".into(), "100".into())])
    );

    // Subset a holds one pod too many: its worst pod (not ready) goes first with -100 (index 0 → −100×1).
    let ws = spread(
        "CloneSet",
        json!([{"name": "a", "maxReplicas": 1}, {"name": "b"}]),
        Value::Null,
    );
    let pods = [
        pod("a-ready", Some("a"), true, "CloneSet", None),
        pod("a-unready", Some("a"), false, "CloneSet", None),
        pod("b1", Some("b"), true, "CloneSet", None),
        pod("gone-subset", Some("removed"), true, "CloneSet", None),
        pod("unknown-node", None, true, "CloneSet", None),
    ];
    let plan = super::plan(&ws, &observed(&pods, 3, Some(VERSION_IGNORED))).unwrap();
    assert_eq!(
        costs(&plan),
        BTreeMap::from([
            ("a-ready".into(), "200".into()),
            ("a-unready".into(), "-100".into()),
            ("b1".into(), "100".into()),
            ("gone-subset".into(), "-300".into()), // −100 × (n + 1)
            ("unknown-node".into(), "-300".into()),
        ]),
        "pods of no subset, adopted or not, go first"
    );
    assert!(plan.adoptions.is_empty(), "its node is not known");
}

#[test]
fn old_versions_leave_the_first_subsets_first_and_unchanged_costs_are_not_rewritten() {
    let ws = spread("Deployment", json!([{"name": "a"}, {"name": "b"}]), Value::Null);
    let mut current = (*pod("a-new", Some("a"), true, "ReplicaSet", Some("new"))).clone();
    current
        .metadata
        .annotations
        .insert(DELETION_COST_ANNOTATION.into(), "200".into());
    let pods = [
        Arc::new(current),
        pod("a-old", Some("a"), true, "ReplicaSet", Some("old")),
        pod("b-old", Some("b"), true, "ReplicaSet", Some("old")),
    ];
    let plan = super::plan(&ws, &observed(&pods, 3, Some("new"))).unwrap();
    assert_eq!(
        costs(&plan),
        BTreeMap::from([("a-old".into(), "100".into()), ("b-old".into(), "200".into())])
    );
    // Versioned statuses exist per pod-template-hash.
    let versions: Vec<_> = plan
        .status
        .versioned_subset_statuses
        .unwrap()
        .into_keys()
        .collect();
    assert_eq!(versions, vec!["new".to_string(), "old".to_string()]);
    // Targets without deletion cost (StatefulSet) get none.
    let ws = spread("StatefulSet", json!([{"name": "a"}]), Value::Null);
    assert!(plan_for(&ws).deletion_costs.is_empty());
}

fn plan_for(ws: &WorkloadSpread) -> Plan {
    let pods = [pod("a1", Some("a"), true, "StatefulSet", None)];
    super::plan(ws, &observed(&pods, 1, None)).unwrap()
}

#[test]
fn subset_status_counts_pods_and_expires_stale_bookings() {
    let ws = spread(
        "CloneSet",
        json!([{"name": "a", "maxReplicas": "60%"}, {"name": "b"}]),
        json!({"subsetStatuses": [
            {"name": "a", "replicas": 0, "missingReplicas": 0,
             "creatingPods": {
                 "a1": "2026-01-01T00:00:59Z",   // its pod exists now: confirmed
                 "x": "2026-01-01T00:00:50Z",    // 10s old, no pod yet: kept, holds a replica
                 "y": "2026-01-01T00:00:20Z"},   // 40s old: never created, dropped
             "deletingPods": {
                 "a2": "2026-01-01T00:00:55Z",   // 5s old, still there: kept, gives its replica back
                 "a3": "2026-01-01T00:00:40Z"}}, // 20s old, still there: failed, dropped
            {"name": "b", "replicas": 9, "missingReplicas": -1}]}),
    );
    let pods = [
        pod("a1", Some("a"), true, "CloneSet", None),
        pod("a2", Some("a"), true, "CloneSet", None),
        pod("a3", Some("a"), true, "CloneSet", None),
        pod("b1", Some("b"), true, "CloneSet", None),
    ];
    // maxReplicas 60% of 5 = 3 (rounded up).
    let plan = super::plan(&ws, &observed(&pods, 5, Some(VERSION_IGNORED))).unwrap();
    let subsets = plan.status.subset_statuses.clone().unwrap();
    // missing: 3 − a1 − a2 − a3 = 0; a2 still deleting: +1; x still creating: −1 → 0.
    assert_eq!(
        serde_json::to_value(&subsets[0]).unwrap(),
        json!({"name": "a", "replicas": 3, "missingReplicas": 0,
            "creatingPods": {"x": "2026-01-01T00:00:50Z"}, "deletingPods": {"a2": "2026-01-01T00:00:55Z"}})
    );
    assert_eq!(
        serde_json::to_value(&subsets[1]).unwrap(),
        json!({"name": "b", "replicas": 1, "missingReplicas": -1}),
        "unlimited subsets keep −1"
    );
    assert_eq!(plan.status.observed_generation, 2);
    assert_eq!(
        plan.recheck_after,
        Some(Duration::from_secs(10)),
        "a2's record expires first"
    );
    assert_eq!(plan.events.len(), 2, "{:?}", plan.events);
    assert!(
        plan.events
            .iter()
            .any(|e| e.starts_with("CreatePodFailed") && e.contains("ns/y"))
    );
    assert!(
        plan.events
            .iter()
            .any(|e| e.starts_with("DeletePodFailed") && e.contains("ns/a3"))
    );
    assert!(plan.changed);
    // Idempotent: recounting from the written status changes nothing (before any record expires).
    let mut written = ws.clone();
    written.status = Some(plan.status.clone());
    let again = super::plan(&written, &observed(&pods, 5, Some(VERSION_IGNORED))).unwrap();
    assert!(!again.changed, "{:?}", again.status);
}

#[test]
fn versions_without_pods_are_kept_while_they_book_something() {
    let ws = spread(
        "Deployment",
        json!([{"name": "a", "maxReplicas": 2}]),
        json!({"versionedSubsetStatuses": {
            "pending": [{"name": "a", "replicas": 0, "missingReplicas": 1, "creatingPods": {"p-1": "2026-01-01T00:00:58Z"}}],
            "gone": [{"name": "a", "replicas": 1, "missingReplicas": 1}]}}),
    );
    let plan = super::plan(&ws, &observed(&[], 2, None)).unwrap();
    let versions = plan.status.versioned_subset_statuses.unwrap();
    assert_eq!(versions.keys().collect::<Vec<_>>(), vec!["pending"]);
    assert_eq!(versions["pending"][0].missing_replicas, 1);
}

#[test]
fn target_filter_and_schedulable_conditions() {
    let mut ws = spread("CloneSet", json!([{"name": "a"}, {"name": "b"}]), Value::Null);
    ws.spec.target_filter =
        Some(serde_json::from_value(json!({"selector": {"matchLabels": {"app": "other"}}})).unwrap());
    let pods = [pod("a1", Some("a"), true, "CloneSet", None)];
    let plan1 = super::plan(&ws, &observed(&pods, 1, Some(VERSION_IGNORED))).unwrap();
    assert_eq!(
        plan1.status.subset_statuses.unwrap()[0].replicas,
        0,
        "filtered out"
    );

    ws.spec.target_filter = None;
    ws.spec.schedule_strategy =
        serde_json::from_value(json!({"type": "Adaptive", "adaptive": {"rescheduleCriticalSeconds": 30}}))
            .unwrap();
    let plan2 = super::plan(&ws, &observed(&pods, 1, Some(VERSION_IGNORED))).unwrap();
    let subsets = plan2.status.subset_statuses.unwrap();
    let first = subsets[0].conditions.clone().unwrap();
    assert_eq!(
        (first[0].status.as_str(), first[0].reason.as_str()),
        ("True", "Sufficient"),
        "no pod is stuck"
    );
    assert!(plan2.unschedulable.is_empty());
    let last = subsets[1].conditions.clone().unwrap();
    assert_eq!(
        (
            last[0].type_.as_str(),
            last[0].status.as_str(),
            last[0].reason.as_str()
        ),
        ("Schedulable", "True", "Sufficient"),
        "the last subset is always schedulable"
    );
}

/// A pod of `subset` created at `created` that the scheduler cannot place.
fn stuck(name: &str, subset: &str, created: &str) -> Arc<PodRecord> {
    let mut pod = (*pod(name, Some(subset), false, "CloneSet", None)).clone();
    pod.metadata.creation_timestamp = Some(Time(t(created)));
    pod.spec.as_mut().unwrap().node_name = None;
    pod.status = Some(
        serde_json::from_value(json!({"phase": "Pending",
            "conditions": [{"type": "PodScheduled", "status": "False", "reason": "Unschedulable"}]}))
        .unwrap(),
    );
    Arc::new(pod)
}

#[test]
fn adaptive_rescheduling_deletes_stuck_pods_of_all_but_the_last_subset() {
    let mut ws = spread("CloneSet", json!([{"name": "a"}, {"name": "b"}]), Value::Null);
    ws.spec.schedule_strategy =
        serde_json::from_value(json!({"type": "Adaptive", "adaptive": {"rescheduleCriticalSeconds": 30}}))
            .unwrap();
    let pods = [
        stuck("a-old", "a", "2026-01-01T00:00:00Z"),
        stuck("a-new", "a", "2026-01-01T00:00:50Z"),
        stuck("b-old", "b", "2026-01-01T00:00:00Z"),
    ];
    let plan = super::plan(&ws, &observed(&pods, 3, Some(VERSION_IGNORED))).unwrap();
    assert_eq!(
        plan.unschedulable,
        vec!["a-old".to_string()],
        "never the last subset"
    );
    let subsets = plan.status.subset_statuses.clone().unwrap();
    let a = &subsets[0].conditions.as_ref().unwrap()[0];
    assert_eq!(
        (a.status.as_str(), a.reason.as_str(), a.last_transition_time.0),
        ("False", "PodUnschedulable", t(NOW))
    );
    assert_eq!(subsets[1].conditions.as_ref().unwrap()[0].status, "True");
    // a-new times out 20s from now.
    assert_eq!(plan.recheck_after, Some(Duration::from_secs(20)));

    // Six minutes later, the stuck pods gone: subset a recovers.
    ws.status = Some(plan.status);
    let later = Observed {
        now: t("2026-01-01T00:07:00Z"),
        ..observed(&[], 3, Some(VERSION_IGNORED))
    };
    let plan = super::plan(&ws, &later).unwrap();
    let a = &plan.status.subset_statuses.unwrap()[0]
        .conditions
        .clone()
        .unwrap()[0];
    assert_eq!((a.status.as_str(), a.reason.as_str()), ("True", "Sufficient"));
    assert!(plan.unschedulable.is_empty());
    assert!(
        plan.events
            .iter()
            .any(|e| e.starts_with("RecoverSchedulable: Subset a of WorkloadSpread ns/ws"))
    );
}

#[test]
fn pre_existing_pods_are_adopted_by_their_node_and_then_counted() {
    let ws = spread(
        "CloneSet",
        json!([
            {"name": "a", "maxReplicas": 1, "requiredNodeSelector": {"matchExpressions": [
                {"key": "zone", "operator": "In", "values": ["a"]}]}},
            {"name": "b", "patch": {"metadata": {"labels": {"zone": "b"}}}},
        ]),
        Value::Null,
    );
    let n1: Node =
        serde_json::from_value(json!({"metadata": {"name": "n1", "labels": {"zone": "a"}}})).unwrap();
    let nodes = BTreeMap::from([("n1".to_string(), Arc::new(n1))]);
    let mut unscheduled = (*pod("pending", None, false, "CloneSet", None)).clone();
    unscheduled.spec.as_mut().unwrap().node_name = None;
    let pods = [
        pod("old-1", None, true, "CloneSet", None),
        pod("old-2", None, true, "CloneSet", None),
        Arc::new(unscheduled),
    ];
    let plan = super::plan(
        &ws,
        &Observed {
            nodes: &nodes,
            ..observed(&pods, 2, Some(VERSION_IGNORED))
        },
    )
    .unwrap();
    // Both fit a and b (b has no required term); old-1 takes a's one missing replica, so old-2 goes to b,
    // which still misses some (unlimited).
    let adopted: Vec<(&str, &str)> = plan
        .adoptions
        .iter()
        .map(|(pod, patch)| {
            let matched = &patch["metadata"]["annotations"][MATCHED_WORKLOADSPREAD_ANNOTATION];
            (pod.as_str(), matched.as_str().unwrap())
        })
        .collect();
    assert_eq!(
        adopted,
        [
            ("old-1", r#"{"name":"ws","subset":"a"}"#),
            ("old-2", r#"{"name":"ws","subset":"b"}"#)
        ]
    );
    assert_eq!(
        plan.adoptions[1].1["metadata"]["labels"],
        json!({"zone": "b"}),
        "with b's patch metadata"
    );
    let subsets = plan.status.subset_statuses.clone().unwrap();
    assert_eq!((subsets[0].replicas, subsets[0].missing_replicas), (1, 0));
    assert_eq!((subsets[1].replicas, subsets[1].missing_replicas), (1, -1));
    // The unscheduled pod is in no subset and goes first.
    assert_eq!(
        costs(&plan),
        BTreeMap::from([
            ("old-1".into(), "200".into()),
            ("old-2".into(), "100".into()),
            ("pending".into(), "-300".into()),
        ])
    );
}

#[test]
fn targets_compare_namespace_kind_and_name() {
    let ws = spread("CloneSet", json!([{"name": "a"}]), Value::Null);
    assert!(targets(&ws, "ns", "CloneSet", "web"));
    assert!(!targets(&ws, "other", "CloneSet", "web"));
    assert!(!targets(&ws, "ns", "Deployment", "web"));
    assert!(!targets(&ws, "ns", "CloneSet", "db"));
}

#[test]
fn replicas_are_summed_over_the_paths() {
    let object = json!({"spec": {"replicas": 3, "extra": {"count": 2}}, "status": {"replicas": "x"}});
    let paths = |p: &[&str]| p.iter().map(|s| s.to_string()).collect::<Vec<_>>();
    assert_eq!(replicas_from_paths(&object, &paths(&["spec.replicas"])), 3);
    assert_eq!(
        replicas_from_paths(&object, &paths(&["spec.replicas", "spec.extra.count"])),
        5
    );
    // Missing and non-integer values count as 0.
    assert_eq!(
        replicas_from_paths(&object, &paths(&["status.replicas", "spec.none"])),
        0
    );
}

#[test]
fn the_latest_deployment_version_is_its_replica_set_with_the_same_template() {
    let template = |image: &str, hash: Option<&str>| {
        let mut labels = json!({"app": "web"});
        if let Some(h) = hash {
            labels["pod-template-hash"] = json!(h);
        }
        json!({"metadata": {"labels": labels}, "spec": {"containers": [{"name": "main", "image": image}]}})
    };
    let deployment: Deployment = serde_json::from_value(json!({
        "metadata": {"name": "web", "namespace": "ns", "uid": "d1"},
        "spec": {"selector": {"matchLabels": {"app": "web"}}, "template": template("nginx:2", None)},
    }))
    .unwrap();
    let rs = |name: &str, hash: &str, image: &str, owner: &str, deleting: bool| -> ReplicaSet {
        let mut value = json!({
            "metadata": {"name": name, "namespace": "ns", "labels": {"pod-template-hash": hash},
                "ownerReferences": [{"apiVersion": "apps/v1", "kind": "Deployment", "name": "web",
                    "uid": owner, "controller": true}]},
            "spec": {"selector": {"matchLabels": {"app": "web"}}, "template": template(image, Some(hash))},
        });
        if deleting {
            value["metadata"]["deletionTimestamp"] = json!("2026-01-01T00:00:00Z");
        }
        serde_json::from_value(value).unwrap()
    };
    let old = rs("web-old", "old", "nginx:1", "d1", false);
    let new = rs("web-new", "new", "nginx:2", "d1", false);
    let foreign = rs("web-foreign", "foreign", "nginx:2", "d2", false);
    let going = rs("web-going", "going", "nginx:2", "d1", true);
    assert_eq!(
        latest_deployment_version(&deployment, [&old, &new]),
        Some("new".to_string())
    );
    assert_eq!(latest_deployment_version(&deployment, [&old]), None);
    assert_eq!(latest_deployment_version(&deployment, [&foreign, &going]), None);
}
