//! Shared helpers of the `/mutate-pod` step tests: requests, views, running the real pipeline, applying
//! its patch and normalising the values the webhook draws (generated uid and pod name, timestamps).

#![allow(dead_code)]

use std::path::Path;

use kruise_webhooks::{AdmissionRequest, Decision, MemoryView, Settings, patch, pod_mutate};
use serde_json::{Map, Value, json};

/// A pod CREATE as the apiserver sends it (with `options`), in `namespace`.
pub fn create_request(pod: &Value, namespace: &str) -> AdmissionRequest {
    serde_json::from_value(json!({
        "uid": "705ab4f5-6393-11e8-b7cc-42010a800002",
        "kind": {"group": "", "version": "v1", "kind": "Pod"},
        "resource": {"group": "", "version": "v1", "resource": "pods"},
        "namespace": namespace,
        "name": pod.pointer("/metadata/name").and_then(Value::as_str).unwrap_or(""),
        "operation": "CREATE",
        "userInfo": {"username": "system:serviceaccount:kube-system:replicaset-controller"},
        "object": pod,
        "options": {"kind": "CreateOptions", "apiVersion": "meta.k8s.io/v1"}
    }))
    .expect("a valid request")
}

/// A view holding `objects`.
pub fn view_of(objects: &[Value]) -> MemoryView {
    let mut view = MemoryView::default();
    for o in objects {
        view.add(o.clone())
            .unwrap_or_else(|e| panic!("fixture object {o}: {e}"));
    }
    view
}

/// Runs the whole `/mutate-pod` pipeline the way the server does (on the request's own pod), and checks
/// that the request's pod is given back unchanged.
pub fn run(request: &AdmissionRequest, view: &MemoryView) -> Decision {
    let mut lent = request.clone();
    let decision = pod_mutate::mutate_in_place(&mut lent, view, &Settings::default());
    assert_eq!(
        lent.object, request.object,
        "mutate_in_place did not restore the pod"
    );
    decision
}

/// The object after the decision's patch, checked to still be a valid `Pod`.
pub fn patched(request: &AdmissionRequest, decision: &Decision) -> Value {
    let object = request.object.as_ref().expect("object");
    let out = patch::apply(object, &decision.patch).unwrap_or_else(|e| panic!("patch does not apply: {e}"));
    if let Err(e) = serde_json::from_value::<k8s_openapi::api::core::v1::Pod>(out.clone()) {
        panic!("the patched object is not a valid Pod: {e}\n{out:#}");
    }
    out
}

/// Replaces what the webhook draws at random: the generated WorkloadSpread uid (read from the matched
/// annotation) becomes `<uid>`, a name generated from `generateName` becomes `<name>` (also inside
/// strings such as `<name>-barrier`), and RFC 3339 timestamps within the last minute become `<now>`.
pub fn normalise(value: &Value, original_pod: &Value, patched_pod: Option<&Value>) -> Value {
    let mut replacements: Vec<(String, &str)> = Vec::new();
    if let Some(pod) = patched_pod {
        if let Some(raw) = pod
            .pointer("/metadata/annotations")
            .and_then(|a| a.get("apps.kruise.io/matched-workloadspread"))
            .and_then(Value::as_str)
        {
            let parsed: Value = serde_json::from_str(raw).expect("matched annotation is JSON");
            if let Some(uid) = parsed.get("uid").and_then(Value::as_str) {
                replacements.push((uid.to_string(), "<uid>"));
            }
        }
        let had_name = original_pod
            .pointer("/metadata/name")
            .and_then(Value::as_str)
            .unwrap_or("");
        if let Some(name) = pod.pointer("/metadata/name").and_then(Value::as_str)
            && had_name.is_empty()
        {
            replacements.push((name.to_string(), "<name>"));
        }
    }
    walk(value, &replacements)
}

fn replace_all(s: &str, replacements: &[(String, &str)]) -> String {
    if is_recent_timestamp(s) {
        return "<now>".into();
    }
    let mut out = s.to_string();
    for (from, to) in replacements {
        out = out.replace(from.as_str(), to);
    }
    out
}

fn walk(value: &Value, replacements: &[(String, &str)]) -> Value {
    match value {
        Value::String(s) => Value::String(replace_all(s, replacements)),
        Value::Array(a) => Value::Array(a.iter().map(|v| walk(v, replacements)).collect()),
        Value::Object(m) => Value::Object(
            m.iter()
                .map(|(k, v)| (replace_all(k, replacements), walk(v, replacements)))
                .collect::<Map<_, _>>(),
        ),
        other => other.clone(),
    }
}

fn is_recent_timestamp(s: &str) -> bool {
    let Ok(t) = s.parse::<k8s_openapi::jiff::Timestamp>() else {
        return false;
    };
    if s.len() != 20 || !s.ends_with('Z') {
        return false;
    }
    let age = k8s_openapi::jiff::Timestamp::now().as_second() - t.as_second();
    (0..60).contains(&age)
}

