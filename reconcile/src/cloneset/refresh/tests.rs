use super::*;
use crate::action::Action;
use crate::cloneset::testing::{self, cloneset};
use crate::inplace::InPlaceUpdateState;
use crate::pods::fixtures::{labelled, now, pod};
use k8s_openapi::api::core::v1::PodReadinessGate;
use k8s_openapi::jiff::SignedDuration;
use kruise_api::apps_v1beta1::CloneSet;
use kruise_api::common::{
    IN_PLACE_UPDATE_GRACE_KEY, IN_PLACE_UPDATE_READY, IN_PLACE_UPDATE_STATE_KEY, LIFECYCLE_STATE_KEY,
    Lifecycle, LifecycleHook,
};
use kruise_api::pod::PodConditionRecord;
use kruise_api::pod::{ContainerRecord, ContainerStatusRecord};
use std::time::Duration;

fn ctx(cs: &CloneSet) -> Ctx<'_> {
    testing::ctx(cs, vec![])
}

fn annotated(mut p: PodRecord, key: &str, value: String) -> PodRecord {
    p.metadata.annotations.insert(key.into(), value);
    p
}

fn state_json(next: &[(&str, &str)], required: &[&str]) -> String {
    let mut state = InPlaceUpdateState::new("demo-2", now());
    state.last_container_statuses.insert(
        "a".into(),
        inplace::LastContainerStatus {
            image_id: "old".into(),
        },
    );
    state.next_container_images = next.iter().map(|(k, v)| (k.to_string(), v.to_string())).collect();
    if !required.is_empty() {
        state.pre_check_before_next = Some(inplace::PreCheckBeforeNext {
            containers_required_ready: required.iter().map(|s| s.to_string()).collect(),
        });
    }
    serde_json::to_string(&state).unwrap()
}

/// Pod at demo-2 with containers a and b; `a_done` says whether a reports a new imageID.
fn updating_pod(a_done: bool, a_ready: bool, state: String) -> PodRecord {
    let mut p = labelled(pod("demo-x", "demo-2"), LIFECYCLE_STATE_KEY, "Updating");
    let spec = p.spec.as_mut().unwrap();
    spec.containers = ["a", "b"]
        .iter()
        .map(|n| ContainerRecord {
            name: (*n).into(),
            image: Some(format!("{n}:1")),
            ..Default::default()
        })
        .collect();
    spec.readiness_gates = Some(vec![PodReadinessGate {
        condition_type: IN_PLACE_UPDATE_READY.into(),
    }]);
    let status = p.status.as_mut().unwrap();
    status.container_statuses = Some(vec![
        ContainerStatusRecord {
            name: "a".into(),
            image_id: if a_done { "new".into() } else { "old".into() },
            ready: a_ready,
            ..Default::default()
        },
        ContainerStatusRecord {
            name: "b".into(),
            image_id: "b-old".into(),
            ready: true,
            ..Default::default()
        },
    ]);
    status.conditions.as_mut().unwrap().push(PodConditionRecord {
        type_: IN_PLACE_UPDATE_READY.into(),
        status: "False".into(),
        reason: Some("StartInPlaceUpdate".into()),
        ..Default::default()
    });
    annotated(p, IN_PLACE_UPDATE_STATE_KEY, state)
}

fn kinds(r: &Refreshed) -> Vec<String> {
    r.actions
        .iter()
        .map(|a| match a {
            Action::PatchPod { reason, patch, .. } => {
                let state = patch["metadata"]["labels"][LIFECYCLE_STATE_KEY]
                    .as_str()
                    .unwrap_or("");
                format!(
                    "{reason}{}",
                    if state.is_empty() {
                        String::new()
                    } else {
                        format!(" -> {state}")
                    }
                )
            }
            Action::PatchPodStatus { patch, .. } => {
                format!(
                    "condition {}",
                    patch["status"]["conditions"][0]["status"].as_str().unwrap()
                )
            }
            other => format!("{other:?}"),
        })
        .collect()
}

