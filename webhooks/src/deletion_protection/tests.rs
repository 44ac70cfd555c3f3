use std::sync::Arc;

use k8s_openapi::api::core::v1::{Namespace, PersistentVolumeClaim};
use kruise_api::PodRecord;
use serde_json::{Value, json};

use kruise_core::feature_gates::Gate;

use super::*;
use crate::{MemoryView, Webhook};

const ALWAYS: &str = "forbidden by ResourcesProtectionDeletion for policy.kruise.io/delete-protection=Always";

/// The observable answer: `None` when allowed, else (code, reason, message).
type Outcome = Option<(u16, String, String)>;

fn outcome(decision: &Decision) -> Outcome {
    assert!(decision.patch.is_empty(), "a validating webhook never patches");
    assert!(
        decision.writes.is_empty(),
        "deletion protection has no side effects"
    );
    decision
        .denial
        .as_ref()
        .map(|d| (d.code, d.reason.clone(), d.message.clone()))
}

fn forbidden(message: &str) -> Outcome {
    Some((403, "Forbidden".into(), message.into()))
}

fn cascading(rest: &str) -> Outcome {
    forbidden(&format!(
        "forbidden by ResourcesProtectionDeletion for policy.kruise.io/delete-protection=Cascading{rest}"
    ))
}

fn invalid(value: &str) -> Outcome {
    Some((
        422,
        "Invalid".into(),
        format!(
            "metadata.labels[policy.kruise.io/delete-protection]: Unsupported value: \"{value}\": supported values: \"Always\", \"Cascading\""
        ),
    ))
}

fn bad_request(decision: &Decision) -> bool {
    decision
        .denial
        .as_ref()
        .is_some_and(|d| d.code == 400 && d.reason == "BadRequest")
}

/// (group, version, kind) of every protected kind, with a representative object.
const GVKS: &[(&str, &str, &str)] = &[
    ("", "v1", "Namespace"),
    ("apiextensions.k8s.io", "v1", "CustomResourceDefinition"),
    ("apiextensions.k8s.io", "v1beta1", "CustomResourceDefinition"),
    ("apps", "v1", "Deployment"),
    ("apps", "v1", "ReplicaSet"),
    ("apps", "v1", "StatefulSet"),
    ("", "v1", "Service"),
    ("networking.k8s.io", "v1", "Ingress"),
    ("networking.k8s.io", "v1beta1", "Ingress"),
    ("extensions", "v1beta1", "Ingress"),
    ("apps.kruise.io", "v1alpha1", "CloneSet"),
    ("apps.kruise.io", "v1beta1", "CloneSet"),
    ("apps.kruise.io", "v1beta1", "StatefulSet"),
    ("apps.kruise.io", "v1alpha1", "StatefulSet"),
    ("apps.kruise.io", "v1alpha1", "UnitedDeployment"),
];

const WORKLOADS: &[(&str, &str, &str)] = &[
    ("apps", "v1", "Deployment"),
    ("apps", "v1", "ReplicaSet"),
    ("apps", "v1", "StatefulSet"),
    ("apps.kruise.io", "v1alpha1", "CloneSet"),
    ("apps.kruise.io", "v1beta1", "CloneSet"),
    ("apps.kruise.io", "v1beta1", "StatefulSet"),
    ("apps.kruise.io", "v1alpha1", "UnitedDeployment"),
];

fn request(
    operation: &str,
    (group, version, kind): (&str, &str, &str),
    object: Option<Value>,
    old_object: Option<Value>,
) -> AdmissionRequest {
    let resource = format!("{}s", kind.to_lowercase());
    serde_json::from_value(json!({
        "uid": "u1",
        "kind": {"group": group, "version": version, "kind": kind},
        "resource": {"group": group, "version": version, "resource": resource},
        "name": "target",
        "namespace": if kind == "Namespace" || kind == "CustomResourceDefinition" { "" } else { "ns" },
        "operation": operation,
        "userInfo": {"username": "alice"},
        "object": object,
        "oldObject": old_object,
    }))
    .unwrap()
}