/// Every `*.json` file of `tests/fixtures/pod_mutate/<prefix>*`, as (file, case) pairs.
pub fn fixture_cases(prefix: &str) -> Vec<(String, Value)> {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/pod_mutate");
    let mut files: Vec<_> = std::fs::read_dir(&dir)
        .unwrap_or_else(|e| panic!("{}: {e}", dir.display()))
        .map(|e| e.unwrap().path())
        .filter(|p| {
            p.extension().is_some_and(|e| e == "json")
                && p.file_name().unwrap().to_string_lossy().starts_with(prefix)
        })
        .collect();
    files.sort();
    let mut cases = Vec::new();
    for file in files {
        let text = std::fs::read_to_string(&file).unwrap();
        let parsed: Value = serde_json::from_str(&text).unwrap_or_else(|e| panic!("{}: {e}", file.display()));
        let name = file.file_name().unwrap().to_string_lossy().to_string();
        for case in parsed.as_array().expect("a fixture file is a list of cases") {
            cases.push((name.clone(), case.clone()));
        }
    }
    cases
}

/// Runs one fixture case through the pipeline and checks its expectations:
/// `{"name", "namespace"?, "objects": [..], "pod": {..}, "request": {overrides}?,
///   "expect": {"pod": {..}} | {"unchanged": true} | {"denied": {"code", "message"}},
///   "writes"?: [{"kind", "name", "resourceVersion", "status"}]}` (writes default to none).
pub fn check_case(file: &str, case: &Value) {
    let name = case["name"].as_str().unwrap_or("?");
    let label = format!("{file}: {name}");
    let namespace = case.get("namespace").and_then(Value::as_str).unwrap_or("default");
    let objects = case
        .get("objects")
        .and_then(Value::as_array)
        .cloned()
        .unwrap_or_default();
    let view = view_of(&objects);
    let pod = &case["pod"];
    let mut request = create_request(pod, namespace);
    if let Some(overrides) = case.get("request") {
        let mut raw = serde_json::to_value(&request).unwrap();
        for (k, v) in overrides.as_object().unwrap() {
            raw[k] = v.clone();
        }
        request = serde_json::from_value(raw).unwrap();
    }
    let decision = run(&request, &view);
    let expect = &case["expect"];
    if let Some(denied) = expect.get("denied") {
        let denial = decision
            .denial
            .as_ref()
            .unwrap_or_else(|| panic!("{label}: expected a denial, got {decision:?}"));
        assert_eq!(
            u64::from(denial.code),
            denied["code"].as_u64().unwrap(),
            "{label}"
        );
        let message = denied["message"].as_str().unwrap();
        assert!(
            denial.message.contains(message),
            "{label}: message {:?} lacks {message:?}",
            denial.message
        );
        assert!(decision.writes.is_empty(), "{label}: a denial records nothing");
        return;
    }
    assert!(decision.allowed(), "{label}: denied: {:?}", decision.denial);
    let out = patched(&request, &decision);
    if expect.get("unchanged").and_then(Value::as_bool) == Some(true) {
        assert!(
            decision.patch.is_empty(),
            "{label}: expected no patch, got {:?}",
            decision.patch
        );
        assert_eq!(&out, pod, "{label}");
    } else {
        let got = normalise(&out, pod, Some(&out));
        assert_eq!(got, expect["pod"], "{label}: pod after the patch\n{got:#}");
    }
    let expected_writes = case
        .get("writes")
        .and_then(Value::as_array)
        .cloned()
        .unwrap_or_default();
    let got_writes: Vec<Value> = decision
        .writes
        .iter()
        .map(|w| {
            normalise(
                &json!({"kind": w.target.kind, "name": w.target.name, "namespace": w.target.namespace,
                    "apiVersion": w.target.api_version, "plural": w.target.plural,
                    "resourceVersion": w.resource_version, "status": w.new_status(&view).unwrap()}),
                pod,
                Some(&out),
            )
        })
        .collect();
    let expected_writes: Vec<Value> = expected_writes
        .into_iter()
        .map(|mut w| {
            let defaults = [
                ("namespace", json!(namespace)),
                ("apiVersion", json!("apps.kruise.io/v1beta1")),
                ("plural", json!("workloadspreads")),
                ("kind", json!("WorkloadSpread")),
            ];
            for (k, v) in defaults {
                if w.get(k).is_none() {
                    w[k] = v;
                }
            }
            w
        })
        .collect();
    assert_eq!(got_writes, expected_writes, "{label}: status writes");
    // Every case: the webhook run again on its own output (with the writes applied) adds nothing.
    let mut view = view;
    for w in &decision.writes {
        view.apply_status(w)
            .unwrap_or_else(|e| panic!("{label}: write does not apply: {e}"));
    }
    let again = create_request(&out, namespace);
    let mut again = again;
    again.dry_run = request.dry_run;
    again.options = request.options.clone();
    let second = run(&again, &view);
    assert!(
        second.allowed(),
        "{label}: second run denied: {:?}",
        second.denial
    );
    assert!(
        second.patch.is_empty(),
        "{label}: second run patched: {:?}",
        second.patch
    );
    assert!(
        second.writes.is_empty(),
        "{label}: second run wrote: {:?}",
        second.writes
    );
}
