//! Property tests of SidecarSet injection: random pods (unknown fields everywhere, random labels,
//! annotations with `/` and `~`, app containers and volumes whose names may collide with the sidecars')
//! against a fixed set of SidecarSets. Whatever the pod: the step does not fail, its patch applies, stays
//! on the paths injection owns and leaves a valid Pod; every field kruise-rs does not know survives; and
//! running the step again on its own output adds nothing.

use crate::common;

use std::collections::BTreeSet;

use common::sidecarset::{apply, assert_valid_pod, check_patch_discipline, ops_json, step, view_of};
use proptest::prelude::*;
use serde_json::{Map, Value, json};

fn sidecar_sets() -> Vec<Value> {
    let hash = json!({"kruise.io/sidecarset-hash": "h1", "kruise.io/sidecarset-hash-without-image": "w1"});
    vec![
        json!({"apiVersion": "apps.kruise.io/v1beta1", "kind": "SidecarSet", "metadata": {"name": "mesh", "annotations": hash},
            "spec": {"selector": {"matchLabels": {"app": "web"}},
                "initContainers": [{"name": "mesh-init", "image": "init:1", "volumeMounts": [{"name": "mesh-certs", "mountPath": "/certs"}]},
                                   {"name": "proxy", "image": "proxy:1", "restartPolicy": "Always"}],
                "containers": [{"name": "envoy", "image": "envoy:1", "shareVolumePolicy": {"type": "enabled"},
                                "transferEnv": [{"sourceContainerName": "main", "envNames": ["A", "B"]}],
                                "volumeMounts": [{"name": "mesh-certs", "mountPath": "/certs"}]}],
                "volumes": [{"name": "mesh-certs", "emptyDir": {}}],
                "imagePullSecrets": [{"name": "mesh-registry"}],
                "patchPodMetadata": [{"patchPolicy": "MergePatchJson", "annotations": {"mesh/config": "{\"a\":1}"}}]}}),
        json!({"apiVersion": "apps.kruise.io/v1alpha1", "kind": "SidecarSet", "metadata": {"name": "logs", "annotations": hash},
            "spec": {"selector": {"matchExpressions": [{"key": "logs", "operator": "Exists"}]}, "namespace": "prod",
                "containers": [{"name": "log-agent", "image": "log:1", "podInjectPolicy": "AfterAppContainer",
                                "upgradeStrategy": {"upgradeType": "HotUpgrade", "hotUpgradeEmptyImage": "empty:1"},
                                "shareVolumeDevicePolicy": {"type": "enabled"}}],
                "imagePullSecrets": [{"name": "shared-registry"}]}}),
        json!({"apiVersion": "apps.kruise.io/v1beta1", "kind": "SidecarSet", "metadata": {"name": "all", "annotations": hash},
            "spec": {"selector": {"matchExpressions": [{"key": "opt-out", "operator": "DoesNotExist"}]},
                "containers": [{"name": "main", "image": "replaces-main:1"}],
                "patchPodMetadata": [{"annotations": {"a~b/c": "retained"}}]}}),
    ]
}

fn scalar() -> impl Strategy<Value = Value> {
    prop_oneof![
        any::<bool>().prop_map(Value::from),
        any::<i32>().prop_map(Value::from),
        "[a-z~/ ]{0,6}".prop_map(Value::from),
        Just(json!({"nested": [1, {"deep": null}]})),
    ]
}

/// Fields k8s-openapi does not know, keyed `future…`.
fn unknown_fields() -> impl Strategy<Value = Map<String, Value>> {
    prop::collection::btree_map("future[A-Z][a-z]{0,4}", scalar(), 0..3).prop_map(|m| m.into_iter().collect())
}

fn env() -> impl Strategy<Value = Vec<Value>> {
    prop::collection::vec(
        (prop::sample::select(vec!["A", "B", "C", "POD"]), "[a-z0-9]{0,4}")
            .prop_map(|(n, v)| json!({"name": n, "value": v})),
        0..4,
    )
}

fn container() -> impl Strategy<Value = Value> {
    (
        prop::sample::select(vec!["main", "web", "envoy", "worker", "log-agent-1"]),
        env(),
        prop::collection::vec(
            (
                prop::sample::select(vec!["data", "mesh-certs", "cache"]),
                prop::sample::select(vec!["/data", "/certs", "/var/$(POD)"]),
            ),
            0..3,
        ),
        prop::option::of(Just(json!([{"name": "dev", "devicePath": "/dev/x"}]))),
        unknown_fields(),
    )
        .prop_map(|(name, env, mounts, devices, unknown)| {
            let mut c = Map::new();
            c.insert("name".into(), json!(name));
            c.insert("image".into(), json!(format!("{name}:1")));
            if !env.is_empty() {
                c.insert("env".into(), Value::Array(env));
            }
            if !mounts.is_empty() {
                let mounts: Vec<Value> = mounts
                    .into_iter()
                    .map(|(n, p)| {
                        if p.contains('$') {
                            json!({"name": n, "mountPath": "/expanded", "subPathExpr": p})
                        } else {
                            json!({"name": n, "mountPath": p})
                        }
                    })
                    .collect();
                c.insert("volumeMounts".into(), Value::Array(mounts));
            }
            if let Some(d) = devices {
                c.insert("volumeDevices".into(), d);
            }
            c.extend(unknown);
            Value::Object(c)
        })
}

