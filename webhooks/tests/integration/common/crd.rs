//! Shared helpers for the CRD webhook tests: building reviews, calling a webhook by path, applying its
//! patch, and table-driven fixtures (`tests/fixtures/crd/*.json`).

#![allow(dead_code)]

use std::path::PathBuf;

use kruise_webhooks::{AdmissionRequest, Decision, MemoryView, Settings, Webhook, patch};
use serde_json::{Value, json};

/// A request for `object` (and `old`) as the apiserver sends it for `operation`.
pub fn request(operation: &str, object: Option<&Value>, old: Option<&Value>) -> AdmissionRequest {
    let any = object.or(old).cloned().unwrap_or(Value::Null);
    let api_version = any["apiVersion"].as_str().unwrap_or("apps.kruise.io/v1beta1");
    let (group, version) = api_version.rsplit_once('/').unwrap_or(("", api_version));
    let kind = any["kind"].as_str().unwrap_or("");
    let resource = format!("{}s", kind.to_ascii_lowercase());
    let namespace = any
        .pointer("/metadata/namespace")
        .and_then(Value::as_str)
        .unwrap_or("");
    let name = any
        .pointer("/metadata/name")
        .and_then(Value::as_str)
        .unwrap_or("");
    let mut review = json!({
        "uid": "crd-test",
        "kind": {"group": group, "version": version, "kind": kind},
        "resource": {"group": group, "version": version, "resource": resource},
        "name": name,
        "namespace": namespace,
        "operation": operation,
        "userInfo": {"username": "tester"},
    });
    if let Some(o) = object {
        review["object"] = o.clone();
    }
    if let Some(o) = old {
        review["oldObject"] = o.clone();
    }
    serde_json::from_value(review).expect("a valid AdmissionRequest")
}

/// Calls the webhook served at `path`.
pub fn call(path: &str, request: &AdmissionRequest, view: &MemoryView) -> Decision {
    let webhook = Webhook::from_path(path).unwrap_or_else(|| panic!("no webhook at {path}"));
    webhook.handle(request, view, &Settings::default())
}

/// A view holding `objects`.
pub fn view_of(objects: &[Value]) -> MemoryView {
    let mut view = MemoryView::default();
    for o in objects {
        view.add(o.clone()).expect("a valid view object");
    }
    view
}

/// The object after the decision's patch.
pub fn patched(object: &Value, decision: &Decision) -> Value {
    patch::apply(object, &decision.patch).expect("the patch applies to the object it was made for")
}

/// The denial message, or a panic saying the request was allowed.
pub fn denial(decision: &Decision) -> (u16, String) {
    let d = decision
        .denial
        .as_ref()
        .unwrap_or_else(|| panic!("expected a denial, got {decision:?}"));
    (d.code, d.message.clone())
}

/// Checks that the defaulted object still decodes into the typed struct of its version.
pub fn assert_decodes(object: &Value) {
    let api_version = object["apiVersion"].as_str().unwrap_or("");
    let kind = object["kind"].as_str().unwrap_or("");
    let result = match (api_version, kind) {
        ("apps.kruise.io/v1beta1", "SidecarSet") => {
            kruise_api::decode::<kruise_api::apps_v1beta1::SidecarSet>(kind, object).map(drop)
        }
        ("apps.kruise.io/v1alpha1", "SidecarSet") => {
            kruise_api::decode::<kruise_api::apps_v1alpha1::SidecarSet>(kind, object).map(drop)
        }
        ("apps.kruise.io/v1beta1", "CloneSet") => {
            kruise_api::decode::<kruise_api::apps_v1beta1::CloneSet>(kind, object).map(drop)
        }
        ("apps.kruise.io/v1alpha1", "CloneSet") => {
            kruise_api::decode::<kruise_api::apps_v1alpha1::CloneSet>(kind, object).map(drop)
        }
        ("apps.kruise.io/v1beta1", "StatefulSet") => {
            kruise_api::decode::<kruise_api::apps_v1beta1::StatefulSet>(kind, object).map(drop)
        }
        ("apps.kruise.io/v1alpha1", "StatefulSet") => {
            kruise_api::decode::<kruise_api::apps_v1alpha1::StatefulSet>(kind, object).map(drop)
        }
        ("apps.kruise.io/v1beta1", "DaemonSet") => {
            kruise_api::decode::<kruise_api::apps_v1beta1::DaemonSet>(kind, object).map(drop)
        }
        ("apps.kruise.io/v1alpha1", "DaemonSet") => {
            kruise_api::decode::<kruise_api::apps_v1alpha1::DaemonSet>(kind, object).map(drop)
        }
        other => panic!("no typed decoder for {other:?}"),
    };
    result.unwrap_or_else(|e| panic!("defaulted object does not decode: {e}\n{object:#}"));
}

