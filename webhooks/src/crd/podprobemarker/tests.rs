use kruise_core::view::MemoryView;
use serde_json::{Value, json};

use super::*;

fn ppm(spec: Value) -> Value {
    json!({"apiVersion": "apps.kruise.io/v1alpha1", "kind": "PodProbeMarker",
        "metadata": {"name": "m", "namespace": "shop"}, "spec": spec})
}

fn good_probe() -> Value {
    json!({"name": "healthy", "containerName": "main",
        "probe": {"exec": {"command": ["test", "-f", "/tmp/ready"]}, "periodSeconds": 2},
        "podConditionType": "example.com/healthy",
        "markerPolicy": [{"state": "Succeeded", "labels": {"serving": "true"}},
                         {"state": "Failed", "annotations": {"serving": "false"}}]})
}

fn good() -> Value {
    ppm(json!({"selector": {"matchLabels": {"app": "web"}}, "probes": [good_probe()]}))
}

fn request(operation: &str, object: &Value, old: Option<&Value>) -> AdmissionRequest {
    let mut review = json!({"uid": "1", "operation": operation, "name": "m", "namespace": "shop",
        "kind": {"group": "apps.kruise.io", "version": "v1alpha1", "kind": "PodProbeMarker"},
        "resource": {"group": "apps.kruise.io", "version": "v1alpha1", "resource": "podprobemarkers"},
        "userInfo": {"username": "u"}, "object": object});
    if let Some(old) = old {
        review["oldObject"] = old.clone();
    }
    serde_json::from_value(review).unwrap()
}

/// The denial's code and message, or `Ok` when allowed.
fn judge(object: &Value, old: Option<&Value>, settings: &Settings) -> Result<(), (u16, String)> {
    let op = if old.is_some() { "UPDATE" } else { "CREATE" };
    let d = validate(&request(op, object, old), &MemoryView::default(), settings);
    match d.denial {
        Some(denial) => Err((denial.code, denial.message)),
        None => Ok(()),
    }
}

fn create(object: &Value) -> Result<(), (u16, String)> {
    judge(object, None, &Settings::default())
}

fn with_probe(edit: impl FnOnce(&mut Value)) -> Value {
    let mut object = good();
    edit(&mut object["spec"]["probes"][0]);
    object
}

#[test]
fn a_valid_marker_is_allowed() {
    assert_eq!(create(&good()), Ok(()));
    let http = with_probe(|p| {
        p["probe"] = json!({"httpGet": {"path": "/healthz", "port": "http", "scheme": "HTTPS"}})
    });
    assert_eq!(create(&http), Ok(()));
    let tcp = with_probe(|p| p["probe"] = json!({"tcpSocket": {"port": 8080}}));
    assert_eq!(create(&tcp), Ok(()));
    let only_condition = with_probe(|p| {
        p.as_object_mut().unwrap().remove("markerPolicy");
    });
    assert_eq!(create(&only_condition), Ok(()));
}

#[test]
fn each_gate_off_is_forbidden() {
    for gate in [Gate::PodProbeMarkerGate, Gate::KruiseDaemon] {
        let settings = Settings::default().with(gate, false);
        let (code, message) = judge(&good(), None, &settings).unwrap_err();
        assert_eq!(code, 403);
        // KruiseDaemon off also turns PodProbeMarkerGate off (OpenKruise's gate dependency).
        assert_eq!(
            message,
            "feature-gate PodProbeMarkerGate is not enabled",
            "{}",
            gate.name()
        );
    }
}

#[test]
fn selector_must_be_present_non_empty_and_valid() {
    let mut none = good();
    none["spec"].as_object_mut().unwrap().remove("selector");
    let (code, message) = create(&none).unwrap_err();
    assert_eq!(code, 422);
    assert!(message.contains("spec.selector: Required value"), "{message}");
    let mut empty = good();
    empty["spec"]["selector"] = json!({});
    assert!(
        create(&empty)
            .unwrap_err()
            .1
            .contains("empty selector is not valid")
    );
    let mut bad = good();
    bad["spec"]["selector"] = json!({"matchExpressions": [{"key": "app", "operator": "Near"}]});
    let message = create(&bad).unwrap_err().1;
    assert!(
        message.contains("spec.selector.matchExpressions[0].operator"),
        "{message}"
    );
}

#[test]
fn probe_names_are_checked_with_their_paths() {
    for (name, expect) in [
        ("", "spec.probes[0].name: Required value"),
        (
            "a#b",
            "spec.probes[0].name: Invalid value: \"a#b\": must not contain '#'",
        ),
        (
            "Ready",
            "spec.probes[0].name: Invalid value: \"Ready\": must not be a built-in pod condition type",
        ),
        ("KruisePodReady", "built-in pod condition"),
    ] {
        let object = with_probe(|p| p["name"] = json!(name));
        let message = create(&object).unwrap_err().1;
        assert!(message.contains(expect), "{name}: {message}");
    }
    let mut twice = good();
    let mut second = good_probe();
    second["podConditionType"] = json!("other");
    twice["spec"]["probes"] = json!([good_probe(), second]);
    let message = create(&twice).unwrap_err().1;
    assert!(
        message.contains("spec.probes[1].name: Duplicate value: \"healthy\""),
        "{message}"
    );
    let no_container = with_probe(|p| p["containerName"] = json!(""));
    assert!(
        create(&no_container)
            .unwrap_err()
            .1
            .contains("spec.probes[0].containerName: Required value")
    );
}

