//! Property tests of the Advanced StatefulSet conversion: v1beta1 → v1alpha1 → v1beta1 and v1alpha1 →
//! v1beta1 → v1alpha1 give back the object exactly (the v1beta1-only fields travel in the annotation
//! `kruise-rs.io/statefulset-v1beta1-fields`), the v1alpha1 form carries none of them, and both forms
//! decode into the typed structs.

use kruise_api::apps::shared::statefulset::{
    V1BETA1_FIELDS_ANNOTATION, V1BETA1_ONLY_SPEC_FIELDS, V1BETA1_ONLY_STATUS_FIELDS,
};
use kruise_api::{apps_v1alpha1, apps_v1beta1, convert_object, decode};
use proptest::collection::{btree_map, vec};
use proptest::option;
use proptest::prelude::*;
use proptest::sample::select;
use serde_json::{Map, Value, json};

/// Builds a JSON object from optional fields.
fn obj(fields: Vec<(&str, Option<Value>)>) -> Value {
    Value::Object(
        fields
            .into_iter()
            .filter_map(|(k, v)| v.map(|v| (k.to_string(), v)))
            .collect(),
    )
}

/// Fields no conversion knows, keyed `x…` so they never collide with a real field.
fn unknown() -> impl Strategy<Value = Map<String, Value>> {
    btree_map("x[A-Z][a-z]{0,4}", "[a-z0-9]{0,4}".prop_map(Value::from), 0..3)
        .prop_map(|m| m.into_iter().collect())
}

fn int_or_percent() -> impl Strategy<Value = Value> {
    prop_oneof![
        (1i64..=20).prop_map(Value::from),
        (1u32..=100).prop_map(|p| Value::from(format!("{p}%"))),
    ]
}

fn metadata() -> impl Strategy<Value = Value> {
    (
        "[a-z][a-z0-9-]{0,6}[a-z0-9]",
        btree_map("example\\.com/[a-z]{1,5}", "[ -~]{0,10}", 0..3),
        option::of(1i64..50),
    )
        .prop_map(|(name, annotations, generation)| {
            let annotations: Map<String, Value> = annotations
                .into_iter()
                .map(|(k, v)| (k, Value::from(v)))
                .collect();
            obj(vec![
                ("name", Some(Value::from(name))),
                ("namespace", Some(json!("shop"))),
                (
                    "annotations",
                    (!annotations.is_empty()).then_some(Value::Object(annotations)),
                ),
                ("generation", generation.map(Value::from)),
            ])
        })
}

fn rolling_update() -> impl Strategy<Value = Value> {
    (
        option::of(0i64..10),
        option::of(int_or_percent()),
        option::of(select(vec!["ReCreate", "InPlaceIfPossible", "InPlaceOnly"])),
        any::<bool>(),
        option::of(0i64..300),
        option::of(1i64..30),
        any::<bool>(),
    )
        .prop_map(
            |(partition, max_unavailable, policy, paused, min_ready, grace, unordered)| {
                obj(vec![
                    ("partition", partition.map(Value::from)),
                    ("maxUnavailable", max_unavailable),
                    ("podUpdatePolicy", policy.map(Value::from)),
                    ("paused", paused.then_some(Value::Bool(true))),
                    ("minReadySeconds", min_ready.map(Value::from)),
                    (
                        "inPlaceUpdateStrategy",
                        grace.map(|g| json!({"gracePeriodSeconds": g})),
                    ),
                    (
                        "unorderedUpdate",
                        unordered.then(|| {
                            json!({"priorityStrategy": {"weightPriority": [
                            {"weight": 50, "matchSelector": {"matchLabels": {"zone": "a"}}}]}})
                        }),
                    ),
                ])
            },
        )
}

/// The spec fields both versions have.
fn shared_spec() -> impl Strategy<Value = Map<String, Value>> {
    (
        option::of(0i64..20),
        option::of(select(vec!["OrderedReady", "Parallel"])),
        option::of(select(vec!["RollingUpdate", "OnDelete"])),
        option::of(rolling_update()),
        option::of(0i64..20),
        option::of("[a-z]{1,6}"),
        any::<bool>(),
        unknown(),
    )
        .prop_map(
            |(replicas, policy, type_, rolling, history, service, vct, mut spec)| {
                let fields = obj(vec![
                    ("replicas", replicas.map(Value::from)),
                    ("selector", Some(json!({"matchLabels": {"app": "web"}}))),
                    (
                        "template",
                        Some(json!({"metadata": {"labels": {"app": "web"}},
                        "spec": {"containers": [{"name": "web", "image": "nginx:1.27"}]}})),
                    ),
                    (
                        "volumeClaimTemplates",
                        vct.then(|| {
                            json!([{"metadata": {"name": "data"}, "spec": {"accessModes": ["ReadWriteOnce"],
                            "resources": {"requests": {"storage": "1Gi"}}}}])
                        }),
                    ),
                    ("serviceName", service.map(Value::from)),
                    ("podManagementPolicy", policy.map(Value::from)),
                    (
                        "updateStrategy",
                        Some(obj(vec![
                            ("type", type_.map(Value::from)),
                            ("rollingUpdate", rolling),
                        ])),
                    ),
                    ("revisionHistoryLimit", history.map(Value::from)),
                ]);
                if let Value::Object(f) = fields {
                    spec.extend(f);
                }
                spec
            },
        )
}