/// An object of `kind` named `target` with `labels` and `spec`.
fn object((group, version, kind): (&str, &str, &str), labels: Value, spec: Value) -> Value {
    let api_version = if group.is_empty() {
        version.to_string()
    } else {
        format!("{group}/{version}")
    };
    json!({
        "apiVersion": api_version, "kind": kind,
        "metadata": {"name": "target", "labels": labels},
        "spec": spec,
    })
}

fn labelled(value: &str) -> Value {
    json!({"app": "x", LABEL: value})
}

fn delete(gvk: (&str, &str, &str), old: Value) -> AdmissionRequest {
    request("DELETE", gvk, None, Some(old))
}

fn decide(request: &AdmissionRequest, view: &MemoryView, settings: &Settings) -> Decision {
    validate(request, view, settings)
}

fn on() -> Settings {
    Settings::default().with(Gate::DeletionProtectionForCRDCascadingGate, true)
}

fn crd_spec() -> Value {
    json!({
        "group": "example.com",
        "names": {"kind": "Foo", "listKind": "FooList", "plural": "foos"},
        "versions": [{"name": "v1alpha1", "storage": false}, {"name": "v1", "storage": true}],
    })
}

fn workload_spec(replicas: Value) -> Value {
    json!({"replicas": replicas, "template": {}})
}

fn spec_for(gvk: (&str, &str, &str)) -> Value {
    match gvk.2 {
        "CustomResourceDefinition" => crd_spec(),
        "Namespace" | "Service" | "Ingress" => json!({}),
        _ => workload_spec(json!(3)),
    }
}

#[test]
fn always_denies_delete_of_every_protected_kind() {
    let view = MemoryView::default();
    for settings in [on(), Settings::default()] {
        for &gvk in GVKS {
            let old = object(gvk, labelled("Always"), spec_for(gvk));
            let got = outcome(&decide(&delete(gvk, old), &view, &settings));
            assert_eq!(got, forbidden(ALWAYS), "{gvk:?}");
        }
    }
}

#[test]
fn unprotected_objects_are_deleted() {
    let view = MemoryView::default();
    for &gvk in GVKS {
        for labels in [
            json!(null),
            json!({}),
            json!({"app": "x"}),
            labelled("always"),
            labelled("foo"),
            labelled(""),
        ] {
            let old = object(gvk, labels.clone(), spec_for(gvk));
            assert_eq!(
                outcome(&decide(&delete(gvk, old), &view, &on())),
                None,
                "{gvk:?} {labels}"
            );
        }
    }
}

#[test]
fn objects_already_being_deleted_are_allowed() {
    let view = MemoryView::default();
    for &gvk in GVKS {
        let mut old = object(gvk, labelled("Always"), spec_for(gvk));
        old["metadata"]["deletionTimestamp"] = json!("2024-01-01T00:00:00Z");
        assert_eq!(outcome(&decide(&delete(gvk, old), &view, &on())), None, "{gvk:?}");
    }
}

#[test]
fn workload_cascading_follows_replicas() {
    let view = MemoryView::default();
    let cases: &[(Value, Outcome)] = &[
        (json!(2), cascading(" and replicas 2>0")),
        (json!(1), cascading(" and replicas 1>0")),
        (json!(0), None),
        (json!(-1), None),
        // Absent or null: defaulted to 1, as the apiserver and Kruise's defaulting store it.
        (json!(null), cascading(" and replicas 1>0")),
        (json!(2147483647), cascading(" and replicas 2147483647>0")),
    ];
    for &gvk in WORKLOADS {
        for (replicas, want) in cases {
            let old = object(gvk, labelled("Cascading"), workload_spec(replicas.clone()));
            let got = outcome(&decide(&delete(gvk, old), &view, &on()));
            assert_eq!(&got, want, "{gvk:?} replicas {replicas}");
        }
        let mut old = object(gvk, labelled("Cascading"), json!(null));
        old.as_object_mut().unwrap().remove("spec");
        assert_eq!(
            outcome(&decide(&delete(gvk, old), &view, &on())),
            cascading(" and replicas 1>0"),
            "{gvk:?} without spec"
        );
    }
}

#[test]
fn service_and_ingress_ignore_cascading() {
    let view = MemoryView::default();
    for gvk in [
        ("", "v1", "Service"),
        ("networking.k8s.io", "v1", "Ingress"),
        ("networking.k8s.io", "v1beta1", "Ingress"),
    ] {
        let old = object(gvk, labelled("Cascading"), json!({"replicas": 5}));
        assert_eq!(outcome(&decide(&delete(gvk, old), &view, &on())), None, "{gvk:?}");
    }
}

