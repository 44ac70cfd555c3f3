//! Whole passes: provisioning, the steady state, a template change under partitions, removed subsets
//! and other kinds, an allocation error.

use k8s_openapi::api::apps::v1::ControllerRevision;
use k8s_openapi::jiff::Timestamp;
use kruise_api::PodRecord;
use kruise_api::apps_v1beta1::{SubsetKind, UnitedDeployment};
use serde_json::{Value, json};

use crate::uniteddeployment::{Input, Plan, RevisionWrite, SubsetWrite, plan};

fn ud(image: &str) -> UnitedDeployment {
    serde_json::from_value(json!({
        "apiVersion": "apps.kruise.io/v1beta1", "kind": "UnitedDeployment",
        "metadata": {"name": "web", "namespace": "prod", "uid": "ud-uid", "generation": 2},
        "spec": {"replicas": 6, "selector": {"matchLabels": {"app": "web"}},
            "template": {"statefulSetTemplate": {"metadata": {"labels": {"app": "web"}},
                "spec": {"template": {"metadata": {"labels": {"app": "web"}},
                    "spec": {"containers": [{"name": "c", "image": image}]}}}}},
            "topology": {"subsets": [{"name": "a", "replicas": 1}, {"name": "b", "replicas": 2}, {"name": "c"}]},
            "updateStrategy": {"manualUpdate": {"partitions": {"a": 1, "b": 1}}}},
    }))
    .unwrap()
}

fn now() -> Timestamp {
    "2026-11-29T12:00:00Z".parse().unwrap()
}

fn run(
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
        now: now(),
    })
}

/// The workloads as the API server holds them once `plan`'s creates and updates are done and every pod
/// runs (ready), with the pods themselves.
fn settle(plan: &Plan, mut workloads: Vec<Value>) -> (Vec<Value>, Vec<PodRecord>) {
    for (i, write) in plan.writes.iter().enumerate() {
        match write {
            SubsetWrite::Create { subset, body, .. } => {
                let mut w = body.clone();
                w["metadata"]["name"] = json!(format!("web-{subset}-{i}"));
                workloads.push(w);
            }
            SubsetWrite::Update { name, body, .. } => {
                let slot = workloads
                    .iter_mut()
                    .find(|w| w["metadata"]["name"] == *name.as_str())
                    .unwrap();
                *slot = body.clone();
            }
            SubsetWrite::Delete { name, .. } => workloads.retain(|w| w["metadata"]["name"] != *name.as_str()),
        }
    }
    let mut pods = Vec::new();
    for w in &mut workloads {
        let replicas = w["spec"]["replicas"].as_i64().unwrap();
        let partition = w["spec"]["updateStrategy"]["rollingUpdate"]["partition"]
            .as_i64()
            .unwrap_or(0);
        w["status"] = json!({"replicas": replicas, "readyReplicas": replicas});
        let subset = w["metadata"]["labels"]["apps.kruise.io/subset-name"]
            .as_str()
            .unwrap()
            .to_string();
        let revision = w["metadata"]["labels"]["apps.kruise.io/controller-revision-hash"]
            .as_str()
            .unwrap();
        for ordinal in 0..replicas {
            // Ordinals below the partition keep the revision they had (the first revision here).
            let at = if ordinal < partition { "old" } else { revision };
            pods.push(
                serde_json::from_value(
                    json!({"metadata": {"name": format!("{subset}-{ordinal}"), "namespace": "prod",
                    "labels": {"app": "web", "apps.kruise.io/subset-name": subset,
                        "apps.kruise.io/controller-revision-hash": at}},
                    "status": {"phase": "Running", "conditions": [{"type": "Ready", "status": "True"}]}}),
                )
                .unwrap(),
            );
        }
    }
    (workloads, pods)
}

fn created_revisions(plan: &Plan) -> Vec<ControllerRevision> {
    plan.revisions
        .writes
        .iter()
        .filter_map(|w| match w {
            RevisionWrite::Create(r) => Some(r.clone()),
            _ => None,
        })
        .collect()
}

