//! The status field by field (docs/advanced-statefulset.md#status), and the conditions of failed writes.

use super::*;
use crate::expectations::Expectations;
use crate::pods::fixtures::{labelled, now, unready};
use crate::statefulset::plan::{Input, Plan, plan};
use crate::statefulset::testing::{pod, revision, rolled, set};
use k8s_openapi::api::apps::v1::ControllerRevision;
use k8s_openapi::api::core::v1::{PersistentVolumeClaim, Pod};
use k8s_openapi::apimachinery::pkg::apis::meta::v1::ObjectMeta;
use kruise_api::PodRecord;
use kruise_api::apps_v1beta1::{PodManagementPolicyType, PodUpdateStrategyType};
use kruise_api::common::LIFECYCLE_STATE_KEY;

fn run(s: &StatefulSet, pods: &[PodRecord], revisions: &[ControllerRevision]) -> Plan {
    let input = Input {
        set: s,
        pods,
        revisions,
        pvcs: &[],
        now: now(),
        env_from_metadata: false,
    };
    plan(&input, &Expectations::default()).expect("plannable")
}

/// (replicas, ready, available, current, updated, updatedReady, updatedAvailable)
fn counts(st: &StatefulSetStatus) -> [i32; 7] {
    [
        st.replicas,
        st.ready_replicas,
        st.available_replicas,
        st.current_replicas,
        st.updated_replicas,
        st.updated_ready_replicas,
        st.updated_available_replicas,
    ]
}

fn terminating(mut p: PodRecord) -> PodRecord {
    p.metadata.deletion_timestamp = Some(Time(now()));
    p
}

fn not_created(mut p: PodRecord) -> PodRecord {
    p.status = None;
    p
}

fn seconds_ready(mut p: PodRecord, seconds: i64) -> PodRecord {
    let since = now()
        .checked_sub(k8s_openapi::jiff::SignedDuration::from_secs(seconds))
        .unwrap();
    p.status.as_mut().unwrap().conditions.as_mut().unwrap()[0].last_transition_time = Some(Time(since));
    p
}

#[test]
fn counts_follow_the_pods_as_read() {
    // (pods, expected counts); set of 3 mid-rollout (`old` current, `new` update), paused so the pass
    // touches no pod, minReadySeconds 60.
    let mut s = set(3);
    let (revs, old, new) = rolled(&mut s);
    let r = s.spec.update_strategy.rolling_update.as_mut().unwrap();
    r.paused = true;
    r.min_ready_seconds = Some(60);
    let cases: Vec<(&str, Vec<PodRecord>, [i32; 7])> = vec![
        (
            "ready and available at either revision",
            vec![pod(0, &old), pod(1, &new), pod(2, &new)],
            [3, 3, 3, 1, 2, 2, 2],
        ),
        (
            "terminating pods count in replicas and readiness, not at a revision",
            vec![pod(0, &old), terminating(pod(1, &old)), terminating(pod(2, &new))],
            [3, 3, 3, 1, 0, 1, 1],
        ),
        (
            "a condemned pod (ordinal 5) counts like any other",
            vec![pod(0, &old), pod(1, &new), pod(2, &new), pod(5, &new)],
            [4, 4, 4, 1, 3, 3, 3],
        ),
        (
            "a pod without a phase counts nowhere",
            vec![pod(0, &old), not_created(pod(1, &new))],
            [1, 1, 1, 1, 0, 0, 0],
        ),
        (
            "not ready: neither ready nor available, still at its revision",
            vec![pod(0, &old), unready(pod(1, &new))],
            [2, 1, 1, 1, 1, 0, 0],
        ),
        (
            "ready for less than minReadySeconds: ready, not available",
            vec![seconds_ready(pod(0, &old), 30), seconds_ready(pod(1, &new), 30)],
            [2, 2, 0, 1, 1, 1, 0],
        ),
        (
            "a lifecycle state other than Normal: ready, not available",
            vec![
                labelled(pod(0, &old), LIFECYCLE_STATE_KEY, "PreparingDelete"),
                labelled(pod(1, &new), LIFECYCLE_STATE_KEY, "Updated"),
            ],
            [2, 2, 0, 1, 1, 1, 0],
        ),
    ];
    for (what, pods, want) in cases {
        let st = run(&s, &pods, &revs).status.expect(what);
        assert_eq!(counts(&st), want, "{what}");
        assert_eq!(st.current_revision.as_deref(), Some(old.as_str()), "{what}");
        assert_eq!(st.update_revision.as_deref(), Some(new.as_str()), "{what}");
        assert_eq!(st.observed_generation, 1, "{what}");
        assert_eq!(st.collision_count, Some(0), "{what}");
        assert_eq!(st.label_selector.as_deref(), Some("app=demo"), "{what}");
    }
}

