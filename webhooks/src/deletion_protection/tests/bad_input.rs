//! Objects that do not decode and label values that are not protections.

use super::*;

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
