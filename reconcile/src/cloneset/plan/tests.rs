//! Whole-reconcile scenarios: a CloneSet, its pods and revisions in, the actions out.

mod env_from_metadata;
mod in_place;

use super::*;
use crate::cloneset::pod_template::seeded_ids;
use crate::cloneset::testing::cloneset;
use crate::pods::fixtures::{labelled, now, pod, unready};
use crate::pods::{CONTROLLER_REVISION_HASH, SPECIFIED_DELETE};
use k8s_openapi::api::core::v1::{EnvVar, EnvVarSource, ObjectFieldSelector};
use k8s_openapi::apimachinery::pkg::apis::meta::v1::ObjectMeta;
use k8s_openapi::apimachinery::pkg::util::intstr::IntOrString;
use kruise_api::apps_v1beta1::{
    CloneSetPodUpdateStrategyType as Policy, CloneSetUpdateStrategyType, RollingUpdateCloneSetStrategy,
};
use kruise_api::common::{
    IN_PLACE_UPDATE_READY, IN_PLACE_UPDATE_STATE_KEY, LIFECYCLE_STATE_KEY, Lifecycle, LifecycleHook,
};
use kruise_api::pod::{ContainerRecord, ContainerStatusRecord};

/// A CloneSet rolling from `app:1` (revision 1, current) to `app:2` (revision 2), with `replicas`
/// ready pods at revision 1.
struct World {
    cs: CloneSet,
    pods: Vec<PodRecord>,
    revisions: Vec<ControllerRevision>,
    pvcs: Vec<PersistentVolumeClaim>,
}

fn rev_name(r: &ControllerRevision) -> String {
    r.metadata.name.clone().unwrap()
}

fn with_containers(mut p: PodRecord, image: &str) -> PodRecord {
    let spec = p.spec.as_mut().unwrap();
    spec.containers = vec![ContainerRecord {
        name: "app".into(),
        image: Some(image.into()),
        ..Default::default()
    }];
    p.status.as_mut().unwrap().container_statuses = Some(vec![ContainerStatusRecord {
        name: "app".into(),
        image: image.into(),
        image_id: format!("sha256:{image}"),
        ready: true,
        ..Default::default()
    }]);
    p.spec.as_mut().unwrap().readiness_gates = Some(vec![k8s_openapi::api::core::v1::PodReadinessGate {
        condition_type: IN_PLACE_UPDATE_READY.into(),
    }]);
    p.status
        .as_mut()
        .unwrap()
        .conditions
        .as_mut()
        .unwrap()
        .push(kruise_api::pod::PodConditionRecord {
            type_: IN_PLACE_UPDATE_READY.into(),
            status: "True".into(),
            ..Default::default()
        });
    p
}

fn rollout(replicas: i32, policy: Policy, ru: RollingUpdateCloneSetStrategy) -> World {
    let old = cloneset(replicas);
    let v1 = revision::new_revision(&old, 1, None);
    let mut cs = old.clone();
    cs.spec.template.spec.as_mut().unwrap().containers[0].image = Some("app:2".into());
    cs.spec.update_strategy.rolling_update = Some(RollingUpdateCloneSetStrategy {
        pod_update_policy: Some(policy),
        ..ru
    });
    let v2 = revision::new_revision(&cs, 2, None);
    cs.status = Some(CloneSetStatus {
        observed_generation: 1,
        current_revision: Some(rev_name(&v1)),
        update_revision: Some(rev_name(&v2)),
        ..Default::default()
    });
    let pods = (0..replicas)
        .map(|i| with_containers(pod(&format!("demo-p{i}"), &rev_name(&v1)), "app:1"))
        .collect();
    World {
        cs,
        pods,
        revisions: vec![v1, v2],
        pvcs: vec![],
    }
}

fn run_with(w: &World, options: Options) -> Plan {
    let input = Input {
        cloneset: &w.cs,
        pods: &w.pods,
        revisions: &w.revisions,
        pvcs: &w.pvcs,
        now: now(),
        options,
    };
    plan(&input, &Expectations::default(), &mut seeded_ids(1)).unwrap()
}