#[test]
fn provisions_three_subsets_then_holds_still() {
    let ud = ud("nginx:1");
    let first = run(&ud, &[], &[], &[]);
    let revisions = created_revisions(&first);
    assert_eq!(revisions.len(), 1);
    let revision = revisions[0].metadata.name.clone().unwrap();
    assert!(revision.starts_with("web-"), "{revision}");
    let creates: Vec<(&str, i64, i64)> = first
        .writes
        .iter()
        .map(|w| match w {
            SubsetWrite::Create { subset, kind, body } => {
                assert_eq!(*kind, SubsetKind::StatefulSet);
                let partition = body["spec"]["updateStrategy"]["rollingUpdate"]["partition"]
                    .as_i64()
                    .unwrap();
                (
                    subset.as_str(),
                    body["spec"]["replicas"].as_i64().unwrap(),
                    partition,
                )
            }
            other => panic!("unexpected {other:?}"),
        })
        .collect();
    // Partitions are capped at the allocation: a holds its only pod, b one of two.
    assert_eq!(creates, [("a", 1, 1), ("b", 2, 1), ("c", 3, 0)]);
    assert_eq!(first.events[0].message, "Create 3 Subset (StatefulSet)");
    let status = &first.status;
    assert_eq!(status.updated_revision, revision);
    assert_eq!(status.current_revision, revision);
    assert_eq!(status.observed_generation, 2);
    assert_eq!(status.label_selector, "app=web");
    let subsets: Vec<(&str, i32, i32)> = status
        .subset_statuses
        .iter()
        .map(|s| (s.name.as_str(), s.replicas, s.partition))
        .collect();
    assert_eq!(subsets, [("a", 1, 1), ("b", 2, 1), ("c", 3, 0)]);
    let condition = |t: &str| {
        status
            .conditions
            .iter()
            .find(|c| c.type_ == t)
            .map(|c| c.status.clone())
    };
    assert_eq!(condition("SubsetProvisioned").as_deref(), Some("True"));
    assert_eq!(condition("UnitedDeploymentUpdated").as_deref(), Some("True"));

    // Steady state: every workload as wanted, every pod at the revision → nothing to write.
    let mut ud = ud;
    ud.status = Some(first.status.clone());
    let (workloads, pods) = settle(&first, Vec::new());
    let pods: Vec<PodRecord> = pods
        .into_iter()
        .map(|mut p| {
            p.metadata
                .labels
                .insert("apps.kruise.io/controller-revision-hash".into(), revision.clone());
            p
        })
        .collect();
    let steady = run(&ud, &revisions, &workloads, &pods);
    assert!(steady.revisions.writes.is_empty());
    assert_eq!(steady.writes, []);
    assert_eq!(
        (
            steady.status.replicas,
            steady.status.ready_replicas,
            steady.status.updated_replicas
        ),
        (6, 6, 6)
    );
}

