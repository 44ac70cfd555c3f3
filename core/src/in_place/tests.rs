use serde_json::{Value, json};

use super::*;
use crate::containermeta::{
    RUNTIME_CONTAINERS_META_KEY, RuntimeContainerHashes, RuntimeContainerMeta, expected_hash,
};

/// A pod with container `app` (image `spec_image`, env read from annotation `version`), reported with
/// `status_image`/`image_id` and containerID `containerd://new`, and `annotations`.
fn pod(annotations: Value, spec_image: &str, status_image: &str, image_id: &str) -> PodRecord {
    serde_json::from_value(json!({
        "metadata": {"name": "p", "annotations": annotations},
        "spec": {"containers": [{"name": "app", "image": spec_image, "env": [{"name": "V",
            "valueFrom": {"fieldRef": {"fieldPath": "metadata.annotations['version']"}}}]}]},
        "status": {"containerStatuses": [{"name": "app", "image": status_image, "imageID": image_id,
            "containerID": "containerd://new", "ready": true, "restartCount": 1}]}
    }))
    .unwrap()
}

fn state(text: &str) -> Value {
    json!({IN_PLACE_UPDATE_STATE_KEY: text})
}

const UPDATING: &str = r#"{"revision":"r","updateTimestamp":"2024-01-01T00:00:00Z","lastContainerStatuses":{"app":{"imageID":"id1"}}}"#;

