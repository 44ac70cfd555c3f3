use serde_json::{Value, json};

use super::*;
use crate::MemoryView;

/// A WorkloadSpread in namespace `ns` targeting `api_version`/`kind` `w`, with one subset of
/// `maxReplicas: max` and the given replicasPathList.
fn spread(api_version: &str, kind: &str, max: Value, paths: &[&str]) -> WorkloadSpread {
    let mut spec = json!({
        "targetRef": {"apiVersion": api_version, "kind": kind, "name": "w"},
        "subsets": [{"name": "a", "maxReplicas": max}],
    });
    if !paths.is_empty() {
        spec["targetFilter"] = json!({"replicasPathList": paths});
    }
    serde_json::from_value(
        json!({"apiVersion": "apps.kruise.io/v1beta1", "kind": "WorkloadSpread",
        "metadata": {"name": "ws", "namespace": "ns"}, "spec": spec}),
    )
    .unwrap()
}

/// A view holding one object named `w` in `ns`.
fn view_with(api_version: &str, kind: &str, spec: Value) -> MemoryView {
    let mut view = MemoryView::default();
    view.add(json!({"apiVersion": api_version, "kind": kind,
        "metadata": {"name": "w", "namespace": "ns"}, "spec": spec}))
        .unwrap();
    view
}

#[test]
fn the_target_is_read_by_its_exact_api_version_and_kind() {
    let template = json!({"metadata": {}, "spec": {"containers": []}});
    let selector = json!({"matchLabels": {"app": "w"}});
    let cloneset = json!({"replicas": 5, "selector": selector, "template": template});
    let deployment = json!({"replicas": 3, "selector": selector, "template": template});
    let cases: &[(&str, &str, &str, Value, i32)] = &[
        (
            "v1alpha1 CloneSet",
            "apps.kruise.io/v1alpha1",
            "CloneSet",
            cloneset.clone(),
            5,
        ),
        // OpenKruise has only v1alpha1 CloneSets; kruise-rs stores v1beta1 (README, deviations).
        (
            "v1beta1 CloneSet",
            "apps.kruise.io/v1beta1",
            "CloneSet",
            cloneset,
            5,
        ),
        ("Deployment", "apps/v1", "Deployment", deployment.clone(), 3),
        (
            "Deployment, replicas defaulted",
            "apps/v1",
            "Deployment",
            json!({"selector": selector, "template": template}),
            1,
        ),
        ("ReplicaSet", "apps/v1", "ReplicaSet", deployment.clone(), 3),
        (
            "StatefulSet",
            "apps/v1",
            "StatefulSet",
            json!({"replicas": 4, "selector": selector, "template": template, "serviceName": "s"}),
            4,
        ),
        (
            "Job",
            "batch/v1",
            "Job",
            json!({"parallelism": 6, "template": template}),
            6,
        ),
        (
            "Job, parallelism defaulted",
            "batch/v1",
            "Job",
            json!({"template": template}),
            1,
        ),
        (
            "Advanced StatefulSet v1beta1",
            "apps.kruise.io/v1beta1",
            "StatefulSet",
            json!({"replicas": 7}),
            7,
        ),
        (
            "Advanced StatefulSet v1alpha1",
            "apps.kruise.io/v1alpha1",
            "StatefulSet",
            json!({"replicas": 8}),
            8,
        ),
        (
            "Advanced StatefulSet, replicas defaulted",
            "apps.kruise.io/v1beta1",
            "StatefulSet",
            json!({}),
            1,
        ),
        (
            "unknown kind",
            "example.com/v1",
            "Game",
            json!({"replicas": 9}),
            0,
        ),
        ("DaemonSet", "apps/v1", "DaemonSet", json!({"replicas": 9}), 0),
    ];
    for (name, api_version, kind, spec, want) in cases {
        let view = view_with(api_version, kind, spec.clone());
        let got = workload_replicas(&view, &spread(api_version, kind, json!("50%"), &[]), "ns");
        assert_eq!(got, Ok(*want), "{name}");
    }
}