fn run(w: &World) -> Plan {
    run_with(w, Options::default())
}

/// A one-line summary per action, for readable table expectations.
fn summary(p: &Plan) -> Vec<String> {
    p.actions
        .iter()
        .map(|a| match a {
            Action::CreateRevision(r) => format!("create revision {}", r.revision.unwrap_or(0)),
            Action::UpdateRevision(r) => format!("update revision {}", r.revision.unwrap_or(0)),
            Action::DeleteRevision { .. } => "delete revision".into(),
            Action::CreatePvc(c) => format!("create pvc {}", c.metadata.name.as_deref().unwrap()),
            Action::CreatePod(p) => {
                let rev = &p.metadata.labels.as_ref().unwrap()[CONTROLLER_REVISION_HASH];
                format!(
                    "create pod {} at {}",
                    p.metadata.name.as_deref().unwrap(),
                    rev.rsplit('-').next().unwrap()
                )
            }
            Action::CreatePodOnNode { node, .. } => format!("create pod on {node}"),
            Action::DeletePod { name, .. } => format!("delete pod {name}"),
            Action::DeletePvc { name } => format!("delete pvc {name}"),
            Action::PatchPvc { name, .. } => format!("patch pvc {name}"),
            Action::PatchPod { name, reason, .. } => format!("patch pod {name} {reason}"),
            Action::PatchPodStatus { name, .. } => format!("patch status {name}"),
            Action::SetPodsToDelete(names) => format!("podsToDelete {names:?}"),
            Action::Event { reason, .. } => format!("event {reason}"),
        })
        .collect()
}

fn short(r: &ControllerRevision) -> String {
    rev_name(r).rsplit('-').next().unwrap().to_owned()
}

fn ru() -> RollingUpdateCloneSetStrategy {
    RollingUpdateCloneSetStrategy::default()
}

#[test]
fn a_new_cloneset_creates_its_revision_then_its_pods() {
    let cs = cloneset(2);
    let w = World {
        cs,
        pods: vec![],
        revisions: vec![],
        pvcs: vec![],
    };
    let p = run(&w);
    let v1 = revision::new_revision(&w.cs, 1, None);
    let s = summary(&p);
    assert_eq!(s[0], "create revision 1");
    assert_eq!(s.len(), 3);
    assert!(
        s[1].starts_with("create pod demo-") && s[1].ends_with(&short(&v1)),
        "{s:?}"
    );
    assert!(p.scaled);
    let status = p.status.unwrap();
    assert_eq!(status.update_revision, Some(rev_name(&v1)));
    assert_eq!(status.label_selector.as_deref(), Some("app=demo"));
    assert_eq!((status.replicas, status.expected_updated_replicas), (0, 2));
}

#[test]
fn a_settled_cloneset_does_nothing() {
    let mut w = rollout(3, Policy::ReCreate, ru());
    let v2 = rev_name(&w.revisions[1]);
    w.pods = (0..3).map(|i| pod(&format!("demo-p{i}"), &v2)).collect();
    let p = run(&w);
    assert!(p.actions.is_empty(), "{:?}", summary(&p));
    let status = p.status.unwrap();
    assert_eq!(
        status.current_revision,
        Some(v2),
        "all pods updated: current becomes update"
    );
    assert_eq!(
        (
            status.ready_replicas,
            status.available_replicas,
            status.updated_available_replicas
        ),
        (3, 3, 3)
    );
}

