//! PodUnavailableBudget generators in both versions and the expected round trips.

use super::*;

pub(super) fn pub_operations() -> impl Strategy<Value = Vec<&'static str>> {
    // Non-empty: an empty list is omitted by Go and reads as unset.
    vec(select(vec!["DELETE", "UPDATE", "EVICT", "RESIZE"]), 1..4)
}

/// Spec fields both versions share.
pub(super) fn pub_shared_spec() -> impl Strategy<Value = Map<String, Value>> {
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

pub(super) fn pub_status() -> impl Strategy<Value = Value> {
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
pub(super) fn pub_annotations() -> impl Strategy<Value = BTreeMap<String, String>> {
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

pub(super) fn alpha_pub() -> impl Strategy<Value = Value> {
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

pub(super) fn beta_pub() -> impl Strategy<Value = Value> {
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

pub(super) fn pub_alpha_round_trip_expected(orig: &Value) -> Value {
    // Canonical annotations make the v1alpha1 round trip exact.
    orig.clone()
}

pub(super) fn pub_beta_round_trip_expected(orig: &Value) -> Value {
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
