//! Table tests for v1alpha1 <-> v1beta1 conversion, written as the YAML users apply.

use kruise_api::{ConversionError, convert_object};
use serde_json::{Value, json};

mod cloneset;
mod containerrecreaterequest;
mod daemonset;
mod imagepull;
mod persistentpodstate;
mod pub_budget;
mod resourcedistribution;
mod sidecarset;
mod uniteddeployment;
mod workloadspread;

fn yaml(s: &str) -> Value {
    serde_saphyr::from_str(s).expect("test YAML parses")
}

fn convert(object: &Value, to: &str) -> Value {
    convert_object(object, to).unwrap_or_else(|e| panic!("conversion to {to} failed: {e}"))
}

struct Case {
    name: &'static str,
    from: &'static str,
    to_version: &'static str,
    expected: &'static str,
    /// Whether converting `expected` back gives `from` exactly.
    round_trips: bool,
}

fn run(cases: &[Case]) {
    for case in cases {
        let from = yaml(case.from);
        let expected = yaml(case.expected);
        let group = from["apiVersion"]
            .as_str()
            .unwrap()
            .split('/')
            .next()
            .unwrap()
            .to_string();
        let got = convert(&from, &format!("{group}/{}", case.to_version));
        assert_eq!(got, expected, "case {:?}: forward conversion", case.name);
        if case.round_trips {
            let back_version = from["apiVersion"].as_str().unwrap();
            let back = convert(&got, back_version);
            assert_eq!(back, from, "case {:?}: round trip", case.name);
        }
    }
}

#[test]
fn same_version_is_returned_unchanged() {
    let obj = json!({"apiVersion": "apps.kruise.io/v1beta1", "kind": "CloneSet", "spec": {"weird": [1, 2]}, "x": null});
    assert_eq!(convert(&obj, "apps.kruise.io/v1beta1"), obj);
    assert_eq!(convert(&obj, "v1beta1"), obj);
}

#[test]
fn errors_for_unknown_kinds_and_versions() {
    let cs = |api: &str, kind: &str| json!({"apiVersion": api, "kind": kind, "metadata": {"name": "x"}});
    assert_eq!(
        convert_object(
            &cs("apps.kruise.io/v1alpha1", "EphemeralJob"),
            "apps.kruise.io/v1beta1"
        ),
        Err(ConversionError::UnknownKind {
            group: "apps.kruise.io".into(),
            kind: "EphemeralJob".into()
        })
    );
    assert_eq!(
        convert_object(&cs("apps/v1", "CloneSet"), "apps.kruise.io/v1beta1"),
        Err(ConversionError::UnknownKind {
            group: "apps".into(),
            kind: "CloneSet".into()
        })
    );
    assert_eq!(
        convert_object(&cs("apps.kruise.io/v1", "CloneSet"), "apps.kruise.io/v1beta1"),
        Err(ConversionError::UnsupportedVersion {
            kind: "CloneSet".into(),
            api_version: "apps.kruise.io/v1".into()
        })
    );
    assert_eq!(
        convert_object(&cs("apps.kruise.io/v1beta1", "CloneSet"), "apps.kruise.io/v2"),
        Err(ConversionError::UnsupportedVersion {
            kind: "CloneSet".into(),
            api_version: "apps.kruise.io/v2".into()
        })
    );
    assert_eq!(
        convert_object(
            &cs("apps.kruise.io/v1beta1", "CloneSet"),
            "policy.kruise.io/v1alpha1"
        ),
        Err(ConversionError::UnsupportedVersion {
            kind: "CloneSet".into(),
            api_version: "policy.kruise.io/v1alpha1".into()
        })
    );
    assert!(matches!(
        convert_object(&json!([1]), "v1beta1"),
        Err(ConversionError::NotAnObject(_))
    ));
    assert!(matches!(
        convert_object(&json!({"kind": "CloneSet"}), "v1beta1"),
        Err(ConversionError::NotAnObject(_))
    ));
    let bad_shape =
        json!({"apiVersion": "apps.kruise.io/v1alpha1", "kind": "CloneSet", "spec": {"updateStrategy": 3}});
    match convert_object(&bad_shape, "apps.kruise.io/v1beta1") {
        Err(ConversionError::Decode { path, .. }) => assert_eq!(path.as_deref(), Some("spec.updateStrategy")),
        other => panic!("unexpected {other:?}"),
    }
}

#[test]
fn typed_helpers_accept_either_version_and_report_paths() {
    let alpha = yaml(
        r#"
apiVersion: apps.kruise.io/v1alpha1
kind: SidecarSet
metadata: {name: s}
spec:
  namespace: demo
  selector: {matchLabels: {app: x}}
  containers:
  - name: sidecar
    image: busybox
    transferEnv: [{sourceContainerName: main, envName: TZ}]
"#,
    );
    let beta = kruise_api::sidecarset_to_v1beta1(&alpha).expect("typed v1beta1");
    let sel = beta
        .spec
        .namespace_selector
        .as_ref()
        .and_then(|s| s.match_labels.as_ref())
        .expect("selector");
    assert_eq!(
        sel.get("kubernetes.io/metadata.name").map(String::as_str),
        Some("demo")
    );
    let containers = beta.spec.containers.as_ref().expect("containers");
    assert_eq!(containers[0].name, "sidecar");
    assert_eq!(containers[0].image.as_deref(), Some("busybox"));
    let same = kruise_api::sidecarset_to_v1beta1(&serde_json::to_value(&beta).unwrap()).unwrap();
    assert_eq!(same, beta);
    let back = kruise_api::sidecarset_to_v1alpha1(&serde_json::to_value(&beta).unwrap()).unwrap();
    assert_eq!(back.spec.namespace, None);

    let bad = json!({
        "apiVersion": "apps.kruise.io/v1alpha1", "kind": "CloneSet", "metadata": {"name": "c"},
        "spec": {"replicas": "three", "selector": {}, "template": {}}
    });
    match kruise_api::cloneset_to_v1beta1(&bad) {
        Err(ConversionError::Decode { kind, path, .. }) => {
            assert_eq!(kind, "CloneSet");
            assert_eq!(path.as_deref(), Some("spec.replicas"));
        }
        other => panic!("unexpected {other:?}"),
    }
    assert!(matches!(
        kruise_api::workloadspread_to_v1beta1(&alpha),
        Err(ConversionError::WrongKind { .. })
    ));
}
