use std::collections::BTreeMap;

use super::*;
use k8s_openapi::api::core::v1::{
    ContainerStatus, EnvVarSource, ObjectFieldSelector, PodCondition, PodSpec, PodStatus,
};
use k8s_openapi::apimachinery::pkg::apis::meta::v1::OwnerReference;
use kruise_core::containermeta::{RUNTIME_CONTAINERS_META_KEY, expected_hash};

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

/// A CloneSet pod with `app` (env from annotation `demo/env` = `value`) and `side` (no such env),
/// running as containerd ids `a1` and `s1`.
fn pod(value: &str) -> Pod {
    let mut p = Pod::default();
    p.metadata.name = Some("demo-x".into());
    p.metadata.owner_references = Some(vec![OwnerReference {
        api_version: "apps.kruise.io/v1alpha1".into(),
        kind: "CloneSet".into(),
        name: "demo".into(),
        uid: "u".into(),
        controller: Some(true),
        ..Default::default()
    }]);
    p.metadata.annotations = Some([("demo/env".to_string(), value.to_string())].into());
    p.spec = Some(PodSpec {
        containers: vec![
            Container {
                name: "app".into(),
                env: Some(env()),
                ..Default::default()
            },
            Container {
                name: "side".into(),
                ..Default::default()
            },
        ],
        ..Default::default()
    });
    let status = |name: &str, id: &str| ContainerStatus {
        name: name.into(),
        container_id: Some(format!("containerd://{id}")),
        ..Default::default()
    };
    p.status = Some(PodStatus {
        container_statuses: Some(vec![status("app", "a1"), status("side", "s1")]),
        conditions: Some(vec![PodCondition {
            type_: IN_PLACE_UPDATE_READY.into(),
            status: "True".into(),
            ..Default::default()
        }]),
        ..Default::default()
    });
    p
}

fn cri(app: &str) -> Vec<CriContainer> {
    let c = |name: &str, id: &str| CriContainer {
        name: name.into(),
        id: id.into(),
        running: true,
        restart_count: 0,
        plain_hash: 0xabc,
    };
    vec![c("side", "s1"), c("app", app)]
}

fn with_report(mut p: Pod, report: &RuntimeContainerMetaSet) -> Pod {
    p.metadata
        .annotations
        .get_or_insert_default()
        .insert(RUNTIME_CONTAINERS_META_KEY.into(), report.to_json());
    p
}

fn value_hash(v: &str) -> u64 {
    expected_hash(
        &env(),
        &(),
        &Some(BTreeMap::from([("demo/env".to_string(), v.to_string())])),
    )
}

#[test]
fn only_kruise_pods_are_watched() {
    let mut p = pod("a");
    assert!(watched(&p));
    p.metadata.owner_references.as_mut().unwrap()[0].api_version = "apps/v1".into();
    assert!(!watched(&p));
    p.metadata
        .annotations
        .as_mut()
        .unwrap()
        .insert("kruise.io/sidecarset-hash".into(), "{}".into());
    assert!(watched(&p), "a SidecarSet-injected pod is watched");
}

#[test]
fn a_fresh_report_copies_kubelet_hash_and_reads_env_only_where_env_reads_metadata() {
    let p = pod("a");
    let entries = build(&p, "containerd", &cri("a1"), None, true);
    assert_eq!(entries.len(), 2, "one entry per status, in status order");
    assert_eq!(entries[0].meta.name, "app");
    assert_eq!(entries[0].meta.container_id, "containerd://a1");
    assert_eq!(entries[0].meta.hashes.plain_hash, 0xabc);
    assert!(entries[0].needs_exec, "app's env reads an annotation: exec `env`");
    assert!(!entries[1].needs_exec);
    assert_eq!(
        entries[1].meta.hashes.extracted_env_from_metadata_hash, 86_995_377,
        "no env from metadata: the hash of nothing, without exec"
    );
    let off = build(&p, "containerd", &cri("a1"), None, false);
    assert!(!off[0].needs_exec && off[1].meta.hashes.extracted_env_from_metadata_hash == 0);
}

