//! Table tests of the Advanced DaemonSet planner: nodes `n1`…`n5`; "old" pods (Running, ready for an
//! hour) carry the hash of the template at image `v1`; the DaemonSet is at `v2` unless a test says otherwise.

use k8s_openapi::api::apps::v1::ControllerRevision;
use k8s_openapi::api::core::v1::{
    Container, Node, NodeSpec, PodReadinessGate, PodSpec, PodTemplateSpec, Taint,
};
use k8s_openapi::apimachinery::pkg::apis::meta::v1::{LabelSelector, ObjectMeta, Time};
use k8s_openapi::apimachinery::pkg::util::intstr::IntOrString;
use k8s_openapi::jiff::{SignedDuration, Timestamp};
use kruise_api::PodRecord;
use kruise_api::apps_v1beta1::{
    DaemonSet, DaemonSetScaleStrategy, DaemonSetSpec, DaemonSetUpdateStrategy, RollingUpdateDaemonSet,
    RollingUpdateType,
};
use kruise_api::common::{Lifecycle, LifecycleHook};
use kruise_api::pod::PodConditionRecord;
use kruise_api::pod::{PodRecordSpec, PodRecordStatus};

use super::revision::{hash_of, new_revision};
use super::{Input, Plan, plan};
use crate::action::Action;
use crate::expectations::Expectations;

fn now() -> Timestamp {
    "2026-01-01T12:00:00Z".parse().unwrap()
}

fn ago(secs: i64) -> Time {
    Time(now().checked_sub(SignedDuration::from_secs(secs)).unwrap())
}

fn ds(image: &str) -> DaemonSet {
    let labels = [("app".to_string(), "agent".to_string())].into();
    let mut ds = DaemonSet::new(
        "agent",
        DaemonSetSpec {
            selector: Some(LabelSelector {
                match_labels: Some(labels),
                ..Default::default()
            }),
            template: PodTemplateSpec {
                metadata: Some(ObjectMeta {
                    labels: Some([("app".to_string(), "agent".to_string())].into()),
                    ..Default::default()
                }),
                spec: Some(PodSpec {
                    containers: vec![Container {
                        name: "agent".into(),
                        image: Some(format!("agent:{image}")),
                        ..Default::default()
                    }],
                    ..Default::default()
                }),
            },
            ..Default::default()
        },
    );
    ds.metadata.namespace = Some("ns".into());
    ds.metadata.uid = Some("ds-uid".into());
    ds.metadata.generation = Some(1);
    ds
}

fn rolling(mut ds: DaemonSet, f: impl FnOnce(&mut RollingUpdateDaemonSet)) -> DaemonSet {
    let mut r = RollingUpdateDaemonSet::default();
    f(&mut r);
    ds.spec.update_strategy = DaemonSetUpdateStrategy {
        type_: None,
        rolling_update: Some(r),
    };
    ds
}

fn node(name: &str) -> Node {
    let mut n = Node::default();
    n.metadata.name = Some(name.into());
    n.metadata.labels = Some([("kubernetes.io/hostname".to_string(), name.to_string())].into());
    n
}

fn nodes(count: usize) -> Vec<Node> {
    (1..=count).map(|i| node(&format!("n{i}"))).collect()
}

fn pod(node: &str, hash: &str, ready: bool) -> PodRecord {
    let mut p = PodRecord::default();
    p.metadata.name = Some(format!("agent-{node}-{hash}"));
    p.metadata.namespace = Some("ns".into());
    p.metadata.uid = Some(format!("uid-{node}-{hash}"));
    p.metadata.creation_timestamp = Some(ago(3600));
    p.metadata.labels = kruise_api::pod::InternedMap::from(Some(
        [
            ("app".to_string(), "agent".to_string()),
            ("controller-revision-hash".to_string(), hash.to_string()),
        ]
        .into(),
    ));
    p.spec = Some(PodRecordSpec {
        node_name: Some(node.into()),
        ..Default::default()
    });
    p.status = Some(PodRecordStatus {
        phase: Some("Running".into()),
        conditions: Some(vec![PodConditionRecord {
            type_: "Ready".into(),
            status: if ready { "True" } else { "False" }.into(),
            last_transition_time: Some(ago(3600)),
            ..Default::default()
        }]),
        ..Default::default()
    });
    p
}