#[test]
fn nothing_is_read_without_a_percent_subset_a_target_or_the_workload() {
    let view = view_with("apps.kruise.io/v1alpha1", "StatefulSet", json!({"replicas": 7}));
    let absolute = spread("apps.kruise.io/v1alpha1", "StatefulSet", json!(3), &[]);
    assert_eq!(workload_replicas(&view, &absolute, "ns"), Ok(0));
    let percent = spread("apps.kruise.io/v1alpha1", "StatefulSet", json!("30%"), &[]);
    assert_eq!(workload_replicas(&view, &percent, "other"), Ok(0), "not found");
    let mut untargeted = percent;
    untargeted.spec.target_reference = None;
    assert_eq!(workload_replicas(&view, &untargeted, "ns"), Ok(0));
}

/// apiVersion, kind, replicasPathList, the expected count.
type PathCase = (
    &'static str,
    &'static str,
    &'static [&'static str],
    Result<i32, ReplicasPathError>,
);

#[test]
fn a_replicas_path_list_is_summed_for_any_kind() {
    let spec = json!({"replicas": 2, "shards": [{"replicas": 3}, {"replicas": 4}]});
    let cases: &[PathCase] = &[
        (
            "example.com/v1",
            "Game",
            &["spec.replicas", "spec.shards.1.replicas"],
            Ok(6),
        ),
        // A registered kind is read typed (fields its type lacks are gone); an empty path adds nothing.
        (
            "apps.kruise.io/v1beta1",
            "StatefulSet",
            &["spec.replicas", ""],
            Ok(2),
        ),
        (
            "example.com/v1",
            "Game",
            &["spec.missing"],
            Err(ReplicasPathError::Missing("missing".into())),
        ),
        (
            "example.com/v1",
            "Game",
            &["spec.shards.2.replicas"],
            Err(ReplicasPathError::OutOfRange(2)),
        ),
        (
            "example.com/v1",
            "Game",
            &["spec.shards.-1"],
            Err(ReplicasPathError::OutOfRange(-1)),
        ),
        (
            "example.com/v1",
            "Game",
            &["spec.shards.x"],
            Err(ReplicasPathError::BadIndex(
                "strconv.Atoi: parsing \"x\": invalid syntax".into(),
            )),
        ),
        (
            "example.com/v1",
            "Game",
            &["spec.replicas.x"],
            Err(ReplicasPathError::NotDeepEnough),
        ),
        (
            "example.com/v1",
            "Game",
            &["spec.shards"],
            Err(ReplicasPathError::NotAnInteger),
        ),
    ];
    for (api_version, kind, paths, want) in cases {
        let view = view_with(api_version, kind, spec.clone());
        let got = workload_replicas(&view, &spread(api_version, kind, json!("50%"), paths), "ns");
        assert_eq!(&got, want, "{api_version} {kind} {paths:?}");
    }
    let beta_cloneset = json!({"replicas": 5, "selector": {"matchLabels": {"app": "w"}},
        "template": {"metadata": {}, "spec": {"containers": []}}});
    let view = view_with("apps.kruise.io/v1beta1", "CloneSet", beta_cloneset);
    let ws = spread(
        "apps.kruise.io/v1beta1",
        "CloneSet",
        json!("50%"),
        &["spec.replicas"],
    );
    assert_eq!(
        workload_replicas(&view, &ws, "ns"),
        Ok(5),
        "replicasPathList read before spec.replicas"
    );
}

#[test]
fn path_sums_wrap_like_int32() {
    let view = view_with(
        "example.com/v1",
        "Game",
        json!({"a": i32::MAX, "b": 2, "c": 4_294_967_298_i64}),
    );
    let ws = spread("example.com/v1", "Game", json!("50%"), &["spec.a", "spec.b"]);
    assert_eq!(workload_replicas(&view, &ws, "ns"), Ok(i32::MIN + 1));
    let narrowed = spread("example.com/v1", "Game", json!("50%"), &["spec.c"]);
    assert_eq!(workload_replicas(&view, &narrowed, "ns"), Ok(2));
}