#[test]
fn rollouts() {
    let pct = |v: &str| Some(IntOrString::String(v.into()));
    let rows: Vec<(&str, World, Vec<String>)> = vec![
        (
            "recreate: maxUnavailable 20% of 5 marks one pod for deletion",
            rollout(5, Policy::ReCreate, ru()),
            vec![
                "patch pod demo-p0 specifiedDelete".into(),
                "event SuccessfulUpdatePodReCreate".into(),
            ],
        ),
        (
            "recreate: maxUnavailable 2 marks two pods",
            rollout(
                5,
                Policy::ReCreate,
                RollingUpdateCloneSetStrategy {
                    max_unavailable: Some(IntOrString::Int(2)),
                    ..ru()
                },
            ),
            vec![
                "patch pod demo-p0 specifiedDelete".into(),
                "event SuccessfulUpdatePodReCreate".into(),
                "patch pod demo-p1 specifiedDelete".into(),
                "event SuccessfulUpdatePodReCreate".into(),
            ],
        ),
        (
            "partition 99% of 4 updates exactly one pod",
            rollout(
                4,
                Policy::ReCreate,
                RollingUpdateCloneSetStrategy {
                    partition: pct("99%"),
                    max_unavailable: pct("100%"),
                    ..ru()
                },
            ),
            vec![
                "patch pod demo-p0 specifiedDelete".into(),
                "event SuccessfulUpdatePodReCreate".into(),
            ],
        ),
        (
            "surge: one extra pod is created at the update revision and nothing is updated",
            rollout(
                4,
                Policy::ReCreate,
                RollingUpdateCloneSetStrategy {
                    max_surge: Some(IntOrString::Int(1)),
                    max_unavailable: Some(IntOrString::Int(0)),
                    ..ru()
                },
            ),
            vec!["create pod demo-{id} at {v2}".into()],
        ),
        (
            "paused: nothing moves",
            rollout(
                3,
                Policy::ReCreate,
                RollingUpdateCloneSetStrategy { paused: true, ..ru() },
            ),
            vec![],
        ),
        (
            "in place: the pod is patched in place",
            rollout(3, Policy::InPlaceIfPossible, ru()),
            vec![
                "patch status demo-p0".into(),
                "patch pod demo-p0 inPlaceUpdate".into(),
                "event SuccessfulUpdatePodInPlace".into(),
            ],
        ),
    ];
    for (name, w, want) in rows {
        let p = run(&w);
        let v2 = short(&w.revisions[1]);
        let mut got = summary(&p);
        for g in &mut got {
            if let Some(rest) = g.strip_prefix("create pod demo-") {
                *g = format!("create pod demo-{{id}}{}", &rest[5..]).replace(&v2, "{v2}");
            }
        }
        assert_eq!(got, want, "{name}");
    }
}

#[test]
fn on_delete_only_replaces_deleted_pods() {
    let mut w = rollout(3, Policy::ReCreate, ru());
    w.cs.spec.update_strategy.type_ = Some(CloneSetUpdateStrategyType::OnDelete);
    assert!(run(&w).actions.is_empty());
    w.pods.pop();
    let p = run(&w);
    let v2 = short(&w.revisions[1]);
    assert!(
        matches!(&summary(&p)[..], [one] if one.ends_with(&v2)),
        "the replacement is at the update revision"
    );
}

#[test]
fn a_specified_delete_pod_is_deleted_with_its_pvcs_and_replaced_next_pass() {
    let mut w = rollout(3, Policy::ReCreate, ru());
    w.pods[1] = labelled(w.pods[1].clone(), SPECIFIED_DELETE, "true");
    w.pvcs = vec![PersistentVolumeClaim {
        metadata: ObjectMeta {
            name: Some("data-demo-p1".into()),
            labels: Some([(CLONESET_INSTANCE_ID.to_string(), "p1".to_string())].into()),
            ..Default::default()
        },
        ..Default::default()
    }];
    assert_eq!(
        summary(&run(&w)),
        vec!["delete pod demo-p1", "delete pvc data-demo-p1"]
    );
    w.pods.remove(1);
    w.pvcs.clear();
    let s = summary(&run(&w));
    assert_eq!(s.len(), 1);
    assert!(s[0].ends_with(&short(&w.revisions[1])), "{s:?}");
}

#[test]
fn pods_to_delete_are_deleted_and_the_list_trimmed() {
    let mut w = rollout(3, Policy::ReCreate, ru());
    w.cs.spec.scale_strategy.pods_to_delete = Some(vec!["demo-p2".into(), "demo-gone".into()]);
    assert_eq!(
        summary(&run(&w)),
        vec!["delete pod demo-p2", "podsToDelete [\"demo-p2\"]"]
    );
}

