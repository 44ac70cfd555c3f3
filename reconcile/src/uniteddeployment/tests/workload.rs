//! The subset workload of each template kind, built from scratch and over an existing object.

use kruise_api::apps_v1beta1::UnitedDeployment;
use serde_json::{Value, json};

use crate::uniteddeployment::{Desired, WorkloadError, apply_subset_template, name_prefix};

fn ud(template: Value, subsets: Value) -> UnitedDeployment {
    serde_json::from_value(json!({
        "apiVersion": "apps.kruise.io/v1beta1", "kind": "UnitedDeployment",
        "metadata": {"name": "web", "namespace": "prod", "uid": "ud-uid"},
        "spec": {"replicas": 6, "selector": {"matchLabels": {"app": "web"}},
            "template": template, "topology": {"subsets": subsets}},
    }))
    .unwrap()
}

fn pod_template() -> Value {
    json!({"metadata": {"labels": {"app": "web"}},
    "spec": {"containers": [{"name": "main", "image": "nginx:1", "env": [{"name": "A", "value": "1"}]}],
        "tolerations": [{"key": "base", "operator": "Exists"}],
        "affinity": {"nodeAffinity": {"requiredDuringSchedulingIgnoredDuringExecution": {"nodeSelectorTerms": [
            {"matchExpressions": [{"key": "disk", "operator": "In", "values": ["ssd"]}]},
            {"matchFields": [{"key": "metadata.name", "operator": "In", "values": ["n1"]}]},
        ]}}}}})
}

fn zone_subset(name: &str, zone: &str) -> Value {
    json!({"name": name, "nodeSelectorTerm": {"matchExpressions": [
        {"key": "topology.kubernetes.io/zone", "operator": "In", "values": [zone]}]}})
}

const ZONE: fn(&str) -> Value =
    |zone| json!({"key": "topology.kubernetes.io/zone", "operator": "In", "values": [zone]});

fn desired(subset: &str) -> Desired<'_> {
    Desired {
        subset,
        revision: "web-5d9c8b7f4",
        replicas: 2,
        partition: 1,
    }
}

