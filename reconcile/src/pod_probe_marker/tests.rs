use serde_json::{Value, json};

use super::*;

fn ppm(extra_meta: Value, probes: Value) -> PodProbeMarker {
    let mut meta = json!({"name": "m", "namespace": "shop", "generation": 2,
        "finalizers": [POD_PROBE_MARKER_FINALIZER]});
    for (k, v) in extra_meta.as_object().unwrap() {
        meta[k] = v.clone();
    }
    serde_json::from_value(
        json!({"apiVersion": "apps.kruise.io/v1alpha1", "kind": "PodProbeMarker",
        "metadata": meta, "spec": {"selector": {"matchLabels": {"app": "web"}}, "probes": probes}}),
    )
    .unwrap()
}

fn exec_probe() -> Value {
    json!([{"name": "ready", "containerName": "main", "probe": {"exec": {"command": ["true"]}},
        "podConditionType": "c"}])
}

fn pod(name: &str, uid: &str, node: &str, app: &str, initialized: bool) -> PodRecord {
    serde_json::from_value(json!({"metadata": {"name": name, "namespace": "shop", "uid": uid,
            "labels": {"app": app}},
        "spec": {"nodeName": node, "containers": [{"name": "main", "ports": [{"name": "http", "containerPort": 8080}]}]},
        "status": {"phase": "Running", "podIP": format!("10.0.0.{}", uid.len()),
            "conditions": [{"type": "Initialized", "status": if initialized {"True"} else {"False"}}]}}))
    .unwrap()
}

fn npp(node: &str, pod_probes: Value) -> NodePodProbe {
    serde_json::from_value(
        json!({"apiVersion": "apps.kruise.io/v1alpha1", "kind": "NodePodProbe",
        "metadata": {"name": node, "resourceVersion": "7"}, "spec": {"podProbes": pod_probes}}),
    )
    .unwrap()
}

fn run(ppm: &PodProbeMarker, pods: &[PodRecord], npps: &[NodePodProbe]) -> Plan {
    run_serverless(ppm, pods, npps, None)
}

fn run_serverless(
    ppm: &PodProbeMarker,
    pods: &[PodRecord],
    npps: &[NodePodProbe],
    serverless_nodes: Option<&BTreeSet<String>>,
) -> Plan {
    let pods: Vec<&PodRecord> = pods.iter().collect();
    let npps: Vec<&NodePodProbe> = npps.iter().collect();
    plan(&Input {
        ppm,
        pods: &pods,
        node_pod_probes: &npps,
        serverless_nodes,
    })
}

fn spec_json(w: &SpecWrite) -> Value {
    serde_json::to_value(&w.spec).unwrap()
}

#[test]
fn the_finalizer_comes_first() {
    let m = ppm(json!({"finalizers": null}), exec_probe());
    let got = run(&m, &[pod("a", "u1", "n1", "web", true)], &[npp("n1", json!([]))]);
    assert_eq!(
        got,
        Plan {
            finalizer: Some(true),
            ..Plan::default()
        }
    );
}

#[test]
fn matched_pods_are_placed_on_their_nodes_nodes_without_a_node_pod_probe_are_skipped() {
    let m = ppm(json!({}), exec_probe());
    let pods = [
        pod("a", "u1", "n1", "web", true),
        pod("b", "u22", "n2", "web", true),
        pod("c", "u333", "n1", "db", true),
        pod("d", "u4444", "n1", "web", false),
    ];
    let got = run(&m, &pods, &[npp("n1", json!([]))]);
    assert_eq!(got.writes.len(), 1);
    assert_eq!(got.writes[0].name, "n1");
    assert_eq!(got.writes[0].resource_version.as_deref(), Some("7"));
    assert_eq!(
        spec_json(&got.writes[0]),
        json!({"podProbes": [{"name": "a", "namespace": "shop", "uid": "u1", "IP": "10.0.0.2",
            "probes": [{"name": "m#ready", "containerName": "main", "probe": {"exec": {"command": ["true"]}}}]}]})
    );
    // a on n1 and b on n2 match (n2 has no NodePodProbe yet); c has other labels, d is not initialised.
    let status = got.status.unwrap();
    assert_eq!((status.observed_generation, status.matched_pods), (2, 2));
}

