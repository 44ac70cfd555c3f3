//! Env fed from template metadata on an Advanced StatefulSet: in place on pods a node agent serves,
//! recreated on the others (docs/env-from-metadata.md).

use super::*;
use k8s_openapi::api::core::v1::{EnvVar, EnvVarSource, ObjectFieldSelector};
use kruise_core::containermeta::RUNTIME_CONTAINERS_META_KEY;

fn reads_annotation(s: &mut StatefulSet, value: &str) {
    let t = &mut s.spec.template;
    t.spec.as_mut().unwrap().containers[0].env = Some(vec![EnvVar {
        name: "DEMO".into(),
        value: None,
        value_from: Some(EnvVarSource {
            field_ref: Some(ObjectFieldSelector {
                field_path: "metadata.annotations['demo/env']".into(),
                api_version: None,
            }),
            ..Default::default()
        }),
    }]);
    t.metadata.get_or_insert_default().annotations =
        Some([("demo/env".to_string(), value.to_string())].into());
}

#[test]
fn an_env_change_is_in_place_only_where_the_agent_serves_the_pod() {
    let mut s = parallel(set(2));
    reads_annotation(&mut s, "a");
    let old_rev = revision(&s);
    reads_annotation(&mut s, "b");
    let new_rev = new_revision(&s, 2, Some(0));
    let (old, new) = (
        old_rev.metadata.name.clone().unwrap(),
        new_rev.metadata.name.clone().unwrap(),
    );
    s.status = Some(kruise_api::apps_v1beta1::StatefulSetStatus {
        current_revision: Some(old.clone()),
        update_revision: Some(new.clone()),
        collision_count: Some(0),
        ..Default::default()
    });
    let r = rolling(&mut s);
    r.max_unavailable = Some(IntOrString::Int(2));
    r.pod_update_policy = Some(PodUpdateStrategyType::InPlaceIfPossible);
    let mut pods: Vec<PodRecord> = (0..2).map(|o| pod(o, &old)).collect();
    // web-1 runs where an agent reports on it.
    pods[1]
        .metadata
        .annotations
        .insert(RUNTIME_CONTAINERS_META_KEY.into(), r#"{"containers":[]}"#.into());
    let revs = [old_rev, new_rev];
    for (gates, in_place, recreated) in [
        (true, vec!["web-1"], vec!["web-0"]),
        (false, vec![], vec!["web-1", "web-0"]),
    ] {
        let input = Input {
            set: &s,
            pods: &pods,
            revisions: &revs,
            pvcs: &[],
            now: now(),
            env_from_metadata: gates,
        };
        let p = plan(&input, &Expectations::default()).unwrap();
        assert_eq!(patched(&p, "inPlaceUpdate"), in_place, "gates {gates}");
        assert_eq!(deleted(&p), recreated, "gates {gates}");
        if gates {
            let patch = p
                .actions
                .iter()
                .find_map(|a| match a {
                    Action::PatchPod {
                        patch,
                        reason: "inPlaceUpdate",
                        ..
                    } => Some(patch),
                    _ => None,
                })
                .unwrap();
            let mut applied = serde_json::to_value(&pods[1]).unwrap();
            crate::inplace::merge(&mut applied, patch.clone());
            assert_eq!(applied["metadata"]["annotations"]["demo/env"], "b");
            assert_eq!(
                applied["metadata"]["labels"][crate::pods::CONTROLLER_REVISION_HASH],
                new.as_str()
            );
        }
    }
}