fn pod(namespace: &str, name: &str, phase: Option<&str>, deleting: bool) -> Value {
    let mut p =
        json!({"apiVersion": "v1", "kind": "Pod", "metadata": {"name": name, "namespace": namespace}});
    if let Some(phase) = phase {
        p["status"] = json!({"phase": phase});
    }
    if deleting {
        p["metadata"]["deletionTimestamp"] = json!("2024-01-01T00:00:00Z");
    }
    p
}

fn pvc(namespace: &str, name: &str, phase: &str, deleting: bool) -> Value {
    let mut p = json!({"apiVersion": "v1", "kind": "PersistentVolumeClaim",
        "metadata": {"name": name, "namespace": namespace}, "status": {"phase": phase}});
    if deleting {
        p["metadata"]["deletionTimestamp"] = json!("2024-01-01T00:00:00Z");
    }
    p
}

fn view_of(objects: Vec<Value>) -> MemoryView {
    let mut view = MemoryView::default();
    for o in objects {
        view.add(o).unwrap();
    }
    view
}

const NS: (&str, &str, &str) = ("", "v1", "Namespace");

fn namespace_delete(name: &str, protection: &str) -> AdmissionRequest {
    let old = json!({"apiVersion": "v1", "kind": "Namespace",
        "metadata": {"name": name, "labels": labelled(protection)}, "spec": {"finalizers": ["kubernetes"]}});
    delete(NS, old)
}

#[test]
fn namespace_cascading_counts_active_pods_then_bound_pvcs() {
    let inactive_pods = || {
        vec![
            pod("prod", "done", Some("Succeeded"), false),
            pod("prod", "crashed", Some("Failed"), false),
            pod("prod", "going", Some("Running"), true),
            pod("other", "elsewhere", Some("Running"), false),
        ]
    };
    let unbound_pvcs = || {
        vec![
            pvc("prod", "pending", "Pending", false),
            pvc("prod", "lost", "Lost", false),
            pvc("prod", "leaving", "Bound", true),
            pvc("other", "elsewhere", "Bound", false),
        ]
    };
    let with = |extra: Vec<Value>| {
        let mut all = inactive_pods();
        all.extend(unbound_pvcs());
        all.extend(extra);
        view_of(all)
    };
    let cases: Vec<(&str, MemoryView, Outcome)> = vec![
        ("empty namespace", MemoryView::default(), None),
        ("only inactive pods and unbound pvcs", with(vec![]), None),
        (
            "running and pending (no status) pods are active",
            with(vec![
                pod("prod", "web", Some("Running"), false),
                pod("prod", "new", None, false),
                pod("prod", "unknown", Some("Unknown"), false),
            ]),
            cascading(" and active pods 3>0"),
        ),
        (
            "pods are reported before pvcs",
            with(vec![
                pod("prod", "web", Some("Pending"), false),
                pvc("prod", "data", "Bound", false),
            ]),
            cascading(" and active pods 1>0"),
        ),
        (
            "bound pvcs",
            with(vec![
                pvc("prod", "data", "Bound", false),
                pvc("prod", "logs", "Bound", false),
            ]),
            cascading(" and \"Bound\" status pvc 2>0"),
        ),
    ];
    for (name, view, want) in cases {
        let got = outcome(&decide(&namespace_delete("prod", "Cascading"), &view, &on()));
        assert_eq!(got, want, "{name}");
    }
    // Always does not look at the contents.
    let got = outcome(&decide(
        &namespace_delete("prod", "Always"),
        &MemoryView::default(),
        &on(),
    ));
    assert_eq!(got, forbidden(ALWAYS));
}

#[test]
fn namespace_name_falls_back_to_the_request_name() {
    let view = view_of(vec![pod("target", "web", Some("Running"), false)]);
    let old = json!({"apiVersion": "v1", "kind": "Namespace", "metadata": {"labels": labelled("Cascading")}});
    let got = outcome(&decide(&delete(NS, old), &view, &on()));
    assert_eq!(got, cascading(" and active pods 1>0"));
}