#[test]
fn named_ports_are_resolved_and_an_unknown_name_skips_the_probe() {
    let m = ppm(
        json!({}),
        json!([
            {"name": "http", "containerName": "main", "probe": {"httpGet": {"path": "/", "port": "http"}}, "podConditionType": "h"},
            {"name": "tcp", "containerName": "main", "probe": {"tcpSocket": {"port": "nope"}}, "podConditionType": "t"}
        ]),
    );
    let got = run(&m, &[pod("a", "u1", "n1", "web", true)], &[npp("n1", json!([]))]);
    let spec = spec_json(&got.writes[0]);
    assert_eq!(
        spec["podProbes"][0]["probes"],
        json!([{"name": "m#http", "containerName": "main", "probe": {"httpGet": {"path": "/", "port": 8080}}}])
    );
}

#[test]
fn an_up_to_date_node_pod_probe_and_status_write_nothing() {
    let mut m = ppm(json!({}), exec_probe());
    m.status = Some(PodProbeMarkerStatus {
        observed_generation: 2,
        matched_pods: 1,
    });
    let current = npp(
        "n1",
        json!([{"name": "a", "namespace": "shop", "uid": "u1", "IP": "10.0.0.2",
        "probes": [{"name": "m#ready", "containerName": "main", "probe": {"exec": {"command": ["true"]}}}]}]),
    );
    assert_eq!(
        run(&m, &[pod("a", "u1", "n1", "web", true)], &[current]),
        Plan::default()
    );
}

#[test]
fn other_markers_probes_stay_and_stale_ones_of_this_marker_go() {
    let m = ppm(json!({}), exec_probe());
    let current = npp(
        "n1",
        json!([
            {"name": "a", "namespace": "shop", "uid": "u1", "IP": "10.0.0.2", "probes": [
                {"name": "other#x", "containerName": "main", "probe": {"exec": {"command": ["x"]}}},
                {"name": "m#removed", "containerName": "main", "probe": {"exec": {"command": ["y"]}}}]},
            {"name": "gone-from-selector", "namespace": "shop", "uid": "u9", "IP": "10.0.0.9", "probes": [
                {"name": "m#ready", "containerName": "main", "probe": {"exec": {"command": ["true"]}}}]},
            {"name": "same-name-other-ns", "namespace": "else", "uid": "u8", "IP": "10.0.0.8", "probes": [
                {"name": "m#ready", "containerName": "main", "probe": {"exec": {"command": ["true"]}}}]}
        ]),
    );
    let got = run(&m, &[pod("a", "u1", "n1", "web", true)], &[current]);
    let spec = spec_json(&got.writes[0]);
    let names: Vec<(String, Vec<String>)> = spec["podProbes"]
        .as_array()
        .unwrap()
        .iter()
        .map(|p| {
            (
                format!(
                    "{}/{}",
                    p["namespace"].as_str().unwrap(),
                    p["name"].as_str().unwrap()
                ),
                p["probes"]
                    .as_array()
                    .unwrap()
                    .iter()
                    .map(|c| c["name"].as_str().unwrap().to_string())
                    .collect(),
            )
        })
        .collect();
    assert_eq!(
        names,
        [
            (
                "shop/a".to_string(),
                vec!["other#x".to_string(), "m#ready".to_string()]
            ),
            ("else/same-name-other-ns".to_string(), vec!["m#ready".to_string()]),
        ]
    );
}

#[test]
fn deletion_clears_every_node_pod_probe_then_drops_the_finalizer() {
    let deleting = json!({"deletionTimestamp": "2026-01-01T00:00:00Z"});
    let m = ppm(deleting.clone(), exec_probe());
    let current = npp(
        "n1",
        json!([{"name": "a", "namespace": "shop", "uid": "u1", "IP": "10.0.0.2", "probes": [
            {"name": "m#ready", "containerName": "main", "probe": {"exec": {"command": ["true"]}}}]}]),
    );
    let got = run(&m, &[pod("a", "u1", "n1", "web", true)], &[current]);
    assert_eq!(got.finalizer, None);
    assert_eq!(spec_json(&got.writes[0]), json!({}));
    let cleared = npp("n1", json!([]));
    let got = run(&m, &[pod("a", "u1", "n1", "web", true)], &[cleared]);
    assert_eq!(
        got,
        Plan {
            finalizer: Some(false),
            ..Plan::default()
        }
    );
    let gone = ppm(
        json!({"deletionTimestamp": "2026-01-01T00:00:00Z", "finalizers": null}),
        exec_probe(),
    );
    assert_eq!(run(&gone, &[], &[]), Plan::default());
}