fn with_gate(mut p: PodRecord) -> PodRecord {
    p.spec.as_mut().unwrap().readiness_gates = Some(vec![PodReadinessGate {
        condition_type: "InPlaceUpdateReady".into(),
    }]);
    p
}

fn old_revision() -> (ControllerRevision, String) {
    let r = new_revision(&ds("v1"), 1, None);
    let h = hash_of(&r).to_owned();
    (r, h)
}

fn run(ds: &DaemonSet, nodes: &[Node], pods: &[PodRecord], revisions: &[ControllerRevision]) -> Plan {
    plan(
        &Input {
            ds,
            nodes,
            pods,
            revisions,
            now: now(),
            env_from_metadata: false,
        },
        &Expectations::default(),
    )
    .unwrap()
}

fn creates(plan: &Plan) -> Vec<String> {
    plan.actions
        .iter()
        .filter_map(|a| match a {
            Action::CreatePod(p) => {
                let spec = p.spec.as_ref().unwrap();
                let terms = &spec
                    .affinity
                    .as_ref()?
                    .node_affinity
                    .as_ref()?
                    .required_during_scheduling_ignored_during_execution
                    .as_ref()?
                    .node_selector_terms;
                Some(terms[0].match_fields.as_ref()?[0].values.as_ref()?[0].clone())
            }
            _ => None,
        })
        .collect()
}

fn deletes(plan: &Plan) -> Vec<String> {
    plan.actions
        .iter()
        .filter_map(|a| match a {
            Action::DeletePod { name, .. } => Some(name.clone()),
            _ => None,
        })
        .collect()
}

fn patched(plan: &Plan, reason: &str) -> Vec<String> {
    plan.actions
        .iter()
        .filter_map(|a| match a {
            Action::PatchPod { name, reason: r, .. } if *r == reason => Some(name.clone()),
            _ => None,
        })
        .collect()
}

fn old_pods(hash: &str, count: usize) -> Vec<PodRecord> {
    (1..=count).map(|i| pod(&format!("n{i}"), hash, true)).collect()
}

#[test]
fn one_pod_per_eligible_node_pinned_by_node_affinity() {
    let mut all = nodes(5);
    all[1].spec = Some(NodeSpec {
        taints: Some(vec![Taint {
            key: "dedicated".into(),
            effect: "NoSchedule".into(),
            ..Default::default()
        }]),
        ..Default::default()
    });
    all[3].metadata.labels = Some([("pool".to_string(), "other".to_string())].into());
    let mut d = ds("v1");
    let spec = d.spec.template.spec.as_mut().unwrap();
    spec.affinity = Some(
        serde_json::from_value(serde_json::json!({"nodeAffinity": {
        "requiredDuringSchedulingIgnoredDuringExecution": {"nodeSelectorTerms": [{"matchExpressions": [
            {"key": "pool", "operator": "NotIn", "values": ["other"]}]}]}}}))
        .unwrap(),
    );
    let p = run(&d, &all, &[], &[]);
    assert_eq!(creates(&p), ["n1", "n3", "n5"]);
    let Some(Action::CreatePod(first)) = p.actions.iter().find(|a| matches!(a, Action::CreatePod(_))) else {
        panic!("no create")
    };
    assert_eq!(first.metadata.generate_name.as_deref(), Some("agent-"));
    let names: std::collections::BTreeSet<_> = p
        .actions
        .iter()
        .filter_map(|a| match a {
            Action::CreatePod(p) => p.metadata.name.clone(),
            _ => None,
        })
        .collect();
    assert_eq!(names.len(), 3, "{names:?}");
    assert!(names.iter().all(|n| n.starts_with("agent-") && n.len() == 11));
    let owner = &first.metadata.owner_references.as_ref().unwrap()[0];
    assert_eq!((owner.kind.as_str(), owner.controller), ("DaemonSet", Some(true)));
    let spec = first.spec.as_ref().unwrap();
    let tolerations = spec.tolerations.as_ref().unwrap();
    assert!(
        tolerations
            .iter()
            .any(|t| t.key.as_deref() == Some("node.kubernetes.io/not-ready"))
    );
    let status = p.status.unwrap();
    assert_eq!(
        (
            status.desired_number_scheduled,
            status.current_number_scheduled,
            status.number_unavailable
        ),
        (3, 0, 3)
    );
    let hash = first.metadata.labels.as_ref().unwrap()["controller-revision-hash"].clone();
    assert_eq!(status.update_revision, hash);
    assert!(matches!(p.actions[0], Action::CreateRevision(_)));
}