/// The spec fields only v1beta1 has.
fn beta_only_spec() -> impl Strategy<Value = Map<String, Value>> {
    (
        option::of(vec(
            prop_oneof![
                (0i64..10).prop_map(Value::from),
                (0u32..5, 0u32..5).prop_map(|(a, n)| Value::from(format!("{a}-{}", a + n))),
            ],
            1..4,
        )),
        any::<bool>(),
        option::of(int_or_percent()),
        option::of((select(vec!["Retain", "Delete"]), select(vec!["Retain", "Delete"]))),
        option::of(0i64..5),
        option::of(select(vec!["OnDelete", "OnPodRollingUpdate"])),
    )
        .prop_map(|(reserve, lifecycle, scale, retention, start, vcus)| {
            match obj(vec![
                ("reserveOrdinals", reserve.map(Value::from)),
                (
                    "lifecycle",
                    lifecycle.then(|| json!({"preDelete": {"labelsHandler": {"example.com/hold": "true"}}})),
                ),
                ("scaleStrategy", scale.map(|m| json!({"maxUnavailable": m}))),
                (
                    "persistentVolumeClaimRetentionPolicy",
                    retention.map(|(d, s)| json!({"whenDeleted": d, "whenScaled": s})),
                ),
                ("ordinals", start.map(|s| json!({"start": s}))),
                ("volumeClaimUpdateStrategy", vcus.map(|t| json!({"type": t}))),
            ]) {
                Value::Object(m) => m,
                _ => Map::new(),
            }
        })
}

fn shared_status() -> impl Strategy<Value = Map<String, Value>> {
    (
        0i64..10,
        0i64..10,
        option::of("[a-z0-9]{4}"),
        option::of(0i64..3),
        any::<bool>(),
    )
        .prop_map(|(replicas, ready, revision, collisions, condition)| {
            match obj(vec![
                ("observedGeneration", Some(Value::from(ready + 1))),
                ("replicas", Some(Value::from(replicas))),
                ("readyReplicas", Some(Value::from(ready))),
                ("availableReplicas", Some(Value::from(ready))),
                ("currentReplicas", Some(Value::from(replicas))),
                ("updatedReplicas", Some(Value::from(ready))),
                (
                    "currentRevision",
                    revision.clone().map(|r| Value::from(format!("web-{r}"))),
                ),
                (
                    "updateRevision",
                    revision.map(|r| Value::from(format!("web-{r}"))),
                ),
                ("collisionCount", collisions.map(Value::from)),
                (
                    "conditions",
                    condition
                        .then(|| json!([{"type": "FailedCreatePod", "status": "True", "message": "quota"}])),
                ),
                ("labelSelector", Some(json!("app=web"))),
            ]) {
                Value::Object(m) => m,
                _ => Map::new(),
            }
        })
}

fn beta_only_status() -> impl Strategy<Value = Map<String, Value>> {
    (option::of(1i64..10), option::of(1i64..10), any::<bool>()).prop_map(|(ready, available, claims)| {
        match obj(vec![
            ("updatedReadyReplicas", ready.map(Value::from)),
            ("updatedAvailableReplicas", available.map(Value::from)),
            (
                "volumeClaims",
                claims.then(|| {
                    json!([{"volumeClaimName": "data", "compatibleReplicas": 2, "compatibleReadyReplicas": 1}])
                }),
            ),
        ]) {
            Value::Object(m) => m,
            _ => Map::new(),
        }
    })
}

fn object(version: &str, meta: Value, spec: Map<String, Value>, status: Option<Map<String, Value>>) -> Value {
    obj(vec![
        (
            "apiVersion",
            Some(Value::from(format!("apps.kruise.io/{version}"))),
        ),
        ("kind", Some(json!("StatefulSet"))),
        ("metadata", Some(meta)),
        ("spec", Some(Value::Object(spec))),
        ("status", status.map(Value::Object)),
    ])
}

fn beta_set() -> impl Strategy<Value = Value> {
    (
        metadata(),
        shared_spec(),
        beta_only_spec(),
        option::of((shared_status(), beta_only_status())),
    )
        .prop_map(|(meta, mut spec, extra, status)| {
            spec.extend(extra);
            let status = status.map(|(mut s, extra)| {
                s.extend(extra);
                s
            });
            object("v1beta1", meta, spec, status)
        })
}

