use std::collections::BTreeMap;

use k8s_openapi::api::core::v1::EnvVar;
use kruise_api::PodRecord;
use kruise_core::containermeta::{
    RUNTIME_CONTAINERS_META_KEY, RuntimeContainerHashes, RuntimeContainerMeta, RuntimeContainerMetaSet,
    expected_hash,
};
use serde_json::json;

use super::*;
use crate::inplace::tests::{env_from, prioritised_pod, template};
use crate::inplace::{InPlaceUpdateState, RefMetadata, begin, calculate_spec, env_completed, patch_batch};
use crate::pods::fixtures::{now, pod};

fn annotations(pairs: &[(&str, &str)]) -> BTreeMap<String, String> {
    pairs.iter().map(|(k, v)| ((*k).into(), (*v).into())).collect()
}

/// The verdict of changing annotation `version` (read by `app`'s env) to 2 and label `tier` (read by
/// nobody) to `web`.
fn env_change() -> Result<UpdateSpec, NotInPlace> {
    let mut old = template();
    old.spec.as_mut().unwrap().containers[0].env = Some(vec![env_from("metadata.annotations['version']")]);
    let mut new = old.clone();
    let meta = new.metadata.as_mut().unwrap();
    meta.annotations = Some(annotations(&[("version", "2")]));
    meta.labels
        .get_or_insert_default()
        .insert("tier".into(), "web".into());
    calculate_spec(&old, &new, "r2")
}

fn with_meta(mut p: PodRecord, meta: &RuntimeContainerMetaSet) -> PodRecord {
    p.metadata
        .annotations
        .insert(RUNTIME_CONTAINERS_META_KEY.into(), meta.to_json());
    p
}

#[test]
fn a_changed_key_read_by_env_is_a_restart_whose_key_goes_with_its_container() {
    let Err(NotInPlace::EnvFromMetadata { containers, spec }) = env_change() else {
        panic!("{:?}", env_change())
    };
    assert_eq!(containers, vec!["app"]);
    assert!(spec.update_env_from_metadata);
    assert_eq!(
        spec.container_ref_metadata,
        [(
            "app".to_string(),
            RefMetadata {
                annotations: annotations(&[("version", "2")]),
                ..Default::default()
            }
        )]
        .into()
    );
    assert_eq!(
        spec.meta_data_patch,
        Some(json!({"metadata": {"labels": {"tier": "web"}}})),
        "only keys no env reads are in the generic metadata patch"
    );
}

#[test]
fn in_place_only_where_an_agent_serves_the_pod_and_the_gates_are_on() {
    let verdict = env_change();
    let bare = pod("demo-a", "r1");
    let served = with_meta(pod("demo-a", "r1"), &RuntimeContainerMetaSet::default());
    // (pod, gates on, in place?)
    for (p, gates, want) in [
        (&bare, true, false),
        (&served, true, true),
        (&served, false, false),
    ] {
        assert_eq!(
            for_pod(&verdict, p, gates).is_ok(),
            want,
            "agent {}, gates {gates}",
            agent_serves(p)
        );
    }
    let plain: Result<UpdateSpec, NotInPlace> = Ok(UpdateSpec::default());
    assert!(
        for_pod(&plain, &bare, false).is_ok(),
        "other updates do not need the agent"
    );
}

#[test]
fn beginning_applies_the_key_and_records_the_env_update() {
    let Err(NotInPlace::EnvFromMetadata { spec, .. }) = env_change() else {
        panic!()
    };
    let p = pod("demo-a", "r1");
    let patch = begin(&p, &spec, 0, Some("Updating"), now(), &mut Default::default());
    assert_eq!(patch["metadata"]["annotations"]["version"], "2");
    assert_eq!(patch["metadata"]["labels"]["tier"], "web");
    assert!(patch.get("spec").is_none(), "no container spec changes");
    let state: InPlaceUpdateState = serde_json::from_str(
        patch["metadata"]["annotations"]["apps.kruise.io/inplace-update-state"]
            .as_str()
            .unwrap(),
    )
    .unwrap();
    assert!(state.update_env_from_metadata && !state.update_images);
    assert_eq!(state.container_batches_record[0].containers, vec!["app"]);
    assert!(state.next_container_ref_metadata.is_empty());
}

