mod env_from_metadata;

use super::*;
use crate::pods::fixtures::{labelled, now, unready};
use crate::statefulset::revision::new_revision;
use crate::statefulset::testing::{pod, revision, rolled, set};
use k8s_openapi::api::core::v1::PersistentVolumeClaimSpec;
use k8s_openapi::apimachinery::pkg::apis::meta::v1::{ObjectMeta, OwnerReference};
use k8s_openapi::apimachinery::pkg::util::intstr::IntOrString;
use kruise_api::apps_v1beta1::{
    POD_INDEX_LABEL, PersistentVolumeClaimRetentionPolicyType as Retention, PodManagementPolicyType,
    PodUpdateStrategyType, STATEFULSET_POD_NAME_LABEL, StatefulSetOrdinals,
    StatefulSetPersistentVolumeClaimRetentionPolicy, StatefulSetScaleStrategy, UnorderedUpdateStrategy,
};
use kruise_api::common::{
    LIFECYCLE_STATE_KEY, Lifecycle, LifecycleHook, UpdatePriorityStrategy, UpdatePriorityWeightTerm,
};

fn run(
    s: &StatefulSet,
    pods: &[PodRecord],
    revisions: &[ControllerRevision],
    pvcs: &[PersistentVolumeClaim],
) -> Plan {
    let input = Input {
        set: s,
        pods,
        revisions,
        pvcs,
        now: now(),
        env_from_metadata: false,
    };
    plan(&input, &Expectations::default()).expect("plannable")
}