#[test]
fn an_entry_for_the_same_container_is_kept_and_a_new_container_gets_a_new_one() {
    let p = pod("b");
    let mut old = report(&build(&p, "containerd", &cri("a1"), None, true));
    old.containers[0].hashes.extracted_env_from_metadata_hash = value_hash("a");
    let kept = build(&p, "containerd", &cri("a1"), Some(&old), true);
    assert_eq!(report(&kept), old, "same ids: nothing to read, nothing to report");
    let fresh = build(&p, "containerd", &cri("a2"), Some(&old), true);
    assert_eq!(fresh[0].meta.container_id, "containerd://a2");
    assert!(fresh[0].needs_exec);
    assert_eq!(fresh[1].meta, old.containers[1]);
}

#[test]
fn the_current_hash_comes_from_the_env_output() {
    let p = pod("b");
    assert_eq!(current_hash(&p, "app", "PATH=/bin\nDEMO=b\n"), value_hash("b"));
    assert_ne!(current_hash(&p, "app", "DEMO=a\n"), value_hash("b"));
}

#[test]
fn only_stale_containers_restart_and_only_during_an_in_place_update() {
    let mut p = pod("b");
    let mut entries = build(&p, "containerd", &cri("a1"), None, true);
    entries[0].meta.hashes.extracted_env_from_metadata_hash = value_hash("a");
    assert!(
        restarts(&p, &entries).is_empty(),
        "InPlaceUpdateReady True: a manual change restarts nothing"
    );
    p.status.as_mut().unwrap().conditions.as_mut().unwrap()[0].status = "False".into();
    let names: Vec<&str> = restarts(&p, &entries)
        .iter()
        .map(|e| e.meta.name.as_str())
        .collect();
    assert_eq!(names, vec!["app"], "side has no env from metadata");
    entries[0].meta.hashes.extracted_env_from_metadata_hash = value_hash("b");
    assert!(restarts(&p, &entries).is_empty(), "restarted with the new value");
    entries[0].meta.hashes.extracted_env_from_metadata_hash = 0;
    assert!(
        restarts(&p, &entries).is_empty(),
        "an unknown hash restarts nothing"
    );
}

#[test]
fn events_ask_for_a_sync_when_the_report_is_missing_or_stale() {
    let p = pod("a");
    assert!(wanted(None, &p, true), "no report yet");
    let mut r = report(&build(&p, "containerd", &cri("a1"), None, true));
    r.containers[0].hashes.extracted_env_from_metadata_hash = value_hash("a");
    let reported = with_report(p.clone(), &r);
    assert!(!wanted(Some(&reported), &reported, true), "up to date");
    let mut changed = reported.clone();
    changed
        .metadata
        .annotations
        .as_mut()
        .unwrap()
        .insert("demo/env".into(), "b".into());
    assert!(
        wanted(Some(&reported), &changed, true),
        "the expected hash changed"
    );
    assert!(
        !wanted(Some(&reported), &changed, false),
        "without the gate only ids count"
    );
    // The agent keeps old pods trimmed; they decide the same.
    let trimmed = kept(reported.clone());
    assert!(trimmed.status.is_none());
    assert!(!wanted(Some(&trimmed), &reported, true));
    assert!(wanted(Some(&trimmed), &changed, true));
    let mut back = reported.clone();
    back.metadata
        .annotations
        .as_mut()
        .unwrap()
        .insert("demo/env".into(), "a".into());
    assert!(
        wanted(Some(&kept(changed.clone())), &back, true),
        "changed back since the last event"
    );
    assert!(!wanted(Some(&kept(changed.clone())), &changed, false));
    let mut restarted = reported.clone();
    restarted
        .status
        .as_mut()
        .unwrap()
        .container_statuses
        .as_mut()
        .unwrap()[0]
        .container_id = Some("containerd://a2".into());
    assert!(wanted(Some(&reported), &restarted, false), "a new container id");
    let mut deleting = p.clone();
    deleting.metadata.deletion_timestamp = Some(k8s_openapi::apimachinery::pkg::apis::meta::v1::Time(
        k8s_openapi::jiff::Timestamp::UNIX_EPOCH,
    ));
    assert!(!wanted(None, &deleting, true));
}

