use kruise_core::{Gate, Settings};
use serde_json::{Value, json};

use super::*;
use crate::review::AdmissionRequest;

fn job(kind: &str, spec: Value) -> Value {
    json!({"apiVersion": "apps.kruise.io/v1beta1", "kind": kind, "metadata": {"name": "pull", "namespace": "default"},
        "spec": spec})
}

fn request(operation: &str, object: &Value, old: Option<&Value>) -> AdmissionRequest {
    let kind = object["kind"].as_str().unwrap();
    let mut review = json!({"uid": "1", "operation": operation, "name": "pull", "namespace": "default",
        "kind": {"group": "apps.kruise.io", "version": "v1beta1", "kind": kind},
        "resource": {"group": "apps.kruise.io", "version": "v1beta1", "resource": format!("{}s", kind.to_lowercase())},
        "userInfo": {"username": "u"}, "object": object});
    if let Some(old) = old {
        review["oldObject"] = old.clone();
    }
    serde_json::from_value(review).unwrap()
}

fn refusal(object: &Value, list: bool) -> Option<String> {
    let d = validate(&request("CREATE", object, None), &Settings::default(), list);
    d.denial.map(|d| d.message)
}

#[test]
fn defaults_are_applied_by_the_patch() {
    let object = job("ImagePullJob", json!({"image": "demo:v2"}));
    let d = mutate(&request("CREATE", &object, None), false);
    let patched = crate::patch::apply(&object, &d.patch).unwrap();
    assert_eq!(patched["spec"]["completionPolicy"]["type"], "Always");
    assert_eq!(
        patched["spec"]["pullPolicy"],
        json!({"timeoutSeconds": 600, "backoffLimit": 3})
    );
    assert_eq!(patched["spec"]["imagePullPolicy"], "IfNotPresent");
    // Set values stay.
    let set = job(
        "ImagePullJob",
        json!({"image": "demo:v2", "imagePullPolicy": "Always",
        "pullPolicy": {"timeoutSeconds": 30}, "completionPolicy": {"type": "Never"}}),
    );
    let patched = crate::patch::apply(&set, &mutate(&request("CREATE", &set, None), false).patch).unwrap();
    assert_eq!(patched["spec"]["imagePullPolicy"], "Always");
    assert_eq!(
        patched["spec"]["pullPolicy"],
        json!({"timeoutSeconds": 30, "backoffLimit": 3})
    );
    assert_eq!(patched["spec"]["completionPolicy"]["type"], "Never");
    // The list kind gets no imagePullPolicy (its children do).
    let list = job("ImageListPullJob", json!({"images": ["demo:v2"]}));
    let patched = crate::patch::apply(&list, &mutate(&request("CREATE", &list, None), true).patch).unwrap();
    assert!(patched["spec"].get("imagePullPolicy").is_none());
    assert_eq!(patched["spec"]["completionPolicy"]["type"], "Always");
}

#[test]
fn openkruise_s_rules_and_messages() {
    let cases: &[(Value, Option<&str>)] = &[
        (json!({"image": "127.0.0.1:5000/demo:v2", "parallelism": 2}), None),
        (json!({"image": ""}), Some("image can not be empty")),
        (
            json!({"image": "Demo:v2"}),
            Some("invalid image Demo:v2: invalid reference format: Demo:v2"),
        ),
        (
            json!({"image": "demo", "selector": {"names": ["a"], "matchLabels": {"x": "y"}}}),
            Some("can not set both names and labelSelector in this spec.selector"),
        ),
        (
            json!({"image": "demo", "selector": {"names": ["a", "a"]}}),
            Some("duplicated name in selector names"),
        ),
        (
            json!({"image": "demo", "selector": {"names": ["a"]}, "podSelector": {"matchLabels": {"a": "b"}}}),
            Some("can not set both selector and podSelector"),
        ),
        (
            json!({"image": "demo", "parallelism": "50%"}),
            Some("parallelism does not support percentage value"),
        ),
        (
            json!({"image": "demo", "parallelism": -1}),
            Some("parallelism must be non-negative"),
        ),
        (
            json!({"image": "demo", "completionPolicy": {"activeDeadlineSeconds": 60}}),
            Some(
                "completionPolicy.activeDeadlineSeconds must be greater than pullPolicy.timeoutSeconds(default 600)",
            ),
        ),
        (
            json!({"image": "demo", "pullPolicy": {"timeoutSeconds": 30}, "completionPolicy": {"activeDeadlineSeconds": 60}}),
            None,
        ),
        (
            json!({"image": "demo", "completionPolicy": {"type": "Never", "ttlSecondsAfterFinished": 60}}),
            Some(
                "activeDeadlineSeconds and ttlSecondsAfterFinished can only work with Always CompletionPolicyType",
            ),
        ),
        (
            json!({"image": "demo", "completionPolicy": {"type": "Sometimes"}}),
            Some("unknown type of completionPolicy: Sometimes"),
        ),
    ];
    for (spec, want) in cases {
        assert_eq!(
            refusal(&job("ImagePullJob", spec.clone()), false).as_deref(),
            *want,
            "{spec}"
        );
    }
    let lists: &[(Value, Option<&str>)] = &[
        (json!({"images": ["a:v1", "b:v1"]}), None),
        (json!({"images": []}), Some("image can not be empty")),
        (
            json!({"images": ["a:v1", "a:v1"]}),
            Some("images cannot have duplicate values"),
        ),
        (
            json!({"images": (0..256).map(|i| format!("a:v{i}")).collect::<Vec<_>>()}),
            Some("the maximum number of images cannot > 255"),
        ),
    ];
    for (spec, want) in lists {
        assert_eq!(
            refusal(&job("ImageListPullJob", spec.clone()), true).as_deref(),
            *want
        );
    }
}

#[test]
fn pull_secrets_are_immutable_and_the_gate_can_turn_the_kinds_off() {
    let old = job("ImagePullJob", json!({"image": "demo", "pullSecrets": ["a"]}));
    let new = job("ImagePullJob", json!({"image": "demo", "pullSecrets": ["b"]}));
    let d = validate(&request("UPDATE", &new, Some(&old)), &Settings::default(), false);
    assert_eq!(d.denial.unwrap().message, "spec.pullSecrets is immutable");
    assert!(validate(&request("UPDATE", &old, Some(&old)), &Settings::default(), false).allowed());
    let off = Settings::default().with(Gate::ImagePullJobGate, false);
    let d = validate(&request("CREATE", &old, None), &off, false);
    let denial = d.denial.unwrap();
    assert_eq!(
        (denial.code, denial.message.as_str()),
        (403, "feature-gate ImagePullJobGate is not enabled")
    );
}
