//! The CRD webhooks as the apiserver chains them, and against inputs they must survive.

use crate::common;

use common::crd::{call, denial, patched, request, view_of};
use serde_json::{Value, json};

const PATHS: &[&str] = &[
    "/mutate-apps-kruise-io-sidecarset",
    "/validate-apps-kruise-io-sidecarset",
    "/mutate-apps-kruise-io-cloneset",
    "/validate-apps-kruise-io-cloneset",
    "/validate-policy-kruise-io-podunavailablebudget",
    "/validate-apps-kruise-io-workloadspread",
    "/validate-apps-kruise-io-resourcedistribution",
];

fn kind_of(path: &str) -> (&'static str, &'static str) {
    if path.contains("sidecarset") {
        ("apps.kruise.io", "SidecarSet")
    } else if path.contains("cloneset") {
        ("apps.kruise.io", "CloneSet")
    } else if path.contains("resourcedistribution") {
        ("apps.kruise.io", "ResourceDistribution")
    } else if path.contains("podunavailablebudget") {
        ("policy.kruise.io", "PodUnavailableBudget")
    } else {
        ("apps.kruise.io", "WorkloadSpread")
    }
}

/// Minimal objects: mutated, then validated, they are admitted; the validating webhook never patches.
#[test]
fn defaulted_minimal_objects_pass_validation() {
    let view = view_of(&[]);
    for version in ["v1alpha1", "v1beta1"] {
        let sidecarset = json!({"apiVersion": format!("apps.kruise.io/{version}"), "kind": "SidecarSet",
            "metadata": {"name": "logs"},
            "spec": {"selector": {"matchLabels": {"app": "web"}},
                "containers": [{"name": "log", "image": "busybox", "livenessProbe": {"exec": {"command": ["true"]}}}],
                "initContainers": [{"name": "init", "image": "busybox:1"}],
                "volumes": [{"name": "data"}]}});
        let cloneset = json!({"apiVersion": format!("apps.kruise.io/{version}"), "kind": "CloneSet",
            "metadata": {"name": "web", "namespace": "shop"},
            "spec": {"selector": {"matchLabels": {"app": "web"}},
                "template": {"metadata": {"labels": {"app": "web"}},
                    "spec": {"containers": [{"name": "app", "image": "nginx",
                        "readinessProbe": {"httpGet": {"port": 80}}}]}}}});
        for (mutate, validate, object) in [
            (
                "/mutate-apps-kruise-io-sidecarset",
                "/validate-apps-kruise-io-sidecarset",
                sidecarset,
            ),
            (
                "/mutate-apps-kruise-io-cloneset",
                "/validate-apps-kruise-io-cloneset",
                cloneset,
            ),
        ] {
            let decision = call(mutate, &request("CREATE", Some(&object), None), &view);
            assert!(decision.allowed(), "{mutate} {version}: {:?}", decision.denial);
            assert!(
                !decision.patch.is_empty(),
                "{mutate} {version}: nothing defaulted"
            );
            let defaulted = patched(&object, &decision);
            let verdict = call(validate, &request("CREATE", Some(&defaulted), None), &view);
            assert!(verdict.allowed(), "{validate} {version}: {:?}", verdict.denial);
            assert!(verdict.patch.is_empty());
            // Validation alone judges the object as the mutating webhook would leave it.
            let alone = call(validate, &request("CREATE", Some(&object), None), &view);
            assert!(alone.allowed(), "{validate} {version} alone: {:?}", alone.denial);
        }
    }
}

