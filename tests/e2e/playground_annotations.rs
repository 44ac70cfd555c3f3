//! Annotations near kube-apiserver's limit of 256 KiB in all (apiserver contract §4.50). kruise-rs
//! does not check their size, as OpenKruise does not: the API server validates the object as the
//! mutating webhooks left it, so a pod our SidecarSet injection pushes over the limit is refused
//! whole (422 naming `metadata.annotations`), never stored half-injected, and the same pod without
//! the injection is admitted. Driven with the real kubectl.

use crate::common;

use common::kubectl::kubectl;
use common::playground_sidecarset::{Env, NS, sidecar_set};
use serde_json::{Value, json};

const LIMIT: usize = 256 * 1024;
const KEY: &str = "example.com/note";

/// A pod labelled `app: <app>` whose annotations take `total` bytes (key and value).
fn pod(name: &str, app: &str, total: usize) -> Value {
    json!({"apiVersion": "v1", "kind": "Pod",
        "metadata": {"name": name, "namespace": NS, "labels": {"app": app},
            "annotations": {KEY: "x".repeat(total - KEY.len())}},
        "spec": {"containers": [{"name": "main", "image": "nginx:1.0"}]}})
}

/// kubectl against the in-process playground, off the runtime's worker (the playground serves on it).
fn run(env: &Env, args: &[&str], stdin: Option<&str>) -> (bool, String, String) {
    tokio::task::block_in_place(|| kubectl(&env.kubeconfig, args, stdin))
}

/// `kubectl create` of `pod`: whether it was stored, and kubectl's stderr.
fn create(env: &Env, pod: &Value) -> (bool, String) {
    let (created, _, err) = run(env, &["create", "-f", "-"], Some(&pod.to_string()));
    (created, err)
}

fn containers(env: &Env, name: &str) -> Vec<String> {
    let (_, out, _) = run(env, &["get", "pod", name, "-n", NS, "-o", "json"], None);
    let pod: Value = serde_json::from_str(&out).unwrap_or_default();
    pod["spec"]["containers"]
        .as_array()
        .into_iter()
        .flatten()
        .filter_map(|c| c["name"].as_str().map(String::from))
        .collect()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn annotations_near_the_limit_are_judged_on_the_injected_pod() {
    let env = Env::start().await;
    env.apply(&sidecar_set("web", "agent:1.0", json!({}))).await;
    // The webhook injects once its cache has the SidecarSet.
    let started = std::time::Instant::now();
    for i in 0.. {
        let name = format!("probe-{i}");
        let (created, err) = create(&env, &pod(&name, "web", 100));
        assert!(created, "{err}");
        if containers(&env, &name).contains(&"agent".to_string()) {
            break;
        }
        assert!(started.elapsed().as_secs() < 30, "the sidecar is never injected");
        tokio::time::sleep(std::time::Duration::from_millis(200)).await;
    }

    // Exactly at the limit, nothing injected: admitted.
    let (created, err) = create(&env, &pod("plain-at-limit", "other", LIMIT));
    assert!(created, "{err}");
    // One byte over, nothing injected: refused by the API server itself.
    let (created, err) = create(&env, &pod("plain-over", "other", LIMIT + 1));
    assert!(
        !created && err.contains("metadata.annotations") && err.contains("Too long"),
        "{err}"
    );
    // At the limit before injection: the injected pod is over it, and refused whole.
    let (created, err) = create(&env, &pod("injected-over", "web", LIMIT));
    assert!(!created, "stored over the limit");
    assert!(
        err.contains("metadata.annotations") && err.contains("Too long"),
        "{err}"
    );
    let (found, _, _) = run(&env, &["get", "pod", "injected-over", "-n", NS], None);
    assert!(!found, "nothing stored");
    // With room for the injection's annotations: admitted, injected.
    let (created, err) = create(&env, &pod("injected-under", "web", LIMIT - 4096));
    assert!(created, "{err}");
    assert!(containers(&env, "injected-under").contains(&"agent".to_string()));
}
