//! What every kubelet of the playground reports the same way, whatever runs the containers: the pod
//! conditions, the phase (the kubelet's `getPhase`), IPs and start time around the container statuses.

use serde_json::{Value, json};

/// The pod status for `containers` (the container statuses, in spec order): conditions
/// `PodScheduled`, `Initialized`, `ContainersReady`, `Ready` (Ready also needs every `readinessGates`
/// condition True; other writers' conditions are kept), the phase, `hostIP`, `podIP` (kept once set)
/// and `startTime`.
pub fn pod_status(pod: &Value, containers: Vec<Value>, now: &str, host_ip: &str, pod_ip: &str) -> Value {
    let all_ready = containers.iter().all(|c| c["ready"] == true);
    let phase = phase(pod, &containers);
    let conditions = pod["status"]["conditions"]
        .as_array()
        .cloned()
        .unwrap_or_default();
    let gates_ok = pod["spec"]["readinessGates"]
        .as_array()
        .into_iter()
        .flatten()
        .all(|g| {
            conditions
                .iter()
                .any(|c| c["type"] == g["conditionType"] && c["status"] == "True")
        });
    let ours = ["PodScheduled", "Initialized", "ContainersReady", "Ready"];
    let mut next: Vec<Value> = vec![
        condition("PodScheduled", true, pod, now),
        condition("Initialized", true, pod, now),
        condition("ContainersReady", all_ready, pod, now),
        condition("Ready", all_ready && gates_ok, pod, now),
    ];
    next.extend(
        conditions
            .into_iter()
            .filter(|c| !ours.iter().any(|o| c["type"] == *o)),
    );
    let mut status = pod["status"].clone();
    if !status.is_object() {
        status = json!({});
    }
    if matches!(phase, "Succeeded" | "Failed") {
        // The kubelet's reason for a pod whose containers all ended.
        for c in next
            .iter_mut()
            .filter(|c| c["type"] == "Ready" || c["type"] == "ContainersReady")
        {
            c["reason"] = json!("PodCompleted");
        }
    }
    status["phase"] = json!(phase);
    status["conditions"] = json!(next);
    status["containerStatuses"] = json!(containers);
    status["hostIP"] = json!(host_ip);
    if status["podIP"].as_str().is_none_or(str::is_empty) {
        status["podIP"] = json!(pod_ip);
        status["podIPs"] = json!([{"ip": pod_ip}]);
    }
    if status["startTime"].is_null() {
        status["startTime"] = json!(now);
    }
    status
}

/// A pod condition of `kind`; its transition time is kept while its status stays.
fn condition(kind: &str, ok: bool, old: &Value, now: &str) -> Value {
    let status = if ok { "True" } else { "False" };
    let previous = old["status"]["conditions"]
        .as_array()
        .into_iter()
        .flatten()
        .find(|c| c["type"] == kind);
    let since = match previous {
        Some(c) if c["status"] == status => c["lastTransitionTime"].clone(),
        _ => json!(now),
    };
    json!({"type": kind, "status": status, "lastProbeTime": null, "lastTransitionTime": since})
}

/// Whether the pod's `restartPolicy` restarts a container that exited with `code`.
pub fn restarts(pod: &Value, code: i64) -> bool {
    match pod["spec"]["restartPolicy"].as_str() {
        Some("Never") => false,
        Some("OnFailure") => code != 0,
        _ => true,
    }
}

/// The pod phase of the kubelet's `getPhase`: Running while a container runs or is being
/// restarted; Succeeded/Failed once every container ended for good (Failed if any exited
/// non-zero); Pending before.
fn phase(pod: &Value, containers: &[Value]) -> &'static str {
    let exit = |c: &Value| c["state"]["terminated"]["exitCode"].as_i64();
    if containers.iter().any(|c| c["state"]["running"].is_object()) {
        return "Running";
    }
    let ended: Vec<i64> = containers
        .iter()
        .filter_map(exit)
        .filter(|code| !restarts(pod, *code))
        .collect();
    if !containers.is_empty() && ended.len() == containers.len() {
        return if ended.iter().all(|c| *c == 0) {
            "Succeeded"
        } else {
            "Failed"
        };
    }
    let restarting = containers
        .iter()
        .any(|c| exit(c).is_some() || c["lastState"]["terminated"].is_object());
    if restarting { "Running" } else { "Pending" }
}

/// A status without the fields that change on every report.
pub fn strip_times(status: &Value) -> Value {
    let mut s = status.clone();
    for c in s["conditions"].as_array_mut().into_iter().flatten() {
        c["lastTransitionTime"] = Value::Null;
    }
    s
}

/// `<image>@sha256:<hex sha256 of the image reference>`.
pub fn image_id(image: &str) -> String {
    let digest = ring::digest::digest(&ring::digest::SHA256, image.as_bytes());
    let hex: String = digest.as_ref().iter().map(|b| format!("{b:02x}")).collect();
    let repo = image.split('@').next().unwrap_or(image);
    let repo = match repo.rsplit_once(':') {
        Some((r, tag)) if !tag.contains('/') => r,
        _ => repo,
    };
    format!("{repo}@sha256:{hex}")
}

/// The back-off message of an image no registry serves: one whose registry host is in the `.invalid` domain
/// (RFC 2606: it never resolves), e.g. `registry.invalid/agent:2`.
pub fn unpullable(image: &str) -> Option<String> {
    let (first, rest) = image.split_once('/')?;
    let host = first.split(':').next().unwrap_or(first);
    (!rest.is_empty() && host.ends_with(".invalid")).then(|| format!("Back-off pulling image \"{image}\""))
}

/// A running container that exited: `Completed` for 0, else `Error`, as containerd reports.
pub fn terminated(old: &Value, code: i32, now: &str) -> Value {
    let mut status = old.clone();
    status["ready"] = json!(false);
    status["started"] = json!(false);
    status["state"] = json!({"terminated": {
        "exitCode": code, "reason": if code == 0 { "Completed" } else { "Error" },
        "startedAt": old["state"]["running"]["startedAt"], "finishedAt": now,
        "containerID": old["containerID"],
    }});
    status
}
