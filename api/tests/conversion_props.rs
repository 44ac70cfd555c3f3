//! Property tests of the v1alpha1 <-> v1beta1 conversion over generated objects of all four kinds.
//!
//! The generators build valid objects in both versions: every field the conversion rewrites
//! (update strategy type / `podUpdatePolicy`, PVC reuse, scale strategies, partitions as int and
//! percent, image pre-download annotations and fields, SidecarSet `namespace` /
//! `namespaceSelector` / custom version, PUB protect annotations and fields, WorkloadSpread subset
//! renames and conditions, statuses) plus fields the conversion does not know (`x…` keys at the
//! top level, in metadata, spec, status and nested objects the conversion edits in place) that it
//! must carry over untouched.
//!
//! Properties:
//! 1. v1alpha1 → v1beta1 → v1alpha1 gives the original back, except for the one-way cases listed
//!    in `kruise_api::conversion`; those are generated too and the expected result is the original
//!    with exactly those fields normalised (see the `*_round_trip_expected` functions).
//! 2. v1beta1 → v1alpha1 → v1beta1 likewise.
//! 3. Every object (source, converted, round-tripped) decodes into the typed struct of its version.
//! 4. Converting to the object's own version is the identity; converting twice to a version
//!    equals converting once; a round trip is a projection (a second one changes nothing); and
//!    the v1beta1 (storage) form of a v1alpha1 object does not change after a trip through
//!    v1alpha1.
//! 5. An unknown desired (or source) version is a clear `UnsupportedVersion` error, and mangled
//!    objects give an error or an object, never a panic.
//!
//! Left out of the generators on purpose, each commented where the field is generated and all
//! listed in the module docs: explicit `false` / `""` / `[]` / `null` in fields the conversion
//! reads (Go's `omitempty` never writes them; they read as unset); non-canonical annotation
//! spellings (read like the canonical ones, they come back canonical); v1alpha1 WorkloadSpread
//! conditions without `lastTransitionTime` (no valid v1beta1 form).

use std::collections::BTreeMap;

use kruise_api::apps::shared::cloneset::{
    CLONESET_SCALING_EXCLUDE_PREPARING_DELETE_KEY as EXCLUDE_LABEL,
    IMAGE_PRE_DOWNLOAD_MIN_UPDATED_READY_PODS_KEY as MIN_READY_ANN,
    IMAGE_PRE_DOWNLOAD_PARALLELISM_KEY as PARALLELISM_ANN,
    IMAGE_PRE_DOWNLOAD_TIMEOUT_SECONDS_KEY as TIMEOUT_ANN,
};
use kruise_api::apps::shared::sidecarset::{LABEL_METADATA_NAME, SIDECARSET_CUSTOM_VERSION_LABEL};
use kruise_api::policy::shared::{PUB_PROTECT_OPERATION_ANNOTATION, PUB_PROTECT_TOTAL_REPLICAS_ANNOTATION};
use kruise_api::{
    ConversionError, apps_v1alpha1, apps_v1beta1, convert_object, policy_v1alpha1, policy_v1beta1,
};
use proptest::collection::{btree_map, vec};
use proptest::option;
use proptest::prelude::*;
use proptest::sample::select;
use serde_json::{Map, Value, json};

const APPS: &str = "apps.kruise.io";
const POLICY: &str = "policy.kruise.io";
const ALPHA: &str = "v1alpha1";
const BETA: &str = "v1beta1";

// ---------------------------------------------------------------------------------------------
// JSON helpers
// ---------------------------------------------------------------------------------------------

/// Builds a JSON object from optional fields; absent ones are left out.
struct Obj(Map<String, Value>);

impl Obj {
    fn new() -> Self {
        Self(Map::new())
    }

    /// Starts from fields the conversion does not know.
    fn with(unknown: Map<String, Value>) -> Self {
        Self(unknown)
    }

    fn set(mut self, key: &str, value: impl Into<Value>) -> Self {
        self.0.insert(key.to_string(), value.into());
        self
    }

    fn opt(mut self, key: &str, value: Option<impl Into<Value>>) -> Self {
        if let Some(v) = value {
            self.0.insert(key.to_string(), v.into());
        }
        self
    }

    fn build(self) -> Value {
        Value::Object(self.0)
    }

    /// `None` when no field is set (Go omits an empty optional struct).
    fn non_empty(self) -> Option<Value> {
        (!self.0.is_empty()).then_some(Value::Object(self.0))
    }
}

fn string_map(m: BTreeMap<String, String>) -> Value {
    Value::Object(m.into_iter().map(|(k, v)| (k, Value::String(v))).collect())
}

/// The object at `map[key]`, created when absent.
fn entry<'a>(map: &'a mut Map<String, Value>, key: &str) -> &'a mut Map<String, Value> {
    let slot = map.entry(key.to_string()).or_insert_with(|| json!({}));
    if !slot.is_object() {
        *slot = json!({});
    }
    slot.as_object_mut().unwrap()
}

fn root(v: &mut Value) -> &mut Map<String, Value> {
    v.as_object_mut().expect("generated objects are JSON objects")
}

/// `metadata.labels` / `metadata.annotations` of a generated object (empty when absent).
fn meta_strings(v: &Value, which: &str) -> BTreeMap<String, String> {
    v["metadata"][which]
        .as_object()
        .map(|m| {
            m.iter()
                .map(|(k, v)| (k.clone(), v.as_str().unwrap_or_default().to_string()))
                .collect()
        })
        .unwrap_or_default()
}

/// Replaces `metadata.labels` / `metadata.annotations`, dropping the map when empty.
fn set_meta_strings(v: &mut Value, which: &str, m: BTreeMap<String, String>) {
    let meta = entry(root(v), "metadata");
    if m.is_empty() {
        meta.remove(which);
    } else {
        meta.insert(which.to_string(), string_map(m));
    }
}

fn group_of(v: &Value) -> &'static str {
    if v["kind"] == "PodUnavailableBudget" {
        POLICY
    } else {
        APPS
    }
}

fn version_of(v: &Value) -> &str {
    v["apiVersion"].as_str().unwrap().rsplit_once('/').unwrap().1
}

fn other_version(version: &str) -> &'static str {
    if version == ALPHA { BETA } else { ALPHA }
}

fn convert(v: &Value, version: &str) -> Value {
    let desired = format!("{}/{version}", group_of(v));
    convert_object(v, &desired)
        .unwrap_or_else(|e| panic!("converting to {desired} failed: {e}\nobject: {}", pretty(v)))
}

/// Converts to the other version and back.
fn round_trip(v: &Value) -> Value {
    let from = version_of(v).to_string();
    convert(&convert(v, other_version(&from)), &from)
}

/// Decodes `v` into the typed struct of its kind and version.
fn decode_typed(v: &Value) -> Result<(), String> {
    fn go<T: serde::de::DeserializeOwned>(v: &Value) -> Result<(), String> {
        serde_path_to_error::deserialize::<_, T>(v.clone())
            .map(drop)
            .map_err(|e| format!("{} at {}", e.inner(), e.path()))
    }
    match (v["kind"].as_str().unwrap(), version_of(v)) {
        ("CloneSet", ALPHA) => go::<apps_v1alpha1::CloneSet>(v),
        ("CloneSet", BETA) => go::<apps_v1beta1::CloneSet>(v),
        ("SidecarSet", ALPHA) => go::<apps_v1alpha1::SidecarSet>(v),
        ("SidecarSet", BETA) => go::<apps_v1beta1::SidecarSet>(v),
        ("WorkloadSpread", ALPHA) => go::<apps_v1alpha1::WorkloadSpread>(v),
        ("WorkloadSpread", BETA) => go::<apps_v1beta1::WorkloadSpread>(v),
        ("PodUnavailableBudget", ALPHA) => go::<policy_v1alpha1::PodUnavailableBudget>(v),
        ("PodUnavailableBudget", BETA) => go::<policy_v1beta1::PodUnavailableBudget>(v),
        other => Err(format!("no typed struct for {other:?}")),
    }
}

fn pretty(v: &Value) -> String {
    serde_json::to_string_pretty(v).unwrap()
}

/// Asserts that `v` decodes into its typed struct, naming `what` on failure.
fn assert_decodes(v: &Value, what: &str) -> Result<(), TestCaseError> {
    decode_typed(v).map_err(|e| TestCaseError::fail(format!("{what} does not decode: {e}\n{}", pretty(v))))
}