#[test]
fn current_replicas_drop_by_the_current_pods_this_pass_updates() {
    let mut s = set(3);
    let (revs, old, _) = rolled(&mut s);
    let pods = [pod(0, &old), pod(1, &old), pod(2, &old)];
    // Recreate: web-2 is deleted; in place: web-2 is patched. Either way 2 current pods remain.
    for policy in [
        PodUpdateStrategyType::ReCreate,
        PodUpdateStrategyType::InPlaceIfPossible,
    ] {
        let mut s = s.clone();
        s.spec
            .update_strategy
            .rolling_update
            .as_mut()
            .unwrap()
            .pod_update_policy = Some(policy.clone());
        let p = run(&s, &pods, &revs);
        assert!(!p.actions.is_empty(), "{policy:?}: web-2 is updated");
        let st = p.status.unwrap();
        assert_eq!((st.replicas, st.current_replicas), (3, 2), "{policy:?}");
    }
}

#[test]
fn the_current_revision_moves_only_with_every_pod_updated_and_ready_and_never_on_delete() {
    let mut s = set(2);
    let (revs, old, new) = rolled(&mut s);
    // (update strategy, pods, currentRevision, currentReplicas)
    let on_delete = Some(StatefulSetUpdateStrategyType::OnDelete);
    let rolling = Some(StatefulSetUpdateStrategyType::RollingUpdate);
    let cases = [
        (rolling.clone(), vec![pod(0, &new), pod(1, &new)], &new, 2),
        (
            rolling.clone(),
            vec![pod(0, &new), unready(pod(1, &new))],
            &old,
            0,
        ),
        (rolling, vec![pod(0, &new)], &new, 1),
        (on_delete, vec![pod(0, &new), pod(1, &new)], &old, 0),
    ];
    for (type_, pods, current, current_replicas) in cases {
        let mut s = s.clone();
        s.spec.update_strategy.type_ = type_.clone();
        let st = run(&s, &pods, &revs).status.unwrap();
        assert_eq!(
            (st.current_revision.as_deref(), st.current_replicas),
            (Some(current.as_str()), current_replicas),
            "{type_:?} {}",
            pods.len()
        );
    }
}

#[test]
fn a_current_revision_that_no_longer_exists_is_replaced_by_the_update_revision() {
    let mut s = set(1);
    let rev = revision(&s);
    let name = rev.metadata.name.clone().unwrap();
    s.status = Some(StatefulSetStatus {
        current_revision: Some("web-gone".into()),
        ..Default::default()
    });
    let st = run(&s, &[unready(pod(0, &name))], &[rev]).status.unwrap();
    assert_eq!(st.current_revision.as_deref(), Some(name.as_str()));
}

fn create_pod(name: &str) -> Action {
    Action::CreatePod(Box::new(Pod {
        metadata: ObjectMeta {
            name: Some(name.into()),
            ..Default::default()
        },
        ..Default::default()
    }))
}

fn create_claim(name: &str) -> Action {
    Action::CreatePvc(Box::new(PersistentVolumeClaim {
        metadata: ObjectMeta {
            name: Some(name.into()),
            ..Default::default()
        },
        ..Default::default()
    }))
}

#[test]
fn the_condition_of_a_failed_write() {
    let identity = Action::PatchPod {
        name: "web-1".into(),
        reason: "identity",
        patch: serde_json::json!({}),
    };
    let in_place = Action::PatchPod {
        name: "web-1".into(),
        reason: "inPlaceUpdate",
        patch: serde_json::json!({}),
    };
    let delete = Action::DeletePod {
        name: "web-1".into(),
        uid: None,
    };
    // (actions, failed index, condition)
    let cases = [
        (vec![create_pod("web-1")], 0, Some(FAILED_CREATE_POD)),
        (
            vec![create_claim("data-web-1"), create_pod("web-1")],
            0,
            Some(FAILED_CREATE_POD),
        ),
        // A claim of a pending pod (no pod created after it), or of another pod.
        (vec![create_claim("data-web-1")], 0, None),
        (vec![create_claim("data-web-1"), create_pod("web-11")], 0, None),
        (vec![identity], 0, Some(FAILED_UPDATE_POD)),
        (vec![in_place], 0, None),
        (vec![delete], 0, None),
    ];
    for (actions, failed, want) in cases {
        assert_eq!(
            failure_condition(&actions, failed).map(|(t, _)| t),
            want,
            "{actions:?}"
        );
    }
}