fn pod() -> impl Strategy<Value = Value> {
    (
        prop::collection::btree_map(prop::sample::select(vec!["app", "logs", "opt-out", "x/y~z"]), prop::sample::select(vec!["web", "db", ""]), 0..4),
        prop::option::of(prop::collection::btree_map(
            prop::sample::select(vec!["mesh/config", "a~b/c", "kruise.io/sidecarset-injected-list", "k8s.io/x~y"]),
            prop::sample::select(vec!["{\"b\":2}", "[1]", "v", "old-set"]),
            0..3,
        )),
        prop::sample::select(vec!["prod", "dev"]),
        prop::collection::vec(container(), 0..4),
        prop::collection::vec(container(), 0..2),
        prop::collection::vec(prop::sample::select(vec!["data", "mesh-certs", "cache"]), 0..3),
        prop::collection::vec(prop::sample::select(vec!["mesh-registry", "other"]), 0..3),
        unknown_fields(),
        unknown_fields(),
    )
        .prop_map(|(labels, annotations, namespace, containers, init, volumes, secrets, spec_unknown, meta_unknown)| {
            let mut metadata = json!({"name": "p", "namespace": namespace});
            if !labels.is_empty() {
                metadata["labels"] = json!(labels);
            }
            if let Some(mut a) = annotations {
                // A MergePatchJson onto a value that is not JSON fails the pod (as in OpenKruise): not this test.
                if let Some(v) = a.get_mut("mesh/config").filter(|v| serde_json::from_str::<Value>(v).is_err()) {
                    *v = "{\"b\":2}";
                }
                metadata["annotations"] = json!(a);
            }
            metadata.as_object_mut().unwrap().extend(meta_unknown);
            let mut spec = json!({"containers": containers});
            if !init.is_empty() {
                spec["initContainers"] = Value::Array(init);
            }
            if !volumes.is_empty() {
                spec["volumes"] = Value::Array(volumes.into_iter().map(|n| json!({"name": n, "emptyDir": {}})).collect());
            }
            if !secrets.is_empty() {
                spec["imagePullSecrets"] = Value::Array(secrets.into_iter().map(|n| json!({"name": n})).collect());
            }
            spec.as_object_mut().unwrap().extend(spec_unknown);
            json!({"apiVersion": "v1", "kind": "Pod", "metadata": metadata, "spec": spec, "futureTopLevel": {"kept": true}})
        })
}

/// Every (path, value) of a field named `future…`, with containers identified by list and name.
fn unknown_paths(value: &Value, path: String, out: &mut BTreeSet<(String, String)>) {
    match value {
        Value::Object(m) => {
            for (k, v) in m {
                if k.starts_with("future") {
                    out.insert((format!("{path}/{k}"), v.to_string()));
                } else {
                    unknown_paths(v, format!("{path}/{k}"), out);
                }
            }
        }
        Value::Array(items) => {
            for (i, v) in items.iter().enumerate() {
                let id = v
                    .get("name")
                    .and_then(Value::as_str)
                    .map_or(i.to_string(), |n| format!("{n}#{i}"));
                unknown_paths(v, format!("{path}[{id}]"), out);
            }
        }
        _ => {}
    }
}

/// Unknown fields of the pod outside containers that a sidecar replaces.
fn surviving_unknowns(pod: &Value, replaced: &BTreeSet<String>) -> BTreeSet<(String, String)> {
    let mut out = BTreeSet::new();
    let mut strip = pod.clone();
    for list in ["containers", "initContainers"] {
        if let Some(items) = strip
            .pointer_mut(&format!("/spec/{list}"))
            .and_then(Value::as_array_mut)
        {
            items.retain(|c| !replaced.contains(c.get("name").and_then(Value::as_str).unwrap_or_default()));
            // Identify containers by name only: injection moves them by index.
            for c in items.iter_mut() {
                let name = c
                    .get("name")
                    .and_then(Value::as_str)
                    .unwrap_or_default()
                    .to_string();
                let mut fields = BTreeSet::new();
                unknown_paths(c, String::new(), &mut fields);
                for (p, v) in fields {
                    out.insert((format!("/spec/{list}[{name}]{p}"), v));
                }
            }
            items.clear();
        }
    }
    let mut rest = BTreeSet::new();
    unknown_paths(&strip, String::new(), &mut rest);
    out.extend(rest);
    out
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 256, failure_persistence: None, ..ProptestConfig::default() })]

    #[test]
    fn injection_is_idempotent_and_keeps_unknown_fields(pod in pod()) {
        let view = view_of(&sidecar_sets());
        let namespace = pod["metadata"]["namespace"].as_str().unwrap().to_string();
        let output = step(&view, &namespace, &pod).unwrap_or_else(|d| panic!("denied: {d:?}\n{pod:#}"));
        check_patch_discipline(&output.patch);
        let out = apply(&pod, &output.patch);
        assert_valid_pod(&out);
        let again = step(&view, &namespace, &out).unwrap_or_else(|d| panic!("second run denied: {d:?}"));
        prop_assert!(again.patch.is_empty(), "second run patched:\n{}\non\n{out:#}", ops_json(&again.patch));
        // Containers named like a sidecar are replaced (OpenKruise's rule); every other unknown field stays.
        let replaced: BTreeSet<String> = ["mesh-init", "proxy", "envoy", "log-agent-1", "log-agent-2", "main"]
            .into_iter().map(String::from).collect();
        let before = surviving_unknowns(&pod, &replaced);
        let after = surviving_unknowns(&out, &replaced);
        prop_assert!(before.is_subset(&after), "lost unknown fields: {:?}", before.difference(&after).collect::<Vec<_>>());
    }
}