#[test]
fn env_keys_follow_launch_priority_and_shared_keys_join_the_batch() {
    // redis has priority 10, nginx 1, log none.
    let p = prioritised_pod();
    let refs = |pairs: &[(&str, &[&str])]| -> BTreeMap<String, RefMetadata> {
        pairs
            .iter()
            .map(|(c, keys)| {
                let annotations = keys
                    .iter()
                    .map(|k| ((*k).to_string(), "new".to_string()))
                    .collect();
                (
                    (*c).to_string(),
                    RefMetadata {
                        annotations,
                        ..Default::default()
                    },
                )
            })
            .collect()
    };
    let mut state = InPlaceUpdateState::new("r2", now());
    let patch = patch_batch(
        &p,
        &BTreeMap::new(),
        &refs(&[("redis", &["x"]), ("nginx", &["y"])]),
        None,
        &mut state,
        now(),
    );
    assert_eq!(patch["metadata"]["annotations"]["x"], "new");
    assert!(
        patch["metadata"]["annotations"].get("y").is_none(),
        "nginx waits for the next batch"
    );
    assert_eq!(state.next_container_ref_metadata, refs(&[("nginx", &["y"])]));
    assert_eq!(
        state.pre_check_before_next.unwrap().containers_required_ready,
        vec!["redis"]
    );
    // nginx also reads x: it restarts with redis, y and all.
    let mut state = InPlaceUpdateState::new("r2", now());
    let patch = patch_batch(
        &p,
        &BTreeMap::new(),
        &refs(&[("redis", &["x"]), ("nginx", &["x", "y"])]),
        None,
        &mut state,
        now(),
    );
    assert_eq!(patch["metadata"]["annotations"]["y"], "new");
    assert!(state.next_container_ref_metadata.is_empty() && state.pre_check_before_next.is_none());
    assert_eq!(
        state.container_batches_record[0].containers,
        vec!["nginx", "redis"]
    );
}

#[test]
fn the_update_completes_only_when_the_agent_reports_the_new_hash_for_the_current_container() {
    let env: Vec<EnvVar> = vec![env_from("metadata.annotations['version']")];
    let mut p = pod("demo-a", "r2");
    p.metadata.annotations = kruise_api::pod::InternedMap::from(Some(annotations(&[("version", "2")])));
    p.spec.as_mut().unwrap().containers = vec![kruise_api::pod::ContainerRecord {
        name: "app".into(),
        env: Some(env.clone()),
        ..Default::default()
    }];
    p.status.as_mut().unwrap().container_statuses = Some(vec![kruise_api::pod::ContainerStatusRecord {
        name: "app".into(),
        container_id: Some("containerd://new".into()),
        ..Default::default()
    }]);
    let entry = |id: &str, version: &str| RuntimeContainerMetaSet {
        containers: vec![RuntimeContainerMeta {
            name: "app".into(),
            container_id: id.into(),
            restart_count: 1,
            hashes: RuntimeContainerHashes {
                plain_hash: 1,
                extracted_env_from_metadata_hash: expected_hash(
                    &env,
                    &(),
                    &annotations(&[("version", version)]),
                ),
            },
            restarted_at: None,
        }],
    };
    let mut state = InPlaceUpdateState::new("r2", now());
    state.update_env_from_metadata = true;
    assert!(!env_completed(&p), "no report yet");
    let rows = [
        ("containerd://old", "1", false, "the old container"),
        (
            "containerd://new",
            "1",
            false,
            "the new container with the old value",
        ),
        ("containerd://old", "2", false, "a report about another container"),
        ("containerd://new", "2", true, "restarted with the new value"),
    ];
    for (id, version, want, name) in rows {
        let p = with_meta(p.clone(), &entry(id, version));
        assert_eq!(env_completed(&p), want, "{name}");
        assert_eq!(crate::inplace::containers_completed(&p, &state), want, "{name}");
    }
}
