//! Shared harness of the SidecarSet injection tests.
#![allow(dead_code)]

use std::{path::PathBuf, sync::Arc};

use json_patch::PatchOperation;
use kruise_webhooks::{
    AdmissionRequest, ClusterView, MemoryView, Settings,
    pod_mutate::{self, PodContext, StepOutput, sidecarset},
};
use serde::Deserialize;
use serde_json::{Value, json};

/// One fixture.
#[derive(Clone, Debug, Deserialize)]
pub struct Case {
    pub name: String,
    #[serde(default)]
    pub objects: Vec<Value>,
    /// `request.namespace` (default `default`).
    #[serde(default)]
    pub namespace: Option<String>,
    pub pod: Value,
    pub expect: Expect,
}

/// What a fixture expects.
#[derive(Clone, Debug, Default, Deserialize)]
pub struct Expect {
    /// The pod after the patch; `updateTimestamp`s written now are shown as `"NOW"`. Absent: unchanged.
    #[serde(default)]
    pub pod: Option<Value>,
    /// Substrings of the warnings, one per warning.
    #[serde(default)]
    pub warnings: Vec<String>,
    #[serde(default)]
    pub denied: Option<Denied>,
}

#[derive(Clone, Debug, Deserialize)]
pub struct Denied {
    pub code: u16,
    pub message: String,
}

pub fn fixtures_dir() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/sidecarset")
}

pub fn load_cases() -> Vec<Case> {
    let mut files: Vec<PathBuf> = std::fs::read_dir(fixtures_dir())
        .expect("fixtures directory")
        .map(|e| e.unwrap().path())
        .filter(|p| p.extension().is_some_and(|x| x == "json"))
        .collect();
    files.sort();
    let mut cases = Vec::new();
    for file in files {
        let text = std::fs::read_to_string(&file).unwrap();
        let mut these: Vec<Case> =
            serde_json::from_str(&text).unwrap_or_else(|e| panic!("{}: {e}", file.display()));
        let stem = file.file_stem().unwrap().to_string_lossy().to_string();
        for c in &mut these {
            c.name = format!("{stem}: {}", c.name);
        }
        cases.extend(these);
    }
    cases
}

pub fn view_of(objects: &[Value]) -> MemoryView {
    let mut view = MemoryView::default();
    for o in objects {
        view.add(o.clone())
            .unwrap_or_else(|e| panic!("fixture object: {e}"));
    }
    view
}

pub fn request(namespace: &str, pod: &Value) -> AdmissionRequest {
    serde_json::from_value(json!({
        "uid": "7f0b2c4e-0000-4000-8000-000000000001",
        "kind": {"group": "", "version": "v1", "kind": "Pod"},
        "resource": {"group": "", "version": "v1", "resource": "pods"},
        "namespace": namespace, "operation": "CREATE",
        "userInfo": {"username": "system:serviceaccount:kube-system:replicaset-controller"},
        "object": pod, "options": {"kind": "CreateOptions", "apiVersion": "meta.k8s.io/v1"}
    }))
    .unwrap()
}

/// Runs the SidecarSet step alone.
pub fn step(view: &MemoryView, namespace: &str, pod: &Value) -> Result<StepOutput, kruise_webhooks::Denial> {
    let request = request(namespace, pod);
    let settings = Settings::default();
    let context = PodContext {
        request: &request,
        view,
        settings: &settings,
        namespace,
    };
    sidecarset::mutate(&context, pod)
}

pub fn apply(pod: &Value, ops: &[PatchOperation]) -> Value {
    let mut out = pod.clone();
    json_patch::patch(&mut out, ops)
        .unwrap_or_else(|e| panic!("patch does not apply: {e}\n{}", ops_json(ops)));
    out
}

pub fn ops_json(ops: &[PatchOperation]) -> String {
    serde_json::to_string_pretty(ops).unwrap()
}

/// Replaces the `updateTimestamp`s written now in the hash annotations by `"NOW"`, keeping the text
/// otherwise as written (field order included).
pub fn normalise(pod: &mut Value) {
    for key in [
        sidecarset::SIDECARSET_HASH_ANNOTATION,
        sidecarset::SIDECARSET_HASH_WITHOUT_IMAGE_ANNOTATION,
    ] {
        let Some(value) = pod
            .pointer_mut("/metadata/annotations")
            .and_then(|a| a.get_mut(key))
        else {
            continue;
        };
        let text = value.as_str().unwrap().to_string();
        let marker = "\"updateTimestamp\":\"";
        let mut out = String::new();
        let mut rest = text.as_str();
        while let Some(i) = rest.find(marker) {
            let (head, tail) = rest.split_at(i + marker.len());
            out.push_str(head);
            match tail.get(..21) {
                Some(ts) if ts.ends_with('"') && is_recent(&ts[..20]) => {
                    out.push_str("NOW\"");
                    rest = &tail[21..];
                }
                _ => rest = tail,
            }
        }
        out.push_str(rest);
        *value = Value::String(out);
    }
}

fn is_recent(ts: &str) -> bool {
    // RFC 3339 in UTC seconds, "YYYY-MM-DDTHH:MM:SSZ", not in the past of these fixtures.
    ts.len() == 20 && ts.ends_with('Z') && ts.as_bytes()[10] == b'T' && ts > "2026"
}

/// Paths injection may write.
fn owned(path: &str) -> bool {
    path == "/spec"
        || path == "/metadata"
        || [
            "/spec/containers",
            "/spec/initContainers",
            "/spec/volumes",
            "/spec/imagePullSecrets",
            "/metadata/annotations",
        ]
        .iter()
        .any(|p| path == *p || path.starts_with(&format!("{p}/")))
}