#[test]
fn a_statefulset_subset_gets_labels_selector_replicas_partition_affinity_tolerations_and_patch() {
    let mut b = zone_subset("zone-b", "b");
    b["tolerations"] =
        json!([{"key": "dedicated", "operator": "Equal", "value": "b", "effect": "NoSchedule"}]);
    b["patch"] = json!({"metadata": {"labels": {"zone": "b"}},
        "spec": {"containers": [{"name": "main", "env": [{"name": "B", "value": "2"}]}]}});
    let ud = ud(
        json!({"statefulSetTemplate": {
            "metadata": {"labels": {"app": "web", "tier": "front"}, "annotations": {"note": "x"}},
            "spec": {"serviceName": "web", "selector": {"matchLabels": {"app": "web"}}, "template": pod_template()}}}),
        json!([zone_subset("zone-a", "a"), b]),
    );
    let set = apply_subset_template(&ud, desired("zone-b"), None).unwrap();
    assert_eq!(set["apiVersion"], "apps/v1");
    assert_eq!(set["kind"], "StatefulSet");
    assert_eq!(set["metadata"]["generateName"], "web-zone-b-");
    assert_eq!(set["metadata"]["namespace"], "prod");
    assert_eq!(
        set["metadata"]["labels"],
        json!({"app": "web", "tier": "front", "apps.kruise.io/controller-revision-hash": "web-5d9c8b7f4",
            "apps.kruise.io/subset-name": "zone-b"})
    );
    assert_eq!(set["metadata"]["annotations"]["note"], "x");
    assert_eq!(
        set["metadata"]["annotations"]["apps.kruise.io/subset-patch"],
        r#"{"metadata":{"labels":{"zone":"b"}},"spec":{"containers":[{"env":[{"name":"B","value":"2"}],"name":"main"}]}}"#
    );
    assert_eq!(
        set["metadata"]["ownerReferences"],
        json!([{"apiVersion": "apps.kruise.io/v1beta1", "kind": "UnitedDeployment", "name": "web",
            "uid": "ud-uid", "controller": true, "blockOwnerDeletion": true}])
    );
    let spec = &set["spec"];
    assert_eq!(spec["serviceName"], "web");
    assert_eq!(spec["replicas"], 2);
    assert_eq!(
        spec["selector"],
        json!({"matchLabels": {"app": "web", "apps.kruise.io/subset-name": "zone-b"}})
    );
    assert_eq!(
        spec["updateStrategy"],
        json!({"type": "RollingUpdate", "rollingUpdate": {"partition": 1}})
    );
    let pod = &spec["template"];
    assert_eq!(
        pod["metadata"]["labels"],
        json!({"app": "web", "zone": "b", "apps.kruise.io/subset-name": "zone-b",
            "apps.kruise.io/controller-revision-hash": "web-5d9c8b7f4"})
    );
    // The zone requirement is appended to every required term; the matchFields term gets it too.
    let terms = &pod["spec"]["affinity"]["nodeAffinity"]["requiredDuringSchedulingIgnoredDuringExecution"]["nodeSelectorTerms"];
    assert_eq!(
        terms[0]["matchExpressions"],
        json!([{"key": "disk", "operator": "In", "values": ["ssd"]}, ZONE("b")])
    );
    assert_eq!(terms[1]["matchExpressions"], json!([ZONE("b")]));
    assert_eq!(terms[1]["matchFields"][0]["key"], "metadata.name");
    assert_eq!(
        pod["spec"]["tolerations"],
        json!([{"key": "base", "operator": "Exists"},
            {"key": "dedicated", "operator": "Equal", "value": "b", "effect": "NoSchedule"}])
    );
    // The patch merged the container by name: env B added next to A.
    assert_eq!(pod["spec"]["containers"][0]["image"], "nginx:1");
    let env: Vec<&str> = pod["spec"]["containers"][0]["env"]
        .as_array()
        .unwrap()
        .iter()
        .map(|e| e["name"].as_str().unwrap())
        .collect();
    assert_eq!(env, ["B", "A"]);
    // The other subset has no patch: an empty annotation, no zone label.
    let a = apply_subset_template(&ud, desired("zone-a"), None).unwrap();
    assert_eq!(a["metadata"]["annotations"]["apps.kruise.io/subset-patch"], "");
    assert!(a["spec"]["template"]["metadata"]["labels"].get("zone").is_none());
}

#[test]
fn each_kind_carries_its_partition_where_it_has_one() {
    let subsets = json!([{"name": "s"}]);
    let spec = json!({"template": {"metadata": {"labels": {"app": "web"}}, "spec": {"containers": [{"name": "c"}]}}});
    let on_delete = json!({"template": {"spec": {}}, "updateStrategy": {"type": "OnDelete"}});
    let cases: &[(&str, Value, &str, &str, Value)] = &[
        (
            "statefulSetTemplate",
            spec.clone(),
            "apps/v1",
            "StatefulSet",
            json!({"type": "RollingUpdate", "rollingUpdate": {"partition": 1}}),
        ),
        (
            "statefulSetTemplate",
            on_delete.clone(),
            "apps/v1",
            "StatefulSet",
            json!({"type": "OnDelete"}),
        ),
        (
            "advancedStatefulSetTemplate",
            spec.clone(),
            "apps.kruise.io/v1beta1",
            "StatefulSet",
            json!({"rollingUpdate": {"partition": 1}}),
        ),
        (
            "advancedStatefulSetTemplate",
            on_delete,
            "apps.kruise.io/v1beta1",
            "StatefulSet",
            json!({"type": "OnDelete"}),
        ),
        (
            "cloneSetTemplate",
            spec.clone(),
            "apps.kruise.io/v1beta1",
            "CloneSet",
            json!({"rollingUpdate": {"partition": 1}}),
        ),
        ("deploymentTemplate", spec, "apps/v1", "Deployment", Value::Null),
    ];
    for (field, spec, api_version, kind, strategy) in cases {
        let ud = ud(json!({*field: {"spec": spec}}), subsets.clone());
        let w = apply_subset_template(&ud, desired("s"), None).unwrap();
        assert_eq!(
            (w["apiVersion"].as_str(), w["kind"].as_str()),
            (Some(*api_version), Some(*kind)),
            "{field}"
        );
        assert_eq!(w["spec"]["updateStrategy"], *strategy, "{field} {spec}");
        assert_eq!(w["spec"]["replicas"], 2);
        // No node requirement on the subset: the affinity is left alone.
        assert!(w["spec"]["template"]["spec"].get("affinity").is_none(), "{field}");
    }
    // A template without affinity gets one required term holding the subset's requirement.
    let ud = ud(
        json!({"cloneSetTemplate": {"spec": {}}}),
        json!([zone_subset("a", "a")]),
    );
    let w = apply_subset_template(&ud, desired("a"), None).unwrap();
    assert_eq!(
        w["spec"]["template"]["spec"]["affinity"],
        json!({"nodeAffinity": {"requiredDuringSchedulingIgnoredDuringExecution": {
            "nodeSelectorTerms": [{"matchExpressions": [ZONE("a")]}]}}})
    );
}

