use super::*;
use crate::cloneset::testing::cloneset;
use crate::pods::fixtures::{now, pod};
use k8s_openapi::api::core::v1::{
    ConfigMapKeySelector, Container, EnvVar, EnvVarSource, ObjectFieldSelector,
};
use kruise_api::pod::{ContainerRecord, ContainerStatusRecord};

pub(super) fn template() -> PodTemplateSpec {
    cloneset(1).spec.template
}

pub(super) fn env_from(path: &str) -> EnvVar {
    EnvVar {
        name: "FROM_META".into(),
        value: None,
        value_from: Some(EnvVarSource {
            field_ref: Some(ObjectFieldSelector {
                field_path: path.into(),
                api_version: None,
            }),
            ..Default::default()
        }),
    }
}

#[test]
fn what_can_be_updated_in_place() {
    type Change = fn(&mut PodTemplateSpec);
    type Want = Result<(Vec<(&'static str, &'static str)>, Option<Value>), NotInPlace>;
    let rows: Vec<(&str, Change, Want)> = vec![
        ("nothing changed", |_| {}, Ok((vec![], None))),
        (
            "an image change",
            |t| t.spec.as_mut().unwrap().containers[0].image = Some("app:2".into()),
            Ok((vec![("app", "app:2")], None)),
        ),
        (
            "a template label added and one removed",
            |t| {
                let labels = t.metadata.as_mut().unwrap().labels.as_mut().unwrap();
                labels.remove("app");
                labels.insert("tier".into(), "web".into());
            },
            Ok((
                vec![],
                Some(json!({"metadata": {"labels": {"app": null, "tier": "web"}}})),
            )),
        ),
        (
            "an annotation change",
            |t| t.metadata.as_mut().unwrap().annotations = Some([("a".to_string(), "1".to_string())].into()),
            Ok((vec![], Some(json!({"metadata": {"annotations": {"a": "1"}}})))),
        ),
        (
            "a command change",
            |t| t.spec.as_mut().unwrap().containers[0].command = Some(vec!["sh".into()]),
            Err(NotInPlace::SpecChanged),
        ),
        (
            "an added container",
            |t| {
                t.spec.as_mut().unwrap().containers.push(Container {
                    name: "side".into(),
                    ..Default::default()
                })
            },
            Err(NotInPlace::SpecChanged),
        ),
        (
            "an image removed",
            |t| t.spec.as_mut().unwrap().containers[0].image = None,
            Err(NotInPlace::SpecChanged),
        ),
        (
            "a restart policy change",
            |t| t.spec.as_mut().unwrap().restart_policy = Some("Always".into()),
            Err(NotInPlace::SpecChanged),
        ),
    ];
    for (name, change, want) in rows {
        let old = template();
        let mut new = old.clone();
        change(&mut new);
        let got = calculate_spec(&old, &new, "demo-2").map(|s| {
            let images: Vec<(String, String)> = s.container_images.into_iter().collect();
            (images, s.meta_data_patch)
        });
        let want = want.map(|(i, m)| {
            (
                i.into_iter()
                    .map(|(a, b)| (a.to_string(), b.to_string()))
                    .collect::<Vec<_>>(),
                m,
            )
        });
        assert_eq!(got, want, "{name}");
    }
}

pub(super) fn prioritised_pod() -> PodRecord {
    let barrier = |n: i64| EnvVar {
        name: BARRIER_ENV.into(),
        value: None,
        value_from: Some(EnvVarSource {
            config_map_key_ref: Some(ConfigMapKeySelector {
                key: format!("p_{n}"),
                name: "x-barrier".into(),
                optional: None,
            }),
            ..Default::default()
        }),
    };
    let mut p = pod("demo-a", "r1");
    let c = |name: &str, env: Option<Vec<EnvVar>>| ContainerRecord {
        name: name.into(),
        image: Some(format!("{name}:1")),
        env,
        ..ContainerRecord::default()
    };
    p.spec.as_mut().unwrap().containers = vec![
        c("redis", Some(vec![barrier(10)])),
        c("nginx", Some(vec![barrier(1)])),
        c("log", None),
    ];
    p.status.as_mut().unwrap().container_statuses = Some(
        ["redis", "nginx", "log"]
            .iter()
            .map(|n| ContainerStatusRecord {
                name: (*n).into(),
                image: format!("{n}:1"),
                image_id: format!("id-{n}-1"),
                ready: true,
                ..Default::default()
            })
            .collect(),
    );
    p
}

#[test]
fn the_first_batch_is_the_unprioritised_and_highest_priority_containers() {
    let p = prioritised_pod();
    let images: BTreeMap<String, String> = ["redis", "nginx", "log"]
        .iter()
        .map(|n| (n.to_string(), format!("{n}:2")))
        .collect();
    let mut state = InPlaceUpdateState::new("r2", now());
    let patch = patch_batch(&p, &images, &BTreeMap::new(), None, &mut state, now());
    assert_eq!(
        patch["spec"]["containers"],
        json!([{"name": "log", "image": "log:2"}, {"name": "redis", "image": "redis:2"}])
    );
    assert_eq!(
        state.next_container_images,
        [("nginx".to_string(), "nginx:2".to_string())].into()
    );
    assert_eq!(
        state
            .pre_check_before_next
            .as_ref()
            .unwrap()
            .containers_required_ready,
        vec!["log", "redis"]
    );
    assert_eq!(state.container_batches_record[0].containers, vec!["log", "redis"]);
    assert_eq!(state.last_container_statuses["redis"].image_id, "id-redis-1");
    assert!(!state.last_container_statuses.contains_key("nginx"));
}

#[test]
fn the_grace_annotation_round_trips_with_a_base64_metadata_patch() {
    let spec = UpdateSpec {
        revision: "demo-2".into(),
        container_images: [("app".to_string(), "app:2".to_string())].into(),
        meta_data_patch: Some(json!({"metadata": {"labels": {"a": "b"}}})),
        grace_seconds: 30,
        ..Default::default()
    };
    let text = serde_json::to_string(&spec).unwrap();
    assert_eq!(
        text,
        r#"{"revision":"demo-2","containerImages":{"app":"app:2"},"metaDataPatch":"eyJtZXRhZGF0YSI6eyJsYWJlbHMiOnsiYSI6ImIifX19","graceSeconds":30}"#
    );
    assert_eq!(serde_json::from_str::<UpdateSpec>(&text).unwrap(), spec);
}

#[test]
fn the_ready_condition_patch_also_forces_ready_false() {
    let p = pod("demo-a", "r");
    let patch = ready_condition_patch(&p, false, now());
    assert_eq!(patch["status"]["conditions"][0]["reason"], "StartInPlaceUpdate");
    assert_eq!(patch["status"]["conditions"][1]["type"], "Ready");
    let patch = ready_condition_patch(&p, true, now());
    assert_eq!(patch["status"]["conditions"].as_array().unwrap().len(), 1);
    let condition = &patch["status"]["conditions"][0];
    assert!(
        condition["reason"].is_null() && condition.as_object().unwrap().contains_key("reason"),
        "the True patch deletes the reason the False patch set"
    );
}