// ---------------------------------------------------------------------------------------------
// Generic strategies
// ---------------------------------------------------------------------------------------------

fn scalar() -> impl Strategy<Value = Value> {
    prop_oneof![
        Just(Value::Null),
        any::<bool>().prop_map(Value::from),
        (-1000i64..1000).prop_map(Value::from),
        any::<f64>()
            .prop_filter("finite", |f| f.is_finite())
            .prop_map(Value::from),
        "[a-zA-Z0-9 %/.~_-]{0,8}".prop_map(Value::from),
    ]
}

/// Any JSON value, nested a little.
fn any_json() -> impl Strategy<Value = Value> {
    scalar().prop_recursive(2, 8, 3, |inner| {
        prop_oneof![
            vec(inner.clone(), 0..3).prop_map(Value::from),
            btree_map("[a-zA-Z]{1,5}", inner, 0..3).prop_map(|m| Value::Object(m.into_iter().collect())),
        ]
    })
}

/// Fields no conversion knows, keyed `x…` so they never collide with a real field.
fn unknown_fields() -> impl Strategy<Value = Map<String, Value>> {
    btree_map("x[A-Z][a-z]{0,4}", any_json(), 0..3).prop_map(|m| m.into_iter().collect())
}

fn name() -> impl Strategy<Value = String> {
    "[a-z][a-z0-9-]{0,6}[a-z0-9]"
}

fn time() -> impl Strategy<Value = String> {
    (1u32..=28, 0u32..24, 0u32..60).prop_map(|(d, h, m)| format!("2024-01-{d:02}T{h:02}:{m:02}:00Z"))
}

/// An integer or a percentage, as partitions, maxUnavailable and friends take.
fn int_or_percent() -> impl Strategy<Value = Value> {
    prop_oneof![
        (0i64..=20).prop_map(Value::from),
        (0u32..=100).prop_map(|p| Value::from(format!("{p}%"))),
    ]
}

/// Plain labels; keys never collide with the labels the conversion reads.
fn plain_labels(max: usize) -> impl Strategy<Value = BTreeMap<String, String>> {
    btree_map("example\\.com/[a-z]{1,5}", "[a-z0-9]{0,5}", 0..=max)
}

fn label_selector() -> impl Strategy<Value = Value> {
    let expr = (
        "[a-z]{1,5}",
        select(vec!["In", "NotIn", "Exists", "DoesNotExist"]),
        vec("[a-z0-9]{1,4}", 1..3),
    )
        .prop_map(|(key, op, values)| {
            let values = matches!(op, "In" | "NotIn").then_some(values);
            Obj::new()
                .set("key", key)
                .set("operator", op)
                .opt("values", values)
                .build()
        });
    (
        option::of(btree_map("[a-z]{1,5}", "[a-z0-9]{1,5}", 1..3)),
        option::of(vec(expr, 1..3)),
    )
        .prop_map(|(labels, exprs)| {
            Obj::new()
                .opt("matchLabels", labels.map(string_map))
                .opt("matchExpressions", exprs)
                .build()
        })
}

/// Metadata with random labels, annotations and fields the conversion does not know; the
/// kind's own labels and annotations are merged in afterwards by [`with_meta`].
fn metadata(namespaced: bool) -> impl Strategy<Value = Value> {
    (
        name(),
        option::of(name()).prop_map(move |ns| ns.filter(|_| namespaced)),
        plain_labels(3),
        btree_map("example\\.com/[a-z]{1,5}", "[ -~]{0,10}", 0..3),
        option::of(1i64..50),
        option::of("[0-9]{1,6}"),
        option::of(vec("example\\.com/[a-z]{1,6}", 1..3)),
        option::of(time()),
        unknown_fields(),
    )
        .prop_map(
            |(name, ns, labels, annotations, generation, rv, finalizers, created, unknown)| {
                Obj::with(unknown)
                    .set("name", name)
                    .opt("namespace", ns)
                    .opt("labels", (!labels.is_empty()).then(|| string_map(labels)))
                    .opt(
                        "annotations",
                        (!annotations.is_empty()).then(|| string_map(annotations)),
                    )
                    .opt("generation", generation)
                    .opt("resourceVersion", rv)
                    .opt("finalizers", finalizers)
                    .opt("creationTimestamp", created)
                    .build()
            },
        )
}

/// Labels and annotations a kind adds to the random ones of [`metadata`].
type KindMeta = (BTreeMap<String, String>, BTreeMap<String, String>);

/// Assembles an object of `kind` at `api_version`.
fn with_meta(
    (api_version, kind): (String, &str),
    meta: Value,
    (labels, annotations): KindMeta,
    spec: Option<Value>,
    status: Option<Value>,
    unknown: Map<String, Value>,
) -> Value {
    let mut obj = Obj::with(unknown)
        .set("apiVersion", api_version)
        .set("kind", kind)
        .set("metadata", meta)
        .opt("spec", spec)
        .opt("status", status)
        .build();
    for (which, extra) in [("labels", labels), ("annotations", annotations)] {
        let mut all = meta_strings(&obj, which);
        all.extend(extra);
        set_meta_strings(&mut obj, which, all);
    }
    obj
}

fn scatter_strategy() -> impl Strategy<Value = Value> {
    vec(("[a-z]{1,5}", "[a-z0-9]{1,4}"), 1..3)
        .prop_map(|terms| Value::from_iter(terms.into_iter().map(|(k, v)| json!({"key": k, "value": v}))))
}

fn priority_strategy() -> impl Strategy<Value = Value> {
    prop_oneof![
        vec((1i64..=100, "[a-z]{1,4}", "[a-z0-9]{1,4}"), 1..3).prop_map(|terms| {
            let terms: Vec<Value> = terms
                .into_iter()
                .map(|(w, k, v)| json!({"weight": w, "matchSelector": {"matchLabels": {k: v}}}))
                .collect();
            json!({ "weightPriority": terms })
        }),
        vec("[a-z]{1,6}", 1..3).prop_map(|keys| {
            let terms: Vec<Value> = keys.into_iter().map(|k| json!({ "orderedKey": k })).collect();
            json!({ "orderPriority": terms })
        }),
    ]
}

fn condition_status() -> impl Strategy<Value = &'static str> {
    select(vec!["True", "False", "Unknown"])
}

/// A canonical decimal integer as an annotation value. Non-canonical spellings (`"05"`, `"+5"`)
/// are excluded: they parse to the same number and come back canonical, in OpenKruise too.
fn int_text(range: std::ops::Range<i32>) -> impl Strategy<Value = String> {
    range.prop_map(|n| n.to_string())
}

// ---------------------------------------------------------------------------------------------
// CloneSet
// ---------------------------------------------------------------------------------------------

/// Spec fields both versions share.
fn cloneset_shared_spec() -> impl Strategy<Value = Map<String, Value>> {
    (
        name(),
        option::of(0i64..10),
        option::of(0i64..20),
        option::of(1i64..30),
        option::of(1i64..600),
        option::of((
            option::of(vec("example\\.com/[a-z]{1,5}", 1..3)),
            option::of(plain_labels(2)),
        )),
        any::<bool>(),
        unknown_fields(),
    )
        .prop_map(
            |(app, replicas, history, min_ready, deadline, lifecycle, pvc, unknown)| {
                let lifecycle = lifecycle.and_then(|(finalizers, labels)| {
                    Obj::new()
                        .opt("preDelete", finalizers.map(|f| json!({ "finalizersHandler": f })))
                        .opt(
                            "inPlaceUpdate",
                            labels
                                .filter(|l| !l.is_empty())
                                .map(|l| json!({ "labelsHandler": string_map(l) })),
                        )
                        .non_empty()
                });
                let pvcs = pvc.then(|| {
                    json!([{"metadata": {"name": "data"}, "spec": {"accessModes": ["ReadWriteOnce"],
                    "resources": {"requests": {"storage": "1Gi"}}}}])
                });
                Obj::with(unknown)
                    .opt("replicas", replicas)
                    .set("selector", json!({"matchLabels": {"app": app}}))
                    .set(
                        "template",
                        json!({"metadata": {"labels": {"app": app}},
                           "spec": {"containers": [{"name": "main", "image": format!("{app}:1")}]}}),
                    )
                    .opt("volumeClaimTemplates", pvcs)
                    .opt("revisionHistoryLimit", history)
                    .opt("minReadySeconds", min_ready)
                    .opt("progressDeadlineSeconds", deadline)
                    .opt("lifecycle", lifecycle)
                    .0
            },
        )
}