#[test]
fn duplicates_go_and_the_oldest_pod_stays() {
    let d = ds("v1");
    let h = hash_of(&new_revision(&d, 1, None)).to_owned();
    let mut young = pod("n1", &h, true);
    young.metadata.name = Some("agent-young".into());
    young.metadata.creation_timestamp = Some(ago(10));
    let p = run(
        &d,
        &nodes(1),
        &[young, pod("n1", &h, true)],
        &[new_revision(&d, 1, None)],
    );
    assert_eq!(deletes(&p), ["agent-young"]);
    assert!(creates(&p).is_empty());
}

#[test]
fn an_untolerated_no_execute_taint_removes_the_pod_and_no_schedule_keeps_it() {
    let d = ds("v1");
    let r = new_revision(&d, 1, None);
    let h = hash_of(&r).to_owned();
    let mut all = nodes(2);
    for (n, effect) in all.iter_mut().zip(["NoExecute", "NoSchedule"]) {
        n.spec = Some(NodeSpec {
            taints: Some(vec![Taint {
                key: "maintenance".into(),
                effect: effect.into(),
                ..Default::default()
            }]),
            ..Default::default()
        });
    }
    let p = run(&d, &all, &old_pods(&h, 2), &[r]);
    assert_eq!(deletes(&p), [format!("agent-n1-{h}")]);
    let status = p.status.unwrap();
    assert_eq!(
        (status.desired_number_scheduled, status.number_misscheduled),
        (0, 2)
    );
}

#[test]
fn partition_keeps_the_lowest_names_and_max_unavailable_1_replaces_one_at_a_time() {
    let (rev, h) = old_revision();
    let d = rolling(ds("v2"), |r| {
        r.partition = Some(IntOrString::Int(2));
        r.max_unavailable = Some(IntOrString::Int(1));
    });
    let p = run(&d, &nodes(5), &old_pods(&h, 5), std::slice::from_ref(&rev));
    assert_eq!(deletes(&p), [format!("agent-n5-{h}")]);
    // n5 and n4 done: n3 is next; with n3 done too, nothing (n1, n2 are kept by the partition).
    let new = hash_of(&new_revision(&d, 2, None)).to_owned();
    let revs = [rev, new_revision(&d, 2, None)];
    let mut pods = old_pods(&h, 3);
    pods.extend([pod("n4", &new, true), pod("n5", &new, true)]);
    assert_eq!(
        deletes(&run(&d, &nodes(5), &pods, &revs)),
        [format!("agent-n3-{h}")]
    );
    pods[2] = pod("n3", &new, true);
    let p = run(&d, &nodes(5), &pods, &revs);
    assert!(deletes(&p).is_empty() && creates(&p).is_empty(), "{p:?}");
    assert_eq!(p.status.unwrap().updated_number_scheduled, 3);
}

#[test]
fn unavailable_old_pods_never_push_deletions_past_max_unavailable() {
    // OpenKruise (#1323) deletes every unavailable old pod outside the budget: 3 here.
    let (rev, h) = old_revision();
    let d = rolling(ds("v2"), |r| r.max_unavailable = Some(IntOrString::Int(1)));
    let mut pods = old_pods(&h, 5);
    for p in &mut pods[2..] {
        *p = pod(p.spec.as_ref().unwrap().node_name.as_deref().unwrap(), &h, false);
    }
    let p = run(&d, &nodes(5), &pods, &[rev]);
    assert_eq!(
        deletes(&p),
        [format!("agent-n5-{h}")],
        "one unavailable old pod, within the budget"
    );
}

#[test]
fn a_new_pod_in_flight_takes_the_budget() {
    let (rev, h) = old_revision();
    let d = rolling(ds("v2"), |r| r.max_unavailable = Some(IntOrString::Int(1)));
    let new = hash_of(&new_revision(&d, 2, None)).to_owned();
    let mut pods = old_pods(&h, 4);
    pods.push(pod("n5", &new, false));
    let p = run(&d, &nodes(5), &pods, &[rev, new_revision(&d, 2, None)]);
    assert!(deletes(&p).is_empty(), "{:?}", p.actions);
}