#[test]
fn probe_names_belong_to_their_marker() {
    assert!(owned_by("m#ready", "m"));
    assert!(!owned_by("mm#ready", "m"));
    assert!(!owned_by("m", "m"));
}

#[test]
fn serverless_pods_are_marked_from_their_conditions_and_kept_out_of_node_pod_probes() {
    let probes = json!([
        {"name": "ready", "containerName": "main", "probe": {"exec": {"command": ["true"]}},
         "podConditionType": "example.com/ready", "markerPolicy": [
            {"state": "Succeeded", "labels": {"serving": "true"}, "annotations": {"probed": "ok"}},
            {"state": "Failed", "labels": {"serving": "false"}}]},
        {"name": "warm", "containerName": "main", "probe": {"exec": {"command": ["true"]}},
         "podConditionType": "example.com/warm", "markerPolicy": [
            {"state": "Succeeded", "labels": {"warm": "yes"}}]}]);
    let m = ppm(json!({}), probes);
    let with_conditions = |name: &str, uid: &str, node: &str, conditions: Value, labels: Value| {
        let mut p = serde_json::to_value(pod(name, uid, node, "web", true)).unwrap();
        for c in conditions.as_array().unwrap() {
            p["status"]["conditions"].as_array_mut().unwrap().push(c.clone());
        }
        for (k, v) in labels.as_object().unwrap() {
            p["metadata"]["labels"][k] = v.clone();
        }
        serde_json::from_value::<PodRecord>(p).unwrap()
    };
    let pods = [
        // True: the Succeeded policy; no condition for "warm": nothing for it.
        with_conditions(
            "a",
            "u1",
            "vk",
            json!([{"type": "example.com/ready", "status": "True"}]),
            json!({"serving": "false"}),
        ),
        // False: the Failed policy, the Succeeded annotation taken away.
        with_conditions(
            "b",
            "u22",
            "vk",
            json!([{"type": "example.com/ready", "status": "False"},
            {"type": "example.com/warm", "status": "Unknown"}]),
            json!({}),
        ),
        // Already marked as its condition says: nothing to write.
        with_conditions(
            "c",
            "u333",
            "vk",
            json!([{"type": "example.com/ready", "status": "False"}]),
            json!({"serving": "false"}),
        ),
        // A pod of a node with an agent: into that node's NodePodProbe.
        pod("d", "u4444", "n1", "web", true),
    ];
    let virtual_nodes: BTreeSet<String> = ["vk".to_string()].into();
    let got = run_serverless(
        &m,
        &pods,
        &[npp("n1", json!([])), npp("vk", json!([]))],
        Some(&virtual_nodes),
    );
    let marked: Vec<(&str, &Marks)> = got.pods.iter().map(|p| (p.name.as_str(), &p.marks)).collect();
    let a = Marks {
        labels: [("serving".to_string(), Some("true".to_string()))].into(),
        annotations: [("probed".to_string(), Some("ok".to_string()))].into(),
        ..Marks::default()
    };
    let b = Marks {
        labels: [("serving".to_string(), Some("false".to_string()))].into(),
        annotations: [("probed".to_string(), None)].into(),
        ..Marks::default()
    };
    assert_eq!(marked, [("a", &a), ("b", &b)]);
    assert_eq!(
        got.writes.len(),
        1,
        "only n1's NodePodProbe changes: {:?}",
        got.writes
    );
    assert_eq!(got.writes[0].name, "n1");
    assert_eq!(got.status.unwrap().matched_pods, 4);
    // Serverless marking off: the virtual node's pods are probed like any other (by its NodePodProbe).
    let off = run(&m, &pods, &[npp("vk", json!([]))]);
    assert!(off.pods.is_empty());
    assert_eq!(
        spec_json(&off.writes[0])["podProbes"].as_array().unwrap().len(),
        3
    );
}