fn cloneset_status() -> impl Strategy<Value = Value> {
    let condition = (
        select(vec!["Progressing", "FailedScale", "FailedUpdate"]),
        condition_status(),
        option::of(time()),
        option::of(time()),
        option::of("[A-Z][a-zA-Z]{0,8}"),
        option::of("[a-z ]{1,12}"),
    )
        .prop_map(|(t, s, updated, transitioned, reason, message)| {
            Obj::new()
                .set("type", t)
                .set("status", s)
                .opt("lastUpdateTime", updated)
                .opt("lastTransitionTime", transitioned)
                .opt("reason", reason)
                .opt("message", message)
                .build()
        });
    (
        (0i64..10, 0i64..10, 0i64..10, 0i64..10, 0i64..10),
        option::of(1i64..50),
        option::of((name(), name())),
        option::of(0i64..3),
        option::of(vec(condition, 1..3)),
        option::of("app=[a-z]{1,5}"),
        unknown_fields(),
    )
        .prop_map(
            |((r, ready, avail, upd, upd_ready), gen_, revisions, collisions, conds, sel, unknown)| {
                let (update_rev, current_rev) = revisions.unzip();
                Obj::with(unknown)
                    .opt("observedGeneration", gen_)
                    .set("replicas", r)
                    .set("readyReplicas", ready)
                    .set("availableReplicas", avail)
                    .set("updatedReplicas", upd)
                    .set("updatedReadyReplicas", upd_ready)
                    .opt("updateRevision", update_rev)
                    .opt("currentRevision", current_rev)
                    .opt("collisionCount", collisions)
                    .opt("conditions", conds)
                    .opt("labelSelector", sel)
                    .build()
            },
        )
}

/// v1alpha1 image pre-download annotations: parallelism as an integer, a percentage or any word
/// (kept as a string); the other two as integers or garbage (ignored, like OpenKruise does).
/// An empty value reads as unset and is kept verbatim.
fn pre_download_annotations() -> impl Strategy<Value = BTreeMap<String, String>> {
    let parallelism = prop_oneof![
        int_text(0..50),
        (1u32..=100).prop_map(|p| format!("{p}%")),
        "[a-z]{1,4}",
        Just(String::new()),
    ];
    let int_or_garbage = || prop_oneof![int_text(0..900), "[a-z]{1,3}", Just(String::new())];
    (
        option::of(parallelism),
        option::of(int_or_garbage()),
        option::of(int_or_garbage()),
    )
        .prop_map(|(p, t, m)| {
            [(PARALLELISM_ANN, p), (TIMEOUT_ANN, t), (MIN_READY_ANN, m)]
                .into_iter()
                .filter_map(|(k, v)| v.map(|v| (k.to_string(), v)))
                .collect()
        })
}

/// The v1alpha1 exclude-preparing-delete label; only `"true"` means anything.
fn exclude_label() -> impl Strategy<Value = BTreeMap<String, String>> {
    option::of(select(vec!["true", "false", "yes"])).prop_map(|v| {
        v.map(|v| (EXCLUDE_LABEL.to_string(), v.to_string()))
            .into_iter()
            .collect()
    })
}

/// Fields of the v1alpha1 `updateStrategy` that v1beta1 keeps under `rollingUpdate`.
fn rolling_fields() -> impl Strategy<Value = Map<String, Value>> {
    (
        option::of(int_or_percent()),
        option::of(int_or_percent()),
        option::of(int_or_percent()),
        // `paused: false` is kept as written (the conversion moves the key, it does not read it).
        option::of(any::<bool>()),
        option::of(priority_strategy()),
        option::of(scatter_strategy()),
    )
        .prop_map(
            |(partition, max_unavailable, max_surge, paused, priority, scatter)| {
                Obj::new()
                    .opt("partition", partition)
                    .opt("maxUnavailable", max_unavailable)
                    .opt("maxSurge", max_surge)
                    .opt("paused", paused)
                    .opt("priorityStrategy", priority)
                    .opt("scatterStrategy", scatter)
                    .0
            },
        )
}

fn alpha_cloneset() -> impl Strategy<Value = Value> {
    // `disablePVCReuse: false` is excluded (Go omits it; it reads as unset).
    let scale = (
        option::of(vec(name(), 1..3)),
        option::of(int_or_percent()),
        option::of(Just(true)),
        unknown_fields(),
    )
        .prop_map(|(pods, max_unavailable, disable, unknown)| {
            Obj::with(unknown)
                .opt("podsToDelete", pods)
                .opt("maxUnavailable", max_unavailable)
                .opt("disablePVCReuse", disable)
                .non_empty()
        });
    // Unset, empty and unknown types are generated: they read as ReCreate (documented).
    let update_type = option::of(select(vec![
        "ReCreate",
        "InPlaceIfPossible",
        "InPlaceOnly",
        "OnDelete",
        "RollingUpdate",
        "",
    ]));
    // `{}` and `gracePeriodSeconds: 0` are generated: an empty strategy is dropped (documented).
    let in_place = option::of(option::of(0i64..30))
        .prop_map(|s| s.map(|grace| Obj::new().opt("gracePeriodSeconds", grace).build()));
    let update = option::of((update_type, rolling_fields(), in_place)).prop_map(|u| {
        u.map(|(t, rolling, in_place)| {
            Obj::with(rolling)
                .opt("type", t)
                .opt("inPlaceUpdateStrategy", in_place)
                .build()
        })
    });
    (
        metadata(true),
        exclude_label(),
        pre_download_annotations(),
        cloneset_shared_spec(),
        scale,
        update,
        option::of(cloneset_status()),
        unknown_fields(),
    )
        .prop_map(
            |(meta, labels, annotations, spec, scale, update, status, unknown)| {
                let spec = Obj::with(spec)
                    .opt("scaleStrategy", scale)
                    .opt("updateStrategy", update)
                    .build();
                with_meta(
                    (format!("{APPS}/{ALPHA}"), "CloneSet"),
                    meta,
                    (labels, annotations),
                    Some(spec),
                    status,
                    unknown,
                )
            },
        )
}

fn beta_cloneset() -> impl Strategy<Value = Value> {
    // `enablePVCReuse: false` / `excludePreparingDelete: false` are excluded (Go omits them).
    let scale = (
        option::of(vec(name(), 1..3)),
        option::of(int_or_percent()),
        option::of(Just(true)),
        option::of(Just(true)),
        unknown_fields(),
    )
        .prop_map(|(pods, max_unavailable, enable, exclude, unknown)| {
            Obj::with(unknown)
                .opt("podsToDelete", pods)
                .opt("maxUnavailable", max_unavailable)
                .opt("enablePVCReuse", enable)
                .opt("excludePreparingDelete", exclude)
                .non_empty()
        });
    // A string parallelism that spells an integer is excluded: it comes back as the integer,
    // in OpenKruise too (the annotation does not say which form it had).
    let parallelism = prop_oneof![
        (0i64..50).prop_map(Value::from),
        (1u32..=100).prop_map(|p| Value::from(format!("{p}%"))),
        "[a-z]{1,4}".prop_map(Value::from),
    ];
    let in_place = (
        option::of(0i64..30),
        option::of(parallelism),
        option::of(0i64..900),
        option::of(0i64..10),
    )
        .prop_map(|(grace, parallelism, timeout, min_ready)| {
            Obj::new()
                .opt("gracePeriodSeconds", grace)
                .opt("imagePreDownloadParallelism", parallelism)
                .opt("imagePreDownloadTimeoutSeconds", timeout)
                .opt("imagePreDownloadMinUpdatedReadyPods", min_ready)
                .build()
        });
    // Unknown policies and types are generated: they read as the defaults.
    let policy = option::of(select(vec![
        "ReCreate",
        "InPlaceIfPossible",
        "InPlaceOnly",
        "Rolling",
    ]));
    let rolling = option::of((rolling_fields(), policy, option::of(in_place))).prop_map(|r| {
        r.map(|(fields, policy, in_place)| {
            Obj::with(fields)
                .opt("podUpdatePolicy", policy)
                .opt("inPlaceUpdateStrategy", in_place)
                .build()
        })
    });
    let update_type = option::of(select(vec!["RollingUpdate", "OnDelete", "ReCreate"]));
    let update = option::of((update_type, rolling))
        .prop_map(|u| u.and_then(|(t, r)| Obj::new().opt("type", t).opt("rollingUpdate", r).non_empty()));
    (
        metadata(true),
        exclude_label(),
        // Pre-download annotations on a v1beta1 object (left there by an earlier v1alpha1
        // write), possibly disagreeing with the fields.
        pre_download_annotations(),
        cloneset_shared_spec(),
        scale,
        update,
        option::of(cloneset_status()),
        unknown_fields(),
    )
        .prop_map(
            |(meta, labels, annotations, spec, scale, update, status, unknown)| {
                let spec = Obj::with(spec)
                    .opt("scaleStrategy", scale)
                    .opt("updateStrategy", update)
                    .build();
                with_meta(
                    (format!("{APPS}/{BETA}"), "CloneSet"),
                    meta,
                    (labels, annotations),
                    Some(spec),
                    status,
                    unknown,
                )
            },
        )
}

