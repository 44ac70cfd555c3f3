//! In-place updates: the patch, the fallbacks to recreate, and the grace period.

use super::*;

#[test]
fn in_place_update_patch_carries_revision_lifecycle_state_and_image() {
    let w = rollout(3, Policy::InPlaceIfPossible, ru());
    let p = run(&w);
    let Action::PatchPod { patch, .. } = &p.actions[1] else {
        panic!("{:?}", summary(&p))
    };
    let v2 = rev_name(&w.revisions[1]);
    let labels = &patch["metadata"]["labels"];
    assert_eq!(labels[CONTROLLER_REVISION_HASH], v2.as_str());
    assert_eq!(labels[LIFECYCLE_STATE_KEY], "Updating");
    assert_eq!(
        patch["spec"]["containers"],
        serde_json::json!([{"name": "app", "image": "app:2"}])
    );
    let state: serde_json::Value = serde_json::from_str(
        patch["metadata"]["annotations"][IN_PLACE_UPDATE_STATE_KEY]
            .as_str()
            .unwrap(),
    )
    .unwrap();
    assert_eq!(
        state,
        serde_json::json!({
            "revision": v2,
            "updateTimestamp": "2026-01-01T12:00:00Z",
            "lastContainerStatuses": {"app": {"imageID": "sha256:app:1"}},
            "updateImages": true,
            "containerBatchesRecord": [{"timestamp": "2026-01-01T12:00:00Z", "containers": ["app"]}],
        })
    );
}

#[test]
fn in_place_fallbacks() {
    let env_from_label = |w: &mut World| {
        let c = &mut w.cs.spec.template.spec.as_mut().unwrap().containers[0];
        c.image = Some("app:1".into());
        c.env = Some(vec![EnvVar {
            name: "TIER".into(),
            value_from: Some(EnvVarSource {
                field_ref: Some(ObjectFieldSelector {
                    field_path: "metadata.labels['tier']".into(),
                    api_version: None,
                }),
                ..Default::default()
            }),
            value: None,
        }]);
    };
    type Row = (&'static str, Policy, fn(&mut World), &'static str);
    let rows: Vec<Row> = vec![
        (
            "a command change recreates under InPlaceIfPossible",
            Policy::InPlaceIfPossible,
            |w| w.cs.spec.template.spec.as_mut().unwrap().containers[0].command = Some(vec!["x".into()]),
            "specifiedDelete",
        ),
        (
            "a command change is an error under InPlaceOnly",
            Policy::InPlaceOnly,
            |w| w.cs.spec.template.spec.as_mut().unwrap().containers[0].command = Some(vec!["x".into()]),
            "error: InPlaceOnly but can not update in-place",
        ),
        (
            "a label feeding env recreates under InPlaceIfPossible",
            Policy::InPlaceIfPossible,
            |w| {
                w.cs.spec
                    .template
                    .metadata
                    .as_mut()
                    .unwrap()
                    .labels
                    .as_mut()
                    .unwrap()
                    .insert("tier".into(), "web".into());
            },
            "event RecreateForEnvFromMetadata, then specifiedDelete",
        ),
        (
            "a label feeding env is an explicit restart error under InPlaceOnly",
            Policy::InPlaceOnly,
            |w| {
                w.cs.spec
                    .template
                    .metadata
                    .as_mut()
                    .unwrap()
                    .labels
                    .as_mut()
                    .unwrap()
                    .insert("tier".into(), "web".into());
            },
            "error: no node agent",
        ),
    ];
    for (name, policy, change, want) in rows {
        let mut w = rollout(3, policy, ru());
        if name.contains("label") {
            // Revision 1 already reads the label into env; revision 2 only changes the label.
            let mut old = cloneset(3);
            let mut tmp = World {
                cs: old.clone(),
                pods: vec![],
                revisions: vec![],
                pvcs: vec![],
            };
            env_from_label(&mut tmp);
            old.spec.template = tmp.cs.spec.template.clone();
            w.revisions[0] = revision::new_revision(&old, 1, None);
            w.cs.spec.template = old.spec.template.clone();
            for p in &mut w.pods {
                p.metadata
                    .labels
                    .insert(CONTROLLER_REVISION_HASH.into(), rev_name(&w.revisions[0]));
            }
            w.cs.status.as_mut().unwrap().current_revision = Some(rev_name(&w.revisions[0]));
        }
        change(&mut w);
        w.revisions[1] = revision::new_revision(&w.cs, 2, None);
        let p = run(&w);
        match want.strip_prefix("error: ") {
            Some(text) => {
                let err = p.update_error.clone().unwrap_or_default();
                assert!(err.contains(text), "{name}: {err}");
                let failed = p.status.unwrap().conditions.unwrap();
                assert!(
                    failed
                        .iter()
                        .any(|c| c.type_ == kruise_api::apps_v1beta1::CloneSetConditionType::FailedUpdate),
                    "{name}"
                );
            }
            None => match want.strip_suffix(", then specifiedDelete") {
                Some(first) => {
                    let s = summary(&p);
                    assert_eq!(s[0], first, "{name}: the restart need is said explicitly");
                    assert_eq!(s[1], "patch pod demo-p0 specifiedDelete", "{name}");
                }
                None => assert_eq!(summary(&p)[0], format!("patch pod demo-p0 {want}"), "{name}"),
            },
        }
    }
}

#[test]
fn a_grace_period_defers_the_image_change_and_requeues() {
    let w = rollout(
        3,
        Policy::InPlaceIfPossible,
        RollingUpdateCloneSetStrategy {
            in_place_update_strategy: Some(kruise_api::common::InPlaceUpdateStrategy {
                grace_period_seconds: Some(10),
                ..Default::default()
            }),
            ..ru()
        },
    );
    let p = run(&w);
    let Action::PatchPod { patch, .. } = &p.actions[1] else {
        panic!()
    };
    assert!(
        patch.get("spec").is_none(),
        "no container changes during the grace period"
    );
    let grace: serde_json::Value = serde_json::from_str(
        patch["metadata"]["annotations"][kruise_api::common::IN_PLACE_UPDATE_GRACE_KEY]
            .as_str()
            .unwrap(),
    )
    .unwrap();
    assert_eq!(grace["containerImages"], serde_json::json!({"app": "app:2"}));
    assert_eq!(grace["graceSeconds"], 10);
    assert_eq!(p.requeue_after, Some(Duration::from_secs(10)));
}
