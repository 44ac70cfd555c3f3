//! The last step of `/mutate-pod`: with gate `EnablePodProbeMarkerOnServerless`, the probes of the
//! PodProbeMarkers selecting a pod are listed on it for a serverless provider, through the whole
//! pipeline, with the patch applied to the pod as the apiserver sent it.

use crate::common;

use common::pod_mutate::{create_request, patched, view_of};
use kruise_core::{Gate, Settings};
use kruise_webhooks::pod_mutate;
use serde_json::{Value, json};

fn marker(name: &str, app: &str, probes: Value) -> Value {
    json!({"apiVersion": "apps.kruise.io/v1alpha1", "kind": "PodProbeMarker",
        "metadata": {"name": name, "namespace": "prod"},
        "spec": {"selector": {"matchLabels": {"app": app}}, "probes": probes}})
}

fn probe(name: &str, container: &str, condition: &str) -> Value {
    json!({"name": name, "containerName": container, "podConditionType": condition,
        "probe": {"exec": {"command": ["true"]}, "periodSeconds": 5},
        "markerPolicy": [{"state": "Succeeded", "labels": {"ok": "true"}}]})
}

fn pod(annotations: Value) -> Value {
    json!({"apiVersion": "v1", "kind": "Pod",
        "metadata": {"name": "web-0", "namespace": "prod", "labels": {"app": "web"}, "annotations": annotations},
        "spec": {"containers": [{"name": "main", "image": "nginx:1.25"}],
            "initContainers": [{"name": "log", "image": "log:1", "restartPolicy": "Always"},
                {"name": "setup", "image": "setup:1"}]}})
}

fn mutate(objects: &[Value], pod: &Value, serverless: bool) -> Value {
    let view = view_of(objects);
    let request = create_request(pod, "prod");
    let settings = Settings::default().with(Gate::EnablePodProbeMarkerOnServerless, serverless);
    let decision = pod_mutate::mutate(&request, &view, &settings);
    assert!(decision.allowed(), "{:?}", decision.denial);
    patched(&request, &decision)
}

#[test]
fn the_selecting_markers_probes_are_listed_for_a_serverless_provider() {
    let objects = [
        marker(
            "b-first",
            "web",
            json!([
                probe("ready", "main", "example.com/ready"),
                probe("sidecar", "log", "example.com/log"),
                probe("init", "setup", "example.com/setup"),
                probe("nocondition", "main", "")
            ]),
        ),
        marker(
            "a-second",
            "web",
            json!([
                probe("ready", "main", "example.com/other"),
                probe("again", "main", "example.com/ready"),
                probe("warm", "main", "example.com/warm")
            ]),
        ),
        marker(
            "c-other-app",
            "db",
            json!([probe("db", "main", "example.com/db")]),
        ),
    ];
    let out = mutate(&objects, &pod(json!({})), true);
    let annotations = &out["metadata"]["annotations"];
    let listed: Value = serde_json::from_str(annotations["kruise.io/podprobe"].as_str().unwrap()).unwrap();
    let keys: Vec<(String, String)> = listed
        .as_array()
        .unwrap()
        .iter()
        .map(|p| {
            (
                p["name"].as_str().unwrap().into(),
                p["podConditionType"].as_str().unwrap().into(),
            )
        })
        .collect();
    // Markers in name order (a-second first); a container/probe name (b-first's main/ready) or a
    // condition type (b-first's example.com/ready) seen before is skipped; a plain init container, an
    // empty condition and another app's marker are not listed.
    assert_eq!(
        keys,
        [
            ("ready", "example.com/other"),
            ("again", "example.com/ready"),
            ("warm", "example.com/warm"),
            ("sidecar", "example.com/log")
        ]
        .map(|(a, b)| (a.to_string(), b.to_string()))
    );
    assert!(listed[0].get("markerPolicy").is_none(), "{listed}");
    assert_eq!(listed[0]["probe"]["periodSeconds"], 5);
    assert_eq!(annotations["kruise.io/podprobemarker-list"], "a-second,b-first");

    // Gate off (the default): nothing.
    let off = mutate(&objects, &pod(json!({})), false);
    assert!(
        off["metadata"]["annotations"].get("kruise.io/podprobe").is_none(),
        "{off}"
    );
    // Markers named on the pod are used instead of the selector; a missing one is skipped.
    let named = mutate(
        &objects,
        &pod(json!({"kruise.io/podprobemarker-list": "c-other-app,gone"})),
        true,
    );
    let listed: Value = serde_json::from_str(
        named["metadata"]["annotations"]["kruise.io/podprobe"]
            .as_str()
            .unwrap(),
    )
    .unwrap();
    assert_eq!(listed[0]["podConditionType"], "example.com/db");
    assert_eq!(
        named["metadata"]["annotations"]["kruise.io/podprobemarker-list"],
        "c-other-app"
    );
}
