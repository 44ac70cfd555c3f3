use kruise_core::Settings;
use serde_json::{Value, json};

use super::*;
use crate::MemoryView;
use crate::review::AdmissionRequest;

fn ud(version: &str, spec: Value) -> Value {
    json!({"apiVersion": format!("apps.kruise.io/{version}"), "kind": "UnitedDeployment",
        "metadata": {"name": "web", "namespace": "prod"}, "spec": spec})
}

fn spec(subsets: Value) -> Value {
    json!({"replicas": 6, "selector": {"matchLabels": {"app": "web"}},
        "template": {"statefulSetTemplate": {"metadata": {"labels": {"app": "web"}},
            "spec": {"template": {"metadata": {"labels": {"app": "web"}},
                "spec": {"containers": [{"name": "c", "image": "nginx"}]}}}}},
        "topology": {"subsets": subsets}})
}

fn request(operation: &str, object: &Value, old: Option<&Value>) -> AdmissionRequest {
    let version = object["apiVersion"].as_str().unwrap().rsplit_once('/').unwrap().1;
    let mut review = json!({"uid": "1", "operation": operation, "name": "web", "namespace": "prod",
        "kind": {"group": "apps.kruise.io", "version": version, "kind": "UnitedDeployment"},
        "resource": {"group": "apps.kruise.io", "version": version, "resource": "uniteddeployments"},
        "userInfo": {"username": "u"}, "object": object});
    if let Some(old) = old {
        review["oldObject"] = old.clone();
    }
    serde_json::from_value(review).unwrap()
}

fn mutated(object: &Value) -> Value {
    let d = mutate(&request("CREATE", object, None), &Settings::default());
    assert!(d.allowed(), "{d:?}");
    let mut out = object.clone();
    json_patch::patch(&mut out, &d.patch).unwrap();
    out
}

fn check(operation: &str, object: &Value, old: Option<&Value>) -> Result<(), String> {
    let d = validate(
        &request(operation, object, old),
        &MemoryView::default(),
        &Settings::default(),
    );
    match d.denial {
        None => Ok(()),
        Some(denial) => {
            assert_eq!(denial.code, 422, "{denial:?}");
            Err(denial.message)
        }
    }
}

#[test]
fn defaults_are_applied_through_the_patch() {
    for version in ["v1alpha1", "v1beta1"] {
        let mut object = ud(
            version,
            spec(json!([{"name": "a", "maxReplicas": 2}, {"name": "b"}])),
        );
        object["spec"].as_object_mut().unwrap().remove("replicas");
        let out = mutated(&object);
        let s = &out["spec"];
        assert_eq!(s["replicas"], 1, "{version}");
        assert_eq!(s["revisionHistoryLimit"], 10);
        assert_eq!(s["updateStrategy"], json!({"type": "Manual", "manualUpdate": {}}));
        // Min/max in use and no subset replicas: every subset gets minReplicas 0.
        assert_eq!(
            s["topology"]["subsets"],
            json!([{"name": "a", "maxReplicas": 2, "minReplicas": 0}, {"name": "b", "minReplicas": 0}])
        );
        // The StatefulSet template's pod spec got the pod defaults.
        let pod = &s["template"]["statefulSetTemplate"]["spec"]["template"]["spec"];
        assert_eq!(pod["restartPolicy"], "Always");
        assert_eq!(pod["containers"][0]["imagePullPolicy"], "Always");
    }
    // Subset replicas set: no minReplicas added.
    let out = mutated(&ud(
        "v1beta1",
        spec(json!([{"name": "a", "replicas": 1}, {"name": "b"}])),
    ));
    assert!(out["spec"]["topology"]["subsets"][1].get("minReplicas").is_none());
}

#[test]
fn a_well_formed_uniteddeployment_is_allowed() {
    let subsets = json!([
        {"name": "zone-a", "replicas": 1, "nodeSelectorTerm": {"matchExpressions": [{"key": "zone", "operator": "In", "values": ["a"]}]}},
        {"name": "zone-b", "replicas": "50%"},
        {"name": "zone-c"},
    ]);
    let mut s = spec(subsets);
    s["updateStrategy"] = json!({"manualUpdate": {"partitions": {"zone-a": 1}}});
    assert_eq!(check("CREATE", &ud("v1beta1", s.clone()), None), Ok(()));
    assert_eq!(check("CREATE", &ud("v1alpha1", s), None), Ok(()));
    // A CloneSet template's labels are not checked against the selector (as in OpenKruise).
    let clone = json!({"replicas": 2, "selector": {"matchLabels": {"app": "web"}},
        "template": {"cloneSetTemplate": {"metadata": {"labels": {"other": "x"}}, "spec": {}}},
        "topology": {"subsets": [{"name": "a"}]}});
    assert_eq!(check("CREATE", &ud("v1beta1", clone), None), Ok(()));
}