fn fixtures_dir() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/crd")
}

/// Runs every case of `tests/fixtures/crd/<file>.json`.
///
/// A case: `{"name", "path", "operation", "object", "oldObject"?, "view"?: [objects], "expect": {...}}`
/// where `expect` holds `allowed`, and `code` + `message` for a denial, or `result` (the whole object after
/// the patch) for a mutation. Every allowed mutation is also checked to decode into its typed struct and
/// to add nothing when run again on its own output; a validating answer never carries a patch.
pub fn run_fixture_file(file: &str) {
    let path = fixtures_dir().join(format!("{file}.json"));
    let text = std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
    let cases: Vec<Value> = serde_json::from_str(&text).unwrap_or_else(|e| panic!("{file}: {e}"));
    assert!(!cases.is_empty(), "{file} has no cases");
    for case in &cases {
        run_case(file, case);
    }
}

fn run_case(file: &str, case: &Value) {
    let name = format!("{file}: {}", case["name"].as_str().unwrap_or("?"));
    let path = case["path"].as_str().expect("path");
    let operation = case["operation"].as_str().unwrap_or("CREATE");
    let object = case.get("object").filter(|o| !o.is_null());
    let old = case.get("oldObject").filter(|o| !o.is_null());
    let view = view_of(case["view"].as_array().map_or(&[][..], Vec::as_slice));
    let req = request(operation, object, old);
    let decision = call(path, &req, &view);
    let expect = &case["expect"];
    let allowed = expect["allowed"].as_bool().expect("expect.allowed");
    if !allowed {
        let (code, message) = denial(&decision);
        if let Some(want) = expect["code"].as_u64() {
            assert_eq!(u64::from(code), want, "{name}: code ({message})");
        }
        if let Some(want) = expect["message"].as_str() {
            assert_eq!(message, want, "{name}: message");
        }
        for part in expect["messageContains"].as_array().into_iter().flatten() {
            let part = part.as_str().unwrap_or("");
            assert!(message.contains(part), "{name}: {message:?} lacks {part:?}");
        }
        return;
    }
    assert!(
        decision.allowed(),
        "{name}: expected allowed, got {:?}",
        decision.denial
    );
    let mutating = path.starts_with("/mutate-");
    if !mutating {
        assert!(
            decision.patch.is_empty(),
            "{name}: a validating answer carries a patch"
        );
        return;
    }
    let Some(object) = object else {
        assert!(decision.patch.is_empty(), "{name}: a patch without an object");
        return;
    };
    let result = patched(object, &decision);
    if let Some(want) = expect.get("result") {
        let (mut got, mut want) = (result.clone(), want.clone());
        // Values the case cannot state independently (e.g. a hash without a reference vector).
        for pointer in expect["ignore"].as_array().into_iter().flatten() {
            let pointer = pointer.as_str().unwrap_or("");
            assert!(
                got.pointer(pointer).is_some(),
                "{name}: {pointer} missing from the result"
            );
            for v in [&mut got, &mut want] {
                if let Some(x) = v.pointer_mut(pointer) {
                    *x = Value::Null;
                }
            }
        }
        assert_eq!(got, want, "{name}: object after the patch\n{result:#}");
    }
    if expect["unchanged"].as_bool() == Some(true) {
        assert!(
            decision.patch.is_empty(),
            "{name}: expected no patch, got {:?}",
            decision.patch
        );
    }
    assert_decodes(&result);
    let again = call(path, &request(operation, Some(&result), old), &view);
    assert!(
        again.allowed() && again.patch.is_empty(),
        "{name}: defaulting is not idempotent: {:?}",
        again.patch
    );
}
