//! WorkloadSpread generators in both versions and the expected round trips.

use super::*;

pub(super) fn node_selector_term() -> impl Strategy<Value = Value> {
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
pub(super) fn ws_subset(required: &'static str, preferred: &'static str) -> impl Strategy<Value = Value> {
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

pub(super) fn ws_spec(required: &'static str, preferred: &'static str) -> impl Strategy<Value = Value> {
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
pub(super) fn ws_status(condition: BoxedStrategy<Value>) -> impl Strategy<Value = Value> {
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

pub(super) fn alpha_ws_condition() -> BoxedStrategy<Value> {
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

pub(super) fn beta_ws_condition() -> BoxedStrategy<Value> {
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

pub(super) fn alpha_workloadspread() -> impl Strategy<Value = Value> {
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

pub(super) fn beta_workloadspread() -> impl Strategy<Value = Value> {
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
pub(super) fn for_each_ws_condition(v: &mut Value, f: impl Fn(&mut Map<String, Value>)) {
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

pub(super) fn workloadspread_alpha_round_trip_expected(orig: &Value) -> Value {
    let mut exp = orig.clone();
    // Documented: a condition without reason gets reason `Unknown`.
    for_each_ws_condition(&mut exp, |c| {
        c.entry("reason").or_insert("Unknown".into());
    });
    exp
}

pub(super) fn workloadspread_beta_round_trip_expected(orig: &Value) -> Value {
    let mut exp = orig.clone();
    // Documented: condition observedGeneration is dropped.
    for_each_ws_condition(&mut exp, |c| {
        c.remove("observedGeneration");
    });
    exp
}
