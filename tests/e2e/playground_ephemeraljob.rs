//! EphemeralJob end to end in `kruise playground`, driven with the real kubectl: the playground serves
//! `pods/ephemeralcontainers` and its simulated kubelet runs the injected containers (a `sleep`
//! command ends them); kruise-rs's EphemeralJob controller does the rest.

use crate::common;

use std::collections::BTreeMap;
use std::io::BufReader;
use std::path::Path;
use std::process::{Command, Stdio};
use std::sync::{Arc, Mutex};

use common::kubectl::{kubectl, ok, serve, wait_for};
use serde_json::{Value, json};

const PODS: &str = r#"{"apiVersion": "v1", "kind": "List", "items": [
  {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "web-1", "namespace": "default", "labels": {"app": "web"}},
   "spec": {"containers": [{"name": "web", "image": "nginx:1.27"}]}},
  {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "web-2", "namespace": "default", "labels": {"app": "web"}},
   "spec": {"containers": [{"name": "web", "image": "nginx:1.27"}]}},
  {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "web-3", "namespace": "default", "labels": {"app": "web"}},
   "spec": {"containers": [{"name": "web", "image": "nginx:1.27"}]}},
  {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "other", "namespace": "default", "labels": {"app": "other"}},
   "spec": {"containers": [{"name": "web", "image": "nginx:1.27"}]}}
]}"#;

fn job(name: &str, spec: Value) -> String {
    let mut job = json!({"apiVersion": "apps.kruise.io/v1alpha1", "kind": "EphemeralJob",
        "metadata": {"name": name, "namespace": "default"},
        "spec": {"selector": {"matchLabels": {"app": "web"}}, "template": {"ephemeralContainers": [
            {"name": "debugger", "image": "busybox:1.36", "imagePullPolicy": "IfNotPresent",
             "terminationMessagePolicy": "File", "targetContainerName": "web",
             "command": ["sh", "-c", "sleep 0.3"]}]}}});
    for (k, v) in spec.as_object().into_iter().flatten() {
        job["spec"][k] = v.clone();
    }
    job.to_string()
}

fn apply(k: &Path, manifest: &str) {
    let (success, _, err) = kubectl(k, &["apply", "-f", "-"], Some(manifest));
    assert!(success, "kubectl apply failed: {err}");
}

fn field(k: &Path, name: &str, path: &str) -> String {
    let (_, out, _) = kubectl(
        k,
        &["get", "ejob", name, "-o", &format!("jsonpath={{{path}}}")],
        None,
    );
    out
}

/// Whether the pod's `debugger` has not ended (injected, no terminated state yet).
fn unfinished(pod: &Value) -> bool {
    let injected = pod["spec"]["ephemeralContainers"]
        .as_array()
        .is_some_and(|l| l.iter().any(|c| c["name"] == "debugger"));
    let ended = pod["status"]["ephemeralContainerStatuses"]
        .as_array()
        .into_iter()
        .flatten()
        .any(|s| s["name"] == "debugger" && s["state"]["terminated"].is_object());
    injected && !ended
}

/// Watches the pods with `kubectl get -w`, recording the most pods with an unfinished debugger on
/// any state the watch delivered.
fn watch_unfinished(k: &Path) -> (std::process::Child, Arc<Mutex<usize>>) {
    let cache = k.parent().unwrap().join("kube-cache");
    let mut child = Command::new("kubectl")
        .env("KUBECONFIG", k)
        .env("KUBECACHEDIR", cache)
        .args(["get", "pods", "-w", "-o", "json", "-l", "app=web"])
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn()
        .expect("kubectl on PATH");
    let stdout = child.stdout.take().unwrap();
    let most = Arc::new(Mutex::new(0));
    let seen = most.clone();
    std::thread::spawn(move || {
        let mut live: BTreeMap<String, bool> = BTreeMap::new();
        for pod in serde_json::Deserializer::from_reader(BufReader::new(stdout)).into_iter::<Value>() {
            let Ok(pod) = pod else { break };
            live.insert(
                pod["metadata"]["name"].as_str().unwrap_or_default().into(),
                unfinished(&pod),
            );
            let now = live.values().filter(|r| **r).count();
            let mut most = seen.lock().unwrap();
            *most = (*most).max(now);
        }
    });
    (child, most)
}

fn pods(k: &Path) -> Vec<Value> {
    let list: Value = serde_json::from_str(&ok(k, &["get", "pods", "-o", "json"])).unwrap();
    list["items"].as_array().cloned().unwrap_or_default()
}

