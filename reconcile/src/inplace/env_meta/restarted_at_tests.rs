//! `kubectl.kubernetes.io/restartedAt` (`kubectl kruise rollout restart`): a key every container
//! reads, so its change restarts them all, in place only where the agent serves the pod.

use std::collections::BTreeMap;

use k8s_openapi::api::core::v1::{Container, PodTemplateSpec};
use kruise_core::containermeta::{RESTARTED_AT_KEY, RuntimeContainerMetaSet};
use serde_json::json;

use super::*;
use crate::inplace::tests::{prioritised_pod, template};
use crate::inplace::{InPlaceUpdateState, RefMetadata, begin, calculate_spec, patch_batch};
use crate::pods::fixtures::{now, pod};

fn annotations(pairs: &[(&str, &str)]) -> BTreeMap<String, String> {
    pairs.iter().map(|(k, v)| ((*k).into(), (*v).into())).collect()
}

/// The template with a second container `side` and `annotations`.
fn two_containers(pairs: &[(&str, &str)]) -> PodTemplateSpec {
    let mut t = template();
    t.spec.as_mut().unwrap().containers.push(Container {
        name: "side".into(),
        image: Some("side:1".into()),
        ..Default::default()
    });
    t.metadata.as_mut().unwrap().annotations = Some(annotations(pairs));
    t
}

fn restart_of(containers: &[&str], value: &str) -> BTreeMap<String, RefMetadata> {
    containers
        .iter()
        .map(|c| {
            let meta = RefMetadata {
                annotations: annotations(&[(RESTARTED_AT_KEY, value)]),
                ..Default::default()
            };
            ((*c).to_string(), meta)
        })
        .collect()
}

#[test]
fn a_restarted_at_change_restarts_every_container_and_other_keys_update_in_place() {
    const T1: &str = "2026-11-30T05:00:00Z";
    const T2: &str = "2026-11-30T06:00:00Z";
    // (name, old annotations, new annotations, restarted containers, generic metadata patch)
    type Row = (
        &'static str,
        &'static [(&'static str, &'static str)],
        &'static [(&'static str, &'static str)],
        Option<&'static str>,
        Option<serde_json::Value>,
    );
    let rows: [Row; 5] = [
        ("first restart", &[], &[(RESTARTED_AT_KEY, T1)], Some(T1), None),
        (
            "second restart",
            &[(RESTARTED_AT_KEY, T1)],
            &[(RESTARTED_AT_KEY, T2)],
            Some(T2),
            None,
        ),
        (
            "a restart with another annotation",
            &[(RESTARTED_AT_KEY, T1)],
            &[(RESTARTED_AT_KEY, T2), ("a", "1")],
            Some(T2),
            Some(json!({"metadata": {"annotations": {"a": "1"}}})),
        ),
        (
            "another annotation only",
            &[(RESTARTED_AT_KEY, T1)],
            &[(RESTARTED_AT_KEY, T1), ("a", "1")],
            None,
            Some(json!({"metadata": {"annotations": {"a": "1"}}})),
        ),
        (
            "the annotation removed",
            &[(RESTARTED_AT_KEY, T1)],
            &[],
            None,
            Some(json!({"metadata": {"annotations": {RESTARTED_AT_KEY: null}}})),
        ),
    ];
    for (name, old, new, restart, meta) in rows {
        let verdict = calculate_spec(&two_containers(old), &two_containers(new), "r2");
        match restart {
            Some(value) => {
                let Err(NotInPlace::EnvFromMetadata { containers, spec }) = verdict else {
                    panic!("{name}: {verdict:?}")
                };
                assert_eq!(containers, vec!["app", "side"], "{name}");
                assert!(spec.update_env_from_metadata, "{name}");
                assert_eq!(
                    spec.container_ref_metadata,
                    restart_of(&["app", "side"], value),
                    "{name}"
                );
                assert_eq!(spec.meta_data_patch, meta, "{name}");
            }
            None => {
                let spec = verdict.unwrap_or_else(|e| panic!("{name}: {e:?}"));
                assert!(!spec.update_env_from_metadata, "{name}");
                assert!(spec.container_ref_metadata.is_empty(), "{name}");
                assert_eq!(spec.meta_data_patch, meta, "{name}");
            }
        }
    }
}

#[test]
fn a_restart_is_in_place_only_where_the_agent_serves_the_pod() {
    let verdict = calculate_spec(
        &two_containers(&[]),
        &two_containers(&[(RESTARTED_AT_KEY, "t")]),
        "r2",
    );
    let bare = pod("demo-a", "r1");
    let mut served = bare.clone();
    served.metadata.annotations.insert(
        RUNTIME_CONTAINERS_META_KEY.into(),
        RuntimeContainerMetaSet::default().to_json(),
    );
    assert!(for_pod(&verdict, &bare, true).is_err(), "no agent: recreated");
    assert!(for_pod(&verdict, &served, false).is_err(), "gates off: recreated");
    let spec = for_pod(&verdict, &served, true).expect("in place");
    // Beginning applies the annotation and records the restart of every container in one batch.
    let mut p = served.clone();
    p.spec
        .as_mut()
        .unwrap()
        .containers
        .push(kruise_api::pod::ContainerRecord {
            name: "side".into(),
            image: Some("side:1".into()),
            ..Default::default()
        });
    let patch = begin(&p, spec, 0, None, now(), &mut Default::default());
    assert_eq!(patch["metadata"]["annotations"][RESTARTED_AT_KEY], "t");
    let state: InPlaceUpdateState = serde_json::from_str(
        patch["metadata"]["annotations"]["apps.kruise.io/inplace-update-state"]
            .as_str()
            .unwrap(),
    )
    .unwrap();
    assert!(state.update_env_from_metadata);
    assert_eq!(state.container_batches_record[0].containers, vec!["app", "side"]);
}

#[test]
fn launch_priority_does_not_split_a_restart() {
    // redis has priority 10, nginx 1, log none: the shared key puts them all in the first batch.
    let p = prioritised_pod();
    let mut state = InPlaceUpdateState::new("r2", now());
    let patch = patch_batch(
        &p,
        &BTreeMap::new(),
        &restart_of(&["redis", "nginx", "log"], "t"),
        None,
        &mut state,
        now(),
    );
    assert_eq!(patch["metadata"]["annotations"][RESTARTED_AT_KEY], "t");
    assert!(state.next_container_ref_metadata.is_empty() && state.pre_check_before_next.is_none());
    assert_eq!(
        state.container_batches_record[0].containers,
        vec!["log", "nginx", "redis"]
    );
}
