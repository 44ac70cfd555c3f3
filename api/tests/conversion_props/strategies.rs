//! JSON helpers and the generic strategies the kinds' generators build on.

use super::*;

/// Builds a JSON object from optional fields; absent ones are left out.
pub(super) struct Obj(pub(super) Map<String, Value>);

impl Obj {
    pub(super) fn new() -> Self {
        Self(Map::new())
    }

    /// Starts from fields the conversion does not know.
    pub(super) fn with(unknown: Map<String, Value>) -> Self {
        Self(unknown)
    }

    pub(super) fn set(mut self, key: &str, value: impl Into<Value>) -> Self {
        self.0.insert(key.to_string(), value.into());
        self
    }

    pub(super) fn opt(mut self, key: &str, value: Option<impl Into<Value>>) -> Self {
        if let Some(v) = value {
            self.0.insert(key.to_string(), v.into());
        }
        self
    }

    pub(super) fn build(self) -> Value {
        Value::Object(self.0)
    }

    /// `None` when no field is set (Go omits an empty optional struct).
    pub(super) fn non_empty(self) -> Option<Value> {
        (!self.0.is_empty()).then_some(Value::Object(self.0))
    }
}

pub(super) fn string_map(m: BTreeMap<String, String>) -> Value {
    Value::Object(m.into_iter().map(|(k, v)| (k, Value::String(v))).collect())
}

/// The object at `map[key]`, created when absent.
pub(super) fn entry<'a>(map: &'a mut Map<String, Value>, key: &str) -> &'a mut Map<String, Value> {
    let slot = map.entry(key.to_string()).or_insert_with(|| json!({}));
    if !slot.is_object() {
        *slot = json!({});
    }
    slot.as_object_mut().unwrap()
}

pub(super) fn root(v: &mut Value) -> &mut Map<String, Value> {
    v.as_object_mut().expect("generated objects are JSON objects")
}

/// `metadata.labels` / `metadata.annotations` of a generated object (empty when absent).
pub(super) fn meta_strings(v: &Value, which: &str) -> BTreeMap<String, String> {
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
pub(super) fn set_meta_strings(v: &mut Value, which: &str, m: BTreeMap<String, String>) {
    let meta = entry(root(v), "metadata");
    if m.is_empty() {
        meta.remove(which);
    } else {
        meta.insert(which.to_string(), string_map(m));
    }
}

pub(super) fn group_of(v: &Value) -> &'static str {
    if v["kind"] == "PodUnavailableBudget" {
        POLICY
    } else {
        APPS
    }
}

pub(super) fn version_of(v: &Value) -> &str {
    v["apiVersion"].as_str().unwrap().rsplit_once('/').unwrap().1
}

pub(super) fn other_version(version: &str) -> &'static str {
    if version == ALPHA { BETA } else { ALPHA }
}

pub(super) fn convert(v: &Value, version: &str) -> Value {
    let desired = format!("{}/{version}", group_of(v));
    convert_object(v, &desired)
        .unwrap_or_else(|e| panic!("converting to {desired} failed: {e}\nobject: {}", pretty(v)))
}

/// Converts to the other version and back.
pub(super) fn round_trip(v: &Value) -> Value {
    let from = version_of(v).to_string();
    convert(&convert(v, other_version(&from)), &from)
}

/// Decodes `v` into the typed struct of its kind and version.
pub(super) fn decode_typed(v: &Value) -> Result<(), String> {
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

pub(super) fn pretty(v: &Value) -> String {
    serde_json::to_string_pretty(v).unwrap()
}

/// Asserts that `v` decodes into its typed struct, naming `what` on failure.
pub(super) fn assert_decodes(v: &Value, what: &str) -> Result<(), TestCaseError> {
    decode_typed(v).map_err(|e| TestCaseError::fail(format!("{what} does not decode: {e}\n{}", pretty(v))))
}

// ---------------------------------------------------------------------------------------------
// Generic strategies
// ---------------------------------------------------------------------------------------------

pub(super) fn scalar() -> impl Strategy<Value = Value> {
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
pub(super) fn any_json() -> impl Strategy<Value = Value> {
    scalar().prop_recursive(2, 8, 3, |inner| {
        prop_oneof![
            vec(inner.clone(), 0..3).prop_map(Value::from),
            btree_map("[a-zA-Z]{1,5}", inner, 0..3).prop_map(|m| Value::Object(m.into_iter().collect())),
        ]
    })
}

/// Fields no conversion knows, keyed `x…` so they never collide with a real field.
pub(super) fn unknown_fields() -> impl Strategy<Value = Map<String, Value>> {
    btree_map("x[A-Z][a-z]{0,4}", any_json(), 0..3).prop_map(|m| m.into_iter().collect())
}

pub(super) fn name() -> impl Strategy<Value = String> {
    "[a-z][a-z0-9-]{0,6}[a-z0-9]"
}

pub(super) fn time() -> impl Strategy<Value = String> {
    (1u32..=28, 0u32..24, 0u32..60).prop_map(|(d, h, m)| format!("2024-01-{d:02}T{h:02}:{m:02}:00Z"))
}

/// An integer or a percentage, as partitions, maxUnavailable and friends take.
pub(super) fn int_or_percent() -> impl Strategy<Value = Value> {
    prop_oneof![
        (0i64..=20).prop_map(Value::from),
        (0u32..=100).prop_map(|p| Value::from(format!("{p}%"))),
    ]
}

/// Plain labels; keys never collide with the labels the conversion reads.
pub(super) fn plain_labels(max: usize) -> impl Strategy<Value = BTreeMap<String, String>> {
    btree_map("example\\.com/[a-z]{1,5}", "[a-z0-9]{0,5}", 0..=max)
}

pub(super) fn label_selector() -> impl Strategy<Value = Value> {
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
pub(super) fn metadata(namespaced: bool) -> impl Strategy<Value = Value> {
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
pub(super) type KindMeta = (BTreeMap<String, String>, BTreeMap<String, String>);

/// Assembles an object of `kind` at `api_version`.
pub(super) fn with_meta(
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

pub(super) fn scatter_strategy() -> impl Strategy<Value = Value> {
    vec(("[a-z]{1,5}", "[a-z0-9]{1,4}"), 1..3)
        .prop_map(|terms| Value::from_iter(terms.into_iter().map(|(k, v)| json!({"key": k, "value": v}))))
}

pub(super) fn priority_strategy() -> impl Strategy<Value = Value> {
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

pub(super) fn condition_status() -> impl Strategy<Value = &'static str> {
    select(vec!["True", "False", "Unknown"])
}

/// A canonical decimal integer as an annotation value. Non-canonical spellings (`"05"`, `"+5"`)
/// are excluded: they parse to the same number and come back canonical, in OpenKruise too.
pub(super) fn int_text(range: std::ops::Range<i32>) -> impl Strategy<Value = String> {
    range.prop_map(|n| n.to_string())
}