const CRD: (&str, &str, &str) = ("apiextensions.k8s.io", "v1", "CustomResourceDefinition");

fn crd_delete(protection: &str) -> AdmissionRequest {
    delete(CRD, object(CRD, labelled(protection), crd_spec()))
}

fn foo(name: &str, deleting: bool) -> Value {
    let mut o =
        json!({"apiVersion": "example.com/v1", "kind": "Foo", "metadata": {"name": name, "namespace": "a"}});
    if deleting {
        o["metadata"]["deletionTimestamp"] = json!("2024-01-01T00:00:00Z");
    }
    o
}

#[test]
fn crd_cascading_counts_active_custom_resources() {
    let other_kinds = || {
        vec![
            json!({"apiVersion": "example.com/v1", "kind": "Bar", "metadata": {"name": "b"}}),
            json!({"apiVersion": "other.io/v1", "kind": "Foo", "metadata": {"name": "f"}}),
        ]
    };
    let with = |extra: Vec<Value>| {
        let mut all = other_kinds();
        all.extend(extra);
        view_of(all)
    };
    let cases: Vec<(&str, MemoryView, Outcome)> = vec![
        ("no custom resources", MemoryView::default(), None),
        ("only other kinds or groups", with(vec![]), None),
        ("only terminating ones", with(vec![foo("x", true)]), None),
        (
            "active ones are counted",
            with(vec![foo("x", false), foo("y", false), foo("z", true)]),
            cascading(" and active CRs 2>0"),
        ),
    ];
    for (name, view, want) in cases {
        assert_eq!(
            outcome(&decide(&crd_delete("Cascading"), &view, &on())),
            want,
            "{name}"
        );
        // v1beta1 CRDs are read the same way.
        let beta = ("apiextensions.k8s.io", "v1beta1", "CustomResourceDefinition");
        let req = delete(beta, object(beta, labelled("Cascading"), crd_spec()));
        assert_eq!(outcome(&decide(&req, &view, &on())), want, "v1beta1: {name}");
    }
}

#[test]
fn crd_cascading_without_its_gate_is_denied_as_openkruise_does() {
    let settings = Settings::default();
    let got = outcome(&decide(
        &crd_delete("Cascading"),
        &MemoryView::default(),
        &settings,
    ));
    assert_eq!(
        got,
        forbidden("feature-gate DeletionProtectionForCRDCascadingGate is not enabled")
    );
    let got = outcome(&decide(&crd_delete("Always"), &MemoryView::default(), &settings));
    assert_eq!(got, forbidden(ALWAYS));
}

/// A view that cannot count custom resources (relies on the trait's default for active ones).
struct Uncounted(MemoryView);

impl ClusterView for Uncounted {
    fn namespace(&self, name: &str) -> Option<Arc<Namespace>> {
        self.0.namespace(name)
    }
    fn pod(&self, namespace: &str, name: &str) -> Option<Arc<PodRecord>> {
        self.0.pod(namespace, name)
    }
    fn pods(&self, namespace: &str) -> Vec<Arc<PodRecord>> {
        self.0.pods(namespace)
    }
    fn persistent_volume_claims(&self, namespace: &str) -> Vec<Arc<PersistentVolumeClaim>> {
        self.0.persistent_volume_claims(namespace)
    }
    fn custom_resource_count(&self, _group: &str, _kind: &str) -> Option<usize> {
        None
    }
}

#[test]
fn crd_cascading_fails_closed_when_custom_resources_cannot_be_counted() {
    let got = outcome(&validate(
        &crd_delete("Cascading"),
        &Uncounted(MemoryView::default()),
        &on(),
    ));
    assert_eq!(
        got,
        forbidden(
            "failed to list CRs of example.com/v1, Kind=FooList: custom resources of group \"example.com\", kind \"Foo\" are not known to kruise-rs"
        )
    );
}