fn restart_at(mut p: Pod, at: &str) -> Pod {
    p.metadata
        .annotations
        .get_or_insert_default()
        .insert(containermeta::RESTARTED_AT_KEY.into(), at.into());
    p
}

fn set_updating(p: &mut Pod, updating: bool) {
    p.status.as_mut().unwrap().conditions.as_mut().unwrap()[0].status =
        if updating { "False" } else { "True" }.into();
}

#[test]
fn a_new_container_records_the_restarted_at_it_started_under() {
    let p = restart_at(pod("a"), "t1");
    let entries = build(&p, "containerd", &cri("a1"), None, true);
    assert!(
        entries
            .iter()
            .all(|e| e.meta.restarted_at.as_deref() == Some("t1"))
    );
    assert!(
        report(&entries).to_json().contains(r#""restartedAt":"t1""#),
        "{}",
        report(&entries).to_json()
    );
    let plain = report(&build(&pod("a"), "containerd", &cri("a1"), None, true));
    assert!(plain.containers.iter().all(|e| e.restarted_at.is_none()));
    assert!(!plain.to_json().contains("restartedAt"), "omitted when unset");
    // A new restartedAt keeps the entries of running containers; a new container gets the new one.
    let mut p2 = restart_at(pod("a"), "t2");
    set_updating(&mut p2, true);
    let old = report(&entries);
    let next = build(&p2, "containerd", &cri("a2"), Some(&old), true);
    assert_eq!(next[0].meta.restarted_at.as_deref(), Some("t2"), "app restarted");
    assert_eq!(next[1].meta, old.containers[1], "side kept its entry");
    // An entry written without the field adopts the value only outside an in-place update.
    let unrecorded = report(&build(&pod("a"), "containerd", &cri("a1"), None, true));
    let kept = build(&p2, "containerd", &cri("a1"), Some(&unrecorded), true);
    assert!(kept.iter().all(|e| e.meta.restarted_at.is_none()));
    set_updating(&mut p2, false);
    let adopted = build(&p2, "containerd", &cri("a1"), Some(&unrecorded), true);
    assert!(
        adopted
            .iter()
            .all(|e| e.meta.restarted_at.as_deref() == Some("t2"))
    );
}

#[test]
fn a_new_restarted_at_restarts_every_container_during_an_in_place_update_only() {
    let before = restart_at(pod("a"), "t1");
    let mut entries = build(&before, "containerd", &cri("a1"), None, true);
    entries[0].meta.hashes.extracted_env_from_metadata_hash = value_hash("a");
    let mut p = restart_at(pod("a"), "t2");
    assert!(
        restarts(&p, &entries).is_empty(),
        "InPlaceUpdateReady True: nothing restarts"
    );
    set_updating(&mut p, true);
    let names: Vec<&str> = restarts(&p, &entries)
        .iter()
        .map(|e| e.meta.name.as_str())
        .collect();
    assert_eq!(names, vec!["app", "side"], "every container, env or not");
    let mut same = restart_at(pod("a"), "t1");
    set_updating(&mut same, true);
    assert!(
        restarts(&same, &entries).is_empty(),
        "the value the containers started under: nothing to restart"
    );
    let mut first = pod("a");
    set_updating(&mut first, true);
    let unset = build(&pod("a"), "containerd", &cri("a1"), None, true);
    assert!(
        restarts(&restart_at(first, "t1"), &unset)
            .iter()
            .any(|e| e.meta.name == "side"),
        "the first restart of containers recorded without a value"
    );
}

#[test]
fn a_restarted_at_change_asks_for_a_sync() {
    let p = restart_at(pod("a"), "t1");
    let mut r = report(&build(&p, "containerd", &cri("a1"), None, true));
    r.containers[0].hashes.extracted_env_from_metadata_hash = value_hash("a");
    let reported = with_report(p, &r);
    assert!(!wanted(Some(&reported), &reported, true), "up to date");
    let changed = restart_at(reported.clone(), "t2");
    assert!(wanted(Some(&reported), &changed, true), "a new restartedAt");
    assert!(
        wanted(None, &changed, true),
        "the report names an older restartedAt"
    );
    assert!(!wanted(Some(&reported), &changed, false), "without the gate");
}