#[test]
fn an_update_overwrites_what_the_ud_decides_and_keeps_the_rest() {
    let ud = ud(
        json!({"deploymentTemplate": {"metadata": {"labels": {"app": "web"}},
            "spec": {"template": {"spec": {"containers": [{"name": "c", "image": "v2"}]}}}}}),
        json!([{"name": "s"}]),
    );
    let existing = json!({"apiVersion": "apps/v1", "kind": "Deployment",
        "metadata": {"name": "web-s-x7k2p", "namespace": "prod", "resourceVersion": "7",
            "labels": {"app": "web", "extra": "kept", "apps.kruise.io/controller-revision-hash": "old"},
            "ownerReferences": [{"apiVersion": "apps.kruise.io/v1beta1", "kind": "UnitedDeployment",
                "name": "web", "uid": "ud-uid", "controller": true}]},
        "spec": {"replicas": 5, "paused": true, "template": {"spec": {"containers": [{"name": "c", "image": "v1"}]}}},
        "status": {"replicas": 5}});
    let w = apply_subset_template(&ud, desired("s"), Some(&existing)).unwrap();
    assert_eq!(w["metadata"]["name"], "web-s-x7k2p");
    assert_eq!(w["metadata"]["resourceVersion"], "7");
    assert_eq!(w["metadata"]["labels"]["extra"], "kept");
    assert_eq!(
        w["metadata"]["labels"]["apps.kruise.io/controller-revision-hash"],
        "web-5d9c8b7f4"
    );
    assert_eq!(w["metadata"]["ownerReferences"].as_array().unwrap().len(), 1);
    assert_eq!(w["metadata"]["ownerReferences"][0]["blockOwnerDeletion"], true);
    // The spec is the template's: the hand-set `paused` is gone, the image is v2.
    assert!(w["spec"].get("paused").is_none());
    assert_eq!(w["spec"]["replicas"], 2);
    assert_eq!(w["spec"]["template"]["spec"]["containers"][0]["image"], "v2");
    assert_eq!(w["status"]["replicas"], 5);

    let mut foreign = existing.clone();
    foreign["metadata"]["ownerReferences"][0]["uid"] = json!("other");
    foreign["metadata"]["ownerReferences"][0]["kind"] = json!("CloneSet");
    assert_eq!(
        apply_subset_template(&ud, desired("s"), Some(&foreign)),
        Err(WorkloadError::OtherController {
            kind: "Deployment".into(),
            name: "web-s-x7k2p".into(),
            owner: "CloneSet/web".into()
        })
    );
}

#[test]
fn names_bad_patches_and_missing_pieces() {
    assert_eq!(name_prefix("web", "zone-a"), "web-zone-a-");
    let long = "u".repeat(250);
    assert_eq!(name_prefix(&long, "zone-a"), format!("{long}-"));
    let no_template = ud(json!({}), json!([{"name": "s"}]));
    assert_eq!(
        apply_subset_template(&no_template, desired("s"), None),
        Err(WorkloadError::NoTemplate)
    );
    let ud = ud(
        json!({"cloneSetTemplate": {"spec": {}}}),
        json!([{"name": "s", "patch": {"spec": {"containers": [{"image": "no-name"}]}}}]),
    );
    assert_eq!(
        apply_subset_template(&ud, desired("gone"), None),
        Err(WorkloadError::NoSubset("gone".into()))
    );
    assert!(matches!(
        apply_subset_template(&ud, desired("s"), None),
        Err(WorkloadError::Patch { .. })
    ));
}