#[test]
fn in_place_progress() {
    let cs = cloneset(1);
    let c = ctx(&cs);
    let rows: Vec<(&str, PodRecord, Vec<&str>)> = vec![
        (
            "containers still restarting: wait",
            updating_pod(false, false, state_json(&[], &[])),
            vec![],
        ),
        (
            "done: InPlaceUpdateReady goes True and the pod back to Normal in the same pass",
            updating_pod(true, true, state_json(&[], &[])),
            vec!["condition True", "lifecycle -> Normal"],
        ),
        (
            "first batch done but not ready: the next batch waits",
            updating_pod(true, false, state_json(&[("b", "b:2")], &["a"])),
            vec![],
        ),
        (
            "first batch done and ready: the next batch is applied",
            updating_pod(true, true, state_json(&[("b", "b:2")], &["a"])),
            vec!["inPlaceUpdate"],
        ),
    ];
    for (name, p, want) in rows {
        let r = refresh_pod(&c, &p);
        assert_eq!(kinds(&r), want, "{name}");
        assert_eq!(
            r.modified,
            want.iter().any(|k| k.starts_with("lifecycle")),
            "{name}: only lifecycle stops update"
        );
    }
}

#[test]
fn an_old_pod_gets_its_pod_template_hash_backfilled() {
    let cs = cloneset(1);
    let mut p = pod("demo-x", "demo-abc");
    p.metadata.labels.remove(POD_TEMPLATE_HASH);
    let r = refresh_pod(&ctx(&cs), &p);
    let Action::PatchPod {
        patch,
        reason: "podTemplateHash",
        ..
    } = &r.actions[0]
    else {
        panic!("{:?}", r.actions)
    };
    assert_eq!(patch["metadata"]["labels"][POD_TEMPLATE_HASH], "abc");
    assert!(r.modified);
}

#[test]
fn the_next_batch_patch_sets_the_parked_image_and_clears_the_queue() {
    let cs = cloneset(1);
    let p = updating_pod(true, true, state_json(&[("b", "b:2")], &["a"]));
    let r = refresh_pod(&ctx(&cs), &p);
    let Action::PatchPod { patch, .. } = &r.actions[0] else {
        panic!()
    };
    assert_eq!(
        patch["spec"]["containers"],
        json!([{"name": "b", "image": "b:2"}])
    );
    let state: InPlaceUpdateState = serde_json::from_str(
        patch["metadata"]["annotations"][IN_PLACE_UPDATE_STATE_KEY]
            .as_str()
            .unwrap(),
    )
    .unwrap();
    assert!(state.next_container_images.is_empty() && state.pre_check_before_next.is_none());
    assert_eq!(state.last_container_statuses["b"].image_id, "b-old");
}

#[test]
fn grace_period() {
    let cs = cloneset(1);
    let spec = inplace::UpdateSpec {
        revision: "demo-2".into(),
        container_images: [("a".to_string(), "a:2".to_string())].into(),
        meta_data_patch: None,
        grace_seconds: 30,
        ..Default::default()
    };
    let started = |ago: i64| {
        let mut s = InPlaceUpdateState::new(
            "demo-2",
            now().checked_sub(SignedDuration::from_secs(ago)).unwrap(),
        );
        s.update_images = true;
        serde_json::to_string(&s).unwrap()
    };
    let graced = |ago: i64, rev: &str| {
        let p = updating_pod(false, true, started(ago));
        let mut p = annotated(
            p,
            IN_PLACE_UPDATE_GRACE_KEY,
            serde_json::to_string(&spec).unwrap(),
        );
        p.metadata
            .labels
            .insert(CONTROLLER_REVISION_HASH.into(), rev.into());
        p
    };
    let c = ctx(&cs);
    let r = refresh_pod(&c, &graced(10, "demo-2"));
    assert!(r.actions.is_empty());
    assert_eq!(r.delay, Some(Duration::from_secs(20)));
    let r = refresh_pod(&c, &graced(31, "demo-2"));
    let Action::PatchPod { patch, .. } = &r.actions[0] else {
        panic!()
    };
    assert_eq!(
        patch["spec"]["containers"],
        json!([{"name": "a", "image": "a:2"}])
    );
    assert_eq!(
        patch["metadata"]["annotations"][IN_PLACE_UPDATE_GRACE_KEY],
        serde_json::Value::Null
    );
    let r = refresh_pod(&c, &graced(10, "demo-3"));
    let Action::PatchPod { patch, .. } = &r.actions[0] else {
        panic!()
    };
    assert!(
        patch.get("spec").is_none(),
        "the rollout moved on: only the grace annotation is dropped"
    );
}