fn pre_delete_hook() -> Lifecycle {
    Lifecycle {
        pre_delete: Some(LifecycleHook {
            labels_handler: Some([("hold".to_string(), "true".to_string())].into()),
            ..Default::default()
        }),
        ..Default::default()
    }
}

#[test]
fn scale_down_prefers_unready_pods_and_respects_the_pre_delete_hook() {
    let mut w = rollout(3, Policy::ReCreate, ru());
    let v2 = rev_name(&w.revisions[1]);
    w.pods = (0..3).map(|i| pod(&format!("demo-p{i}"), &v2)).collect();
    w.cs.spec.replicas = Some(2);
    w.pods[2] = unready(w.pods[2].clone());
    assert_eq!(summary(&run(&w)), vec!["delete pod demo-p2"]);
    w.cs.spec.lifecycle = Some(pre_delete_hook());
    w.pods[2] = labelled(w.pods[2].clone(), "hold", "true");
    assert_eq!(
        summary(&run(&w)),
        vec!["patch pod demo-p2 lifecycle"],
        "hooked: PreparingDelete, not deleted"
    );
    w.pods[2] = labelled(w.pods[2].clone(), LIFECYCLE_STATE_KEY, "PreparingDelete");
    assert!(run(&w).actions.is_empty(), "still hooked: wait");
    w.pods[2].metadata.labels.remove("hold");
    assert_eq!(summary(&run(&w)), vec!["delete pod demo-p2"], "unhooked: deleted");
}

#[test]
fn raising_replicas_brings_a_preparing_delete_pod_back() {
    let mut w = rollout(3, Policy::ReCreate, ru());
    w.cs.spec.lifecycle = Some(pre_delete_hook());
    w.pods[2] = labelled(
        labelled(w.pods[2].clone(), "hold", "true"),
        LIFECYCLE_STATE_KEY,
        "PreparingDelete",
    );
    let p = run(&w);
    assert_eq!(summary(&p), vec!["patch pod demo-p2 lifecycle"]);
    let Action::PatchPod { patch, .. } = &p.actions[0] else {
        unreachable!()
    };
    assert_eq!(
        patch["metadata"]["labels"][LIFECYCLE_STATE_KEY],
        "PreparingNormal"
    );
}

#[test]
fn unobserved_writes_make_the_plan_wait() {
    let w = rollout(3, Policy::ReCreate, ru());
    let mut e = Expectations::default();
    e.expect(
        &Action::DeletePod {
            name: "demo-p0".into(),
            uid: None,
        },
        now(),
    );
    let input = Input {
        cloneset: &w.cs,
        pods: &w.pods,
        revisions: &w.revisions,
        pvcs: &w.pvcs,
        now: now(),
        options: Options::default(),
    };
    let p = plan(&input, &e, &mut seeded_ids(1)).unwrap();
    assert!(p.waiting && p.actions.is_empty() && p.status.is_none());
    assert_eq!(p.requeue_after, Some(Duration::from_secs(300)));
}

#[test]
fn pods_that_left_the_selector_are_released_and_orphan_pvcs_deleted() {
    let mut w = rollout(2, Policy::ReCreate, ru());
    let v2 = rev_name(&w.revisions[1]);
    w.pods = vec![
        pod("demo-p0", &v2),
        pod("demo-p1", &v2),
        labelled(pod("demo-p2", &v2), "app", "other"),
    ];
    w.pvcs = vec![PersistentVolumeClaim {
        metadata: ObjectMeta {
            name: Some("data-demo-zz".into()),
            labels: Some([(CLONESET_INSTANCE_ID.to_string(), "zz".to_string())].into()),
            ..Default::default()
        },
        ..Default::default()
    }];
    assert_eq!(
        summary(&run(&w)),
        vec!["patch pod demo-p2 release", "delete pvc data-demo-zz"]
    );
}