fn created(plan: &Plan) -> Vec<String> {
    plan.actions
        .iter()
        .filter_map(|a| match a {
            Action::CreatePod(p) => p.metadata.name.clone(),
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

fn patched(plan: &Plan, reason: &str) -> Vec<String> {
    plan.actions
        .iter()
        .filter_map(|a| match a {
            Action::PatchPod { name, reason: r, .. } if *r == reason => Some(name.clone()),
            _ => None,
        })
        .collect()
}

fn parallel(mut s: StatefulSet) -> StatefulSet {
    s.spec.pod_management_policy = Some(PodManagementPolicyType::Parallel);
    s
}

fn rolling(s: &mut StatefulSet) -> &mut kruise_api::apps_v1beta1::RollingUpdateStatefulSetStrategy {
    s.spec.update_strategy.rolling_update.get_or_insert_default()
}

#[test]
fn ordered_ready_creates_one_pod_per_pass_and_waits_for_it() {
    let s = set(3);
    let rev = revision(&s);
    let name = rev.metadata.name.clone().unwrap();
    let p = run(&s, &[], std::slice::from_ref(&rev), &[]);
    assert_eq!(created(&p), ["web-0"], "only the first ordinal");
    let Some(Action::CreatePod(pod0)) = p.actions.iter().find(|a| matches!(a, Action::CreatePod(_))) else {
        unreachable!()
    };
    let labels = pod0.metadata.labels.clone().unwrap();
    assert_eq!(labels[STATEFULSET_POD_NAME_LABEL], "web-0");
    assert_eq!(labels[POD_INDEX_LABEL], "0");
    assert_eq!(labels[crate::pods::CONTROLLER_REVISION_HASH], name);
    assert_eq!(labels[LIFECYCLE_STATE_KEY], "Normal");
    assert_eq!(pod0.spec.as_ref().unwrap().hostname.as_deref(), Some("web-0"));
    assert!(p.halted);

    let ready = run(&s, &[pod(0, &name)], std::slice::from_ref(&rev), &[]);
    assert_eq!(created(&ready), ["web-1"], "the next once web-0 is available");
    let waiting = run(&s, &[unready(pod(0, &name))], std::slice::from_ref(&rev), &[]);
    assert!(created(&waiting).is_empty(), "nothing while web-0 is not ready");
}

#[test]
fn parallel_creates_every_missing_pod_and_the_budget_limits_it() {
    let s = parallel(set(5));
    let rev = revision(&s);
    let p = run(&s, &[], std::slice::from_ref(&rev), &[]);
    assert_eq!(created(&p), ["web-0", "web-1", "web-2", "web-3", "web-4"]);

    let mut budgeted = s.clone();
    budgeted.spec.scale_strategy = Some(StatefulSetScaleStrategy {
        max_unavailable: Some(IntOrString::Int(2)),
    });
    let p = run(&budgeted, &[], std::slice::from_ref(&rev), &[]);
    assert_eq!(created(&p), ["web-0", "web-1"], "two at a time");
    let name = rev.metadata.name.clone().unwrap();
    let p = run(
        &budgeted,
        &[unready(pod(0, &name)), pod(1, &name)],
        std::slice::from_ref(&rev),
        &[],
    );
    assert_eq!(created(&p), ["web-2"], "one unready pod spends one of the two");
}

#[test]
fn a_failed_pod_is_replaced_even_with_a_budget_of_one() {
    let mut s = parallel(set(2));
    s.spec.scale_strategy = Some(StatefulSetScaleStrategy {
        max_unavailable: Some(IntOrString::String("10%".into())),
    });
    let rev = revision(&s);
    let name = rev.metadata.name.clone().unwrap();
    let mut failed = pod(0, &name);
    failed.status.as_mut().unwrap().phase = Some("Failed".into());
    let p = run(&s, &[failed, pod(1, &name)], std::slice::from_ref(&rev), &[]);
    assert_eq!(deleted(&p), ["web-0"]);
}

#[test]
fn reserved_ordinals_and_the_start_ordinal_shape_the_range() {
    let cases: [(&str, Vec<IntOrString>, i32, Vec<&str>); 4] = [
        (
            "reserve [1]",
            vec![IntOrString::Int(1)],
            0,
            vec!["web-0", "web-2", "web-3"],
        ),
        (
            "reserve 0-1",
            vec![IntOrString::String("0-1".into())],
            0,
            vec!["web-2", "web-3", "web-4"],
        ),
        ("start 10", vec![], 10, vec!["web-10", "web-11", "web-12"]),
        (
            "start 2, reserve [3]",
            vec![IntOrString::Int(3)],
            2,
            vec!["web-2", "web-4", "web-5"],
        ),
    ];
    for (what, reserve, start, want) in cases {
        let mut s = parallel(set(3));
        s.spec.reserve_ordinals = Some(reserve);
        s.spec.ordinals = Some(StatefulSetOrdinals { start });
        let rev = revision(&s);
        assert_eq!(created(&run(&s, &[], &[rev], &[])), want, "{what}");
    }
}

#[test]
fn reserving_a_live_ordinal_deletes_it_and_creates_the_next() {
    let mut s = parallel(set(3));
    let rev = revision(&s);
    let name = rev.metadata.name.clone().unwrap();
    s.spec.reserve_ordinals = Some(vec![IntOrString::Int(1)]);
    let pods = [pod(0, &name), pod(1, &name), pod(2, &name)];
    let p = run(&s, &pods, &[rev], &[]);
    assert_eq!(created(&p), ["web-3"]);
    assert_eq!(deleted(&p), ["web-1"]);
}

#[test]
fn scale_down_goes_from_the_highest_ordinal_one_at_a_time_when_ordered() {
    let s = set(2);
    let rev = revision(&s);
    let name = rev.metadata.name.clone().unwrap();
    let pods: Vec<PodRecord> = (0..5).map(|o| pod(o, &name)).collect();
    assert_eq!(
        deleted(&run(&s, &pods, std::slice::from_ref(&rev), &[])),
        ["web-4"]
    );
    assert_eq!(
        deleted(&run(&parallel(s), &pods, &[rev], &[])),
        ["web-4", "web-3", "web-2"]
    );
}

fn claim_template(s: &mut StatefulSet) {
    s.spec.volume_claim_templates = Some(vec![PersistentVolumeClaim {
        metadata: ObjectMeta {
            name: Some("data".into()),
            ..Default::default()
        },
        spec: Some(PersistentVolumeClaimSpec {
            access_modes: Some(vec!["ReadWriteOnce".into()]),
            ..Default::default()
        }),
        ..Default::default()
    }]);
}

fn claim(name: &str, owners: Vec<OwnerReference>) -> PersistentVolumeClaim {
    PersistentVolumeClaim {
        metadata: ObjectMeta {
            name: Some(name.into()),
            owner_references: Some(owners),
            ..Default::default()
        },
        spec: Some(PersistentVolumeClaimSpec {
            access_modes: Some(vec!["ReadWriteOnce".into()]),
            ..Default::default()
        }),
        ..Default::default()
    }
}

#[test]
fn claims_are_created_before_their_pod_and_mounted_by_it() {
    let mut s = set(1);
    claim_template(&mut s);
    let rev = revision(&s);
    let p = run(&s, &[], &[rev], &[]);
    let kinds: Vec<&str> = p
        .actions
        .iter()
        .filter_map(|a| match a {
            Action::CreatePvc(c) => c.metadata.name.as_deref(),
            Action::CreatePod(p) => p.metadata.name.as_deref(),
            _ => None,
        })
        .collect();
    assert_eq!(kinds, ["data-web-0", "web-0"]);
    let Some(Action::CreatePod(pod0)) = p.actions.iter().find(|a| matches!(a, Action::CreatePod(_))) else {
        unreachable!()
    };
    let volumes = pod0.spec.as_ref().unwrap().volumes.clone().unwrap();
    assert_eq!(volumes[0].name, "data");
    assert_eq!(
        volumes[0].persistent_volume_claim.as_ref().unwrap().claim_name,
        "data-web-0"
    );
}

#[test]
fn when_scaled_delete_hands_claims_of_removed_ordinals_to_their_pods() {
    let mut s = parallel(set(1));
    claim_template(&mut s);
    s.spec.persistent_volume_claim_retention_policy = Some(StatefulSetPersistentVolumeClaimRetentionPolicy {
        when_deleted: Some(Retention::Retain),
        when_scaled: Some(Retention::Delete),
    });
    let rev = revision(&s);
    let name = rev.metadata.name.clone().unwrap();
    let pvcs = [claim("data-web-0", vec![]), claim("data-web-1", vec![])];
    let p = run(
        &s,
        &[pod(0, &name), pod(1, &name)],
        std::slice::from_ref(&rev),
        &pvcs,
    );
    let patch_then_delete: Vec<String> = p
        .actions
        .iter()
        .filter_map(|a| match a {
            Action::PatchPvc { name, patch } => {
                assert_eq!(patch["metadata"]["ownerReferences"][0]["uid"], "uid-web-1");
                Some(format!("patch {name}"))
            }
            Action::DeletePod { name, .. } => Some(format!("delete {name}")),
            _ => None,
        })
        .collect();
    assert_eq!(patch_then_delete, ["patch data-web-1", "delete web-1"]);

    // Scaling back up waits while the claim still belongs to the old web-1.
    let mut up = s.clone();
    up.spec.replicas = Some(2);
    let old_owner = OwnerReference {
        api_version: "v1".into(),
        kind: "Pod".into(),
        name: "web-1".into(),
        uid: "uid-web-1".into(),
        ..Default::default()
    };
    let pvcs = [claim("data-web-0", vec![]), claim("data-web-1", vec![old_owner])];
    assert!(created(&run(&up, &[pod(0, &name)], &[rev], &pvcs)).is_empty());
}

#[test]
fn ordered_rolling_update_recreates_the_highest_ordinal_first() {
    let mut s = set(3);
    let (revs, old, new) = rolled(&mut s);
    let pods = [pod(0, &old), pod(1, &old), pod(2, &old)];
    let p = run(&s, &pods, &revs, &[]);
    assert_eq!(deleted(&p), ["web-2"]);
    // web-2 came back at the update revision, not ready yet: nothing else moves.
    let pods = [pod(0, &old), pod(1, &old), unready(pod(2, &new))];
    let p = run(&s, &pods, &revs, &[]);
    assert!(deleted(&p).is_empty() && p.halted);
}

#[test]
fn recreated_pods_below_the_partition_come_back_current() {
    let mut s = parallel(set(4));
    let (revs, old, new) = rolled(&mut s);
    rolling(&mut s).partition = Some(2);
    s.spec.reserve_ordinals = Some(vec![IntOrString::Int(1)]);
    // Slots [0, 2, 3, 4]; web-2 is missing.
    let pods = [pod(0, &old), pod(3, &new), pod(4, &new)];
    let p = run(&s, &pods, &revs, &[]);
    let Some(Action::CreatePod(p2)) = p.actions.iter().find(|a| matches!(a, Action::CreatePod(_))) else {
        panic!("web-2 is created")
    };
    assert_eq!(p2.metadata.name.as_deref(), Some("web-2"));
    assert_eq!(
        p2.metadata.labels.as_ref().unwrap()[crate::pods::CONTROLLER_REVISION_HASH],
        old
    );
}

#[test]
fn in_place_update_with_a_partition_patches_only_ordinals_at_or_above_it() {
    let mut s = parallel(set(5));
    let (revs, old, new) = rolled(&mut s);
    let r = rolling(&mut s);
    r.partition = Some(3);
    r.max_unavailable = Some(IntOrString::Int(5));
    r.pod_update_policy = Some(PodUpdateStrategyType::InPlaceIfPossible);
    let pods: Vec<PodRecord> = (0..5).map(|o| pod(o, &old)).collect();
    let p = run(&s, &pods, &revs, &[]);
    assert_eq!(patched(&p, "inPlaceUpdate"), ["web-4", "web-3"]);
    assert!(deleted(&p).is_empty());
    let Some(Action::PatchPod { patch, .. }) =
        p.actions.iter().find(|a| matches!(a, Action::PatchPod { .. }))
    else {
        unreachable!()
    };
    let mut applied = serde_json::to_value(&pods[4]).unwrap();
    crate::inplace::merge(&mut applied, patch.clone());
    assert_eq!(
        applied["metadata"]["labels"][crate::pods::CONTROLLER_REVISION_HASH],
        new.as_str()
    );
    assert_eq!(applied["spec"]["containers"][0]["image"], "app:2");
    assert_eq!(applied["metadata"]["labels"][LIFECYCLE_STATE_KEY], "Updating");
}

#[test]
fn max_unavailable_rounds_down_and_counts_every_unavailable_pod() {
    let mut s = parallel(set(5));
    let (revs, old, _) = rolled(&mut s);
    let r = rolling(&mut s);
    r.max_unavailable = Some(IntOrString::String("50%".into())); // 2.5 → 2
    let pods: Vec<PodRecord> = (0..5).map(|o| pod(o, &old)).collect();
    assert_eq!(deleted(&run(&s, &pods, &revs, &[])), ["web-4", "web-3"]);
    let mut with_broken = pods.clone();
    with_broken[0] = unready(pods[0].clone());
    assert_eq!(
        deleted(&run(&s, &with_broken, &revs, &[])),
        ["web-4"],
        "web-0 below takes one of the two"
    );
}

#[test]
fn a_slot_whose_pod_is_gone_counts_against_max_unavailable() {
    let mut s = parallel(set(5));
    let (revs, old, _) = rolled(&mut s);
    rolling(&mut s).max_unavailable = Some(IntOrString::Int(2));
    // web-4 was deleted by the last pass and is not back yet: one more delete, not two.
    let pods: Vec<PodRecord> = (0..4).map(|o| pod(o, &old)).collect();
    assert_eq!(deleted(&run(&s, &pods, &revs, &[])), ["web-3"]);
}

#[test]
fn unordered_update_follows_the_priority_and_the_partition_quota() {
    let mut s = parallel(set(4));
    let (revs, old, _) = rolled(&mut s);
    let r = rolling(&mut s);
    r.partition = Some(1);
    r.max_unavailable = Some(IntOrString::Int(4));
    r.unordered_update = Some(UnorderedUpdateStrategy {
        priority_strategy: Some(UpdatePriorityStrategy {
            weight_priority: Some(vec![UpdatePriorityWeightTerm {
                weight: 50,
                match_selector: k8s_openapi::apimachinery::pkg::apis::meta::v1::LabelSelector {
                    match_labels: Some([("zone".to_string(), "a".to_string())].into()),
                    ..Default::default()
                },
            }]),
            ..Default::default()
        }),
    });
    let pods = [
        labelled(pod(0, &old), "zone", "a"),
        pod(1, &old),
        labelled(pod(2, &old), "zone", "a"),
        pod(3, &old),
    ];
    assert_eq!(deleted(&run(&s, &pods, &revs, &[])), ["web-2", "web-0", "web-3"]);
}

#[test]
fn specified_delete_ignores_the_partition_and_paused_stops_it() {
    let mut s = set(3);
    let (revs, old, _) = rolled(&mut s);
    rolling(&mut s).partition = Some(3);
    let pods = [
        labelled(pod(0, &old), crate::pods::SPECIFIED_DELETE, "true"),
        pod(1, &old),
        pod(2, &old),
    ];
    assert_eq!(deleted(&run(&s, &pods, &revs, &[])), ["web-0"]);
    rolling(&mut s).paused = true;
    assert!(deleted(&run(&s, &pods, &revs, &[])).is_empty());
}

fn pre_delete_hook(s: &mut StatefulSet) {
    s.spec.lifecycle = Some(Lifecycle {
        pre_delete: Some(LifecycleHook {
            labels_handler: Some([("hold".to_string(), "true".to_string())].into()),
            ..Default::default()
        }),
        ..Default::default()
    });
}

#[test]
fn a_pre_delete_hook_holds_the_pod_until_released() {
    let mut s = set(1);
    pre_delete_hook(&mut s);
    let rev = revision(&s);
    let name = rev.metadata.name.clone().unwrap();
    let hooked = labelled(pod(1, &name), "hold", "true");
    let p = run(
        &s,
        &[pod(0, &name), hooked.clone()],
        std::slice::from_ref(&rev),
        &[],
    );
    assert!(deleted(&p).is_empty());
    assert_eq!(patched(&p, "lifecycle"), ["web-1"], "moved to PreparingDelete");

    let held = labelled(hooked, LIFECYCLE_STATE_KEY, "PreparingDelete");
    assert!(
        deleted(&run(
            &s,
            &[pod(0, &name), held.clone()],
            std::slice::from_ref(&rev),
            &[]
        ))
        .is_empty()
    );

    // Released while web-0 is unready (OrderedReady halted): deleted anyway.
    let mut released = held.clone();
    released.metadata.labels.remove("hold");
    let p = run(
        &s,
        &[unready(pod(0, &name)), released],
        std::slice::from_ref(&rev),
        &[],
    );
    assert_eq!(deleted(&p), ["web-1"]);

    // Back in range: Normal again.
    let mut up = s.clone();
    up.spec.replicas = Some(2);
    let p = run(&up, &[pod(0, &name), held], &[rev], &[]);
    assert_eq!(patched(&p, "lifecycle"), ["web-1"]);
    assert!(deleted(&p).is_empty());
}

#[test]
fn a_rollback_bumps_the_old_revision() {
    let mut s = set(2);
    let (mut revs, old, _) = rolled(&mut s);
    s.spec.template.spec.as_mut().unwrap().containers[0].image = Some("app:1".into());
    revs[0].revision = Some(1);
    let p = run(&s, &[pod(0, &old), pod(1, &old)], &revs, &[]);
    let bumped: Vec<(Option<String>, Option<i64>)> = p
        .actions
        .iter()
        .filter_map(|a| match a {
            Action::UpdateRevision(r) => Some((r.metadata.name.clone(), r.revision)),
            _ => None,
        })
        .collect();
    assert_eq!(bumped, [(Some(old.clone()), Some(3))]);
    assert!(
        deleted(&p).is_empty(),
        "pods already at the rolled-back revision stay"
    );
}

#[test]
fn status_counts_pods_and_moves_the_current_revision_once_all_are_updated_and_ready() {
    let mut s = set(3);
    let (revs, old, new) = rolled(&mut s);
    let pods = [pod(0, &old), unready(pod(1, &new)), pod(2, &new)];
    let st = run(&s, &pods, &revs, &[]).status.unwrap();
    assert_eq!(
        (
            st.replicas,
            st.ready_replicas,
            st.available_replicas,
            st.current_replicas,
            st.updated_replicas
        ),
        (3, 2, 2, 1, 2)
    );
    assert_eq!((st.updated_ready_replicas, st.updated_available_replicas), (1, 1));
    assert_eq!(st.current_revision.as_deref(), Some(old.as_str()));
    assert_eq!(st.label_selector.as_deref(), Some("app=demo"));
    assert_eq!(st.collision_count, Some(0));

    let done = [pod(0, &new), pod(1, &new), pod(2, &new)];
    let st = run(&s, &done, &revs, &[]).status.unwrap();
    assert_eq!(st.current_revision.as_deref(), Some(new.as_str()));
    assert_eq!(st.current_replicas, 3);
}

#[test]
fn in_place_only_that_cannot_be_done_in_place_fails_the_update() {
    let mut s = parallel(set(2));
    let (revs, old, _) = rolled(&mut s);
    // A change beyond images: a new env var.
    s.spec.template.spec.as_mut().unwrap().containers[0].env =
        Some(vec![k8s_openapi::api::core::v1::EnvVar {
            name: "X".into(),
            value: Some("1".into()),
            ..Default::default()
        }]);
    let new = new_revision(&s, 3, Some(0));
    let mut revs = revs;
    revs.push(new);
    rolling(&mut s).pod_update_policy = Some(PodUpdateStrategyType::InPlaceOnly);
    let p = run(&s, &[pod(0, &old), pod(1, &old)], &revs, &[]);
    assert!(p.update_error.is_some());
    let conditions = p.status.clone().unwrap().conditions.unwrap();
    assert_eq!(conditions[0].type_, "FailedUpdatePod");
    assert!(deleted(&p).is_empty());
}

#[test]
fn adding_a_claim_template_recreates_pods_within_the_budget() {
    let mut s = parallel(set(3));
    let rev = revision(&s);
    let name = rev.metadata.name.clone().unwrap();
    claim_template(&mut s);
    rolling(&mut s).max_unavailable = Some(IntOrString::Int(1));
    let pods = [pod(0, &name), pod(1, &name), pod(2, &name)];
    let pvcs = [
        claim("data-web-0", vec![]),
        claim("data-web-1", vec![]),
        claim("data-web-2", vec![]),
    ];
    let p = run(&s, &pods, std::slice::from_ref(&rev), &pvcs);
    assert_eq!(deleted(&p), ["web-2"], "one at a time, from the top");
    assert!(
        patched(&p, "identity").is_empty(),
        "volumes of a live pod are never patched"
    );

    // A pod that mounts its claim is left alone.
    let mut mounted = pod(2, &name);
    mounted.spec.as_mut().unwrap().volumes = Some(vec![kruise_api::pod::VolumeRecord {
        name: "data".into(),
        persistent_volume_claim: Some(kruise_api::pod::ClaimRecord {
            claim_name: "data-web-2".into(),
        }),
    }]);
    let p = run(&s, &[pod(0, &name), pod(1, &name), mounted], &[rev], &pvcs);
    assert_eq!(deleted(&p), ["web-1"]);
}