fn known_alpha_type(t: Option<&str>) -> &'static str {
    match t {
        Some("OnDelete") => "OnDelete",
        Some("InPlaceIfPossible") => "InPlaceIfPossible",
        Some("InPlaceOnly") => "InPlaceOnly",
        _ => "ReCreate",
    }
}

fn has_grace(in_place: Option<&Value>) -> Option<Value> {
    in_place
        .and_then(|s| s.get("gracePeriodSeconds"))
        .filter(|g| g.as_i64() != Some(0))
        .cloned()
}

/// v1alpha1 CloneSet after v1beta1 and back: the original, except for the documented one-way
/// cases.
fn cloneset_alpha_round_trip_expected(orig: &Value) -> Value {
    let mut exp = orig.clone();
    let spec = entry(root(&mut exp), "spec");
    let mut update = spec
        .remove("updateStrategy")
        .and_then(|u| u.as_object().cloned())
        .unwrap_or_default();
    // Documented: an unset or unknown type becomes ReCreate.
    let t = known_alpha_type(update.get("type").and_then(Value::as_str));
    update.insert("type".into(), t.into());
    if t == "OnDelete" {
        // Documented: OnDelete drops the rolling-update fields.
        update.retain(|k, _| k == "type");
    } else {
        // Documented: an empty inPlaceUpdateStrategy (no non-zero gracePeriodSeconds) is dropped.
        match has_grace(update.get("inPlaceUpdateStrategy")) {
            Some(grace) => update.insert(
                "inPlaceUpdateStrategy".into(),
                json!({ "gracePeriodSeconds": grace }),
            ),
            None => update.remove("inPlaceUpdateStrategy"),
        };
    }
    spec.insert("updateStrategy".into(), Value::Object(update));
    exp
}

/// The v1beta1 `inPlaceUpdateStrategy` fields the v1alpha1 annotations stand for, parsed the way
/// OpenKruise does (unparsable numbers ignored).
fn pre_download_fields(annotations: &BTreeMap<String, String>) -> Map<String, Value> {
    let mut out = Map::new();
    let value = |key: &str| annotations.get(key).filter(|v| !v.is_empty());
    if let Some(p) = value(PARALLELISM_ANN) {
        let v = p
            .parse::<i32>()
            .map_or_else(|_| Value::from(p.clone()), Value::from);
        out.insert("imagePreDownloadParallelism".into(), v);
    }
    for (key, field) in [
        (TIMEOUT_ANN, "imagePreDownloadTimeoutSeconds"),
        (MIN_READY_ANN, "imagePreDownloadMinUpdatedReadyPods"),
    ] {
        if let Some(n) = value(key).and_then(|v| v.parse::<i32>().ok()) {
            out.insert(field.into(), n.into());
        }
    }
    out
}

/// v1beta1 CloneSet after v1alpha1 and back.
fn cloneset_beta_round_trip_expected(orig: &Value) -> Value {
    let mut exp = orig.clone();
    let labels = meta_strings(orig, "labels");
    let mut annotations = meta_strings(orig, "annotations");
    let in_place = orig["spec"]["updateStrategy"]["rollingUpdate"]["inPlaceUpdateStrategy"].as_object();
    // As in OpenKruise, v1alpha1 keeps the pre-download fields in annotations, and those stay on
    // the object when it comes back to v1beta1 (see the `cloneset_cases` table test).
    for (field, key) in [
        ("imagePreDownloadParallelism", PARALLELISM_ANN),
        ("imagePreDownloadTimeoutSeconds", TIMEOUT_ANN),
        ("imagePreDownloadMinUpdatedReadyPods", MIN_READY_ANN),
    ] {
        if let Some(v) = in_place.and_then(|s| s.get(field)) {
            let text = v.as_str().map_or_else(|| v.to_string(), str::to_string);
            annotations.insert(key.to_string(), text);
        }
    }
    set_meta_strings(&mut exp, "annotations", annotations.clone());

    let spec = entry(root(&mut exp), "spec");
    let scale = entry(spec, "scaleStrategy");
    // Documented: excludePreparingDelete is dropped on the way to v1alpha1, which reads the label
    // instead; coming back, the field follows the label.
    scale.remove("excludePreparingDelete");
    if labels.get(EXCLUDE_LABEL).map(String::as_str) == Some("true") {
        scale.insert("excludePreparingDelete".into(), true.into());
    }
    if scale.is_empty() {
        spec.remove("scaleStrategy");
    }

    let update = spec
        .remove("updateStrategy")
        .and_then(|u| u.as_object().cloned())
        .unwrap_or_default();
    let new_update = if update.get("type").and_then(Value::as_str) == Some("OnDelete") {
        // Documented: OnDelete has no rolling-update fields in v1beta1 once read from v1alpha1.
        json!({"type": "OnDelete"})
    } else {
        // An unset or unknown type / podUpdatePolicy comes back as the default RollingUpdate /
        // ReCreate (v1alpha1 folds both into one `type`).
        let mut rolling = update
            .get("rollingUpdate")
            .and_then(Value::as_object)
            .cloned()
            .unwrap_or_default();
        let policy = match rolling.get("podUpdatePolicy").and_then(Value::as_str) {
            Some(p @ ("InPlaceIfPossible" | "InPlaceOnly")) => p.to_string(),
            _ => "ReCreate".to_string(),
        };
        rolling.insert("podUpdatePolicy".into(), policy.into());
        // Documented: an empty inPlaceUpdateStrategy is dropped; the pre-download fields come
        // back from the annotations.
        let mut strategy = pre_download_fields(&annotations);
        if let Some(grace) = has_grace(rolling.get("inPlaceUpdateStrategy")) {
            strategy.insert("gracePeriodSeconds".into(), grace);
        }
        if strategy.is_empty() {
            rolling.remove("inPlaceUpdateStrategy");
        } else {
            rolling.insert("inPlaceUpdateStrategy".into(), Value::Object(strategy));
        }
        json!({"type": "RollingUpdate", "rollingUpdate": rolling})
    };
    spec.insert("updateStrategy".into(), new_update);
    exp
}

// ---------------------------------------------------------------------------------------------
// SidecarSet
// ---------------------------------------------------------------------------------------------

fn sidecar_container() -> impl Strategy<Value = Value> {
    (
        name(),
        option::of(select(vec!["BeforeAppContainer", "AfterAppContainer"])),
        option::of(select(vec!["enabled", "disabled"])),
        option::of((
            select(vec!["ColdUpgrade", "HotUpgrade"]),
            option::of("[a-z]{1,5}:1"),
        )),
        option::of(vec(("[a-z]{1,5}", "[A-Z]{1,5}"), 1..3)),
        unknown_fields(),
    )
        .prop_map(|(name, inject, share, upgrade, transfer, unknown)| {
            let upgrade = upgrade.map(|(t, empty)| {
                Obj::new()
                    .set("upgradeType", t)
                    .opt("hotUpgradeEmptyImage", empty)
                    .build()
            });
            let transfer = transfer.map(|t| {
                Value::from_iter(
                    t.into_iter()
                        .map(|(src, env)| json!({"sourceContainerName": src, "envName": env})),
                )
            });
            Obj::with(unknown)
                .set("image", format!("{name}:1"))
                .set("name", name)
                .opt("podInjectPolicy", inject)
                .opt("shareVolumePolicy", share.map(|t| json!({ "type": t })))
                .opt("upgradeStrategy", upgrade)
                .opt("transferEnv", transfer)
                .build()
        })
}