#[test]
fn trait_default_counts_every_custom_resource() {
    /// Counts 2 custom resources, terminating or not.
    struct Two;
    impl ClusterView for Two {
        fn namespace(&self, _: &str) -> Option<Arc<Namespace>> {
            None
        }
        fn pod(&self, _: &str, _: &str) -> Option<Arc<PodRecord>> {
            None
        }
        fn pods(&self, _: &str) -> Vec<Arc<PodRecord>> {
            Vec::new()
        }
        fn persistent_volume_claims(&self, _: &str) -> Vec<Arc<PersistentVolumeClaim>> {
            Vec::new()
        }
        fn custom_resource_count(&self, group: &str, kind: &str) -> Option<usize> {
            ((group, kind) == ("example.com", "Foo")).then_some(2)
        }
    }
    let got = outcome(&validate(&crd_delete("Cascading"), &Two, &on()));
    assert_eq!(got, cascading(" and active CRs 2>0"));
}

#[test]
fn switched_off_allows_everything() {
    let settings = Settings::default()
        .with(Gate::DeletionProtectionForCRDCascadingGate, true)
        .with(Gate::ResourcesDeletionProtection, false);
    let view = view_of(vec![pod("prod", "web", Some("Running"), false)]);
    for &gvk in GVKS {
        let old = object(gvk, labelled("Always"), spec_for(gvk));
        assert_eq!(
            outcome(&decide(&delete(gvk, old), &view, &settings)),
            None,
            "{gvk:?}"
        );
        let new = object(gvk, labelled("nope"), spec_for(gvk));
        let create = request("CREATE", gvk, Some(new), None);
        assert_eq!(outcome(&decide(&create, &view, &settings)), None, "{gvk:?}");
    }
    assert_eq!(
        outcome(&decide(&namespace_delete("prod", "Cascading"), &view, &settings)),
        None
    );
    let no_old = request("DELETE", NS, None, None);
    assert_eq!(outcome(&decide(&no_old, &view, &settings)), None);
}

#[test]
fn other_kinds_versions_operations_and_subresources_are_allowed() {
    let view = MemoryView::default();
    for gvk in [
        ("", "v1", "Pod"),
        ("", "v1", "ConfigMap"),
        ("apps", "v1", "DaemonSet"),
        ("apps", "v1", "ControllerRevision"),
        ("apps", "v1", "CloneSet"),
        ("apps.kruise.io", "v1alpha1", "DaemonSet"),
        ("apps.kruise.io", "v1beta1", "Deployment"),
        ("apiextensions.k8s.io", "v2", "CustomResourceDefinition"),
        ("networking.k8s.io", "v2", "Ingress"),
        ("example.com", "v1", "Namespace"),
        ("", "", ""),
    ] {
        let old = object(gvk, labelled("Always"), workload_spec(json!(3)));
        assert_eq!(outcome(&decide(&delete(gvk, old), &view, &on())), None, "{gvk:?}");
        let new = object(gvk, labelled("nope"), json!({}));
        let create = request("CREATE", gvk, Some(new), None);
        assert_eq!(outcome(&decide(&create, &view, &on())), None, "{gvk:?}");
        assert_eq!(
            outcome(&decide(&request("DELETE", gvk, None, None), &view, &on())),
            None
        );
    }
    for &gvk in GVKS {
        let old = object(gvk, labelled("Always"), spec_for(gvk));
        for op in ["CONNECT", "PATCH"] {
            let req = request(op, gvk, Some(old.clone()), Some(old.clone()));
            assert_eq!(outcome(&decide(&req, &view, &on())), None, "{op} {gvk:?}");
        }
        for sub in ["status", "scale", "finalize"] {
            let mut req = delete(gvk, old.clone());
            req.sub_resource = Some(sub.into());
            assert_eq!(outcome(&decide(&req, &view, &on())), None, "{sub} {gvk:?}");
        }
        let mut req = delete(gvk, old.clone());
        req.sub_resource = Some(String::new());
        assert_eq!(
            outcome(&decide(&req, &view, &on())),
            forbidden(ALWAYS),
            "empty subresource {gvk:?}"
        );
    }
}

#[test]
fn dry_run_is_decided_the_same() {
    let view = MemoryView::default();
    let mut req = crd_delete("Always");
    req.dry_run = Some(true);
    req.options = Some(json!({"kind": "DeleteOptions", "dryRun": ["All"]}));
    assert_eq!(outcome(&decide(&req, &view, &on())), forbidden(ALWAYS));
}