#[test]
fn history_beyond_the_limit_is_deleted() {
    let mut w = rollout(1, Policy::ReCreate, ru());
    let v2 = rev_name(&w.revisions[1]);
    w.pods = vec![pod("demo-p0", &v2)];
    w.cs.spec.revision_history_limit = Some(0);
    w.cs.status.as_mut().unwrap().current_revision = Some(v2);
    assert_eq!(summary(&run(&w)), vec!["delete revision"]);
}

#[test]
fn reverting_the_template_reuses_the_old_revision_and_its_pods() {
    let mut w = rollout(2, Policy::ReCreate, ru());
    let (v1, v2) = (rev_name(&w.revisions[0]), rev_name(&w.revisions[1]));
    w.cs.spec.template.spec.as_mut().unwrap().containers[0].image = Some("app:1".into());
    w.cs.status.as_mut().unwrap().current_revision = Some(v2.clone());
    w.pods = vec![pod("demo-p0", &v1), pod("demo-p1", &v2)];
    let p = run(&w);
    let s = summary(&p);
    assert_eq!(
        s[0], "update revision 3",
        "the equal old revision is bumped, not recreated"
    );
    assert_eq!(
        s[1..],
        [
            "patch pod demo-p1 specifiedDelete",
            "event SuccessfulUpdatePodReCreate"
        ]
    );
    let status = p.status.unwrap();
    assert_eq!(status.update_revision, Some(v1));
    assert_eq!(status.updated_replicas, 1);
}

#[test]
fn without_reuse_the_pvc_of_a_finished_pod_is_handed_to_the_pod() {
    let mut w = rollout(1, Policy::ReCreate, ru());
    let v2 = rev_name(&w.revisions[1]);
    let mut done = pod("demo-old", &v2);
    done.status.as_mut().unwrap().phase = Some("Failed".into());
    w.pods = vec![pod("demo-p0", &v2), done];
    w.pvcs = vec![PersistentVolumeClaim {
        metadata: ObjectMeta {
            name: Some("data-demo-old".into()),
            labels: Some([(CLONESET_INSTANCE_ID.to_string(), "old".to_string())].into()),
            ..Default::default()
        },
        ..Default::default()
    }];
    let p = run(&w);
    let Action::PatchPvc { name, patch } = &p.actions[0] else {
        panic!("{:?}", summary(&p))
    };
    assert_eq!(name, "data-demo-old");
    let refs = patch["metadata"]["ownerReferences"].as_array().unwrap();
    assert_eq!(refs[0], serde_json::json!({"$patch": "delete", "uid": "cs-uid"}));
    assert_eq!(
        (refs[1]["kind"].as_str(), refs[1]["uid"].as_str()),
        (Some("Pod"), Some("uid-demo-old"))
    );
    w.cs.spec.scale_strategy.enable_pvc_reuse = true;
    assert!(
        run(&w).actions.is_empty(),
        "with reuse the PVC stays for the next pod of that id"
    );
}

#[test]
fn an_updated_pod_behind_the_target_goes_back_to_preparing_update_with_its_handlers() {
    let mut w = rollout(
        1,
        Policy::InPlaceIfPossible,
        RollingUpdateCloneSetStrategy {
            max_unavailable: Some(IntOrString::Int(1)),
            ..ru()
        },
    );
    w.cs.spec.lifecycle = Some(Lifecycle {
        in_place_update: Some(LifecycleHook {
            labels_handler: Some([("hold".to_string(), "true".to_string())].into()),
            ..Default::default()
        }),
        ..Default::default()
    });
    // Updated and unhooked (so refresh leaves it), but behind the update revision.
    w.pods[0] = labelled(w.pods[0].clone(), LIFECYCLE_STATE_KEY, "Updated");
    let p = run(&w);
    let Some(Action::PatchPod {
        patch,
        reason: "lifecycle",
        ..
    }) = p.actions.first()
    else {
        panic!("{:?}", summary(&p))
    };
    let labels = patch["metadata"]["labels"].as_object().unwrap();
    assert_eq!(labels[LIFECYCLE_STATE_KEY], "PreparingUpdate");
    assert_eq!(labels["hold"], "true", "the handler label is put back");
    assert!(
        patch["metadata"].get("finalizers").is_none(),
        "no null written for absent handlers"
    );
}