#[test]
fn lifecycle_transitions() {
    let scheduled = |p: PodRecord| {
        let mut p = p;
        p.status
            .as_mut()
            .unwrap()
            .conditions
            .as_mut()
            .unwrap()
            .push(PodConditionRecord {
                type_: "PodScheduled".into(),
                status: "True".into(),
                ..Default::default()
            });
        p
    };
    let hook = LifecycleHook {
        labels_handler: Some([("ok".to_string(), "yes".to_string())].into()),
        ..Default::default()
    };
    let with_hooks = |pre_normal: bool, in_place: bool| {
        let mut cs = cloneset(1);
        cs.spec.lifecycle = Some(Lifecycle {
            pre_normal: pre_normal.then(|| hook.clone()),
            in_place_update: in_place.then(|| hook.clone()),
            pre_delete: None,
        });
        cs
    };
    let at = |state: &str, rev: &str| labelled(pod("demo-x", rev), LIFECYCLE_STATE_KEY, state);
    let rows: Vec<(&str, CloneSet, PodRecord, Vec<&str>)> = vec![
        (
            "PreparingNormal waits to be scheduled",
            cloneset(1),
            at("PreparingNormal", "demo-2"),
            vec![],
        ),
        (
            "PreparingNormal -> Normal once scheduled",
            cloneset(1),
            scheduled(at("PreparingNormal", "demo-2")),
            vec!["lifecycle -> Normal"],
        ),
        (
            "preNormal waits for all hooks",
            with_hooks(true, false),
            scheduled(at("PreparingNormal", "demo-2")),
            vec![],
        ),
        (
            "preNormal all hooked -> Normal",
            with_hooks(true, false),
            labelled(at("PreparingNormal", "demo-2"), "ok", "yes"),
            vec!["lifecycle -> Normal"],
        ),
        (
            "Updating complete -> Normal",
            cloneset(1),
            at("Updating", "demo-2"),
            vec!["lifecycle -> Normal"],
        ),
        (
            "Updating complete with an unhooked inPlaceUpdate hook -> Updated",
            with_hooks(false, true),
            at("Updating", "demo-2"),
            vec!["lifecycle -> Updated"],
        ),
        (
            "Updated -> Normal when hooked again",
            with_hooks(false, true),
            labelled(at("Updated", "demo-2"), "ok", "yes"),
            vec!["lifecycle -> Normal"],
        ),
        (
            "Updated waits while unhooked",
            with_hooks(false, true),
            at("Updated", "demo-2"),
            vec![],
        ),
        (
            "PreparingUpdate already at the update revision (rolled back) -> Normal",
            cloneset(1),
            at("PreparingUpdate", "demo-2"),
            vec!["lifecycle -> Normal"],
        ),
        (
            "PreparingUpdate at an old revision waits",
            cloneset(1),
            at("PreparingUpdate", "demo-1"),
            vec![],
        ),
    ];
    for (name, cs, p, want) in rows {
        assert_eq!(kinds(&refresh_pod(&ctx(&cs), &p)), want, "{name}");
    }
}