fn alpha_set() -> impl Strategy<Value = Value> {
    (metadata(), shared_spec(), option::of(shared_status()))
        .prop_map(|(meta, spec, status)| object("v1alpha1", meta, spec, status))
}

fn convert(value: &Value, version: &str) -> Value {
    convert_object(value, &format!("apps.kruise.io/{version}"))
        .unwrap_or_else(|e| panic!("conversion to {version} failed: {e}\n{value:#}"))
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(256))]

    #[test]
    fn a_v1beta1_set_survives_a_v1alpha1_round_trip(set in beta_set()) {
        let alpha = convert(&set, "v1alpha1");
        for field in V1BETA1_ONLY_SPEC_FIELDS {
            prop_assert!(alpha["spec"].get(field).is_none(), "spec.{} left in v1alpha1", field);
        }
        for field in V1BETA1_ONLY_STATUS_FIELDS {
            prop_assert!(alpha["status"].get(field).is_none(), "status.{} left in v1alpha1", field);
        }
        let typed: Result<apps_v1alpha1::StatefulSet, _> = decode("StatefulSet", &alpha);
        prop_assert!(typed.is_ok(), "{:?}", typed.err());
        let back = convert(&alpha, "v1beta1");
        prop_assert_eq!(&back, &set);
        let typed: Result<apps_v1beta1::StatefulSet, _> = decode("StatefulSet", &back);
        prop_assert!(typed.is_ok(), "{:?}", typed.err());
        // Converting down again gives the same v1alpha1 text, annotation included.
        prop_assert_eq!(convert(&back, "v1alpha1"), alpha);
    }

    #[test]
    fn a_v1alpha1_set_survives_a_v1beta1_round_trip(set in alpha_set()) {
        let beta = convert(&set, "v1beta1");
        let pointer = format!("/metadata/annotations/{}", V1BETA1_FIELDS_ANNOTATION.replace('/', "~1"));
        prop_assert!(beta.pointer(&pointer).is_none());
        let typed: Result<apps_v1beta1::StatefulSet, _> = decode("StatefulSet", &beta);
        prop_assert!(typed.is_ok(), "{:?}", typed.err());
        prop_assert_eq!(convert(&beta, "v1alpha1"), set);
    }
}

#[test]
fn the_annotation_holds_exactly_the_v1beta1_only_fields() {
    let set = json!({"apiVersion": "apps.kruise.io/v1beta1", "kind": "StatefulSet",
        "metadata": {"name": "web", "namespace": "shop"},
        "spec": {"replicas": 3, "reserveOrdinals": [1, "3-4"], "ordinals": {"start": 2}},
        "status": {"replicas": 3, "updatedReadyReplicas": 2}});
    let alpha = convert(&set, "v1alpha1");
    assert_eq!(
        alpha["metadata"]["annotations"][V1BETA1_FIELDS_ANNOTATION],
        r#"{"spec":{"ordinals":{"start":2},"reserveOrdinals":[1,"3-4"]},"status":{"updatedReadyReplicas":2}}"#
    );
    assert_eq!(alpha["spec"], json!({"replicas": 3}));
    assert_eq!(alpha["status"], json!({"replicas": 3}));
    // A v1alpha1 client edits replicas and writes back: the hidden fields come back with the edit.
    let mut edited = alpha.clone();
    edited["spec"]["replicas"] = json!(5);
    let beta = convert(&edited, "v1beta1");
    assert_eq!(
        beta["spec"],
        json!({"replicas": 5, "reserveOrdinals": [1, "3-4"], "ordinals": {"start": 2}})
    );
    assert!(beta["metadata"].get("annotations").is_none());
}

#[test]
fn an_unreadable_annotation_is_dropped_and_fields_on_the_object_win() {
    let alpha = json!({"apiVersion": "apps.kruise.io/v1alpha1", "kind": "StatefulSet",
        "metadata": {"name": "web", "annotations": {V1BETA1_FIELDS_ANNOTATION: "not json", "keep": "me"}},
        "spec": {"replicas": 1}});
    let beta = convert(&alpha, "v1beta1");
    assert_eq!(beta["metadata"]["annotations"], json!({"keep": "me"}));
    assert_eq!(beta["spec"], json!({"replicas": 1}));

    let alpha = json!({"apiVersion": "apps.kruise.io/v1alpha1", "kind": "StatefulSet",
        "metadata": {"name": "web", "annotations": {V1BETA1_FIELDS_ANNOTATION: r#"{"spec":{"ordinals":{"start":4},"reserveOrdinals":[0]}}"#}},
        "spec": {"replicas": 1, "ordinals": {"start": 7}}});
    let beta = convert(&alpha, "v1beta1");
    assert_eq!(
        beta["spec"],
        json!({"replicas": 1, "ordinals": {"start": 7}, "reserveOrdinals": [0]})
    );
}