#[test]
fn percent_partition_resolves_against_the_live_desired_count() {
    // OpenKruise resolves 60% against status.desiredNumberScheduled (0 for a new DaemonSet): all
    // five nodes would get pods.
    let mut d = rolling(ds("v1"), |r| {
        r.partition = Some(IntOrString::String("60%".into()))
    });
    d.spec.scale_strategy = Some(DaemonSetScaleStrategy {
        partitioned_scaling: true,
    });
    let p = run(&d, &nodes(5), &[], &[]);
    assert_eq!(creates(&p), ["n1", "n2"]);
    assert_eq!(p.status.unwrap().number_unavailable, 5);
}

#[test]
fn percent_burst_resolves_against_the_live_desired_count() {
    // OpenKruise resolves 40% against the stored desired count (0): nothing would be created.
    let mut d = ds("v1");
    d.spec.burst_replicas = Some(IntOrString::String("40%".into()));
    assert_eq!(creates(&run(&d, &nodes(5), &[], &[])), ["n1", "n2"]);
}

#[test]
fn surge_starts_one_new_pod_beside_the_old_and_removes_the_old_once_available() {
    let (rev, h) = old_revision();
    let mut d = rolling(ds("v2"), |r| {
        r.max_surge = Some(IntOrString::Int(1));
        r.max_unavailable = Some(IntOrString::Int(0));
    });
    d.spec.min_ready_seconds = 30;
    let p = run(&d, &nodes(3), &old_pods(&h, 3), std::slice::from_ref(&rev));
    assert_eq!((creates(&p), deletes(&p)), (vec!["n3".to_string()], vec![]));
    let new = hash_of(&new_revision(&d, 2, None)).to_owned();
    let revs = [rev, new_revision(&d, 2, None)];
    // New pod ready for 10 s only: wait (requeue), keep the old one, start no other.
    let mut young = pod("n3", &new, true);
    young.status.as_mut().unwrap().conditions.as_mut().unwrap()[0].last_transition_time = Some(ago(10));
    let mut pods = old_pods(&h, 3);
    pods.push(young);
    let p = run(&d, &nodes(3), &pods, &revs);
    assert!(
        deletes(&p).is_empty() && creates(&p).is_empty(),
        "{:?}",
        p.actions
    );
    assert!(p.requeue_after.is_some_and(|d| d.as_secs() <= 21));
    // Available: the old pod goes.
    pods[3] = pod("n3", &new, true);
    assert_eq!(
        deletes(&run(&d, &nodes(3), &pods, &revs)),
        [format!("agent-n3-{h}")]
    );
}

#[test]
fn in_place_if_possible_patches_the_image_and_deletes_nothing() {
    let (rev, h) = old_revision();
    let d = rolling(ds("v2"), |r| {
        r.type_ = Some(RollingUpdateType::InPlaceIfPossible);
        r.max_unavailable = Some(IntOrString::Int(2));
    });
    let pods: Vec<PodRecord> = old_pods(&h, 3).into_iter().map(with_gate).collect();
    let p = run(&d, &nodes(3), &pods, &[rev]);
    assert!(deletes(&p).is_empty(), "{:?}", p.actions);
    let names = patched(&p, "inPlaceUpdate");
    assert_eq!(names, [format!("agent-n3-{h}"), format!("agent-n2-{h}")]);
    let patch = p
        .actions
        .iter()
        .find_map(|a| match a {
            Action::PatchPod { patch, .. } => Some(patch),
            _ => None,
        })
        .unwrap();
    assert_eq!(patch["spec"]["containers"][0]["image"], "agent:v2");
}

