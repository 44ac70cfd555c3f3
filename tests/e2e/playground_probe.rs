//! PodProbeMarker end to end on a real runtime: `kruise playground --runtime containerd`, one
//! `kruise daemon` per simulated node on the same containerd, and the real kubectl. A marker with an
//! exec probe (`test -f /tmp/ready`) sets a pod condition and a label from its result: the file is
//! created and removed through CRI exec, and the condition and label follow both ways. The agent
//! announces each state change once (no event per write). Skips without containerd and root unless
//! `KRUISE_REQUIRE_CRI` is set.

use crate::common;
use common::agents::{CriPlayground, eventually, get};

use std::path::Path;
use std::time::Duration;

use common::kubectl::kubectl;
use kruise_cri::Runtime;
use serde_json::{Value, json};

const CONDITION: &str = "example.com/ready-file";

fn apply(k: &Path, object: &Value) -> Result<(), String> {
    let (success, _, err) = kubectl(k, &["apply", "-f", "-"], Some(&object.to_string()));
    if success { Ok(()) } else { Err(err) }
}

fn marker() -> Value {
    json!({"apiVersion": "apps.kruise.io/v1alpha1", "kind": "PodProbeMarker",
        "metadata": {"name": "ready-file", "namespace": "default"},
        "spec": {"selector": {"matchLabels": {"app": "web"}}, "probes": [{
            "name": "file", "containerName": "main",
            "probe": {"exec": {"command": ["sh", "-c", "test -f /tmp/ready"]}, "periodSeconds": 1,
                "initialDelaySeconds": 1, "timeoutSeconds": 2},
            "podConditionType": CONDITION,
            "markerPolicy": [
                {"state": "Succeeded", "labels": {"example.com/serving": "true"},
                 "annotations": {"example.com/probed": "ready"}},
                {"state": "Failed", "labels": {"example.com/serving": "false"}}]}]}})
}

/// The pod once its condition has `status` and its label `serving`.
fn marked(k: &Path, status: &str, serving: &str) -> Value {
    eventually(&format!("condition {status}, label {serving}"), 60, || {
        let pod = get(k, &["pod", "web"])?;
        let condition = pod["status"]["conditions"]
            .as_array()?
            .iter()
            .find(|c| c["type"] == CONDITION)?
            .clone();
        (condition["status"] == status && pod["metadata"]["labels"]["example.com/serving"] == serving)
            .then_some(pod)
    })
}

fn exec(rt: &tokio::runtime::Runtime, runtime: &Runtime, id: &str, cmd: &[&str]) {
    let out = rt
        .block_on(runtime.exec_sync(id, cmd, Duration::from_secs(5)))
        .unwrap();
    assert_eq!(
        out.exit_code,
        0,
        "{cmd:?}: {}",
        String::from_utf8_lossy(&out.stderr)
    );
}

/// Events of `reason` about the pod (each counted with its series).
fn events(k: &Path, reason: &str) -> u64 {
    let Some(list) = get(k, &["events.v1.events.k8s.io", "-n", "default"]) else {
        return 0;
    };
    list["items"]
        .as_array()
        .into_iter()
        .flatten()
        .filter(|e| e["reason"] == reason && e["regarding"]["name"] == "web")
        .map(|e| e["series"]["count"].as_u64().unwrap_or(1))
        .sum()
}

