//! BroadcastJob end to end in `kruise playground` (three simulated nodes), driven with the real
//! kubectl: the scheduler-free pods pinned by `spec.nodeName` are run by the simulated kubelet, whose
//! `sleep`/`exit` commands end them; kruise-rs's BroadcastJob controller does the rest.

use crate::common;

use std::collections::BTreeMap;
use std::io::BufReader;
use std::path::Path;
use std::process::{Command, Stdio};
use std::sync::{Arc, Mutex};

use common::kubectl::{kubectl, ok, serve, wait_for};
use serde_json::{Value, json};

fn job(name: &str, spec: Value) -> String {
    let mut job = json!({"apiVersion": "apps.kruise.io/v1alpha1", "kind": "BroadcastJob",
        "metadata": {"name": name, "namespace": "default"},
        "spec": {"template": {"metadata": {"labels": {"app": name}},
            "spec": {"restartPolicy": "Never",
                "containers": [{"name": "work", "image": "busybox:1.36", "command": ["sleep", "1"]}]}}}});
    merge(&mut job["spec"], spec);
    job.to_string()
}

fn merge(a: &mut Value, b: Value) {
    match (a, b) {
        (Value::Object(a), Value::Object(b)) => {
            for (k, v) in b {
                merge(a.entry(k).or_insert(Value::Null), v);
            }
        }
        (a, b) => *a = b,
    }
}

fn apply(k: &Path, manifest: &str) {
    let (success, _, err) = kubectl(k, &["apply", "-f", "-"], Some(manifest));
    assert!(success, "kubectl apply failed: {err}");
}

fn field(k: &Path, name: &str, path: &str) -> String {
    let (_, out, _) = kubectl(
        k,
        &["get", "bcj", name, "-o", &format!("jsonpath={{{path}}}")],
        None,
    );
    out
}

/// Pod name → (phase, node) of the job's pods, as the API server has them.
fn pods(k: &Path, name: &str) -> BTreeMap<String, (String, String)> {
    let out = ok(
        k,
        &[
            "get",
            "pods",
            "-l",
            &format!("broadcastjob-name={name}"),
            "-o",
            "json",
        ],
    );
    let list: Value = serde_json::from_str(&out).unwrap();
    list["items"]
        .as_array()
        .unwrap()
        .iter()
        .map(|p| {
            let s = |v: &Value| v.as_str().unwrap_or_default().to_string();
            (
                s(&p["metadata"]["name"]),
                (s(&p["status"]["phase"]), s(&p["spec"]["nodeName"])),
            )
        })
        .collect()
}

/// Watches the job's pods with `kubectl get -w`, recording the most pods not yet finished on any
/// state the watch delivered.
fn watch_running(k: &Path, name: &str) -> (std::process::Child, Arc<Mutex<usize>>) {
    let cache = k.parent().unwrap().join("kube-cache");
    let mut child = Command::new("kubectl")
        .env("KUBECONFIG", k)
        .env("KUBECACHEDIR", cache)
        .args([
            "get",
            "pods",
            "-w",
            "-o",
            "json",
            "-l",
            &format!("broadcastjob-name={name}"),
        ])
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
            let phase = pod["status"]["phase"].as_str().unwrap_or("Pending");
            let running =
                !matches!(phase, "Succeeded" | "Failed") && pod["metadata"]["deletionTimestamp"].is_null();
            live.insert(
                pod["metadata"]["name"].as_str().unwrap_or_default().into(),
                running,
            );
            let now = live.values().filter(|r| **r).count();
            let mut most = seen.lock().unwrap();
            *most = (*most).max(now);
        }
    });
    (child, most)
}