#[test]
fn env_fed_from_an_annotation_changes_in_place_only_on_pods_the_agent_serves() {
    // The template's annotation `version`, read by the container's env, goes from 1 to 2.
    let with_env = |version: &str| {
        let mut d = ds("v1");
        let template = &mut d.spec.template;
        template.metadata.as_mut().unwrap().annotations =
            Some([("version".to_string(), version.to_string())].into());
        template.spec.as_mut().unwrap().containers[0].env = Some(vec![k8s_openapi::api::core::v1::EnvVar {
            name: "VERSION".into(),
            value_from: Some(k8s_openapi::api::core::v1::EnvVarSource {
                field_ref: Some(k8s_openapi::api::core::v1::ObjectFieldSelector {
                    field_path: "metadata.annotations['version']".into(),
                    ..Default::default()
                }),
                ..Default::default()
            }),
            ..Default::default()
        }]);
        rolling(d, |r| {
            r.type_ = Some(RollingUpdateType::InPlaceIfPossible);
            r.max_unavailable = Some(IntOrString::Int(2));
        })
    };
    let rev = new_revision(&with_env("1"), 1, None);
    let h = hash_of(&rev).to_owned();
    let served = |p: PodRecord| {
        crate::pods::fixtures::annotated(
            p,
            kruise_core::containermeta::RUNTIME_CONTAINERS_META_KEY,
            r#"{"containers":[]}"#,
        )
    };
    let pods: Vec<PodRecord> = old_pods(&h, 2).into_iter().map(with_gate).map(served).collect();
    let plan_with = |env_from_metadata: bool, pods: &[PodRecord]| {
        plan(
            &Input {
                ds: &with_env("2"),
                nodes: &nodes(2),
                pods,
                revisions: std::slice::from_ref(&rev),
                now: now(),
                env_from_metadata,
            },
            &Expectations::default(),
        )
        .unwrap()
    };
    let p = plan_with(true, &pods);
    assert!(deletes(&p).is_empty(), "{:?}", p.actions);
    assert_eq!(patched(&p, "inPlaceUpdate").len(), 2);
    // Gates off, or no agent report on the pods: recreated.
    assert_eq!(deletes(&plan_with(false, &pods)).len(), 2);
    let unserved: Vec<PodRecord> = old_pods(&h, 2).into_iter().map(with_gate).collect();
    assert_eq!(deletes(&plan_with(true, &unserved)).len(), 2);
}

#[test]
fn pods_without_the_gate_are_recreated_under_in_place() {
    let (rev, h) = old_revision();
    let d = rolling(ds("v2"), |r| r.type_ = Some(RollingUpdateType::InPlaceIfPossible));
    let p = run(&d, &nodes(2), &old_pods(&h, 2), &[rev]);
    assert_eq!(deletes(&p), [format!("agent-n2-{h}")]);
}

#[test]
fn pre_delete_holds_a_hooked_pod_and_deletes_it_once_unhooked() {
    let (rev, h) = old_revision();
    let mut d = rolling(ds("v2"), |r| r.max_unavailable = Some(IntOrString::Int(1)));
    d.spec.lifecycle = Some(Lifecycle {
        pre_delete: Some(LifecycleHook {
            labels_handler: Some([("hold".to_string(), "true".to_string())].into()),
            ..Default::default()
        }),
        ..Default::default()
    });
    let hooked: Vec<PodRecord> = old_pods(&h, 2)
        .into_iter()
        .map(|p| crate::pods::fixtures::labelled(p, "hold", "true"))
        .collect();
    let p = run(&d, &nodes(2), &hooked, std::slice::from_ref(&rev));
    assert!(deletes(&p).is_empty(), "{:?}", p.actions);
    assert_eq!(patched(&p, "lifecycle"), [format!("agent-n2-{h}")]);
    // Held: left alone, nothing new on n2 and no other victim while it takes the budget.
    let mut held = hooked.clone();
    held[1] = crate::pods::fixtures::labelled(
        held[1].clone(),
        "lifecycle.apps.kruise.io/state",
        "PreparingDelete",
    );
    let p = run(&d, &nodes(2), &held, std::slice::from_ref(&rev));
    assert!(
        deletes(&p).is_empty() && creates(&p).is_empty(),
        "{:?}",
        p.actions
    );
    // Unhooked: deleted.
    held[1].metadata.labels.remove("hold");
    assert_eq!(
        deletes(&run(&d, &nodes(2), &held, &[rev])),
        [format!("agent-n2-{h}")]
    );
}

#[test]
fn paused_stops_the_rollout_but_not_new_nodes() {
    let (rev, h) = old_revision();
    let d = rolling(ds("v2"), |r| r.paused = Some(true));
    let p = run(&d, &nodes(3), &old_pods(&h, 2), &[rev]);
    assert_eq!(creates(&p), ["n3"]);
    assert!(deletes(&p).is_empty());
}

#[test]
fn on_delete_never_replaces_pods() {
    let (rev, h) = old_revision();
    let mut d = ds("v2");
    d.spec.update_strategy.type_ = Some(kruise_api::apps_v1beta1::DaemonSetUpdateStrategyType::OnDelete);
    let p = run(&d, &nodes(2), &old_pods(&h, 2), &[rev]);
    assert!(deletes(&p).is_empty() && creates(&p).is_empty());
}

