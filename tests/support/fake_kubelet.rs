//! A tiny scheduler and kubelet for [`FakeApi`](super::fake_api::FakeApi) pods: every pod gets a node
//! (`PodScheduled`), phase Running
//! and a container status per container; a container whose spec image changed in place gets the new
//! image, a new imageID and `restartCount + 1`. `Ready` is True once every container has been running
//! for `start_delay` and every readiness gate's condition is True, as kubelet computes it.
//!
//! It polls the stored objects and writes as another client would (not in the `writes` log).

#![allow(dead_code)]

use std::{collections::HashMap, time::Duration};

use serde_json::{Value, json};
use tokio::time::Instant;

use super::fake_api::FakeApi;

/// The image as kubelet reports it (`:latest` added when untagged).
pub fn reported_image(image: &str) -> String {
    let last = image.rsplit('/').next().unwrap_or("");
    if last.contains(':') || image.contains('@') {
        image.to_string()
    } else {
        format!("{image}:latest")
    }
}

/// The imageID kubelet would report for `image`.
pub fn image_id(image: &str) -> String {
    format!(
        "docker-pullable://{}@sha256:{:x}",
        reported_image(image),
        fnv(image)
    )
}

fn fnv(s: &str) -> u64 {
    s.bytes().fold(0xcbf29ce484222325u64, |h, b| {
        (h ^ u64::from(b)).wrapping_mul(0x100000001b3)
    })
}

fn now() -> String {
    k8s_openapi::jiff::Timestamp::now()
        .strftime("%Y-%m-%dT%H:%M:%SZ")
        .to_string()
}

/// The pod status kubelet would report now, or `None` when the stored one is already that.
fn next_status(
    pod: &Value,
    started: &mut HashMap<(String, String), Instant>,
    delay: Duration,
) -> Option<Value> {
    let name = pod["metadata"]["name"].as_str().unwrap_or("").to_string();
    let old = pod["status"].clone();
    let mut status = old.clone();
    if !status.is_object() {
        status = json!({});
    }
    let old_statuses = old["containerStatuses"].as_array().cloned().unwrap_or_default();
    let mut statuses = Vec::new();
    let mut all_ready = true;
    for c in pod["spec"]["containers"].as_array().cloned().unwrap_or_default() {
        let cname = c["name"].as_str().unwrap_or("").to_string();
        let image = reported_image(c["image"].as_str().unwrap_or(""));
        let key = (name.clone(), cname.clone());
        let previous = old_statuses.iter().find(|s| s["name"] == cname.as_str());
        let restarts = match previous {
            None => 0,
            Some(p) if p["image"] == image.as_str() => p["restartCount"].as_i64().unwrap_or(0),
            Some(p) => {
                started.insert(key.clone(), Instant::now());
                p["restartCount"].as_i64().unwrap_or(0) + 1
            }
        };
        let since = *started.entry(key).or_insert_with(Instant::now);
        let ready = since.elapsed() >= delay;
        all_ready &= ready;
        let started_at = previous
            .filter(|p| p["restartCount"].as_i64().unwrap_or(0) == restarts)
            .and_then(|p| p["state"]["running"]["startedAt"].as_str().map(str::to_string))
            .unwrap_or_else(now);
        statuses.push(
            json!({"name": cname, "image": image, "imageID": image_id(&image), "ready": ready,
            "restartCount": restarts, "started": true, "state": {"running": {"startedAt": started_at}}}),
        );
    }
    let conditions = old["conditions"].as_array().cloned().unwrap_or_default();
    let gates_true = pod["spec"]["readinessGates"]
        .as_array()
        .cloned()
        .unwrap_or_default()
        .iter()
        .all(|g| {
            conditions
                .iter()
                .any(|c| c["type"] == g["conditionType"] && c["status"] == "True")
        });
    let mut conditions: Vec<Value> = conditions
        .into_iter()
        .filter(|c| {
            !matches!(
                c["type"].as_str(),
                Some("Ready" | "ContainersReady" | "PodScheduled")
            )
        })
        .collect();
    let flag = |b: bool| if b { "True" } else { "False" };
    let keep_time = |kind: &str, value: &str| {
        old["conditions"]
            .as_array()
            .and_then(|cs| cs.iter().find(|c| c["type"] == kind && c["status"] == value))
            .and_then(|c| c["lastTransitionTime"].as_str().map(str::to_string))
            .unwrap_or_else(now)
    };
    let ready = flag(all_ready && gates_true);
    let containers_ready = flag(all_ready);
    conditions.push(json!({"type": "PodScheduled", "status": "True",
        "lastTransitionTime": keep_time("PodScheduled", "True")}));
    conditions.push(json!({"type": "ContainersReady", "status": containers_ready,
        "lastTransitionTime": keep_time("ContainersReady", containers_ready)}));
    conditions
        .push(json!({"type": "Ready", "status": ready, "lastTransitionTime": keep_time("Ready", ready)}));
    status["phase"] = json!("Running");
    status["containerStatuses"] = json!(statuses);
    status["conditions"] = json!(conditions);
    let same = |a: &Value, b: &Value| {
        let strip = |v: &Value| {
            let mut v = v.clone();
            if let Some(cs) = v["conditions"].as_array_mut() {
                cs.sort_by_key(|c| c["type"].as_str().unwrap_or("").to_string());
            }
            v
        };
        strip(a) == strip(b)
    };
    (!same(&status, &old)).then_some(status)
}

/// Runs the kubelet until the task is aborted; containers become ready `start_delay` after they
/// (re)start.
pub async fn run(api: FakeApi, start_delay: Duration) {
    let mut started: HashMap<(String, String), Instant> = HashMap::new();
    loop {
        let pods: Vec<(String, Value)> = api
            .objects
            .lock()
            .unwrap()
            .iter()
            .filter(|(path, _)| path.starts_with("/api/v1/namespaces/") && path.contains("/pods/"))
            .map(|(p, v)| (p.clone(), v.clone()))
            .collect();
        for (path, pod) in pods {
            if let Some(status) = next_status(&pod, &mut started, start_delay) {
                // No await between reading and writing: nothing else changes the pod in between.
                if let Some(mut current) = api.get(&path)
                    && current["metadata"]["resourceVersion"] == pod["metadata"]["resourceVersion"]
                {
                    current["status"] = status;
                    if current["spec"]["nodeName"].is_null() {
                        current["spec"]["nodeName"] = json!("node-1");
                    }
                    api.put(&path, current);
                }
            }
        }
        tokio::time::sleep(Duration::from_millis(10)).await;
    }
}
