use std::sync::Arc;

use serde_json::{Value, json};

use kruise_core::feature_gates::Gate;

use super::*;
use crate::{MemoryView, Webhook};

mod bad_input;
mod crd;
mod namespace;

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