#[test]
fn the_rollout_selector_limits_the_update_to_matching_nodes() {
    let (rev, h) = old_revision();
    let d = rolling(ds("v2"), |r| {
        r.max_unavailable = Some(IntOrString::Int(5));
        r.selector = Some(LabelSelector {
            match_labels: Some([("kubernetes.io/hostname".to_string(), "n2".to_string())].into()),
            ..Default::default()
        });
    });
    assert_eq!(
        deletes(&run(&d, &nodes(5), &old_pods(&h, 5), &[rev])),
        [format!("agent-n2-{h}")]
    );
}

#[test]
fn node_order_does_not_depend_on_input_order() {
    let (rev, h) = old_revision();
    let d = rolling(ds("v2"), |r| r.max_unavailable = Some(IntOrString::Int(2)));
    let mut shuffled = nodes(5);
    shuffled.swap(0, 4);
    shuffled.swap(1, 3);
    let mut pods = old_pods(&h, 5);
    pods.reverse();
    let a = run(&d, &nodes(5), &old_pods(&h, 5), std::slice::from_ref(&rev));
    let b = run(&d, &shuffled, &pods, &[rev]);
    assert_eq!(deletes(&a), deletes(&b));
    assert_eq!(deletes(&a), [format!("agent-n5-{h}"), format!("agent-n4-{h}")]);
}

#[test]
fn status_counts_first_pods_per_node() {
    let (rev, h) = old_revision();
    let mut d = ds("v1");
    d.metadata.generation = Some(4);
    d.spec.min_ready_seconds = 7200;
    let mut pods = old_pods(&h, 3);
    pods[2] = pod("n3", &h, false);
    let mut gone = pod("n4", &h, true);
    gone.metadata.deletion_timestamp = Some(ago(1));
    pods.push(gone);
    let p = run(&d, &nodes(4), &pods, &[rev]);
    let s = p.status.unwrap();
    assert_eq!(
        (
            s.desired_number_scheduled,
            s.current_number_scheduled,
            s.number_ready,
            s.number_available,
            s.updated_number_scheduled,
            s.number_unavailable,
            s.observed_generation
        ),
        (4, 4, 3, 0, 4, 4, 4)
    );
    assert_eq!(s.update_revision, h);
    assert_eq!(p.requeue_after.map(|d| d.as_secs()), Some(7200));
}

#[test]
fn an_existing_revision_with_the_same_data_is_reused_with_its_hash() {
    let d = ds("v1");
    let mut r = new_revision(&d, 3, None);
    r.metadata.name = Some("agent-6b8f9c7d5".into());
    r.metadata
        .labels
        .as_mut()
        .unwrap()
        .insert("controller-revision-hash".into(), "6b8f9c7d5".into());
    let p = run(&d, &nodes(1), &[], &[r]);
    assert!(!p.actions.iter().any(|a| matches!(a, Action::CreateRevision(_))));
    assert_eq!(p.status.unwrap().update_revision, "6b8f9c7d5");
}

#[test]
fn an_empty_selector_only_warns() {
    let mut d = ds("v1");
    d.spec.selector = Some(LabelSelector::default());
    let p = run(&d, &nodes(2), &[], &[]);
    assert!(matches!(
        &p.actions[..],
        [Action::Event {
            reason: "SelectingAll",
            ..
        }]
    ));
    assert!(p.status.is_none());
}

#[test]
fn a_failed_pod_is_deleted_with_a_warning() {
    let (rev, h) = old_revision();
    let d = ds("v1");
    let mut failed = pod("n1", &h, false);
    failed.status.as_mut().unwrap().phase = Some("Failed".into());
    let p = run(&d, &nodes(1), &[failed], &[rev]);
    assert_eq!(deletes(&p), [format!("agent-n1-{h}")]);
    assert!(p.actions.iter().any(|a| matches!(
        a,
        Action::Event {
            reason: "FailedDaemonPod",
            ..
        }
    )));
}

#[test]
fn an_unscheduled_pod_pinned_to_a_vanished_node_is_deleted() {
    let (rev, h) = old_revision();
    let mut p = pod("gone", &h, false);
    let spec = p.spec.as_mut().unwrap();
    spec.node_name = None;
    spec.pinned_node = Some("gone".into());
    let plan = run(&ds("v1"), &nodes(1), &[p], &[rev]);
    assert_eq!(deletes(&plan), [format!("agent-gone-{h}")]);
    assert_eq!(creates(&plan), ["n1"]);
}