#[test]
fn a_job_runs_on_every_eligible_node_two_at_a_time_completes_and_its_ttl_deletes_it() {
    let pg = serve(&["--kubelet-delay-ms", "100"]);
    let k = pg.kubeconfig.as_path();
    // One node tainted, which the job tolerates: three eligible nodes, two pods at a time.
    ok(
        k,
        &[
            "taint",
            "nodes",
            "playground-node-1",
            "dedicated=batch:NoSchedule",
        ],
    );
    let (mut watch, most) = watch_running(k, "all-nodes");
    // The TTL leaves time for the checks below (six kubectl calls, slow on a loaded machine) to read
    // the finished job before it is deleted.
    apply(
        k,
        &job(
            "all-nodes",
            json!({"parallelism": 2, "completionPolicy": {"type": "Always", "ttlSecondsAfterFinished": 10},
                "template": {"spec": {"tolerations": [{"key": "dedicated", "operator": "Exists"}]}}}),
        ),
    );
    wait_for("the job completes", || {
        field(k, "all-nodes", ".status.phase") == "completed"
    });
    assert_eq!(field(k, "all-nodes", ".status.desired"), "3");
    assert_eq!(field(k, "all-nodes", ".status.succeeded"), "3");
    assert_eq!(field(k, "all-nodes", ".status.active"), "0");
    let conditions = field(k, "all-nodes", ".status.conditions[*].type");
    assert_eq!(conditions, "Complete");
    let nodes: Vec<String> = pods(k, "all-nodes").into_values().map(|(_, node)| node).collect();
    assert_eq!(nodes.len(), 3);
    assert!(
        nodes.contains(&"playground-node-1".to_string()),
        "the tolerated taint: {nodes:?}"
    );
    let table = ok(k, &["get", "bcj", "all-nodes"]);
    for column in ["DESIRED", "ACTIVE", "SUCCEEDED", "FAILED", "AGE"] {
        assert!(table.contains(column), "OpenKruise's printer columns: {table}");
    }
    wait_for("the TTL deletes the job", || {
        let (found, _, err) = kubectl(k, &["get", "bcj", "all-nodes"], None);
        !found && err.contains("NotFound")
    });
    let _ = watch.kill();
    let _ = watch.wait();
    let most = *most.lock().unwrap();
    assert!(
        (1..=2).contains(&most),
        "at most parallelism=2 pods running at once; saw {most}"
    );
}

#[test]
fn a_failed_pod_under_fail_fast_fails_the_job() {
    let pg = serve(&["--kubelet-delay-ms", "100"]);
    let k = pg.kubeconfig.as_path();
    apply(
        k,
        &job(
            "fails",
            json!({"failurePolicy": {"type": "FailFast"},
                "template": {"spec": {"containers": [{"name": "work", "image": "busybox:1.36", "command": ["sleep", "30"]}]}}}),
        ),
    );
    wait_for("three pods running", || {
        let p = pods(k, "fails");
        p.len() == 3 && p.values().all(|(phase, _)| phase == "Running")
    });
    // A second job whose command fails at once; the first, still running, is not affected.
    apply(
        k,
        &job(
            "fails-fast",
            json!({"failurePolicy": {"type": "FailFast"},
                "template": {"spec": {"containers": [{"name": "work", "image": "busybox:1.36", "command": ["sh", "-c", "exit 1"]}]}}}),
        ),
    );
    wait_for("the job fails", || {
        field(k, "fails-fast", ".status.phase") == "failed"
    });
    assert_eq!(field(k, "fails-fast", ".status.conditions[0].type"), "Failed");
    assert_eq!(
        field(k, "fails-fast", ".status.conditions[0].reason"),
        "FailedPodFound"
    );
    assert_eq!(
        field(k, "fails", ".status.phase"),
        "running",
        "the other job is untouched"
    );
}

#[test]
fn a_never_job_follows_an_uncordoned_node() {
    let pg = serve(&["--kubelet-delay-ms", "100"]);
    let k = pg.kubeconfig.as_path();
    ok(k, &["cordon", "playground-node-2"]);
    apply(k, &job("follows", json!({"completionPolicy": {"type": "Never"}})));
    wait_for("two pods succeeded", || {
        field(k, "follows", ".status.succeeded") == "2"
    });
    assert_eq!(field(k, "follows", ".status.desired"), "2");
    assert_eq!(
        field(k, "follows", ".status.phase"),
        "running",
        "Never: not completed"
    );
    ok(k, &["uncordon", "playground-node-2"]);
    wait_for("the uncordoned node ran a pod", || {
        field(k, "follows", ".status.succeeded") == "3"
    });
    let nodes: Vec<String> = pods(k, "follows").into_values().map(|(_, node)| node).collect();
    assert!(nodes.contains(&"playground-node-2".to_string()), "{nodes:?}");
}