#[test]
fn delete_without_old_object_fails_closed() {
    let view = MemoryView::default();
    for &gvk in GVKS {
        let decision = decide(&request("DELETE", gvk, Some(json!({})), None), &view, &on());
        assert!(bad_request(&decision), "{gvk:?}: {decision:?}");
        let message = &decision.denial.unwrap().message;
        assert_eq!(
            message,
            "DELETE request has no oldObject, so the policy.kruise.io/delete-protection label cannot be checked; refusing the delete"
        );
    }
}

#[test]
fn malformed_old_objects_are_bad_requests_never_panics() {
    let view = MemoryView::default();
    let deployment = ("apps", "v1", "Deployment");
    let cases: Vec<((&str, &str, &str), Value, &str)> = vec![
        (deployment, json!("garbage"), "the object is not a JSON object"),
        (deployment, json!([1, 2]), "the object is not a JSON object"),
        (deployment, json!(7), "the object is not a JSON object"),
        (deployment, json!({"metadata": "x"}), "metadata is not an object"),
        (
            deployment,
            json!({"metadata": {"labels": ["a"]}}),
            "metadata.labels is not an object",
        ),
        (
            deployment,
            json!({"metadata": {"labels": {LABEL: 1}}}),
            "metadata.labels[policy.kruise.io/delete-protection] is not a string",
        ),
        (
            deployment,
            json!({"metadata": {"labels": {"other": true, LABEL: "Always"}}}),
            "metadata.labels[other] is not a string",
        ),
        (
            deployment,
            json!({"metadata": {"deletionTimestamp": 5, "labels": {LABEL: "Always"}}}),
            "metadata.deletionTimestamp is not a string",
        ),
        (deployment, json!({"spec": "x"}), "spec is not an object"),
        (
            deployment,
            json!({"spec": {"replicas": "3"}}),
            "spec.replicas is not a 32-bit integer: \"3\"",
        ),
        (
            deployment,
            json!({"spec": {"replicas": 1.5}}),
            "spec.replicas is not a 32-bit integer: 1.5",
        ),
        (
            deployment,
            json!({"spec": {"replicas": 4294967296u64}}),
            "spec.replicas is not a 32-bit integer: 4294967296",
        ),
        (
            NS,
            json!({"metadata": {"name": 3}}),
            "metadata.name is not a string",
        ),
        (CRD, json!({"spec": {"group": 1}}), "spec.group is not a string"),
        (
            CRD,
            json!({"spec": {"names": "Foo"}}),
            "spec.names is not an object",
        ),
        (
            CRD,
            json!({"spec": {"names": {"kind": []}}}),
            "spec.names.kind is not a string",
        ),
        (
            CRD,
            json!({"spec": {"versions": {}}}),
            "spec.versions is not a list",
        ),
        (
            CRD,
            json!({"spec": {"versions": [1]}}),
            "spec.versions[] is not an object",
        ),
        (
            CRD,
            json!({"spec": {"versions": [{"name": "v1", "storage": "yes"}]}}),
            "spec.versions[].storage is not a boolean",
        ),
    ];
    for (gvk, old, want) in cases {
        let decision = decide(&delete(gvk, old.clone()), &view, &on());
        assert!(bad_request(&decision), "{old}: {decision:?}");
        assert_eq!(
            decision.denial.unwrap().message,
            format!("cannot decode oldObject: {want}")
        );
    }
    // Null members are absent members, as in Go's decoding.
    for old in [
        json!({}),
        json!({"metadata": null, "spec": null}),
        json!({"metadata": {"labels": null, "deletionTimestamp": null, "name": null}}),
    ] {
        for &gvk in GVKS {
            let decision = decide(&delete(gvk, old.clone()), &view, &on());
            assert_eq!(outcome(&decision), None, "{gvk:?} {old}");
        }
    }
}