#[test]
fn completion_follows_image_ids_or_the_reported_image() {
    let rows = [
        (
            json!({}),
            "app:2",
            "app:1",
            "id1",
            true,
            "no state: nothing to complete",
        ),
        (
            state(UPDATING),
            "app:2",
            "app:1",
            "id1",
            false,
            "same imageID, old image",
        ),
        (state(UPDATING), "app:2", "app:1", "id2", true, "imageID changed"),
        (
            state(UPDATING),
            "app:2",
            "app:2",
            "id1",
            true,
            "the spec image is reported",
        ),
        (
            state(UPDATING),
            "app",
            "app:latest",
            "id1",
            true,
            "a tag-less image is :latest",
        ),
        (
            state(UPDATING),
            "reg:5000/app",
            "reg:5000/app:latest",
            "id1",
            true,
            "a registry port is not a tag",
        ),
        (
            state(UPDATING),
            "app@sha256:ab",
            "app@sha256:ab",
            "id1",
            true,
            "a digest needs no tag",
        ),
        (
            json!({IN_PLACE_UPDATE_STATE_KEY_OLD: UPDATING}),
            "app:2",
            "app:1",
            "id1",
            false,
            "the old key is read too",
        ),
        (
            state("{bad"),
            "app:2",
            "app:2",
            "id2",
            false,
            "an unreadable state has not completed",
        ),
        (
            state(r#"{"lastContainerStatuses":{"gone":{"imageID":"x"}}}"#),
            "app:2",
            "app:2",
            "id2",
            false,
            "a container of the batch without status",
        ),
        (
            state(r#"{"nextContainerResources":{"app":{"limits":{"cpu":"1"}}}}"#),
            "app:2",
            "app:2",
            "id2",
            false,
            "a resources batch is left",
        ),
        (
            state(r#"{"nextContainerImages":{"app":"app:3"}}"#),
            "app:2",
            "app:2",
            "id2",
            false,
            "an image batch is left",
        ),
        (
            json!({IN_PLACE_UPDATE_GRACE_KEY_OLD: "{}"}),
            "app:2",
            "app:2",
            "id2",
            false,
            "in the (old) grace period",
        ),
    ];
    for (annotations, spec, status, id, want, name) in rows {
        let p = pod(annotations, spec, status, id);
        assert_eq!(update_completed(&p), want, "{name}");
        assert_eq!(
            Completion::default().update_completed(&p),
            want,
            "{name} (one pass)"
        );
    }
}

#[test]
fn env_from_metadata_completes_only_with_the_new_hash_for_the_current_container() {
    let updating = r#"{"revision":"r","updateEnvFromMetadata":true,"lastContainerStatuses":{}}"#;
    let with_report = |container_id: &str, version: &str| {
        let env = pod(json!({}), "app:1", "app:1", "id1").spec.unwrap().containers[0]
            .env
            .clone()
            .unwrap();
        let annotations: BTreeMap<String, String> = [("version".to_string(), version.to_string())].into();
        let report = RuntimeContainerMetaSet {
            containers: vec![RuntimeContainerMeta {
                name: "app".into(),
                container_id: container_id.into(),
                restart_count: 1,
                hashes: RuntimeContainerHashes {
                    plain_hash: 1,
                    extracted_env_from_metadata_hash: expected_hash(&env, &(), &annotations),
                },
                restarted_at: None,
            }],
        };
        pod(
            json!({IN_PLACE_UPDATE_STATE_KEY: updating, "version": "2",
                RUNTIME_CONTAINERS_META_KEY: report.to_json()}),
            "app:1",
            "app:1",
            "id1",
        )
    };
    assert!(
        !update_completed(&pod(state(updating), "app:1", "app:1", "id1")),
        "no report yet"
    );
    let rows = [
        ("containerd://old", "2", false, "a report about the old container"),
        (
            "containerd://new",
            "1",
            false,
            "the new container with the old value",
        ),
        ("containerd://new", "2", true, "restarted with the new value"),
    ];
    for (id, version, want, name) in rows {
        let p = with_report(id, version);
        assert_eq!(env_completed(&p), want, "{name}");
        assert_eq!(update_completed(&p), want, "{name}");
    }
}

#[test]
fn a_restart_completes_only_when_every_container_recorded_the_current_restarted_at() {
    use crate::containermeta::RESTARTED_AT_KEY;
    let updating = r#"{"revision":"r","updateEnvFromMetadata":true,"lastContainerStatuses":{}}"#;
    let env = pod(json!({}), "app:1", "app:1", "id1").spec.unwrap().containers[0]
        .env
        .clone()
        .unwrap();
    let annotations: BTreeMap<String, String> = [("version".to_string(), "2".to_string())].into();
    let with_report = |container_id: &str, recorded: Option<&str>, pod_at: Option<&str>| {
        let report = RuntimeContainerMetaSet {
            containers: vec![RuntimeContainerMeta {
                name: "app".into(),
                container_id: container_id.into(),
                restart_count: 1,
                hashes: RuntimeContainerHashes {
                    plain_hash: 1,
                    extracted_env_from_metadata_hash: expected_hash(&env, &(), &annotations),
                },
                restarted_at: recorded.map(Into::into),
            }],
        };
        let mut a = json!({IN_PLACE_UPDATE_STATE_KEY: updating, "version": "2",
            RUNTIME_CONTAINERS_META_KEY: report.to_json()});
        if let Some(at) = pod_at {
            a[RESTARTED_AT_KEY] = json!(at);
        }
        pod(a, "app:1", "app:1", "id1")
    };
    let rows = [
        (
            "containerd://new",
            Some("t1"),
            Some("t2"),
            false,
            "started under the old value",
        ),
        (
            "containerd://new",
            None,
            Some("t2"),
            false,
            "recorded without a value",
        ),
        (
            "containerd://old",
            Some("t2"),
            Some("t2"),
            false,
            "a report about another container",
        ),
        (
            "containerd://new",
            Some("t2"),
            Some("t2"),
            true,
            "restarted for the new value",
        ),
        (
            "containerd://new",
            Some("t1"),
            None,
            true,
            "the pod has no restartedAt",
        ),
    ];
    for (id, recorded, at, want, name) in rows {
        let p = with_report(id, recorded, at);
        assert_eq!(env_completed(&p), want, "{name}");
        assert_eq!(update_completed(&p), want, "{name}");
    }
}