/// Spec fields both versions share.
fn sidecarset_shared_spec() -> impl Strategy<Value = Map<String, Value>> {
    let update = (
        option::of(select(vec!["NotUpdate", "RollingUpdate"])),
        option::of(int_or_percent()),
        option::of(int_or_percent()),
        option::of(any::<bool>()),
        option::of(label_selector()),
        option::of(scatter_strategy()),
        option::of(priority_strategy()),
    )
        .prop_map(
            |(t, partition, max_unavailable, paused, selector, scatter, priority)| {
                Obj::new()
                    .opt("type", t)
                    .opt("partition", partition)
                    .opt("maxUnavailable", max_unavailable)
                    .opt("paused", paused)
                    .opt("selector", selector)
                    .opt("scatterStrategy", scatter)
                    .opt("priorityStrategy", priority)
                    .non_empty()
            },
        );
    let injection = (
        option::of(any::<bool>()),
        option::of((
            option::of("v[0-9]"),
            option::of(name()),
            option::of(select(vec!["Always", "Partial"])),
        )),
    )
        .prop_map(|(paused, revision)| {
            let revision = revision.and_then(|(cv, rn, p)| {
                Obj::new()
                    .opt("customVersion", cv)
                    .opt("revisionName", rn)
                    .opt("policy", p)
                    .non_empty()
            });
            Obj::new()
                .opt("paused", paused)
                .opt("revision", revision)
                .non_empty()
        });
    (
        option::of(label_selector()),
        option::of(vec(sidecar_container(), 1..3)),
        option::of(vec(sidecar_container(), 1..2)),
        option::of(Just(json!([{"name": "shared", "emptyDir": {}}]))),
        update,
        injection,
        option::of(0i64..20),
        option::of(plain_labels(2).prop_filter("non-empty", |m| !m.is_empty())),
        unknown_fields(),
    )
        .prop_map(
            |(selector, containers, init, volumes, update, injection, history, patch, unknown)| {
                Obj::with(unknown)
                    .opt("selector", selector)
                    .opt("containers", containers)
                    .opt("initContainers", init)
                    .opt("volumes", volumes)
                    .opt("updateStrategy", update)
                    .opt("injectionStrategy", injection)
                    .opt("revisionHistoryLimit", history)
                    .opt(
                        "patchPodMetadata",
                        patch.map(|a| json!([{"annotations": string_map(a), "patchPolicy": "Overwrite"}])),
                    )
                    .0
            },
        )
}

fn sidecarset_status() -> impl Strategy<Value = Value> {
    (
        (0i64..10, 0i64..10, 0i64..10),
        option::of(1i64..10),
        option::of(1i64..50),
        option::of(name()),
        option::of(0i64..3),
        unknown_fields(),
    )
        .prop_map(
            |((matched, updated, ready), updated_ready, gen_, latest, collisions, unknown)| {
                Obj::with(unknown)
                    .opt("observedGeneration", gen_)
                    .set("matchedPods", matched)
                    .set("updatedPods", updated)
                    .set("readyPods", ready)
                    .opt("updatedReadyPods", updated_ready)
                    .opt("latestRevision", latest)
                    .opt("collisionCount", collisions)
                    .build()
            },
        )
}

fn alpha_sidecarset() -> impl Strategy<Value = Value> {
    // `namespace: ""` is excluded (Go omits it; it means "all namespaces" like no field).
    // An empty custom-version label is generated: it has no v1beta1 form and is dropped, as in
    // OpenKruise (see the module docs).
    let custom_version = option::of(prop_oneof!["v[0-9]{1,2}", Just(String::new())]).prop_map(|v| {
        v.map(|v| (SIDECARSET_CUSTOM_VERSION_LABEL.to_string(), v))
            .into_iter()
            .collect()
    });
    (
        metadata(false),
        custom_version,
        sidecarset_shared_spec(),
        option::of(name()),
        option::of(label_selector()),
        option::of(sidecarset_status()),
        unknown_fields(),
    )
        .prop_map(|(meta, labels, spec, namespace, ns_selector, status, unknown)| {
            let spec = Obj::with(spec)
                .opt("namespace", namespace)
                .opt("namespaceSelector", ns_selector)
                .build();
            with_meta(
                (format!("{APPS}/{ALPHA}"), "SidecarSet"),
                meta,
                (labels, BTreeMap::new()),
                Some(spec),
                status,
                unknown,
            )
        })
}

fn beta_sidecarset() -> impl Strategy<Value = Value> {
    // `customVersion: ""` is excluded (Go omits it). The v1alpha1 custom-version label may also
    // sit on a v1beta1 object (left by an earlier v1alpha1 write).
    let label = option::of("v[0-9]{1,2}").prop_map(|v| {
        v.map(|v| (SIDECARSET_CUSTOM_VERSION_LABEL.to_string(), v))
            .into_iter()
            .collect()
    });
    // Namespace selectors, including the one v1alpha1 `namespace` turns into.
    let ns_selector = option::of(prop_oneof![
        label_selector(),
        name().prop_map(|ns| json!({ "matchLabels": { LABEL_METADATA_NAME: ns } })),
    ]);
    (
        metadata(false),
        label,
        sidecarset_shared_spec(),
        ns_selector,
        option::of("v[0-9]{1,2}"),
        option::of(sidecarset_status()),
        unknown_fields(),
    )
        .prop_map(
            |(meta, labels, spec, ns_selector, custom_version, status, unknown)| {
                let spec = Obj::with(spec)
                    .opt("namespaceSelector", ns_selector)
                    .opt("customVersion", custom_version)
                    .build();
                with_meta(
                    (format!("{APPS}/{BETA}"), "SidecarSet"),
                    meta,
                    (labels, BTreeMap::new()),
                    Some(spec),
                    status,
                    unknown,
                )
            },
        )
}

fn sidecarset_alpha_round_trip_expected(orig: &Value) -> Value {
    let mut exp = orig.clone();
    let spec = entry(root(&mut exp), "spec");
    // Documented: `namespace` becomes a metadata.name namespace selector (replacing any
    // namespaceSelector) and stays a selector.
    if let Some(ns) = spec.remove("namespace") {
        spec.insert(
            "namespaceSelector".into(),
            json!({ "matchLabels": { LABEL_METADATA_NAME: ns } }),
        );
    }
    // Documented: an empty custom-version label is dropped.
    let mut labels = meta_strings(orig, "labels");
    if labels
        .get(SIDECARSET_CUSTOM_VERSION_LABEL)
        .is_some_and(String::is_empty)
    {
        labels.remove(SIDECARSET_CUSTOM_VERSION_LABEL);
        set_meta_strings(&mut exp, "labels", labels);
    }
    exp
}

fn sidecarset_beta_round_trip_expected(orig: &Value) -> Value {
    let mut exp = orig.clone();
    // Documented: a custom-version label on a v1beta1 object is read as `customVersion` (the
    // spec field wins when both are set) and removed.
    let mut labels = meta_strings(orig, "labels");
    if let Some(label) = labels.remove(SIDECARSET_CUSTOM_VERSION_LABEL) {
        set_meta_strings(&mut exp, "labels", labels);
        let spec = entry(root(&mut exp), "spec");
        spec.entry("customVersion").or_insert(label.into());
    }
    exp
}

// ---------------------------------------------------------------------------------------------
// WorkloadSpread
// ---------------------------------------------------------------------------------------------

fn node_selector_term() -> impl Strategy<Value = Value> {
    vec(
        (
            "[a-z.]{1,8}",
            select(vec!["In", "NotIn"]),
            vec("[a-z0-9-]{1,5}", 1..3),
        ),
        1..3,
    )
    .prop_map(|exprs| {
        let exprs: Vec<Value> = exprs
            .into_iter()
            .map(|(k, op, values)| json!({"key": k, "operator": op, "values": values}))
            .collect();
        json!({ "matchExpressions": exprs })
    })
}

/// One subset; `required` / `preferred` are the version's names of the renamed fields.
fn ws_subset(required: &'static str, preferred: &'static str) -> impl Strategy<Value = Value> {
    (
        name(),
        option::of(node_selector_term()),
        option::of(vec((1i64..=100, node_selector_term()), 1..3)),
        option::of(vec(("[a-z-]{1,6}", "[a-z]{1,4}"), 1..2)),
        option::of(int_or_percent()),
        option::of(
            any_json().prop_map(|v| json!({"metadata": {"labels": {"patched": "yes"}}, "spec": {"xRaw": v}})),
        ),
        unknown_fields(),
    )
        .prop_map(move |(name, req, pref, tolerations, max, patch, unknown)| {
            let pref = pref.map(|p| {
                Value::from_iter(
                    p.into_iter()
                        .map(|(w, term)| json!({"weight": w, "preference": term})),
                )
            });
            let tolerations =
                tolerations.map(|t| {
                    Value::from_iter(t.into_iter().map(
                        |(k, v)| json!({"key": k, "operator": "Equal", "value": v, "effect": "NoSchedule"}),
                    ))
                });
            Obj::with(unknown)
                .set("name", name)
                .opt(required, req)
                .opt(preferred, pref)
                .opt("tolerations", tolerations)
                .opt("maxReplicas", max)
                .opt("patch", patch)
                .build()
        })
}

