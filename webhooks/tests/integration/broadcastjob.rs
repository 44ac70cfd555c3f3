//! The BroadcastJob webhooks: defaults applied through the returned patch, OpenKruise's validation
//! rules and messages.

use crate::common;

use common::crd::{call, denial, patched, request, view_of};
use serde_json::{Value, json};

const MUTATE: &str = "/mutate-apps-kruise-io-broadcastjob";
const VALIDATE: &str = "/validate-apps-kruise-io-broadcastjob";

fn job(spec: Value) -> Value {
    let mut job = json!({"apiVersion": "apps.kruise.io/v1alpha1", "kind": "BroadcastJob",
        "metadata": {"name": "node-check", "namespace": "ops"},
        "spec": {"template": {"spec": {"restartPolicy": "Never",
            "containers": [{"name": "check", "image": "busybox"}]}}}});
    if let (Some(to), Some(from)) = (job["spec"].as_object_mut(), spec.as_object()) {
        for (k, v) in from {
            to.insert(k.clone(), v.clone());
        }
    }
    job
}

#[test]
fn defaults_fill_policies_parallelism_and_the_pod_template() {
    let object = job(json!({}));
    let decision = call(MUTATE, &request("CREATE", Some(&object), None), &view_of(&[]));
    assert!(decision.allowed());
    let out = patched(&object, &decision);
    assert_eq!(out["spec"]["completionPolicy"], json!({"type": "Always"}));
    assert_eq!(out["spec"]["failurePolicy"], json!({"type": "FailFast"}));
    assert_eq!(out["spec"]["parallelism"], json!(2147483647));
    let container = &out["spec"]["template"]["spec"]["containers"][0];
    assert_eq!(container["imagePullPolicy"], "Always");
    assert_eq!(container["terminationMessagePolicy"], "File");
    assert_eq!(out["spec"]["template"]["spec"]["dnsPolicy"], "ClusterFirst");
    let decision = call(VALIDATE, &request("CREATE", Some(&out), None), &view_of(&[]));
    assert!(decision.allowed(), "{:?}", decision.denial);
}

#[test]
fn set_values_are_kept() {
    let object = job(
        json!({"parallelism": "50%", "completionPolicy": {"type": "Never"},
        "failurePolicy": {"type": "Continue", "restartLimit": 3}}),
    );
    let decision = call(MUTATE, &request("CREATE", Some(&object), None), &view_of(&[]));
    let out = patched(&object, &decision);
    assert_eq!(out["spec"]["parallelism"], "50%");
    assert_eq!(out["spec"]["completionPolicy"], json!({"type": "Never"}));
    assert_eq!(
        out["spec"]["failurePolicy"],
        json!({"type": "Continue", "restartLimit": 3})
    );
}

#[test]
fn an_update_that_keeps_the_template_leaves_it_undefaulted() {
    let old = job(
        json!({"completionPolicy": {"type": "Always"}, "failurePolicy": {"type": "FailFast"},
        "parallelism": 3}),
    );
    let mut new = old.clone();
    new["spec"]["paused"] = json!(true);
    let decision = call(MUTATE, &request("UPDATE", Some(&new), Some(&old)), &view_of(&[]));
    assert_eq!(patched(&new, &decision), new);
}

#[test]
fn validation_rules_and_messages() {
    type Case = (&'static str, Value, &'static str);
    let cases: Vec<Case> = vec![
        (
            "Never forbids a TTL",
            job(json!({"completionPolicy": {"type": "Never", "ttlSecondsAfterFinished": 10}})),
            "spec.completionPolicy.ttlSecondsAfterFinished: Invalid value: 10: ttlSecondsAfterFinished can just work with Always CompletionPolicyType",
        ),
        (
            "Never forbids a deadline",
            job(json!({"completionPolicy": {"type": "Never", "activeDeadlineSeconds": 60}})),
            "spec.completionPolicy.activeDeadlineSeconds: Invalid value: 60: activeDeadlineSeconds can just work with Always CompletionPolicyType",
        ),
        (
            "restartPolicy Always",
            job(json!({"template": {"spec": {"restartPolicy": "Always",
                "containers": [{"name": "check", "image": "busybox"}]}}})),
            "spec.template.spec.restartPolicy: Invalid value: \"Always\": pod restartPolicy can only be Never or OnFailure",
        ),
        (
            "preset job labels",
            job(
                json!({"template": {"metadata": {"labels": {"broadcastjob-name": "x"}},
                "spec": {"restartPolicy": "Never", "containers": [{"name": "check", "image": "busybox"}]}}}),
            ),
            "spec.template.metadata.labels: Invalid value: map[string]string{\"broadcastjob-name\":\"x\"}: \"broadcastjob-name\" and \"broadcastjob-controller-uid\" are not allowed to preset in pod labels",
        ),
        (
            "a name with a dot",
            {
                let mut j = job(json!({}));
                j["metadata"]["name"] = json!("node.check");
                j
            },
            "metadata.name: Invalid value: \"node.check\": name can only include alphanumerics and '-'",
        ),
        (
            "a template without containers",
            job(json!({"template": {"spec": {"restartPolicy": "Never", "containers": []}}})),
            "spec.template.spec.containers: Required value",
        ),
    ];
    for (name, object, message) in cases {
        let mutated = call(MUTATE, &request("CREATE", Some(&object), None), &view_of(&[]));
        let object = patched(&object, &mutated);
        let decision = call(VALIDATE, &request("CREATE", Some(&object), None), &view_of(&[]));
        let (code, got) = denial(&decision);
        assert_eq!(code, 422, "{name}");
        assert!(got.contains(message), "{name}: {got}");
    }
}