#[test]
fn openkruise_rules_refuse_what_they_refuse() {
    let cases: &[(&str, Value, &str)] = &[
        (
            "no selector",
            {
                let mut s = spec(json!([{"name": "a"}]));
                s.as_object_mut().unwrap().remove("selector");
                s
            },
            "spec.selector: Required value",
        ),
        (
            "two templates",
            {
                let mut s = spec(json!([{"name": "a"}]));
                s["template"]["deploymentTemplate"] =
                    json!({"metadata": {"labels": {"app": "web"}}, "spec": {}});
                s
            },
            "should provide only one of statefulSetTemplate",
        ),
        (
            "labels do not match",
            {
                let mut s = spec(json!([{"name": "a"}]));
                s["template"]["statefulSetTemplate"]["metadata"]["labels"] = json!({"app": "other"});
                s
            },
            "spec.template.statefulSetTemplate.metadata.labels: Invalid value: map[string]string{\"app\":\"other\"}: `selector` does not match template `labels`",
        ),
        (
            "replicas in the template",
            {
                let mut s = spec(json!([{"name": "a"}]));
                s["template"]["statefulSetTemplate"]["spec"]["replicas"] = json!(3);
                s
            },
            "spec.template.statefulSetTemplate.spec.replicas: Invalid value: 3: replicas in statefulSetTemplate will not be used",
        ),
        (
            "a partition in the template",
            {
                let mut s = spec(json!([{"name": "a"}]));
                s["template"]["statefulSetTemplate"]["spec"]["updateStrategy"] =
                    json!({"type": "RollingUpdate", "rollingUpdate": {"partition": 2}});
                s
            },
            "partition in statefulSetTemplate will not be used",
        ),
        (
            "too many",
            spec(json!([{"name": "a", "replicas": 4}, {"name": "b", "replicas": 3}])),
            "spec.topology.subsets: Invalid value: 7: sum of indicated subset replicas 7 should not be greater than UnitedDeployment replicas 6",
        ),
        (
            "all set, too few",
            spec(json!([{"name": "a", "replicas": 4}, {"name": "b", "replicas": 1}])),
            "the sum of indicated subset replicas 5 should equal UnitedDeployment replicas 6",
        ),
        (
            "bad percent",
            spec(json!([{"name": "a", "replicas": "120%"}, {"name": "b"}])),
            "subset replicas (120%) should be in range [0, 100]",
        ),
        (
            "replicas and min/max",
            spec(json!([{"name": "a", "replicas": 1}, {"name": "b", "minReplicas": 1}])),
            "are mutually exclusive in a UnitedDeployment",
        ),
        (
            "every subset has a max",
            spec(json!([{"name": "a", "maxReplicas": 1}, {"name": "b", "maxReplicas": 1}])),
            "at least one subset.maxReplicas must be empty",
        ),
        (
            "min above max",
            spec(json!([{"name": "a", "minReplicas": 3, "maxReplicas": 2}, {"name": "b"}])),
            "subset[0].minReplicas must be less than or equal to maxReplicas",
        ),
        (
            "duplicate subset",
            spec(json!([{"name": "a"}, {"name": "a"}])),
            "duplicated subset name a",
        ),
        (
            "bad subset name",
            spec(json!([{"name": "Zone_A"}])),
            "invalid subset name",
        ),
        (
            "adaptive with replicas",
            {
                let mut s = spec(json!([{"name": "a", "replicas": 1}, {"name": "b"}]));
                s["topology"]["scheduleStrategy"] = json!({"type": "Adaptive"});
                s
            },
            "specify replicas use minReplicas/maxReplicas to enable adaptive strategy",
        ),
        (
            "reservation with a StatefulSet template",
            {
                let mut s = spec(json!([{"name": "a"}]));
                s["topology"]["scheduleStrategy"] =
                    json!({"type": "Adaptive", "adaptive": {"reserveUnschedulablePods": true}});
                s
            },
            "only stateless workloads (Deployment and CloneSet) are supported by reserved rescheduling",
        ),
        (
            "unknown partition",
            {
                let mut s = spec(json!([{"name": "a"}]));
                s["updateStrategy"] = json!({"manualUpdate": {"partitions": {"zz": 1}}});
                s
            },
            "subset zz does not exist",
        ),
        (
            "unknown strategy",
            {
                let mut s = spec(json!([{"name": "a"}]));
                s["updateStrategy"] = json!({"type": "Auto"});
                s
            },
            "spec.updateStrategy.type: Unsupported value: \"Auto\"",
        ),
    ];
    for (name, s, want) in cases {
        let got = check("CREATE", &ud("v1beta1", s.clone()), None);
        let message = got.expect_err(name);
        assert!(message.contains(want), "{name}: {message}");
    }
}