/// Every path answers every mangled object with an allowed or a 400/422 answer with a message, never a
/// panic.
#[test]
fn mangled_objects_are_answered() {
    let view = view_of(&[]);
    let specs = [
        json!(null),
        json!("x"),
        json!([]),
        json!(42),
        json!({"selector": "x"}),
        json!({"selector": {"matchLabels": "x"}}),
        json!({"selector": {"matchExpressions": [1, "a", null]}}),
        json!({"containers": [1, null, "x"]}),
        json!({"containers": {"a": 1}}),
        json!({"containers": [{"name": 5}]}),
        json!({"initContainers": [{"restartPolicy": 3}]}),
        json!({"volumes": "x"}),
        json!({"volumes": [{"name": "v", "configMap": "x"}]}),
        json!({"updateStrategy": []}),
        json!({"updateStrategy": {"partition": {"a": 1}}}),
        json!({"updateStrategy": {"rollingUpdate": "x"}}),
        json!({"replicas": -5, "template": {"spec": {"containers": []}}}),
        json!({"replicas": 1.5}),
        json!({"template": {"metadata": {"labels": [1]}}}),
        json!({"subsets": [{"maxReplicas": "%"}]}),
        json!({"subsets": [{"maxReplicas": "x%"}, {"maxReplicas": "99999999999999999999%"}]}),
        json!({"targetRef": 5}),
        json!({"maxUnavailable": "%%", "minAvailable": {"x": 1}}),
        json!({"protectOperations": "DELETE"}),
        json!({"patchPodMetadata": [{"annotations": {"a": 1}}]}),
        json!({"scheduleStrategy": {"adaptive": {"rescheduleCriticalSeconds": "x"}}}),
        json!({"resource": 5, "targets": {"includedNamespaces": {"list": [{"name": 3}]}}}),
        json!({"resource": {"kind": "ConfigMap", "data": {"k": 1}, "binaryData": {"b": "!!"}}}),
        json!({"resource": {"apiVersion": "v1", "kind": "Secret", "metadata": [1], "data": "x"}}),
        json!({"targets": {"namespaceSelector": {"matchExpressions": [{"operator": 5}]}}}),
    ];
    let metadatas = [
        json!({"name": "x", "namespace": "shop"}),
        json!(5),
        json!({"annotations": [1]}),
        json!(null),
    ];
    for path in PATHS {
        let (group, kind) = kind_of(path);
        for version in ["v1alpha1", "v1beta1"] {
            for spec in &specs {
                for metadata in &metadatas {
                    let object = json!({"apiVersion": format!("{group}/{version}"), "kind": kind,
                        "metadata": metadata, "spec": spec});
                    for operation in ["CREATE", "UPDATE"] {
                        let old = (operation == "UPDATE").then_some(&object);
                        let decision = call(path, &request(operation, Some(&object), old), &view);
                        if let Some(d) = &decision.denial {
                            assert!(
                                matches!(d.code, 400 | 403 | 422) && !d.message.is_empty(),
                                "{path} {version} {spec}: {d:?}"
                            );
                        }
                    }
                }
            }
        }
        // Not an object at all, and an unknown version.
        for object in [json!("text"), json!([1, 2]), json!(7)] {
            let mut req = request("CREATE", Some(&object), None);
            req.kind.version = "v1beta1".into();
            req.resource.version = "v1beta1".into();
            let (code, _) = denial(&call(path, &req, &view));
            assert_eq!(code, 400, "{path} {object}");
        }
        let object = json!({"apiVersion": format!("{group}/v2"), "kind": kind, "metadata": {"name": "x"}});
        let (code, message) = denial(&call(path, &request("CREATE", Some(&object), None), &view));
        assert_eq!(
            (code, message.as_str()),
            (400, "unsupported version: v2"),
            "{path}"
        );
    }
}

/// Reviews that are not for these webhooks (CONNECT, sub-resources) are allowed untouched.
#[test]
fn other_operations_pass_through() {
    let view = view_of(&[]);
    for path in PATHS {
        let (group, kind) = kind_of(path);
        let object =
            json!({"apiVersion": format!("{group}/v1beta1"), "kind": kind, "metadata": {"name": "x"}});
        let decision = call(path, &request("CONNECT", Some(&object), None), &view);
        assert!(decision.allowed() && decision.patch.is_empty(), "{path}");
        let mut status = request("UPDATE", Some(&object), Some(&object));
        status.sub_resource = Some("status".into());
        let decision = call(path, &status, &view);
        assert!(decision.allowed() && decision.patch.is_empty(), "{path} status");
    }
}

/// The SidecarSet hashes are stamped with OpenKruise's values whatever the version, and change with the
/// image only for `kruise.io/sidecarset-hash`.
#[test]
fn sidecarset_hashes_follow_the_containers() {
    let view = view_of(&[]);
    let hashes = |object: &Value| {
        let d = call(
            "/mutate-apps-kruise-io-sidecarset",
            &request("CREATE", Some(object), None),
            &view,
        );
        let out = patched(object, &d);
        let a = &out["metadata"]["annotations"];
        (
            a["kruise.io/sidecarset-hash"].as_str().unwrap().to_string(),
            a["kruise.io/sidecarset-hash-without-image"]
                .as_str()
                .unwrap()
                .to_string(),
        )
    };
    let mut object = json!({"apiVersion": "apps.kruise.io/v1beta1", "kind": "SidecarSet",
        "metadata": {"name": "sidecarset-test", "annotations": {"owner": "me"}},
        "spec": {"selector": {"matchLabels": {"a": "b"}}, "containers": [{"name": "dns-f", "image": "dns:1.0"}]}});
    let base = hashes(&object);
    assert_eq!(
        base,
        (
            "6wbd76bd7984x24fb4f44fv9222cw9v9bcf85x766744wddd4zwx927zzz2zb684".to_string(),
            "82684vwf9d4cb4wz4vffx4ddfbb47ww4z4wwxdbwb8w2zbb7zvf4524cdd49bv94".to_string()
        )
    );
    object["apiVersion"] = json!("apps.kruise.io/v1alpha1");
    assert_eq!(hashes(&object), base, "same hashes for v1alpha1");
    object["spec"]["containers"][0]["image"] = json!("dns:2.0");
    let changed = hashes(&object);
    assert_ne!(changed.0, base.0);
    assert_eq!(changed.1, base.1);
    object["spec"]["containers"][0]["env"] = json!([{"name": "A", "value": "1"}]);
    let with_env = hashes(&object);
    assert_ne!(
        with_env.1, base.1,
        "a non-image change moves the without-image hash"
    );
    // Plain init containers do not count; a native sidecar does.
    object["spec"]["initContainers"] = json!([{"name": "init", "image": "busybox:1"}]);
    assert_eq!(hashes(&object), with_env);
    object["spec"]["initContainers"][0]["restartPolicy"] = json!("Always");
    assert_ne!(hashes(&object), with_env);
}