#[test]
fn a_template_change_updates_every_subset_and_partitions_hold_pods_back() {
    let v1 = ud("nginx:1");
    let first = run(&v1, &[], &[], &[]);
    let revisions = created_revisions(&first);
    let (workloads, pods) = settle(&first, Vec::new());
    let mut v2 = ud("nginx:2");
    v2.status = Some(first.status.clone());
    let second = run(&v2, &revisions, &workloads, &pods);
    let new_revision = match &second.revisions.writes[..] {
        [RevisionWrite::Create(r)] => r.metadata.name.clone().unwrap(),
        other => panic!("{other:?}"),
    };
    assert_ne!(Some(&new_revision), revisions[0].metadata.name.as_ref());
    let updates: Vec<(&str, &str, i64)> = second
        .writes
        .iter()
        .map(|w| match w {
            SubsetWrite::Update { subset, body, .. } => (
                subset.as_str(),
                body["spec"]["template"]["spec"]["containers"][0]["image"]
                    .as_str()
                    .unwrap(),
                body["spec"]["updateStrategy"]["rollingUpdate"]["partition"]
                    .as_i64()
                    .unwrap(),
            ),
            other => panic!("unexpected {other:?}"),
        })
        .collect();
    assert_eq!(
        updates,
        [("a", "nginx:2", 1), ("b", "nginx:2", 1), ("c", "nginx:2", 0)]
    );
    let status = &second.status;
    assert_eq!(status.updated_revision, new_revision);
    assert_eq!(
        status.current_revision, first.status.current_revision,
        "pods are still at the old revision"
    );
    let updated = status
        .conditions
        .iter()
        .find(|c| c.type_ == "UnitedDeploymentUpdated")
        .unwrap();
    assert_eq!(
        (updated.status.as_str(), updated.reason.as_str()),
        ("False", "UnitedDeploymentRevisionUpdating")
    );
    assert_eq!(
        status
            .conditions
            .iter()
            .find(|c| c.type_ == "SubsetUpdated")
            .unwrap()
            .status,
        "True"
    );

    // After the rollout: a's pod and one of b's are held back by the partitions; c is all new.
    let (workloads, pods) = settle(&second, workloads);
    v2.status = Some(second.status.clone());
    let mut all_revisions = revisions.clone();
    all_revisions.extend(created_revisions(&second));
    let third = run(&v2, &all_revisions, &workloads, &pods);
    assert_eq!(third.writes, []);
    assert_eq!((third.status.replicas, third.status.updated_replicas), (6, 4));
    assert_ne!(
        third.status.current_revision, new_revision,
        "2 pods are held back"
    );
}

#[test]
fn removed_subsets_other_kinds_and_duplicates_are_deleted() {
    let mut ud = ud("nginx:1");
    let first = run(&ud, &[], &[], &[]);
    let revisions = created_revisions(&first);
    let (mut workloads, pods) = settle(&first, Vec::new());
    let mut duplicate = workloads[0].clone();
    duplicate["metadata"]["name"] = json!("web-a-zzz");
    duplicate["metadata"]["creationTimestamp"] = json!("2026-11-30T00:00:00Z");
    workloads.push(duplicate);
    workloads.push(json!({"apiVersion": "apps.kruise.io/v1beta1", "kind": "CloneSet",
        "metadata": {"name": "web-a-old", "labels": {"apps.kruise.io/subset-name": "a"}}}));
    ud.spec.topology.subsets.retain(|s| s.name != "c");
    ud.spec.topology.subsets[1].replicas = None;
    ud.status = Some(first.status.clone());
    let p = run(&ud, &revisions, &workloads, &pods);
    let deletes: Vec<(&str, &str)> = p
        .writes
        .iter()
        .filter_map(|w| match w {
            SubsetWrite::Delete { name, why, .. } => Some((name.as_str(), *why)),
            _ => None,
        })
        .collect();
    assert_eq!(
        deletes,
        [
            ("web-a-old", "another template kind"),
            ("web-a-zzz", "duplicate"),
            ("web-c-2", "subset removed")
        ]
    );
    // b takes the 5 replicas c had: one update.
    let updates: Vec<i64> = p
        .writes
        .iter()
        .filter_map(|w| match w {
            SubsetWrite::Update { body, .. } => body["spec"]["replicas"].as_i64(),
            _ => None,
        })
        .collect();
    assert_eq!(updates, [5]);
    assert!(
        p.events
            .iter()
            .any(|e| e.message == "Delete 3 Subset (StatefulSet)")
    );
}

#[test]
fn an_allocation_error_touches_no_subset() {
    let mut ud = ud("nginx:1");
    ud.spec.topology.subsets[2].replicas =
        Some(k8s_openapi::apimachinery::pkg::util::intstr::IntOrString::Int(1));
    let p = run(&ud, &[], &[], &[]);
    assert!(p.allocation.is_err());
    assert_eq!(p.writes, []);
    assert_eq!(p.events.len(), 1);
    assert!(p.events[0].warning);
    assert_eq!(p.events[0].reason, "Failed SpecifySubsetReplicas");
    assert_eq!(
        p.events[0].message,
        "Specified subset replicas is ineffective: specified subsets' replica (4) is less than UnitedDeployment replica (6)"
    );
}