#[test]
fn updates_keep_subset_placement_and_the_statefulset_shape() {
    let subsets = json!([{"name": "a", "nodeSelectorTerm": {"matchExpressions": [{"key": "zone", "operator": "In", "values": ["a"]}]}}]);
    let old = ud("v1beta1", spec(subsets));
    // Template image, replicas and subsets added: fine.
    let mut new = old.clone();
    new["spec"]["replicas"] = json!(9);
    new["spec"]["template"]["statefulSetTemplate"]["spec"]["template"]["spec"]["containers"][0]["image"] =
        json!("nginx:2");
    new["spec"]["topology"]["subsets"]
        .as_array_mut()
        .unwrap()
        .push(json!({"name": "b"}));
    assert_eq!(check("UPDATE", &new, Some(&old)), Ok(()));
    // A subset's node selector term may not change.
    let mut moved = old.clone();
    moved["spec"]["topology"]["subsets"][0]["nodeSelectorTerm"]["matchExpressions"][0]["values"] =
        json!(["b"]);
    let message = check("UPDATE", &moved, Some(&old)).unwrap_err();
    assert!(
        message.contains(
            "spec.topology.subsets[0].nodeSelectorTerm: Forbidden: may not be changed in an update"
        ),
        "{message}"
    );
    // A StatefulSet template's serviceName may not change.
    let mut renamed = old.clone();
    renamed["spec"]["template"]["statefulSetTemplate"]["spec"]["serviceName"] = json!("other");
    let message = check("UPDATE", &renamed, Some(&old)).unwrap_err();
    assert!(
        message.contains("updates to statefulsetTemplate spec for fields other than"),
        "{message}"
    );
}

/// A UD whose only template is a Deployment template with pod `template`.
fn deployment_ud(template: Value) -> Value {
    ud(
        "v1beta1",
        json!({"replicas": 2, "selector": {"matchLabels": {"app": "web"}},
            "template": {"deploymentTemplate": {"metadata": {"labels": {"app": "web"}},
                "spec": {"template": template}}},
            "topology": {"subsets": [{"name": "a"}]}}),
    )
}

#[test]
fn the_embedded_pod_template_is_validated_as_its_own_kind_would_be() {
    // Undefaulted but valid: accepted (the API server defaults the Deployment it becomes).
    let good = json!({"metadata": {"labels": {"app": "web"}},
        "spec": {"containers": [{"name": "c", "image": "nginx"}]}});
    check("CREATE", &deployment_ud(good), None).unwrap();
    let cases: &[(Value, &str)] = &[
        (
            json!({"metadata": {"labels": {"app": "web"}},
                "spec": {"containers": [{"name": "c", "image": "nginx"}, {"name": "c", "image": "nginx"}]}}),
            "spec.template.deploymentTemplate.spec.template.spec.containers[1].name: Duplicate value: \"c\"",
        ),
        (
            json!({"metadata": {"labels": {"app": "other"}},
                "spec": {"containers": [{"name": "c", "image": "nginx"}]}}),
            "spec.template.deploymentTemplate.spec.template.metadata.labels: Invalid value: map[string]string{\"app\":\"other\"}: `selector` does not match template `labels`",
        ),
        (
            json!({"metadata": {"labels": {"app": "web"}},
                "spec": {"restartPolicy": "Never", "containers": [{"name": "c", "image": "nginx"}]}}),
            "spec.template.deploymentTemplate.spec.template.spec.restartPolicy: Unsupported value: \"Never\": supported values: \"Always\"",
        ),
        (
            json!({"metadata": {"labels": {"app": "web"}},
                "spec": {"activeDeadlineSeconds": 5, "containers": [{"name": "c", "image": "nginx"}]}}),
            "spec.template.deploymentTemplate.spec.template.spec.activeDeadlineSeconds: Forbidden: activeDeadlineSeconds in ReplicaSet is not Supported",
        ),
        (
            json!({"metadata": {"labels": {"app": "web"}}, "spec": {"containers": [{"name": "c"}]}}),
            "spec.template.deploymentTemplate.spec.template.spec.containers[0].image: Required value",
        ),
    ];
    for (template, want) in cases {
        let message = check("CREATE", &deployment_ud(template.clone()), None).unwrap_err();
        assert!(message.contains(want), "{message}\nwant: {want}");
    }
    // A StatefulSet template: its own fields too, after the defaults OpenKruise assumes.
    let mut object = ud("v1beta1", spec(json!([{"name": "a"}])));
    object["spec"]["template"]["statefulSetTemplate"]["spec"]["podManagementPolicy"] = json!("Sometimes");
    let message = check("CREATE", &object, None).unwrap_err();
    assert!(
        message.contains("spec.template.statefulSetTemplate.spec.podManagementPolicy: Invalid value: \"Sometimes\": must be 'OrderedReady' or 'Parallel'"),
        "{message}"
    );
    // A CloneSet template is left to the CloneSet webhook.
    let mut object = deployment_ud(json!({}));
    let t = object["spec"]["template"]["deploymentTemplate"].take();
    object["spec"]["template"] = json!({"cloneSetTemplate": t});
    check("CREATE", &object, None).unwrap();
}
