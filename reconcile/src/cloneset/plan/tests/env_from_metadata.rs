//! Env fed from template metadata: in place when the node agent serves the pods, recreated otherwise,
//! complete only once the agent reports the restarted containers (docs/env-from-metadata.md).

use std::collections::BTreeMap;

use super::*;
use kruise_core::containermeta::{
    RUNTIME_CONTAINERS_META_KEY, RuntimeContainerHashes, RuntimeContainerMeta, RuntimeContainerMetaSet,
    expected_hash,
};

fn env() -> Vec<EnvVar> {
    vec![EnvVar {
        name: "DEMO".into(),
        value: None,
        value_from: Some(EnvVarSource {
            field_ref: Some(ObjectFieldSelector {
                field_path: "metadata.annotations['demo/env']".into(),
                api_version: None,
            }),
            ..Default::default()
        }),
    }]
}

fn meta(id: &str, value: &str) -> String {
    let annotations: BTreeMap<String, String> = [("demo/env".to_string(), value.to_string())].into();
    RuntimeContainerMetaSet {
        containers: vec![RuntimeContainerMeta {
            name: "app".into(),
            container_id: id.into(),
            restart_count: 0,
            hashes: RuntimeContainerHashes {
                plain_hash: 1,
                extracted_env_from_metadata_hash: expected_hash(&env(), &(), &annotations),
            },
            restarted_at: None,
        }],
    }
    .to_json()
}

/// Revision 1 reads annotation `demo/env` = `a` into env; revision 2 sets it to `b`. Pods at revision 1,
/// with the agent's report when `served`.
fn world(served: bool) -> World {
    let mut w = rollout(2, Policy::InPlaceIfPossible, ru());
    let mut old = cloneset(2);
    let t = &mut old.spec.template;
    t.spec.as_mut().unwrap().containers[0].env = Some(env());
    t.metadata.as_mut().unwrap().annotations = Some([("demo/env".to_string(), "a".to_string())].into());
    w.revisions[0] = revision::new_revision(&old, 1, None);
    w.cs.spec.template = old.spec.template.clone();
    w.cs.spec.template.metadata.as_mut().unwrap().annotations =
        Some([("demo/env".to_string(), "b".to_string())].into());
    w.revisions[1] = revision::new_revision(&w.cs, 2, None);
    let status = w.cs.status.as_mut().unwrap();
    status.current_revision = Some(rev_name(&w.revisions[0]));
    status.update_revision = Some(rev_name(&w.revisions[1]));
    let v1 = rev_name(&w.revisions[0]);
    for p in &mut w.pods {
        p.metadata
            .labels
            .insert(CONTROLLER_REVISION_HASH.into(), v1.clone());
        p.spec.as_mut().unwrap().containers[0].env = Some(env());
        p.status.as_mut().unwrap().container_statuses.as_mut().unwrap()[0].container_id =
            Some("containerd://c1".into());
        let a = &mut p.metadata.annotations;
        a.insert("demo/env".into(), "a".into());
        if served {
            a.insert(RUNTIME_CONTAINERS_META_KEY.into(), meta("containerd://c1", "a"));
        }
    }
    w
}

const GATES_ON: Options = Options {
    env_from_metadata: true,
    partition_rollback: false,
    preparing_update_as_update: false,
    scaling_exclude_preparing_delete: false,
};

#[test]
fn an_env_change_is_in_place_only_where_the_agent_serves_the_pod() {
    // (agent reports on the pods, gates on, first actions for demo-p0)
    let rows = [
        (
            true,
            true,
            vec!["patch status demo-p0", "patch pod demo-p0 inPlaceUpdate"],
        ),
        (
            false,
            true,
            vec![
                "event RecreateForEnvFromMetadata",
                "patch pod demo-p0 specifiedDelete",
            ],
        ),
        (
            true,
            false,
            vec![
                "event RecreateForEnvFromMetadata",
                "patch pod demo-p0 specifiedDelete",
            ],
        ),
    ];
    for (served, gates, want) in rows {
        let options = Options {
            env_from_metadata: gates,
            ..GATES_ON
        };
        let p = run_with(&world(served), options);
        let s = summary(&p);
        assert_eq!(s[..2], want[..], "agent {served}, gates {gates}: {s:?}");
        if served && gates {
            let Action::PatchPod { patch, .. } = &p.actions[1] else {
                panic!()
            };
            assert_eq!(patch["metadata"]["annotations"]["demo/env"], "b");
            assert!(patch.get("spec").is_none());
            assert!(
                patch["metadata"]["annotations"][IN_PLACE_UPDATE_STATE_KEY]
                    .as_str()
                    .unwrap()
                    .contains("\"updateEnvFromMetadata\":true")
            );
        }
    }
}

#[test]
fn the_pod_becomes_in_place_ready_only_when_the_agent_reports_the_new_env() {
    let mut w = world(true);
    // Pod 0 was updated in place: revision 2, annotation b, condition False, state with the env update.
    let v2 = rev_name(&w.revisions[1]);
    let begun = run_with(&w, GATES_ON);
    let Action::PatchPod { patch, .. } = &begun.actions[1] else {
        panic!()
    };
    let state = patch["metadata"]["annotations"][IN_PLACE_UPDATE_STATE_KEY]
        .as_str()
        .unwrap()
        .to_owned();
    let p = &mut w.pods[0];
    p.metadata.labels.insert(CONTROLLER_REVISION_HASH.into(), v2);
    let a = &mut p.metadata.annotations;
    a.insert("demo/env".into(), "b".into());
    a.insert(IN_PLACE_UPDATE_STATE_KEY.into(), state);
    let conditions = p.status.as_mut().unwrap().conditions.as_mut().unwrap();
    conditions
        .iter_mut()
        .find(|c| c.type_ == IN_PLACE_UPDATE_READY)
        .unwrap()
        .status = "False".into();
    let ready_patch =
        |w: &World| summary(&run_with(w, GATES_ON)).contains(&"patch status demo-p0".to_string());
    // (container in status, agent's report, InPlaceUpdateReady set True)
    let rows = [
        ("containerd://c1", meta("containerd://c1", "a"), false),
        ("containerd://c2", meta("containerd://c1", "a"), false),
        ("containerd://c2", meta("containerd://c2", "a"), false),
        ("containerd://c2", meta("containerd://c2", "b"), true),
    ];
    for (id, report, want) in rows {
        let p = &mut w.pods[0];
        p.status.as_mut().unwrap().container_statuses.as_mut().unwrap()[0].container_id = Some(id.into());
        p.metadata
            .annotations
            .insert(RUNTIME_CONTAINERS_META_KEY.into(), report.clone());
        assert_eq!(ready_patch(&w), want, "{id} {report}");
    }
}