fn ws_spec(required: &'static str, preferred: &'static str) -> impl Strategy<Value = Value> {
    let schedule = option::of((
        option::of(select(vec!["Fixed", "Adaptive"])),
        option::of((option::of(any::<bool>()), option::of(1i64..600))),
    ))
    .prop_map(|s| {
        s.and_then(|(t, adaptive)| {
            let adaptive = adaptive.and_then(|(disable, seconds)| {
                Obj::new()
                    .opt("disableSimulationSchedule", disable)
                    .opt("rescheduleCriticalSeconds", seconds)
                    .non_empty()
            });
            Obj::new().opt("type", t).opt("adaptive", adaptive).non_empty()
        })
    });
    (
        select(vec![
            ("apps/v1", "Deployment"),
            ("apps.kruise.io/v1alpha1", "CloneSet"),
        ]),
        name(),
        option::of((
            option::of(label_selector()),
            option::of(vec("spec\\.[a-z]{1,5}", 1..3)),
        )),
        vec(ws_subset(required, preferred), 1..4),
        schedule,
        unknown_fields(),
    )
        .prop_map(|((api, kind), target, filter, subsets, schedule, unknown)| {
            let filter = filter.and_then(|(sel, paths)| {
                Obj::new()
                    .opt("selector", sel)
                    .opt("replicasPathList", paths)
                    .non_empty()
            });
            Obj::with(unknown)
                .set(
                    "targetRef",
                    json!({"apiVersion": api, "kind": kind, "name": target}),
                )
                .opt("targetFilter", filter)
                .set("subsets", subsets)
                .opt("scheduleStrategy", schedule)
                .build()
        })
}

/// Subset statuses with conditions from `condition`.
fn ws_status(condition: BoxedStrategy<Value>) -> impl Strategy<Value = Value> {
    let pods = || option::of(btree_map("[a-z]{1,5}-[0-9]", time(), 1..3).prop_map(string_map));
    let subset_status = (
        name(),
        0i64..10,
        -1i64..10,
        option::of(vec(condition, 1..3)),
        pods(),
        pods(),
        unknown_fields(),
    )
        .prop_map(
            |(name, replicas, missing, conditions, creating, deleting, unknown)| {
                Obj::with(unknown)
                    .set("name", name)
                    .set("replicas", replicas)
                    .set("missingReplicas", missing)
                    .opt("conditions", conditions)
                    .opt("creatingPods", creating)
                    .opt("deletingPods", deleting)
                    .build()
            },
        );
    let list = vec(subset_status, 1..3).boxed();
    (
        option::of(1i64..50),
        option::of(list.clone()),
        option::of(btree_map("[a-f0-9]{6}", list, 1..3)),
        unknown_fields(),
    )
        .prop_map(|(gen_, statuses, versioned, unknown)| {
            let versioned =
                versioned.map(|m| Value::Object(m.into_iter().map(|(k, v)| (k, Value::from(v))).collect()));
            Obj::with(unknown)
                .opt("observedGeneration", gen_)
                .opt("subsetStatuses", statuses)
                .opt("versionedSubsetStatuses", versioned)
                .build()
        })
}

fn alpha_ws_condition() -> BoxedStrategy<Value> {
    // v1alpha1 conditions always carry lastTransitionTime: the v1beta1 form (metav1.Condition)
    // requires it and the conversion does not invent one (see the module docs).
    // Empty reason / message strings are excluded (Go omits them; they read as unset).
    // A missing reason is generated: it becomes `Unknown` (documented).
    (
        condition_status(),
        time(),
        option::of("[A-Z][a-zA-Z]{0,8}"),
        option::of("[a-z ]{1,12}"),
        unknown_fields(),
    )
        .prop_map(|(status, t, reason, message, unknown)| {
            Obj::with(unknown)
                .set("type", "Schedulable")
                .set("status", status)
                .set("lastTransitionTime", t)
                .opt("reason", reason)
                .opt("message", message)
                .build()
        })
        .boxed()
}

fn beta_ws_condition() -> BoxedStrategy<Value> {
    // metav1.Condition requires reason (non-empty) and message (possibly empty).
    (
        condition_status(),
        time(),
        "[A-Z][a-zA-Z]{0,8}",
        "[a-z ]{0,12}",
        option::of(0i64..20),
        unknown_fields(),
    )
        .prop_map(|(status, t, reason, message, observed, unknown)| {
            Obj::with(unknown)
                .set("type", "Schedulable")
                .set("status", status)
                .set("lastTransitionTime", t)
                .set("reason", reason)
                .set("message", message)
                .opt("observedGeneration", observed)
                .build()
        })
        .boxed()
}

fn alpha_workloadspread() -> impl Strategy<Value = Value> {
    (
        metadata(true),
        ws_spec("requiredNodeSelectorTerm", "preferredNodeSelectorTerms"),
        option::of(ws_status(alpha_ws_condition())),
        unknown_fields(),
    )
        .prop_map(|(meta, spec, status, unknown)| {
            with_meta(
                (format!("{APPS}/{ALPHA}"), "WorkloadSpread"),
                meta,
                (BTreeMap::new(), BTreeMap::new()),
                Some(spec),
                status,
                unknown,
            )
        })
}

fn beta_workloadspread() -> impl Strategy<Value = Value> {
    (
        metadata(true),
        ws_spec("requiredNodeSelector", "preferredNodeSelector"),
        option::of(ws_status(beta_ws_condition())),
        unknown_fields(),
    )
        .prop_map(|(meta, spec, status, unknown)| {
            with_meta(
                (format!("{APPS}/{BETA}"), "WorkloadSpread"),
                meta,
                (BTreeMap::new(), BTreeMap::new()),
                Some(spec),
                status,
                unknown,
            )
        })
}

/// Applies `f` to every subset condition of a WorkloadSpread.
fn for_each_ws_condition(v: &mut Value, f: impl Fn(&mut Map<String, Value>)) {
    let Some(status) = v.get_mut("status").and_then(Value::as_object_mut) else {
        return;
    };
    let mut lists: Vec<&mut Value> = Vec::new();
    for (key, value) in status.iter_mut() {
        match (key.as_str(), value) {
            ("subsetStatuses", list) => lists.push(list),
            ("versionedSubsetStatuses", Value::Object(versions)) => lists.extend(versions.values_mut()),
            _ => {}
        }
    }
    for list in lists {
        for subset in list.as_array_mut().into_iter().flatten() {
            if let Some(conditions) = subset.get_mut("conditions").and_then(Value::as_array_mut) {
                conditions
                    .iter_mut()
                    .filter_map(Value::as_object_mut)
                    .for_each(&f);
            }
        }
    }
}

fn workloadspread_alpha_round_trip_expected(orig: &Value) -> Value {
    let mut exp = orig.clone();
    // Documented: a condition without reason gets reason `Unknown`.
    for_each_ws_condition(&mut exp, |c| {
        c.entry("reason").or_insert("Unknown".into());
    });
    exp
}

fn workloadspread_beta_round_trip_expected(orig: &Value) -> Value {
    let mut exp = orig.clone();
    // Documented: condition observedGeneration is dropped.
    for_each_ws_condition(&mut exp, |c| {
        c.remove("observedGeneration");
    });
    exp
}

// ---------------------------------------------------------------------------------------------
// PodUnavailableBudget
// ---------------------------------------------------------------------------------------------

fn pub_operations() -> impl Strategy<Value = Vec<&'static str>> {
    // Non-empty: an empty list is omitted by Go and reads as unset.
    vec(select(vec!["DELETE", "UPDATE", "EVICT", "RESIZE"]), 1..4)
}