pub fn check_patch_discipline(ops: &[PatchOperation]) {
    for op in ops {
        let wire = serde_json::to_value(op).unwrap();
        let kind = wire["op"].as_str().unwrap();
        let path = wire["path"].as_str().unwrap();
        assert!(kind == "add" || kind == "replace", "unexpected {kind} at {path}");
        assert!(owned(path), "patch touches {path}, which injection does not own");
        if kind == "replace" {
            assert!(
                path.starts_with("/spec/containers/")
                    || path.starts_with("/spec/initContainers/")
                    || path == "/spec/imagePullSecrets",
                "replace at {path}"
            );
        }
    }
}

/// The fields injection owns.
pub fn projection(pod: &Value) -> Value {
    json!({
        "annotations": pod.pointer("/metadata/annotations"),
        "labels": pod.pointer("/metadata/labels"),
        "containers": pod.pointer("/spec/containers"),
        "initContainers": pod.pointer("/spec/initContainers"),
        "volumes": pod.pointer("/spec/volumes"),
        "imagePullSecrets": pod.pointer("/spec/imagePullSecrets"),
    })
}

pub fn assert_valid_pod(pod: &Value) {
    let typed: Result<k8s_openapi::api::core::v1::Pod, _> = serde_json::from_value(pod.clone());
    assert!(typed.is_ok(), "not a valid Pod: {:?}\n{pod:#}", typed.err());
}

pub fn check_warnings(actual: &[String], expected: &[String]) {
    assert_eq!(
        actual.len(),
        expected.len(),
        "warnings: got {actual:?}, expected substrings {expected:?}"
    );
    for (a, e) in actual.iter().zip(expected) {
        assert!(a.contains(e.as_str()), "warning {a:?} does not contain {e:?}");
    }
}

pub fn run_case(case: &Case) {
    let view = view_of(&case.objects);
    let namespace = case.namespace.as_deref().unwrap_or("default");
    // The step alone.
    let result = step(&view, namespace, &case.pod);
    if let Some(denied) = &case.expect.denied {
        let denial = result.expect_err("expected a denial");
        assert_eq!(denial.code, denied.code, "{}", denial.message);
        assert!(
            denial.message.contains(&denied.message),
            "denial message {:?} does not contain {:?}",
            denial.message,
            denied.message
        );
        let decision = pod_mutate::mutate(&request(namespace, &case.pod), &view, &Settings::default());
        assert!(!decision.allowed(), "the pipeline must deny too");
        return;
    }
    let output = result.unwrap_or_else(|d| panic!("denied: {d:?}"));
    check_patch_discipline(&output.patch);
    check_warnings(&output.warnings, &case.expect.warnings);
    // Every skipped SidecarSet is named for the metric, once per warning.
    assert_eq!(
        output.skipped_sidecar_sets.len(),
        output.warnings.len(),
        "{:?} / {:?}",
        output.skipped_sidecar_sets,
        output.warnings
    );
    for (name, warning) in output.skipped_sidecar_sets.iter().zip(&output.warnings) {
        assert!(
            warning.contains(&format!("SidecarSet {name} ")),
            "{warning:?} is not about {name}"
        );
    }
    let mut out = apply(&case.pod, &output.patch);
    assert_valid_pod(&out);
    // Running the step again on its own output adds nothing.
    let again = step(&view, namespace, &out).unwrap_or_else(|d| panic!("second run denied: {d:?}"));
    assert!(
        again.patch.is_empty(),
        "second run patched:\n{}",
        ops_json(&again.patch)
    );
    normalise(&mut out);
    let expected = case.expect.pod.clone().unwrap_or_else(|| case.pod.clone());
    if out != expected {
        panic!(
            "resulting pod differs\n--- got:\n{out:#}\n--- expected:\n{expected:#}\n--- patch:\n{}",
            ops_json(&output.patch)
        );
    }
    // Through the whole pipeline: the fields injection owns are the same.
    let decision = pod_mutate::mutate(&request(namespace, &case.pod), &view, &Settings::default());
    assert!(decision.allowed(), "pipeline denied: {:?}", decision.denial);
    let mut piped = apply(&case.pod, &decision.patch);
    assert_valid_pod(&piped);
    normalise(&mut piped);
    assert_eq!(projection(&piped), projection(&expected), "through the pipeline");
    for w in &output.warnings {
        assert!(decision.warnings.contains(w), "pipeline lost warning {w}");
    }
    assert_eq!(decision.skipped_sidecar_sets, output.skipped_sidecar_sets);
}

/// A view whose SidecarSet index is rebuilt on every call (no derived cache), to compare with
/// `MemoryView`'s cached one.
pub struct Uncached(pub MemoryView);

impl ClusterView for Uncached {
    fn kinds(&self) -> kruise_core::view::Lookups<'_> {
        self.0.kinds()
    }
    fn object(&self, group: &str, kind: &str, namespace: &str, name: &str) -> Option<Arc<Value>> {
        self.0.object(group, kind, namespace, name)
    }
    fn custom_resource_count(&self, group: &str, kind: &str) -> Option<usize> {
        self.0.custom_resource_count(group, kind)
    }
    /// No cache: the SidecarSet index is built on every call.
    fn derived(&self) -> Option<&kruise_core::DerivedCache> {
        None
    }
    fn own_namespace(&self) -> &str {
        self.0.own_namespace()
    }
}
