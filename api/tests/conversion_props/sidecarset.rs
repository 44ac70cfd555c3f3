//! SidecarSet generators in both versions and the expected round trips.

use super::*;

pub(super) fn sidecar_container() -> impl Strategy<Value = Value> {
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
pub(super) fn sidecarset_shared_spec() -> impl Strategy<Value = Map<String, Value>> {
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

pub(super) fn sidecarset_status() -> impl Strategy<Value = Value> {
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

pub(super) fn alpha_sidecarset() -> impl Strategy<Value = Value> {
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

pub(super) fn beta_sidecarset() -> impl Strategy<Value = Value> {
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

pub(super) fn sidecarset_alpha_round_trip_expected(orig: &Value) -> Value {
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

pub(super) fn sidecarset_beta_round_trip_expected(orig: &Value) -> Value {
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