#[test]
fn an_exec_probe_flips_a_pod_condition_and_label_both_ways() {
    let Some(playground) = CriPlayground::start() else {
        return;
    };
    let (k, rt, runtime) = (playground.kubeconfig(), &playground.rt, &playground.runtime);
    let image = &playground.image;
    let pod = json!({"apiVersion": "v1", "kind": "Pod",
        "metadata": {"name": "web", "namespace": "default", "labels": {"app": "web"}},
        "spec": {"terminationGracePeriodSeconds": 1, "containers": [{"name": "main", "image": image}]}});
    apply(k, &pod).unwrap();
    let running = eventually("the pod to run", 60, || {
        let pod = get(k, &["pod", "web"])?;
        let main = &pod["status"]["containerStatuses"][0];
        (main["ready"] == true).then_some(pod)
    });
    let node = running["spec"]["nodeName"].as_str().unwrap().to_owned();
    let id = running["status"]["containerStatuses"][0]["containerID"]
        .as_str()
        .unwrap()
        .trim_start_matches("containerd://")
        .to_owned();

    // A marker the webhook refuses: a name with '#'.
    let mut bad = marker();
    bad["spec"]["probes"][0]["name"] = json!("a#b");
    let refused = apply(k, &bad).unwrap_err();
    assert!(refused.contains("spec.probes[0].name"), "{refused}");

    apply(k, &marker()).unwrap();
    let npp = eventually("the probe in the node's NodePodProbe", 60, || {
        let npp = get(k, &["nodepodprobes", &node])?;
        (npp["spec"]["podProbes"][0]["probes"][0]["name"] == "ready-file#file").then_some(npp)
    });
    assert_eq!(npp["spec"]["podProbes"][0]["name"], "web");
    let ppm = eventually("the marker's finalizer and status", 30, || {
        let ppm = get(k, &["podprobemarkers", "ready-file"])?;
        (ppm["status"]["matchedPods"] == 1).then_some(ppm)
    });
    assert_eq!(
        ppm["metadata"]["finalizers"],
        json!(["kruise.io/node-pod-probe-cleanup"])
    );

    // No file: Failed → condition False, the Failed label.
    let failed = marked(k, "False", "false");
    assert!(
        failed["metadata"]["annotations"]
            .get("example.com/probed")
            .is_none()
    );
    // The file appears: Succeeded → True, the Succeeded label and annotation.
    exec(rt, runtime, &id, &["touch", "/tmp/ready"]);
    let ok = marked(k, "True", "true");
    assert_eq!(ok["metadata"]["annotations"]["example.com/probed"], "ready");
    assert_eq!(ok["metadata"]["labels"]["app"], "web", "other labels stay");
    // And goes again: False, the Succeeded policy's annotation removed.
    exec(rt, runtime, &id, &["rm", "/tmp/ready"]);
    let again = marked(k, "False", "false");
    assert!(
        again["metadata"]["annotations"]
            .get("example.com/probed")
            .is_none(),
        "{again}"
    );
    // The NodePodProbe status holds the agent's result.
    let npp = get(k, &["nodepodprobes", &node]).unwrap();
    assert_eq!(
        npp["status"]["podProbeStatuses"][0]["probeStates"][0]["state"], "Failed",
        "{npp}"
    );
    // One event per change (Failed, Succeeded, Failed), not one per probe run or write.
    let succeeded = eventually("the Succeeded event", 30, || {
        let n = events(k, "KruiseProbeSucceeded");
        (n > 0).then_some(n)
    });
    assert_eq!(succeeded, 1);
    assert!(events(k, "KruiseProbeFailed") <= 2);

    // Deleting the marker takes its probe out of the NodePodProbe, then the finalizer lets it go.
    let (deleted, _, err) = kubectl(
        k,
        &["delete", "podprobemarker", "ready-file", "--wait=false"],
        None,
    );
    assert!(deleted, "{err}");
    eventually("the marker to go", 60, || {
        get(k, &["podprobemarkers", "ready-file"]).is_none().then_some(())
    });
    let npp = get(k, &["nodepodprobes", &node]).unwrap();
    assert!(
        npp["spec"].get("podProbes").is_none_or(|p| p == &json!([])),
        "{npp}"
    );
}

/// An httpGet and a tcpSocket probe, run by the agent from the node against the pod's IP (127.0.0.1 in
/// the playground's CRI mode: host-network sandboxes): busybox's httpd in the container answers 404 until
/// the probed file exists, so the HTTP condition goes False then True, while the TCP one is True as soon
/// as the port listens.
#[test]
fn http_and_tcp_probes_reach_the_pod_from_the_node() {
    let Some(playground) = CriPlayground::start() else {
        return;
    };
    let (k, rt, runtime) = (playground.kubeconfig(), &playground.rt, &playground.runtime);
    // Host network: a port of this machine, unlikely to be taken by a parallel test.
    let port = 20_000 + std::process::id() % 20_000;
    let serve = format!("mkdir -p /tmp/www && exec /bin/busybox httpd -f -p 127.0.0.1:{port} -h /tmp/www");
    let pod = json!({"apiVersion": "v1", "kind": "Pod",
        "metadata": {"name": "web", "namespace": "default", "labels": {"app": "web"}},
        "spec": {"terminationGracePeriodSeconds": 1, "containers": [{"name": "main",
            "image": playground.image, "command": ["/bin/sh", "-c", serve]}]}});
    apply(k, &pod).unwrap();
    let running = eventually("the pod to run", 60, || {
        let pod = get(k, &["pod", "web"])?;
        (pod["status"]["containerStatuses"][0]["ready"] == true).then_some(pod)
    });
    let id = running["status"]["containerStatuses"][0]["containerID"]
        .as_str()
        .unwrap()
        .trim_start_matches("containerd://")
        .to_owned();
    let probe = |name: &str, handler: Value, condition: &str| {
        let mut probe = json!({"periodSeconds": 1, "timeoutSeconds": 2});
        probe
            .as_object_mut()
            .unwrap()
            .extend(handler.as_object().unwrap().clone());
        json!({"name": name, "containerName": "main", "probe": probe, "podConditionType": condition})
    };
    let marker = json!({"apiVersion": "apps.kruise.io/v1alpha1", "kind": "PodProbeMarker",
        "metadata": {"name": "net", "namespace": "default"},
        "spec": {"selector": {"matchLabels": {"app": "web"}}, "probes": [
            probe("http", json!({"httpGet": {"path": "/ok", "port": port}}), "example.com/http"),
            probe("tcp", json!({"tcpSocket": {"port": port}}), "example.com/tcp")]}});
    apply(k, &marker).unwrap();
    let conditions = |want_http: &str, want_tcp: &str| {
        eventually(&format!("http {want_http}, tcp {want_tcp}"), 60, || {
            let pod = get(k, &["pod", "web"])?;
            let status = |t: &str| {
                pod["status"]["conditions"]
                    .as_array()
                    .and_then(|c| c.iter().find(|c| c["type"] == t))
                    .map(|c| c["status"].clone())
            };
            (status("example.com/http")? == want_http && status("example.com/tcp")? == want_tcp)
                .then_some(pod)
        })
    };
    conditions("False", "True");
    exec(
        rt,
        runtime,
        &id,
        &["/bin/busybox", "sh", "-c", "echo ok > /tmp/www/ok"],
    );
    conditions("True", "True");
}