#[test]
fn exactly_one_valid_handler() {
    let cases = [
        (
            json!({}),
            "spec.probes[0].probe: Required value: must specify a handler type",
        ),
        (
            json!({"exec": {"command": []}}),
            "spec.probes[0].probe.exec.command: Required value",
        ),
        (
            json!({"exec": {"command": ["true"]}, "tcpSocket": {"port": 80}}),
            "spec.probes[0].probe.tcpSocket: Forbidden: may not specify more than 1 handler type",
        ),
        (
            json!({"httpGet": {"port": 80}}),
            "spec.probes[0].probe.httpGet.path: Required value",
        ),
        (
            json!({"httpGet": {"path": "/x", "port": 80, "host": "example.com"}}),
            "spec.probes[0].probe.httpGet.host: Invalid value: \"example.com\": host field in probes is not allowed",
        ),
        (
            json!({"tcpSocket": {"port": 80, "host": "10.0.0.1"}}),
            "spec.probes[0].probe.tcpSocket.host: Invalid value",
        ),
        (
            json!({"tcpSocket": {"port": 70000}}),
            "spec.probes[0].probe.tcpSocket.port: Invalid value: 70000: must be between 1 and 65535",
        ),
        (
            json!({"httpGet": {"path": "/x", "port": "Not_A_Name"}}),
            "spec.probes[0].probe.httpGet.port: Invalid value: \"Not_A_Name\"",
        ),
        (
            json!({"httpGet": {"path": "/x", "port": 80, "scheme": "FTP"}}),
            "spec.probes[0].probe.httpGet.scheme: Unsupported value: \"FTP\"",
        ),
        (
            json!({"exec": {"command": ["true"]}, "periodSeconds": -1}),
            "spec.probes[0].probe.periodSeconds: Invalid value: -1",
        ),
    ];
    for (probe, expect) in cases {
        let object = with_probe(|p| p["probe"] = probe.clone());
        let (code, message) = create(&object).unwrap_err();
        assert_eq!(code, 422, "{probe}");
        assert!(message.contains(expect), "{probe}: {message}");
    }
}

#[test]
fn condition_and_marker_policies_are_checked() {
    let neither = with_probe(|p| {
        let p = p.as_object_mut().unwrap();
        p.remove("markerPolicy");
        p.remove("podConditionType");
    });
    assert!(create(&neither).unwrap_err().1.contains(
        "spec.probes[0]: Required value: podConditionType and markerPolicy cannot be empty at the same time"
    ));
    let bad_condition = with_probe(|p| p["podConditionType"] = json!("not a label"));
    assert!(
        create(&bad_condition)
            .unwrap_err()
            .1
            .contains("spec.probes[0].podConditionType: Invalid value")
    );
    let mut same_condition = good();
    let mut second = good_probe();
    second["name"] = json!("other");
    same_condition["spec"]["probes"] = json!([good_probe(), second]);
    assert!(
        create(&same_condition)
            .unwrap_err()
            .1
            .contains("spec.probes[1].podConditionType: Duplicate value: \"example.com/healthy\"")
    );
    let twice = with_probe(|p| {
        p["markerPolicy"] =
            json!([{"state": "Failed", "labels": {"a": "b"}}, {"state": "Failed", "labels": {"a": "c"}}])
    });
    assert!(
        create(&twice)
            .unwrap_err()
            .1
            .contains("spec.probes[0].markerPolicy[1].state: Duplicate value: \"Failed\"")
    );
    let unknown = with_probe(|p| p["markerPolicy"] = json!([{"state": "Unknown", "labels": {"a": "b"}}]));
    assert!(
        create(&unknown)
            .unwrap_err()
            .1
            .contains("spec.probes[0].markerPolicy[0].state: Unsupported value: \"Unknown\"")
    );
    let empty = with_probe(|p| p["markerPolicy"] = json!([{"state": "Succeeded"}]));
    assert!(
        create(&empty)
            .unwrap_err()
            .1
            .contains("spec.probes[0].markerPolicy[0]: Required value")
    );
    let bad_label =
        with_probe(|p| p["markerPolicy"] = json!([{"state": "Succeeded", "labels": {"a": "not valid!"}}]));
    assert!(
        create(&bad_label)
            .unwrap_err()
            .1
            .contains("spec.probes[0].markerPolicy[0].labels: Invalid value")
    );
}

#[test]
fn every_error_is_reported_not_only_the_first() {
    let object = ppm(json!({"selector": {"matchLabels": {"app": "web"}},
        "probes": [{"name": "a#", "containerName": "", "probe": {}}]}));
    let message = create(&object).unwrap_err().1;
    for part in [
        "probes[0].name",
        "probes[0].containerName",
        "probes[0].probe",
        "probes[0]: Required",
    ] {
        assert!(message.contains(part), "{part}: {message}");
    }
}

#[test]
fn selector_is_immutable_but_probes_may_change() {
    let mut changed = good();
    changed["spec"]["selector"] = json!({"matchLabels": {"app": "db"}});
    let (code, message) = judge(&changed, Some(&good()), &Settings::default()).unwrap_err();
    assert_eq!(code, 422);
    assert!(message.contains("spec.selector: Invalid value"), "{message}");
    assert!(message.contains("selector must be immutable"), "{message}");
    let mut probes = good();
    probes["spec"]["probes"][0]["probe"]["periodSeconds"] = json!(10);
    assert_eq!(judge(&probes, Some(&good()), &Settings::default()), Ok(()));
}

#[test]
fn delete_and_status_are_not_judged() {
    let mut r = request("DELETE", &good(), None);
    r.object = None;
    assert!(validate(&r, &MemoryView::default(), &Settings::default()).allowed());
}
