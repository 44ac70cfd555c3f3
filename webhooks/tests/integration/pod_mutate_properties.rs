//! Properties of the `/mutate-pod` steps over generated pods: running the webhook again on its own
//! output (with its status writes applied) adds nothing; fields our types do not know survive
//! wherever they sit; every result is a valid Pod; with subset patches that only add, the patch only
//! adds.

use crate::common;

use common::pod_mutate::{create_request, patched, run, view_of};
use proptest::prelude::*;
use serde_json::{Map, Value, json};

fn cluster() -> kruise_webhooks::MemoryView {
    view_of(&[
        json!({"apiVersion": "apps.kruise.io/v1alpha1", "kind": "CloneSet",
            "metadata": {"name": "cs", "namespace": "ns", "uid": "cs-uid"},
            "spec": {"replicas": 4, "selector": {"matchLabels": {"app": "db"}}, "template": {}}}),
        json!({"apiVersion": "apps/v1", "kind": "Deployment",
            "metadata": {"name": "web", "namespace": "ns", "uid": "dep-uid"},
            "spec": {"replicas": 4, "selector": {"matchLabels": {"app": "web"}}, "template": {}}}),
        json!({"apiVersion": "apps/v1", "kind": "ReplicaSet",
            "metadata": {"name": "web-abc", "namespace": "ns", "uid": "rs-uid",
                "ownerReferences": [{"apiVersion": "apps/v1", "kind": "Deployment", "name": "web", "uid": "dep-uid", "controller": true}]},
            "spec": {"replicas": 4, "selector": {"matchLabels": {"app": "web"}}}}),
        json!({"apiVersion": "batch/v1", "kind": "Job", "metadata": {"name": "job", "namespace": "ns", "uid": "job-uid"},
            "spec": {"parallelism": 2, "template": {}}}),
        json!({"apiVersion": "apps.kruise.io/v1beta1", "kind": "WorkloadSpread",
            "metadata": {"name": "cs-spread", "namespace": "ns", "resourceVersion": "5"},
            "spec": {"targetRef": {"apiVersion": "apps.kruise.io/v1alpha1", "kind": "CloneSet", "name": "cs"},
                "subsets": [
                    {"name": "a", "maxReplicas": 1, "tolerations": [{"key": "a", "operator": "Exists"}],
                     "patch": {"metadata": {"labels": {"subset": "a"}, "annotations": {"x/y~z": "1"}},
                               "spec": {"containers": [{"name": "c0", "env": [{"name": "SUBSET", "value": "a"}]}]}}},
                    {"name": "b", "preferredNodeSelector": [{"weight": 1, "preference": {"matchExpressions": [{"key": "b", "operator": "Exists"}]}}]}]}}),
        json!({"apiVersion": "apps.kruise.io/v1beta1", "kind": "WorkloadSpread",
            "metadata": {"name": "web-spread", "namespace": "ns", "resourceVersion": "9"},
            "spec": {"targetRef": {"apiVersion": "apps/v1", "kind": "Deployment", "name": "web"},
                "targetFilter": {"selector": {"matchLabels": {"app": "web"}}},
                "subsets": [
                    {"name": "half", "maxReplicas": "50%", "requiredNodeSelector": {"matchExpressions": [{"key": "z", "operator": "In", "values": ["1"]}]},
                     "patch": {"metadata": {"labels": {"half": "yes"}}}},
                    {"name": "rest"}]}}),
        json!({"apiVersion": "policy.kruise.io/v1beta1", "kind": "PodUnavailableBudget",
            "metadata": {"name": "web-pub", "namespace": "ns"},
            "spec": {"selector": {"matchLabels": {"app": "web"}}, "maxUnavailable": 1}}),
        json!({"apiVersion": "policy.kruise.io/v1beta1", "kind": "PodUnavailableBudget",
            "metadata": {"name": "cs-pub", "namespace": "ns"},
            "spec": {"targetRef": {"apiVersion": "apps.kruise.io/v1beta1", "kind": "CloneSet", "name": "cs"}, "maxUnavailable": 1}}),
    ])
}

