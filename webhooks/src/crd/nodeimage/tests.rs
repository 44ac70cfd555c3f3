use kruise_core::{Gate, Settings};
use serde_json::{Value, json};

use super::*;

fn tag(name: &str) -> Value {
    json!({"tag": name, "createdAt": "2026-11-30T00:00:00Z", "version": 0,
        "pullPolicy": {"timeoutSeconds": 600, "backoffLimit": 3, "ttlSecondsAfterFinished": 300}})
}

fn node_image(version: &str, images: Value) -> Value {
    json!({"apiVersion": format!("apps.kruise.io/{version}"), "kind": "NodeImage",
        "metadata": {"name": "node-a"}, "spec": {"images": images}})
}

fn request(operation: &str, version: &str, object: &Value) -> AdmissionRequest {
    let review = json!({"uid": "1", "operation": operation, "name": "node-a",
        "kind": {"group": "apps.kruise.io", "version": version, "kind": "NodeImage"},
        "resource": {"group": "apps.kruise.io", "version": version, "resource": "nodeimages"},
        "userInfo": {"username": "u"}, "object": object, "oldObject": object});
    serde_json::from_value(review).unwrap()
}

/// The denial's code and message, or `Ok` when allowed, for a v1beta1 CREATE with default settings.
fn judge(images: Value) -> Result<(), (u16, String)> {
    judge_with("v1beta1", "CREATE", images, &Settings::default())
}

fn judge_with(version: &str, op: &str, images: Value, settings: &Settings) -> Result<(), (u16, String)> {
    let d = validate(&request(op, version, &node_image(version, images)), settings);
    assert!(d.patch.is_empty(), "a validating answer carries no patch");
    match d.denial {
        Some(denial) => Err((denial.code, denial.message)),
        None => Ok(()),
    }
}

fn with_tag(edit: impl FnOnce(&mut Value)) -> Value {
    let mut t = tag("v1");
    edit(&mut t);
    json!({"demo": {"tags": [t]}})
}

#[test]
fn a_valid_node_image_is_allowed_in_both_versions() {
    let images = json!({"demo": {"tags": [tag("v1"), tag("v2")],
        "pullSecrets": [{"namespace": "kruise-daemon-config", "name": "s-1a2b3c", "mode": "batch"}]},
        "127.0.0.1:5000/app": {"tags": [tag("sha256:0123")]}});
    assert_eq!(judge(images.clone()), Ok(()));
    assert_eq!(
        judge_with("v1alpha1", "UPDATE", images, &Settings::default()),
        Ok(())
    );
    // No images at all, and no spec at all.
    assert_eq!(judge(json!({})), Ok(()));
    let bare =
        json!({"apiVersion": "apps.kruise.io/v1beta1", "kind": "NodeImage", "metadata": {"name": "n"}});
    assert!(validate(&request("CREATE", "v1beta1", &bare), &Settings::default()).allowed());
}

#[test]
fn each_tag_rule_has_openkruise_s_sentence_and_a_path() {
    let cases: Vec<(Value, &str)> = vec![
        (
            with_tag(|t| t["tag"] = json!("")),
            "spec.images[demo].tags[0].tag: Required value: tag for image demo can not be empty",
        ),
        (
            with_tag(|t| t["createdAt"] = Value::Null),
            "spec.images[demo].tags[0].createdAt: Required value: createAt field for demo/v1 can not be empty",
        ),
        (
            with_tag(|t| t["version"] = json!(-1)),
            "spec.images[demo].tags[0].version: Invalid value: -1: version for demo/v1 can not be less than 0",
        ),
        (
            with_tag(|t| t["pullPolicy"] = Value::Null),
            "spec.images[demo].tags[0].pullPolicy: Required value: pullPolicy field for demo/v1 must set",
        ),
        (
            with_tag(|t| t["pullPolicy"] = json!({"timeoutSeconds": 600})),
            "spec.images[demo].tags[0].pullPolicy.ttlSecondsAfterFinished: Required value: pullPolicy.ttlSecondsAfterFinished for demo/v1 must set",
        ),
        (
            json!({"demo": {"tags": [tag("v1"), tag("v1")]}}),
            "spec.images[demo].tags[1].tag: Invalid value: \"v1\": duplicated tag v1 for image demo",
        ),
        (
            json!({"": {"tags": [tag("v1")]}}),
            "spec.images[]: Invalid value: \"\": image name can not be empty",
        ),
    ];
    for (images, want) in cases {
        assert_eq!(judge(images), Err((422, want.to_string())), "{want}");
    }
}

#[test]
fn every_error_is_reported() {
    let mut bad = tag("v2");
    bad["version"] = json!(-3);
    bad.as_object_mut().unwrap().remove("pullPolicy");
    let images = json!({"a": {"tags": [tag("")]}, "b": {"tags": [bad]}});
    let (code, message) = judge(images).unwrap_err();
    assert_eq!(code, 422);
    assert_eq!(
        message,
        "[spec.images[a].tags[0].tag: Required value: tag for image a can not be empty, \
         spec.images[b].tags[0].version: Invalid value: -3: version for b/v2 can not be less than 0, \
         spec.images[b].tags[0].pullPolicy: Required value: pullPolicy field for b/v2 must set]"
    );
}

#[test]
fn at_most_256_images() {
    let many = |n: usize| -> Value {
        (0..n)
            .map(|i| (format!("img-{i}"), json!({"tags": [tag("v1")]})))
            .collect::<serde_json::Map<_, _>>()
            .into()
    };
    assert_eq!(judge(many(MAX_IMAGES)), Ok(()));
    assert_eq!(
        judge(many(MAX_IMAGES + 1)),
        Err((
            422,
            "spec.images: Invalid value: 257: spec images length 257 can not be more than 256".into()
        ))
    );
}

#[test]
fn the_gate_and_the_request_shape() {
    let off = Settings::default().with(Gate::KruiseDaemon, false);
    assert_eq!(
        judge_with("v1beta1", "CREATE", json!({}), &off),
        Err((403, "feature-gate KruiseDaemon is not enabled".into()))
    );
    // DELETE is not judged, not even with the gate off.
    assert_eq!(judge_with("v1beta1", "DELETE", json!({}), &off), Ok(()));
    // A tag that is not a string is a 400 naming the field; an unknown version a 400.
    let (code, _) = judge(json!({"demo": {"tags": [{"tag": 5}]}})).unwrap_err();
    assert_eq!(code, 400);
    assert_eq!(
        judge_with("v2", "CREATE", json!({}), &Settings::default()),
        Err((400, "unsupported version: v2".into()))
    );
}