fn conditions(st: &Option<StatefulSetStatus>) -> Vec<(String, String, Option<String>)> {
    st.as_ref()
        .and_then(|s| s.conditions.clone())
        .unwrap_or_default()
        .into_iter()
        .map(|c| (c.type_, c.status, c.message))
        .collect()
}

#[test]
fn a_failed_pod_create_sets_failed_create_pod_until_pods_are_created_again() {
    let mut s = set(2);
    s.spec.pod_management_policy = Some(PodManagementPolicyType::Parallel);
    let rev = revision(&s);
    let name = rev.metadata.name.clone().unwrap();
    let revs = [rev];

    // web-1 is missing; its create fails.
    let pods = [pod(0, &name)];
    let p = run(&s, &pods, &revs);
    let failed = p
        .actions
        .iter()
        .position(|a| matches!(a, Action::CreatePod(_)))
        .unwrap();
    let written = after_failure(&s, p.status, &p.actions, failed, "quota exceeded", now());
    assert_eq!(
        conditions(&written),
        [(
            FAILED_CREATE_POD.to_string(),
            "True".to_string(),
            Some("StatefulPodControl failed to create Pod error: quota exceeded".to_string())
        )]
    );
    let condition = &written.as_ref().unwrap().conditions.as_ref().unwrap()[0];
    assert_eq!(condition.reason, None);
    assert_eq!(condition.last_transition_time, Some(Time(now())));
    s.status = written;

    // The next pass fails the same way: the set shows it already, nothing to write.
    let p = run(&s, &pods, &revs);
    let later = now()
        .checked_add(k8s_openapi::jiff::SignedDuration::from_secs(30))
        .unwrap();
    assert_eq!(
        after_failure(&s, p.status, &p.actions, failed, "quota exceeded again", later),
        None
    );

    // A pass that creates the pod (and whose create succeeds) clears the condition.
    let p = run(&s, &pods, &revs);
    assert!(p.actions.iter().any(|a| matches!(a, Action::CreatePod(_))));
    assert_eq!(conditions(&p.status), []);

    // A pass with every slot filled clears it too.
    let p = run(&s, &[pod(0, &name), unready(pod(1, &name))], &revs);
    assert_eq!(conditions(&p.status), []);
}

#[test]
fn failed_create_pod_stays_while_ordered_ready_waits_with_a_slot_empty() {
    let mut s = set(2);
    let rev = revision(&s);
    let name = rev.metadata.name.clone().unwrap();
    s.status = Some(StatefulSetStatus {
        conditions: Some(vec![StatefulSetCondition {
            type_: FAILED_CREATE_POD.into(),
            status: "True".into(),
            last_transition_time: Some(Time(now())),
            reason: None,
            message: Some("StatefulPodControl failed to create Pod error: quota".into()),
        }]),
        ..Default::default()
    });
    // web-0 is not ready: OrderedReady creates nothing, web-1's slot stays empty.
    let p = run(&s, &[unready(pod(0, &name))], &[rev]);
    assert!(!p.actions.iter().any(|a| matches!(a, Action::CreatePod(_))));
    assert_eq!(conditions(&p.status).len(), 1);
    assert_eq!(conditions(&p.status)[0].0, FAILED_CREATE_POD);
}

#[test]
fn a_failed_write_without_a_condition_keeps_the_planned_status() {
    let s = set(1);
    let rev = revision(&s);
    let name = rev.metadata.name.clone().unwrap();
    let p = run(&s, &[pod(0, &name)], &[rev]);
    let delete = [Action::DeletePod {
        name: "web-0".into(),
        uid: None,
    }];
    assert_eq!(
        after_failure(&s, p.status.clone(), &delete, 0, "gone", now()),
        p.status
    );
}