#[test]
fn label_value_is_validated_when_set() {
    let view = MemoryView::default();
    for &gvk in GVKS {
        let with = |labels: Value| Some(object(gvk, labels, spec_for(gvk)));
        let cases: Vec<(&str, Option<Value>, Option<Value>, Outcome)> = vec![
            ("CREATE", with(labelled("Always")), None, None),
            ("CREATE", with(labelled("Cascading")), None, None),
            ("CREATE", with(json!({"app": "x"})), None, None),
            ("CREATE", with(json!(null)), None, None),
            ("CREATE", with(labelled("foo")), None, invalid("foo")),
            ("CREATE", with(labelled("always")), None, invalid("always")),
            ("CREATE", with(labelled("")), None, invalid("")),
            ("CREATE", with(labelled("a\"b")), None, invalid("a\\\"b")),
            ("UPDATE", with(labelled("Cascading")), with(labelled("foo")), None),
            ("UPDATE", with(json!({})), with(labelled("foo")), None),
            // An invalid value that is already there is not this request's doing.
            ("UPDATE", with(labelled("foo")), with(labelled("foo")), None),
            (
                "UPDATE",
                with(labelled("foo")),
                with(labelled("bar")),
                invalid("foo"),
            ),
            (
                "UPDATE",
                with(labelled("foo")),
                with(labelled("Always")),
                invalid("foo"),
            ),
            ("UPDATE", with(labelled("foo")), with(json!({})), invalid("foo")),
            ("UPDATE", with(labelled("foo")), None, invalid("foo")),
            (
                "UPDATE",
                with(labelled("foo")),
                Some(json!("garbage")),
                invalid("foo"),
            ),
        ];
        for (op, new, old, want) in cases {
            let req = request(op, gvk, new.clone(), old.clone());
            let got = outcome(&decide(&req, &view, &on()));
            assert_eq!(got, want, "{op} {gvk:?} {new:?} {old:?}");
        }
    }
}

#[test]
fn create_or_update_without_a_decodable_object_is_a_bad_request() {
    let view = MemoryView::default();
    let deployment = ("apps", "v1", "Deployment");
    for op in ["CREATE", "UPDATE"] {
        let decision = decide(&request(op, deployment, None, None), &view, &on());
        assert!(bad_request(&decision), "{decision:?}");
        assert_eq!(
            decision.denial.unwrap().message,
            format!(
                "{op} request has no object, so the policy.kruise.io/delete-protection label cannot be checked"
            )
        );
        let decision = decide(
            &request(op, deployment, Some(json!({"metadata": {"labels": "x"}})), None),
            &view,
            &on(),
        );
        assert!(bad_request(&decision), "{decision:?}");
        assert_eq!(
            decision.denial.unwrap().message,
            "cannot decode object: metadata.labels is not an object"
        );
    }
}

#[test]
fn every_deletion_protection_path_is_routed_here() {
    let paths = [
        (Webhook::ValidateNamespace, ("", "v1", "Namespace")),
        (Webhook::ValidateCustomResourceDefinition, CRD),
        (Webhook::ValidateDeployment, ("apps", "v1", "Deployment")),
        (Webhook::ValidateReplicaSet, ("apps", "v1", "ReplicaSet")),
        (Webhook::ValidateStatefulSet, ("apps", "v1", "StatefulSet")),
        (Webhook::ValidateService, ("", "v1", "Service")),
        (Webhook::ValidateIngress, ("networking.k8s.io", "v1", "Ingress")),
        (
            Webhook::ValidateCloneSet,
            ("apps.kruise.io", "v1alpha1", "CloneSet"),
        ),
        (
            Webhook::ValidateAdvancedStatefulSet,
            ("apps.kruise.io", "v1beta1", "StatefulSet"),
        ),
        (
            Webhook::ValidateUnitedDeployment,
            ("apps.kruise.io", "v1alpha1", "UnitedDeployment"),
        ),
    ];
    for (webhook, gvk) in paths {
        let req = delete(gvk, object(gvk, labelled("Always"), spec_for(gvk)));
        let response = webhook
            .handle(&req, &MemoryView::default(), &Settings::default())
            .to_response(&req, webhook.is_mutating());
        assert!(!response.allowed, "{}", webhook.path());
        let status = response.status.unwrap();
        assert_eq!(
            (status.code, status.message.as_str()),
            (403, ALWAYS),
            "{}",
            webhook.path()
        );
        assert!(response.patch.is_none());
    }
}

#[test]
fn protection_label_values_round_trip() {
    for value in Protection::VALUES {
        assert_eq!(Protection::parse(value).map(Protection::as_str), Some(value));
    }
    assert_eq!(Protection::parse("ALWAYS"), None);
    assert_eq!(Protection::parse(" Always"), None);
}