/// Spec fields both versions share.
fn pub_shared_spec() -> impl Strategy<Value = Map<String, Value>> {
    (
        prop_oneof![
            label_selector().prop_map(|s| ("selector", s)),
            (
                select(vec![
                    ("apps/v1", "Deployment"),
                    ("apps.kruise.io/v1alpha1", "CloneSet")
                ]),
                name()
            )
                .prop_map(|((api, kind), n)| (
                    "targetRef",
                    json!({"apiVersion": api, "kind": kind, "name": n})
                )),
        ],
        prop_oneof![
            int_or_percent().prop_map(|v| ("maxUnavailable", v)),
            int_or_percent().prop_map(|v| ("minAvailable", v)),
        ],
        unknown_fields(),
    )
        .prop_map(|((target_key, target), (budget_key, budget), unknown)| {
            Obj::with(unknown)
                .set(target_key, target)
                .set(budget_key, budget)
                .0
        })
}

fn pub_status() -> impl Strategy<Value = Value> {
    let pods = || option::of(btree_map("[a-z]{1,5}-[0-9]", time(), 1..3).prop_map(string_map));
    (
        (0i64..50, 0i64..10, 0i64..10, 0i64..10, 0i64..10),
        pods(),
        pods(),
        unknown_fields(),
    )
        .prop_map(
            |((gen_, allowed, current, desired, total), disrupted, unavailable, unknown)| {
                Obj::with(unknown)
                    .set("observedGeneration", gen_)
                    .set("unavailableAllowed", allowed)
                    .set("currentAvailable", current)
                    .set("desiredAvailable", desired)
                    .set("totalReplicas", total)
                    .opt("disruptedPods", disrupted)
                    .opt("unavailablePods", unavailable)
                    .build()
            },
        )
}

/// The protect annotations in canonical form (operations joined by `,`, a decimal count).
/// Other spellings (`"DELETE, EVICT"`, empty items, `"007"`, `""`) are excluded: they are
/// read the same and come back canonical, in OpenKruise too (see the `podunavailablebudget_cases`
/// table test).
fn pub_annotations() -> impl Strategy<Value = BTreeMap<String, String>> {
    (option::of(pub_operations()), option::of(int_text(-5..100))).prop_map(|(ops, total)| {
        let mut m = BTreeMap::new();
        if let Some(ops) = ops {
            m.insert(PUB_PROTECT_OPERATION_ANNOTATION.to_string(), ops.join(","));
        }
        if let Some(total) = total {
            m.insert(PUB_PROTECT_TOTAL_REPLICAS_ANNOTATION.to_string(), total);
        }
        m
    })
}

fn alpha_pub() -> impl Strategy<Value = Value> {
    (
        metadata(true),
        pub_annotations(),
        pub_shared_spec(),
        option::of(pub_status()),
        unknown_fields(),
    )
        .prop_map(|(meta, annotations, spec, status, unknown)| {
            with_meta(
                (format!("{POLICY}/{ALPHA}"), "PodUnavailableBudget"),
                meta,
                (BTreeMap::new(), annotations),
                Some(Value::Object(spec)),
                status,
                unknown,
            )
        })
}

fn beta_pub() -> impl Strategy<Value = Value> {
    (
        metadata(true),
        // Protect annotations on a v1beta1 object (left by an earlier v1alpha1 write), possibly
        // disagreeing with the fields.
        pub_annotations(),
        pub_shared_spec(),
        option::of(pub_operations()),
        option::of(1i64..100),
        option::of(label_selector()),
        option::of(pub_status()),
        unknown_fields(),
    )
        .prop_map(
            |(meta, annotations, spec, ops, total, ignored, status, unknown)| {
                let spec = Obj::with(spec)
                    .opt("protectOperations", ops)
                    .opt("protectTotalReplicas", total)
                    .opt("ignoredPodSelector", ignored)
                    .build();
                with_meta(
                    (format!("{POLICY}/{BETA}"), "PodUnavailableBudget"),
                    meta,
                    (BTreeMap::new(), annotations),
                    Some(spec),
                    status,
                    unknown,
                )
            },
        )
}

fn pub_alpha_round_trip_expected(orig: &Value) -> Value {
    // Canonical annotations make the v1alpha1 round trip exact.
    orig.clone()
}

fn pub_beta_round_trip_expected(orig: &Value) -> Value {
    let mut exp = orig.clone();
    let spec = entry(root(&mut exp), "spec");
    // Documented: ignoredPodSelector is dropped on the way to v1alpha1.
    spec.remove("ignoredPodSelector");
    // Documented: the fields travel through the annotations, which v1alpha1 derives from the
    // fields (set when present, removed otherwise) and which stay on the object coming back.
    let ops = spec
        .get("protectOperations")
        .and_then(Value::as_array)
        .map(|ops| {
            ops.iter()
                .map(|o| o.as_str().unwrap().to_string())
                .collect::<Vec<_>>()
                .join(",")
        });
    let total = spec.get("protectTotalReplicas").map(Value::to_string);
    let mut annotations = meta_strings(orig, "annotations");
    for (key, value) in [
        (PUB_PROTECT_OPERATION_ANNOTATION, ops),
        (PUB_PROTECT_TOTAL_REPLICAS_ANNOTATION, total),
    ] {
        match value {
            Some(v) => annotations.insert(key.to_string(), v),
            None => annotations.remove(key),
        };
    }
    set_meta_strings(&mut exp, "annotations", annotations);
    exp
}

// ---------------------------------------------------------------------------------------------
// Properties
// ---------------------------------------------------------------------------------------------

/// Any generated object of any kind in either version.
fn any_object() -> impl Strategy<Value = Value> {
    prop_oneof![
        alpha_cloneset().boxed(),
        beta_cloneset().boxed(),
        alpha_sidecarset().boxed(),
        beta_sidecarset().boxed(),
        alpha_workloadspread().boxed(),
        beta_workloadspread().boxed(),
        alpha_pub().boxed(),
        beta_pub().boxed(),
    ]
}

/// Properties 1/2 and 3 for one object: the round trip gives `expected`, and every object on
/// the way decodes into its typed struct.
fn check_round_trip(orig: &Value, expected: Value) -> Result<(), TestCaseError> {
    let from = version_of(orig).to_string();
    assert_decodes(orig, "generated object")?;
    let there = convert(orig, other_version(&from));
    assert_decodes(&there, "converted object")?;
    let back = convert(&there, &from);
    assert_decodes(&back, "round-tripped object")?;
    prop_assert!(
        back == expected,
        "round trip differs from the expected object\noriginal: {}\nconverted: {}\nback: {}\nexpected: {}",
        pretty(orig),
        pretty(&there),
        pretty(&back),
        pretty(&expected)
    );
    Ok(())
}

/// 256 cases per property (proptest's default; `PROPTEST_CASES` raises it); failures are
/// reported with the shrunk object, not persisted to a regressions file.
fn config() -> ProptestConfig {
    ProptestConfig {
        failure_persistence: None,
        ..ProptestConfig::default()
    }
}

