use super::*;
use k8s_openapi::api::core::v1::{EnvVarSource, ObjectFieldSelector};

fn from(name: &str, path: &str) -> EnvVar {
    EnvVar {
        name: name.into(),
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

fn map(pairs: &[(&str, &str)]) -> BTreeMap<String, String> {
    pairs.iter().map(|(k, v)| ((*k).into(), (*v).into())).collect()
}

#[test]
fn worked_values_of_the_hash_encoding() {
    // No counted env: `null`.
    assert_eq!(expected_hash(&[], &(), &()), 86_995_377);
    let env = [from("FOO", "metadata.annotations['k']")];
    // `[{"name":"FOO","value":"bar"}]`.
    assert_eq!(expected_hash(&env, &(), &map(&[("k", "bar")])), 366_487_640);
    // `[{"name":"FOO"}]`: an empty or missing value is omitted.
    assert_eq!(expected_hash(&env, &(), &()), 791_028_036);
    assert_eq!(expected_hash(&env, &(), &map(&[("k", "")])), 791_028_036);
}

#[test]
fn only_label_and_annotation_subscripts_without_a_literal_value_count() {
    let mut literal = from("A", "metadata.labels['a']");
    literal.value = Some("x".into());
    let rows = [
        (from("A", "metadata.labels['a']"), Some((MetaField::Labels, "a"))),
        (
            from("A", "metadata.annotations['x/y']"),
            Some((MetaField::Annotations, "x/y")),
        ),
        (from("A", "metadata.name"), None),
        (from("A", "metadata.labels"), None),
        (from("A", "['a']"), None),
        (from("A", "spec.nodeName['a']"), None),
        (from("SIDECARSET_VERSION", "metadata.annotations['v']"), None),
        (from("SIDECARSET_VERSION_ALT", "metadata.annotations['v']"), None),
        (literal, None),
    ];
    for (env, want) in rows {
        assert_eq!(reads_metadata(&env), want, "{env:?}");
    }
    // A non-counted entry does not change the hash.
    let counted = [from("A", "metadata.labels['a']")];
    let mut with_other = counted.to_vec();
    with_other.push(from("N", "metadata.name"));
    let labels = map(&[("a", "1")]);
    assert_eq!(
        expected_hash(&counted, &labels, &()),
        expected_hash(&with_other, &labels, &())
    );
}

#[test]
fn current_hash_from_env_output_equals_expected_hash_of_the_same_values() {
    let env = [
        from("B", "metadata.labels['b']"),
        from("A", "metadata.annotations['a']"),
        from("C", "metadata.annotations['c']"),
    ];
    let labels = map(&[("b", "x=y")]);
    let annotations = map(&[("a", "<v&>")]);
    let output = "PATH=/bin\n  A=<v&>  \nB=x=y\nHOME=/\n";
    // C is missing from the container: "" on both sides; `=` inside a value survives.
    assert_eq!(
        current_hash(&env, output),
        expected_hash(&env, &labels, &annotations)
    );
    assert_ne!(
        current_hash(&env, "A=old\nB=x=y\n"),
        expected_hash(&env, &labels, &annotations)
    );
}

#[test]
fn runtime_meta_is_compact_json_in_field_order() {
    let set = RuntimeContainerMetaSet {
        containers: vec![
            RuntimeContainerMeta {
                name: "app".into(),
                container_id: "containerd://abc".into(),
                restart_count: 1,
                hashes: RuntimeContainerHashes {
                    plain_hash: 123,
                    extracted_env_from_metadata_hash: 456,
                },
                restarted_at: None,
            },
            RuntimeContainerMeta {
                name: "side".into(),
                container_id: "containerd://def".into(),
                restart_count: 0,
                hashes: RuntimeContainerHashes {
                    plain_hash: 7,
                    extracted_env_from_metadata_hash: 0,
                },
                restarted_at: None,
            },
        ],
    };
    let text = set.to_json();
    assert_eq!(
        text,
        r#"{"containers":[{"name":"app","containerID":"containerd://abc","restartCount":1,"hashes":{"plainHash":123,"extractedEnvFromMetadataHash":456}},{"name":"side","containerID":"containerd://def","restartCount":0,"hashes":{"plainHash":7}}]}"#
    );
    let annotations = map(&[(RUNTIME_CONTAINERS_META_KEY, text.as_str())]);
    assert_eq!(RuntimeContainerMetaSet::of(&annotations), Some(set));
    assert_eq!(
        RuntimeContainerMetaSet::of(&map(&[(RUNTIME_CONTAINERS_META_KEY, "{")])),
        None
    );
}

#[test]
fn restarted_at_restarts_every_container_and_other_keys_only_their_readers() {
    let env = [from("A", "metadata.annotations['k']")];
    let rows = [
        (&env[..], MetaField::Annotations, "k", true, "read by env"),
        (&env[..], MetaField::Annotations, "other", false, "read by nobody"),
        (&env[..], MetaField::Labels, "k", false, "a label of that name"),
        (
            &[][..],
            MetaField::Annotations,
            RESTARTED_AT_KEY,
            true,
            "restartedAt, no env",
        ),
        (
            &[][..],
            MetaField::Labels,
            RESTARTED_AT_KEY,
            false,
            "a label named so",
        ),
    ];
    for (env, field, key, want, name) in rows {
        assert_eq!(key_restarts(env, field, key), want, "{name}");
    }
}

#[test]
fn an_entry_is_restarted_for_the_pods_current_restarted_at() {
    let entry = |at: Option<&str>| RuntimeContainerMeta {
        name: "app".into(),
        restarted_at: at.map(Into::into),
        ..Default::default()
    };
    let at = |v: &str| map(&[(RESTARTED_AT_KEY, v)]);
    assert!(
        entry(None).restarted_for(&()),
        "no annotation: nothing to wait for"
    );
    assert!(entry(Some("t1")).restarted_for(&map(&[])));
    assert!(entry(Some("t1")).restarted_for(&at("t1")));
    assert!(!entry(Some("t1")).restarted_for(&at("t2")));
    assert!(!entry(None).restarted_for(&at("t1")));
    let text = RuntimeContainerMetaSet {
        containers: vec![entry(Some("t1"))],
    }
    .to_json();
    assert!(text.contains(r#""restartedAt":"t1""#), "{text}");
    let read = RuntimeContainerMetaSet::of(&map(&[(RUNTIME_CONTAINERS_META_KEY, text.as_str())]));
    assert_eq!(read.unwrap().containers[0].restarted_at.as_deref(), Some("t1"));
}
