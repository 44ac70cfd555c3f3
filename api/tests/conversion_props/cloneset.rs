//! CloneSet generators in both versions and the expected round trips.

use super::*;

/// Spec fields both versions share.
pub(super) fn cloneset_shared_spec() -> impl Strategy<Value = Map<String, Value>> {
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

pub(super) fn cloneset_status() -> impl Strategy<Value = Value> {
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
pub(super) fn pre_download_annotations() -> impl Strategy<Value = BTreeMap<String, String>> {
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
pub(super) fn exclude_label() -> impl Strategy<Value = BTreeMap<String, String>> {
    option::of(select(vec!["true", "false", "yes"])).prop_map(|v| {
        v.map(|v| (EXCLUDE_LABEL.to_string(), v.to_string()))
            .into_iter()
            .collect()
    })
}

/// Fields of the v1alpha1 `updateStrategy` that v1beta1 keeps under `rollingUpdate`.
pub(super) fn rolling_fields() -> impl Strategy<Value = Map<String, Value>> {
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

pub(super) fn alpha_cloneset() -> impl Strategy<Value = Value> {
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

pub(super) fn beta_cloneset() -> impl Strategy<Value = Value> {
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

pub(super) fn known_alpha_type(t: Option<&str>) -> &'static str {
    match t {
        Some("OnDelete") => "OnDelete",
        Some("InPlaceIfPossible") => "InPlaceIfPossible",
        Some("InPlaceOnly") => "InPlaceOnly",
        _ => "ReCreate",
    }
}

pub(super) fn has_grace(in_place: Option<&Value>) -> Option<Value> {
    in_place
        .and_then(|s| s.get("gracePeriodSeconds"))
        .filter(|g| g.as_i64() != Some(0))
        .cloned()
}

/// v1alpha1 CloneSet after v1beta1 and back: the original, except for the documented one-way
/// cases.
pub(super) fn cloneset_alpha_round_trip_expected(orig: &Value) -> Value {
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
pub(super) fn pre_download_fields(annotations: &BTreeMap<String, String>) -> Map<String, Value> {
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
pub(super) fn cloneset_beta_round_trip_expected(orig: &Value) -> Value {
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