proptest! {
    #![proptest_config(config())]

    // Properties 1 and 2 (with 3 checked on every step), per kind and version.

    #[test]
    fn cloneset_v1alpha1_round_trip(cs in alpha_cloneset()) {
        check_round_trip(&cs, cloneset_alpha_round_trip_expected(&cs))?;
    }

    #[test]
    fn cloneset_v1beta1_round_trip(cs in beta_cloneset()) {
        check_round_trip(&cs, cloneset_beta_round_trip_expected(&cs))?;
    }

    #[test]
    fn sidecarset_v1alpha1_round_trip(s in alpha_sidecarset()) {
        check_round_trip(&s, sidecarset_alpha_round_trip_expected(&s))?;
    }

    #[test]
    fn sidecarset_v1beta1_round_trip(s in beta_sidecarset()) {
        check_round_trip(&s, sidecarset_beta_round_trip_expected(&s))?;
    }

    #[test]
    fn workloadspread_v1alpha1_round_trip(ws in alpha_workloadspread()) {
        check_round_trip(&ws, workloadspread_alpha_round_trip_expected(&ws))?;
    }

    #[test]
    fn workloadspread_v1beta1_round_trip(ws in beta_workloadspread()) {
        check_round_trip(&ws, workloadspread_beta_round_trip_expected(&ws))?;
    }

    #[test]
    fn pub_v1alpha1_round_trip(p in alpha_pub()) {
        check_round_trip(&p, pub_alpha_round_trip_expected(&p))?;
    }

    #[test]
    fn pub_v1beta1_round_trip(p in beta_pub()) {
        check_round_trip(&p, pub_beta_round_trip_expected(&p))?;
    }

    /// Property 3 on its own: an object of either version converts to both versions, and each
    /// result decodes into the typed struct of that version.
    #[test]
    fn converted_objects_decode(obj in any_object()) {
        for version in [ALPHA, BETA] {
            let converted = convert(&obj, version);
            prop_assert_eq!(version_of(&converted), version);
            assert_decodes(&converted, &format!("object converted to {version}"))?;
        }
    }

    /// Property 4: same version is the identity (with a full or a bare version), converting
    /// twice equals converting once, and a round trip is a projection: once an object has been
    /// through the other version, further trips change nothing.
    #[test]
    fn identity_and_idempotence(obj in any_object()) {
        let own = version_of(&obj).to_string();
        prop_assert_eq!(&convert(&obj, &own), &obj);
        prop_assert_eq!(&convert_object(&obj, &own).unwrap(), &obj);
        for version in [ALPHA, BETA] {
            let once = convert(&obj, version);
            prop_assert_eq!(&convert(&once, version), &once);
        }
        let once = round_trip(&obj);
        prop_assert_eq!(&round_trip(&once), &once, "second round trip changed the object");
        // The v1beta1 (storage) form of a v1alpha1 object does not drift when a v1alpha1 client
        // reads it and writes it back. (The converse does not hold for the documented one-way
        // case: v1beta1 OnDelete with rollingUpdate reaches v1alpha1 whole but comes back
        // without it.)
        if own == ALPHA {
            let stored = convert(&obj, BETA);
            prop_assert_eq!(
                &convert(&convert(&stored, ALPHA), BETA),
                &stored,
                "the v1beta1 form changed after a trip through v1alpha1"
            );
        }
    }

    /// Property 5: an unknown desired version is an `UnsupportedVersion` error naming it.
    #[test]
    fn unknown_desired_version_is_an_error(
        obj in any_object(),
        desired in prop_oneof![
            "v[0-9a-z]{0,8}",
            "[a-z.]{0,12}/v[0-9a-z]{0,8}",
            Just("apps.kruise.io/v1".to_string()),
            Just("policy.kruise.io/v1beta2".to_string()),
            Just("apps.kruise.io/v1beta1".to_string()),
            Just("policy.kruise.io/v1alpha1".to_string()),
            Just("/v1beta1".to_string()),
            Just(String::new()),
            Just("/".to_string()),
            "[ -~]{0,16}",
        ],
    ) {
        let group = group_of(&obj);
        // A bare version (or an empty group) is read in the object's group.
        let (g, v) = desired.rsplit_once('/').unwrap_or(("", desired.as_str()));
        let g = if g.is_empty() { group } else { g };
        prop_assume!(!(g == group && (v == ALPHA || v == BETA)));
        let err = match convert_object(&obj, &desired) {
            Err(err) => err,
            Ok(_) => return Err(TestCaseError::fail(format!("desired {desired:?} was accepted"))),
        };
        prop_assert_eq!(
            &err,
            &ConversionError::UnsupportedVersion {
                kind: obj["kind"].as_str().unwrap().to_string(),
                api_version: desired.clone(),
            }
        );
        let message = err.to_string();
        prop_assert!(message.contains("unsupported API version"), "{}", message);
        prop_assert!(message.contains(&format!("{desired:?}")), "{}", message);
    }

    /// Property 5 for the source side: an object whose own version is not served is an
    /// `UnsupportedVersion` error for either desired version.
    #[test]
    fn unknown_source_version_is_an_error(mut obj in any_object(), version in "v[0-9a-z]{0,6}") {
        prop_assume!(version != ALPHA && version != BETA);
        let group = group_of(&obj);
        let api_version = format!("{group}/{version}");
        root(&mut obj).insert("apiVersion".into(), api_version.clone().into());
        for desired in [ALPHA, BETA] {
            prop_assert_eq!(
                convert_object(&obj, &format!("{group}/{desired}")),
                Err(ConversionError::UnsupportedVersion {
                    kind: obj["kind"].as_str().unwrap().to_string(),
                    api_version: api_version.clone(),
                })
            );
        }
    }

    /// Mangled objects (any JSON at a field the conversion reads) give an object or an error,
    /// never a panic; what comes out is still of the desired version.
    #[test]
    fn mangled_objects_never_panic(
        obj in any_object(),
        path in select(MANGLE_PATHS.to_vec()),
        junk in any_json(),
    ) {
        let mut obj = obj;
        set_path(&mut obj, path, junk);
        let group = group_of(&obj);
        for version in [ALPHA, BETA] {
            if let Ok(out) = convert_object(&obj, &format!("{group}/{version}")) {
                let want = format!("{group}/{version}");
                prop_assert_eq!(out["apiVersion"].as_str(), Some(want.as_str()));
            }
        }
    }
}

/// Paths the conversion reads or rewrites, for [`mangled_objects_never_panic`].
const MANGLE_PATHS: &[&[&str]] = &[
    &["metadata"],
    &["metadata", "labels"],
    &["metadata", "labels", EXCLUDE_LABEL],
    &["metadata", "labels", SIDECARSET_CUSTOM_VERSION_LABEL],
    &["metadata", "annotations"],
    &["metadata", "annotations", PARALLELISM_ANN],
    &["metadata", "annotations", TIMEOUT_ANN],
    &["metadata", "annotations", MIN_READY_ANN],
    &["metadata", "annotations", PUB_PROTECT_OPERATION_ANNOTATION],
    &["metadata", "annotations", PUB_PROTECT_TOTAL_REPLICAS_ANNOTATION],
    &["spec"],
    &["spec", "scaleStrategy"],
    &["spec", "scaleStrategy", "disablePVCReuse"],
    &["spec", "scaleStrategy", "enablePVCReuse"],
    &["spec", "updateStrategy"],
    &["spec", "updateStrategy", "type"],
    &["spec", "updateStrategy", "inPlaceUpdateStrategy"],
    &[
        "spec",
        "updateStrategy",
        "inPlaceUpdateStrategy",
        "gracePeriodSeconds",
    ],
    &["spec", "updateStrategy", "rollingUpdate"],
    &["spec", "updateStrategy", "rollingUpdate", "podUpdatePolicy"],
    &["spec", "updateStrategy", "rollingUpdate", "inPlaceUpdateStrategy"],
    &[
        "spec",
        "updateStrategy",
        "rollingUpdate",
        "inPlaceUpdateStrategy",
        "imagePreDownloadParallelism",
    ],
    &[
        "spec",
        "updateStrategy",
        "rollingUpdate",
        "inPlaceUpdateStrategy",
        "imagePreDownloadTimeoutSeconds",
    ],
    &["spec", "namespace"],
    &["spec", "customVersion"],
    &["spec", "subsets"],
    &["spec", "protectOperations"],
    &["spec", "protectTotalReplicas"],
    &["status"],
    &["status", "subsetStatuses"],
    &["status", "versionedSubsetStatuses"],
    &["status", "versionedSubsetStatuses", "abc"],
];

/// Sets `path` in `v`, turning whatever is in the way into objects.
fn set_path(v: &mut Value, path: &[&str], value: Value) {
    let mut cur = v;
    for key in &path[..path.len() - 1] {
        if !cur.is_object() {
            *cur = json!({});
        }
        cur = cur
            .as_object_mut()
            .unwrap()
            .entry(key.to_string())
            .or_insert_with(|| json!({}));
    }
    if !cur.is_object() {
        *cur = json!({});
    }
    cur.as_object_mut()
        .unwrap()
        .insert(path[path.len() - 1].to_string(), value);
}

/// Mangling one level deeper: a subset or condition that is not an object.
#[test]
fn mangled_lists_are_errors_not_panics() {
    let cases = [
        json!({"apiVersion": "apps.kruise.io/v1alpha1", "kind": "WorkloadSpread", "spec": {"subsets": [1]}}),
        json!({"apiVersion": "apps.kruise.io/v1beta1", "kind": "WorkloadSpread",
               "status": {"subsetStatuses": [{"conditions": [3]}]}}),
        json!({"apiVersion": "apps.kruise.io/v1beta1", "kind": "WorkloadSpread",
               "status": {"versionedSubsetStatuses": {"a": "b"}}}),
        json!({"apiVersion": "policy.kruise.io/v1beta1", "kind": "PodUnavailableBudget",
               "spec": {"protectOperations": [1]}}),
    ];
    for case in cases {
        let from = version_of(&case).to_string();
        let err =
            convert_object(&case, &format!("{}/{}", group_of(&case), other_version(&from))).unwrap_err();
        assert!(
            matches!(err, ConversionError::Decode { path: Some(_), .. }),
            "{err:?}"
        );
    }
}