fn owner() -> impl Strategy<Value = Option<Value>> {
    prop_oneof![
        Just(None),
        Just(Some(
            json!({"apiVersion": "apps.kruise.io/v1alpha1", "kind": "CloneSet", "name": "cs", "uid": "cs-uid", "controller": true})
        )),
        Just(Some(
            json!({"apiVersion": "apps/v1", "kind": "ReplicaSet", "name": "web-abc", "uid": "rs-uid", "controller": true})
        )),
        Just(Some(
            json!({"apiVersion": "batch/v1", "kind": "Job", "name": "job", "uid": "job-uid", "controller": true})
        )),
        Just(Some(
            json!({"apiVersion": "apps/v1", "kind": "DaemonSet", "name": "ds", "uid": "ds-uid", "controller": true})
        )),
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

/// Unknown fields: (where, name, value), where 0 = root, 1 = metadata, 2 = spec, 3 = first container.
fn unknown_fields() -> impl Strategy<Value = Vec<(u8, String, Value)>> {
    prop::collection::vec((0u8..4, "x[A-Z][a-z]{2,5}", scalar()), 0..4)
}

fn container(i: usize, priority: Option<i8>) -> Value {
    let mut c = json!({"name": format!("c{i}"), "image": "img"});
    if let Some(p) = priority {
        c["env"] = json!([{"name": "OTHER", "value": "v"}, {"name": "KRUISE_CONTAINER_PRIORITY", "value": p.to_string()}]);
    }
    c
}

prop_compose! {
    fn pod()(
        owner in owner(),
        named in any::<bool>(),
        app in prop::option::of(prop_oneof![Just("web"), Just("db")]),
        hash in prop::option::of(prop_oneof![Just("abc"), Just("def")]),
        annotations in prop::option::of(prop::collection::btree_map("[a-z]{1,3}(/[a-z~]{1,3})?", "[a-z]{0,3}", 0..3)),
        ordered in any::<bool>(),
        priorities in prop::collection::vec(prop::option::of(-3i8..4), 0..4),
        gate in any::<bool>(),
        unknown in unknown_fields(),
    ) -> (Value, Vec<(u8, String, Value)>) {
        let mut meta = Map::new();
        meta.insert("namespace".into(), json!("ns"));
        if named { meta.insert("name".into(), json!("pod-1")); } else { meta.insert("generateName".into(), json!("gen-")); }
        let mut labels = Map::new();
        if let Some(app) = app { labels.insert("app".into(), json!(app)); }
        if let Some(hash) = hash { labels.insert("pod-template-hash".into(), json!(hash)); }
        if !labels.is_empty() { meta.insert("labels".into(), Value::Object(labels)); }
        let mut ann: Map<String, Value> = annotations.unwrap_or_default().into_iter().map(|(k, v)| (k, Value::String(v))).collect();
        if ordered { ann.insert("apps.kruise.io/container-launch-priority".into(), json!("Ordered")); }
        if !ann.is_empty() { meta.insert("annotations".into(), Value::Object(ann)); }
        if let Some(owner) = owner { meta.insert("ownerReferences".into(), json!([owner])); }
        let containers: Vec<Value> = priorities.iter().enumerate().map(|(i, p)| container(i, *p)).collect();
        let mut spec = json!({"containers": containers});
        if gate { spec["readinessGates"] = json!([{"conditionType": "Other"}]); }
        let mut pod = json!({"apiVersion": "v1", "kind": "Pod", "metadata": meta, "spec": spec});
        for (at, name, value) in &unknown {
            let target = match at {
                0 => Some(&mut pod),
                1 => pod.get_mut("metadata"),
                2 => pod.get_mut("spec"),
                _ => pod.pointer_mut("/spec/containers/0"),
            };
            if let Some(Value::Object(m)) = target { m.insert(name.clone(), value.clone()); }
        }
        (pod, unknown)
    }
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 256, ..ProptestConfig::default() })]

    #[test]
    fn a_second_run_adds_nothing_and_unknown_fields_survive((pod, unknown) in pod()) {
        let mut view = cluster();
        let request = create_request(&pod, "ns");
        let first = run(&request, &view);
        prop_assert!(first.allowed(), "denied: {:?}", first.denial);
        let out = patched(&request, &first);
        for op in &first.patch {
            let wire = serde_json::to_value(op).unwrap();
            prop_assert_eq!(&wire["op"], "add", "only additions here: {}", wire);
        }
        for (at, name, value) in &unknown {
            let holder = match at {
                0 => Some(&out),
                1 => out.get("metadata"),
                2 => out.get("spec"),
                _ => out.pointer("/spec/containers/0"),
            };
            if let Some(holder) = holder.filter(|_| *at < 3 || pod.pointer("/spec/containers/0").is_some()) {
                prop_assert_eq!(holder.get(name), Some(value), "unknown field {} lost", name);
            }
        }
        for w in &first.writes {
            view.apply_status(w).unwrap();
        }
        let second_request = create_request(&out, "ns");
        let second = run(&second_request, &view);
        prop_assert!(second.allowed());
        prop_assert!(second.patch.is_empty(), "second run patched: {:?}", second.patch);
        prop_assert!(second.writes.is_empty(), "second run wrote: {:?}", second.writes);
    }

    #[test]
    fn a_dry_run_never_records((pod, _unknown) in pod()) {
        let view = cluster();
        let mut request = create_request(&pod, "ns");
        request.dry_run = Some(true);
        let decision = run(&request, &view);
        prop_assert!(decision.allowed());
        prop_assert!(decision.writes.is_empty());
        patched(&request, &decision);
    }
}