#[test]
fn a_job_debugs_three_pods_one_at_a_time_and_succeeds() {
    let pg = serve(&["--kubelet-delay-ms", "100"]);
    let k = pg.kubeconfig.as_path();
    apply(k, PODS);
    wait_for("the pods run", || {
        pods(k)
            .iter()
            .filter(|p| p["status"]["phase"] == "Running")
            .count()
            == 4
    });
    let (mut watch, most) = watch_unfinished(k);
    apply(k, &job("debug-web", json!({"replicas": 3, "parallelism": 1})));
    wait_for("the job succeeds", || {
        field(k, "debug-web", ".status.phase") == "Succeeded"
    });
    assert_eq!(field(k, "debug-web", ".status.match"), "3");
    assert_eq!(field(k, "debug-web", ".status.succeeded"), "3");
    assert_eq!(field(k, "debug-web", ".status.failed"), "0");
    assert_eq!(field(k, "debug-web", ".status.running"), "0");
    assert!(!field(k, "debug-web", ".status.completionTime").is_empty());
    assert_eq!(
        field(k, "debug-web", ".metadata.finalizers[*]"),
        "apps.kruise.io/ephemeralcontainers-cleanup"
    );
    let conditions = field(k, "debug-web", ".status.conditions[*].type");
    assert_eq!(conditions, "Initialized JobSucceeded");
    let uid = field(k, "debug-web", ".metadata.uid");
    for pod in pods(k) {
        let name = pod["metadata"]["name"].as_str().unwrap_or_default().to_string();
        let debuggers: Vec<&Value> = pod["spec"]["ephemeralContainers"]
            .as_array()
            .into_iter()
            .flatten()
            .collect();
        if name == "other" {
            assert!(debuggers.is_empty(), "not selected: {pod}");
            continue;
        }
        assert_eq!(debuggers.len(), 1, "{name}: {pod}");
        let env = &debuggers[0]["env"][0];
        assert_eq!(
            (env["name"].as_str(), env["value"].as_str()),
            (Some("KRUISE_EJOB_ID"), Some(uid.as_str()))
        );
        assert_eq!(debuggers[0]["targetContainerName"], "web");
        let status = &pod["status"]["ephemeralContainerStatuses"][0];
        assert_eq!(status["state"]["terminated"]["exitCode"], 0, "{name}: {status}");
    }
    let table = ok(k, &["get", "ejob", "debug-web"]);
    for column in [
        "STATUS", "MATCH", "SUCCEED", "FAILED", "RUNNING", "WAITING", "AGE",
    ] {
        assert!(table.contains(column), "OpenKruise's printer columns: {table}");
    }
    let _ = watch.kill();
    let _ = watch.wait();
    let most = *most.lock().unwrap();
    assert_eq!(most, 1, "parallelism 1: one debugger at a time; saw {most}");
    // Deleting the job lets it go (its finalizer removed); the containers stay, as the API keeps them.
    ok(
        k,
        &["delete", "ejob", "debug-web", "--wait=true", "--timeout=30s"],
    );
    assert_eq!(
        ok(
            k,
            &[
                "get",
                "pod",
                "web-1",
                "-o",
                "jsonpath={.spec.ephemeralContainers[*].name}"
            ]
        ),
        "debugger"
    );
}

#[test]
fn a_deadline_that_passes_fails_the_job() {
    let pg = serve(&["--clock", "manual", "--kubelet-delay-ms", "100"]);
    let k = pg.kubeconfig.as_path();
    apply(k, PODS);
    let long = json!({"activeDeadlineSeconds": 60, "template": {"ephemeralContainers": [
        {"name": "debugger", "image": "busybox:1.36", "imagePullPolicy": "IfNotPresent",
         "terminationMessagePolicy": "File", "command": ["sleep", "3600"]}]}});
    apply(k, &job("slow", long));
    wait_for("the first debugger runs", || {
        field(k, "slow", ".status.running") == "1"
    });
    assert_eq!(field(k, "slow", ".status.phase"), "Running");
    let body = json!({"advanceSeconds": 61}).to_string();
    let (moved, _, err) = kubectl(
        k,
        &["create", "--raw", "/playground/clock", "-f", "-"],
        Some(&body),
    );
    assert!(moved, "advancing the clock failed: {err}");
    wait_for("the job fails", || field(k, "slow", ".status.phase") == "Failed");
    let reason = field(
        k,
        "slow",
        "range .status.conditions[?(@.type==\"JobFailed\")]}{.reason}{end",
    );
    assert_eq!(reason, "DeadlineExceeded");
    // No pod is injected after the deadline: only the first one got a debugger.
    let injected = pods(k)
        .iter()
        .filter(|p| p["spec"]["ephemeralContainers"].is_array())
        .count();
    assert_eq!(injected, 1);
    assert_eq!(field(k, "slow", ".status.match"), "3");
}

#[test]
fn the_webhook_refuses_forbidden_fields() {
    let pg = serve(&["--kubelet-delay-ms", "100"]);
    let k = pg.kubeconfig.as_path();
    let bad = json!({"template": {"ephemeralContainers": [
        {"name": "debugger", "image": "busybox:1.36", "ports": [{"containerPort": 80}]}]}});
    let (success, _, err) = kubectl(k, &["apply", "-f", "-"], Some(&job("bad", bad)));
    assert!(!success);
    assert!(
        err.contains("admission webhook \"vephemeraljobs.kb.io\" denied the request")
            && err.contains(
                "ephemeralContainers[0].ports: Forbidden: cannot be set for an Ephemeral Container"
            )
            && err.contains("ephemeralContainers[0].imagePullPolicy: Required value"),
        "{err}"
    );
}
