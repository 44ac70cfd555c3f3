//! ContainerRecreateRequest defaults and checks (`/mutate-apps-kruise-io-containerrecreaterequest`,
//! CREATE and UPDATE, both versions), as OpenKruise's `pkg/webhook/containerrecreaterequest/mutating`
//! with its messages (`docs/containerrecreaterequest.md`).
//!
//! UPDATE: the spec and the `pod-uid`/`node-name` labels are immutable (v1alpha1: also a set
//! `unready-acquired` annotation) → 403. CREATE (400 unless noted): `podName` and `containers` set,
//! `activeDeadlineSeconds` ≥ 3, non-negative graces, a known `failurePolicy` (default `Fail`), the pod
//! exists, is active and scheduled, its node exists, each container is named once, exists and has a
//! container id. The patch sets `strategy: {}`, the labels `active`, `node-name`, `pod-uid` (and
//! `type=virtual-kubelet` from the node), the pod's grace when the strategy has none, and per container
//! the pod's `preStop` (exec/httpGet/tcpSocket), `ports` for an httpGet hook and `statusContext`.
//!
//! Unlike OpenKruise, `preStop`/`ports`/`statusContext` written by a client are refused only when they
//! differ from what the webhook fills in: kruise-tools' `create crr` pre-fills the first two, and
//! OpenKruise refused its requests for any container with a hook or ports.

use k8s_openapi::api::core::v1::Node;
use kruise_api::apps_v1beta1::{
    CRR_ACTIVE_LABEL, CRR_NODE_NAME_LABEL, CRR_POD_UID_LABEL, CRR_UNREADY_ACQUIRED_KEY,
    ContainerRecreateRequestSpec, CrrProbeHandler,
};
use kruise_api::pod::ContainerRecord;
use kruise_core::Gate;
use serde_json::{Value, json};

use super::{Which, check_decodes, judged, raw_object, request_version, strip_nulls};
use crate::{Decision, Operation, Settings, patch, review::AdmissionRequest, view::ClusterView};

const GROUP: &str = "apps.kruise.io";
const KIND: &str = "ContainerRecreateRequest";
/// Smallest `activeDeadlineSeconds`.
const MIN_DEADLINE_SECONDS: i64 = 3;
/// Node label (and value) that marks a virtual kubelet; copied onto the request.
/// Pod condition set by the SidecarTerminator: such a pod still accepts requests.
const SIDECAR_TERMINATED: &str = "SidecarTerminated";

/// `/mutate-apps-kruise-io-containerrecreaterequest`.
pub fn mutate(request: &AdmissionRequest, view: &impl ClusterView, settings: &Settings) -> Decision {
    if !judged(request) {
        return Decision::allow();
    }
    if !settings.enabled(Gate::KruiseDaemon) {
        return Decision::forbid("feature-gate KruiseDaemon is not enabled");
    }
    let new = match raw_object(request, Which::New, GROUP, KIND) {
        Ok(o) => o,
        Err(d) => return *d,
    };
    let spec: ContainerRecreateRequestSpec =
        match check_decodes(KIND, new.get("spec").unwrap_or(&Value::Null)) {
            Ok(s) => s,
            Err(d) => return *d,
        };
    if request.operation == Operation::Update {
        return match raw_object(request, Which::Old, GROUP, KIND) {
            Ok(old) => check_update(request, &new, &old),
            Err(d) => *d,
        };
    }
    match create_patch(new, &spec, view) {
        Ok(ops) if ops.is_empty() => Decision::allow(),
        Ok(ops) => Decision::patched(ops),
        Err(d) => *d,
    }
}

fn check_update(request: &AdmissionRequest, new: &Value, old: &Value) -> Decision {
    let spec = |o: &Value| strip_nulls(o.get("spec").unwrap_or(&Value::Null));
    if spec(new) != spec(old) {
        return Decision::forbid("spec of ContainerRecreateRequest is immutable");
    }
    let meta = |o: &Value, map: &str, key: &str| {
        o.pointer(&format!("/metadata/{map}"))
            .and_then(|m| m.get(key))
            .and_then(Value::as_str)
            .unwrap_or_default()
            .to_owned()
    };
    for key in [CRR_POD_UID_LABEL, CRR_NODE_NAME_LABEL] {
        if meta(new, "labels", key) != meta(old, "labels", key) {
            return Decision::forbid(format!("not allowed to update immutable label {key}"));
        }
    }
    if request_version(request) != "v1beta1" {
        let before = meta(old, "annotations", CRR_UNREADY_ACQUIRED_KEY);
        if !before.is_empty() && meta(new, "annotations", CRR_UNREADY_ACQUIRED_KEY) != before {
            return Decision::forbid(format!(
                "not allowed to update immutable annotation {CRR_UNREADY_ACQUIRED_KEY}"
            ));
        }
    }
    Decision::allow()
}

type Ops = Vec<json_patch::PatchOperation>;

fn bad(message: impl Into<String>) -> Box<Decision> {
    Box::new(Decision::bad_request(message))
}

/// The CREATE checks in OpenKruise's order, then the patch.
fn create_patch(
    object: Value,
    spec: &ContainerRecreateRequestSpec,
    view: &impl ClusterView,
) -> Result<Ops, Box<Decision>> {
    if spec.pod_name.is_empty() {
        return Err(bad("podName can not be empty"));
    }
    let strategy = spec.strategy.clone().unwrap_or_default();
    if spec.containers.is_empty() {
        return Err(bad("containers list can not be null"));
    }
    if spec
        .active_deadline_seconds
        .is_some_and(|s| s < MIN_DEADLINE_SECONDS)
    {
        return Err(bad(format!(
            "activeDeadlineSeconds can not be less than {MIN_DEADLINE_SECONDS}s"
        )));
    }
    if strategy.termination_grace_period_seconds.is_some_and(|s| s < 0) {
        return Err(bad("terminationGracePeriodSeconds must be non-negative integer"));
    }
    if strategy.unready_grace_period_seconds.is_some_and(|s| s < 0) {
        return Err(bad("unreadyGracePeriodSeconds must be non-negative integer"));
    }
    let failure_policy = strategy.failure_policy.as_str();
    if !matches!(failure_policy, "" | "Fail" | "Ignore") {
        return Err(bad(format!("unknown failurePolicy {failure_policy}")));
    }
    let namespace = object
        .pointer("/metadata/namespace")
        .and_then(Value::as_str)
        .unwrap_or_default();
    let Some(pod) = view.pod(namespace, &spec.pod_name) else {
        return Err(bad(format!("no found Pod named {}", spec.pod_name)));
    };
    let terminated_by_sidecar = kruise_core::pod_state::condition(&pod, SIDECAR_TERMINATED).is_some();
    let node_name = pod
        .spec
        .as_ref()
        .and_then(|s| s.node_name.clone())
        .unwrap_or_default();
    if !kruise_core::pod_state::is_active(&pod) && !terminated_by_sidecar {
        return Err(bad("not allowed to recreate containers in an inactive Pod"));
    } else if node_name.is_empty() {
        return Err(bad("not allowed to recreate containers in a pending Pod"));
    }
    let Some(node) = kruise_core::view::get::<Node>(view, "", &node_name) else {
        return Err(bad(format!(
            "failed to get Node {node_name}: nodes \"{node_name}\" not found"
        )));
    };

    let mut ops = Ops::new();
    let mut doc = object;
    let mut push = |doc: &mut Value, op: json_patch::PatchOperation| {
        if json_patch::patch(doc, std::slice::from_ref(&op)).is_ok() {
            ops.push(op);
        }
    };
    if spec.strategy.is_none() {
        push(&mut doc, patch::add(["spec", "strategy"], json!({})));
    }
    let mut labels = vec![
        (CRR_ACTIVE_LABEL, "true".to_owned()),
        (CRR_NODE_NAME_LABEL, node_name.clone()),
        (CRR_POD_UID_LABEL, pod.metadata.uid.clone().unwrap_or_default()),
    ];
    if kruise_core::names::is_virtual_kubelet(node.metadata.labels.as_ref()) {
        let (key, value) = kruise_core::names::VIRTUAL_KUBELET_LABEL;
        labels.push((key, value.to_owned()));
    }
    for (key, value) in labels {
        for op in patch::set_map_entry(&doc, &["metadata", "labels"], key, &value) {
            push(&mut doc, op);
        }
    }
    if failure_policy.is_empty() {
        push(
            &mut doc,
            patch::add(["spec", "strategy", "failurePolicy"], json!("Fail")),
        );
    }
    let pod_grace = pod.spec.as_ref().and_then(|s| s.termination_grace_period_seconds);
    if let (None, Some(grace)) = (strategy.termination_grace_period_seconds, pod_grace) {
        push(
            &mut doc,
            patch::add(
                ["spec", "strategy", "terminationGracePeriodSeconds"],
                json!(grace),
            ),
        );
    }

    let containers = pod
        .spec
        .as_ref()
        .map(|s| s.containers.as_slice())
        .unwrap_or_default();
    let statuses = pod
        .status
        .as_ref()
        .and_then(|s| s.container_statuses.as_deref())
        .unwrap_or_default();
    let mut seen = std::collections::BTreeSet::new();
    for (i, c) in spec.containers.iter().enumerate() {
        if !seen.insert(c.name.as_str()) {
            return Err(bad(format!("can not recreate {} multi times", c.name)));
        }
        let pod_container = containers.iter().find(|pc| pc.name == c.name);
        let user_set = c.pre_stop.is_some() || !c.ports.is_empty() || c.status_context.is_some();
        let Some(pod_container) = pod_container else {
            if user_set {
                return Err(bad(READ_ONLY));
            }
            return Err(bad(format!("container {} not found in Pod", c.name)));
        };
        let Some(status) = statuses.iter().find(|s| s.name == c.name) else {
            return Err(bad(format!("not found {} containerStatus in Pod Status", c.name)));
        };
        let container_id = status.container_id.clone().unwrap_or_default();
        if container_id.is_empty() {
            return Err(bad(format!(
                "no containerID in {} containerStatus, maybe the container has not been initialized",
                c.name
            )));
        }
        let (pre_stop, ports) = fill(pod_container);
        let context = json!({"containerID": container_id, "restartCount": status.restart_count});
        let same =
            |user: Option<Value>, ours: &Option<Value>| user.is_none() || user.as_ref() == ours.as_ref();
        if !same(c.pre_stop.as_ref().map(to_value), &pre_stop)
            || !same((!c.ports.is_empty()).then(|| to_value(&c.ports)), &ports)
            || !same(c.status_context.as_ref().map(to_value), &Some(context.clone()))
        {
            return Err(bad(READ_ONLY));
        }
        let index = i.to_string();
        let base = ["spec", "containers", index.as_str()];
        for (field, value) in [
            ("preStop", pre_stop),
            ("ports", ports),
            ("statusContext", Some(context)),
        ] {
            let path = base.iter().copied().chain([field]);
            let current = doc
                .pointer(&format!("/spec/containers/{i}/{field}"))
                .filter(|v| !v.is_null());
            match value {
                Some(v) if current != Some(&v) => push(&mut doc, patch::add(path, v)),
                _ => {}
            }
        }
    }
    Ok(ops)
}

/// OpenKruise's message (spelling included) for client-set fields the webhook owns.
const READ_ONLY: &str = "preStop, ports, statusContext in container are ready-only fields";

fn to_value<T: serde::Serialize>(v: &T) -> Value {
    strip_nulls(&serde_json::to_value(v).unwrap_or(Value::Null))
}

/// What the webhook copies from the pod's container: the preStop hook without a `sleep` action (a hook
/// with only `sleep` is not copied at all; OpenKruise copies an empty one), and the ports when that
/// hook is an httpGet.
fn fill(container: &ContainerRecord) -> (Option<Value>, Option<Value>) {
    let Some(hook) = container.lifecycle.as_ref().and_then(|l| l.pre_stop.as_ref()) else {
        return (None, None);
    };
    let handler = CrrProbeHandler {
        exec: hook.exec.clone(),
        http_get: hook.http_get.clone(),
        tcp_socket: hook.tcp_socket.clone(),
    };
    if handler == CrrProbeHandler::default() {
        return (None, None);
    }
    let ports = match (&handler.http_get, &container.ports) {
        (Some(_), Some(ports)) if !ports.is_empty() => Some(to_value(ports)),
        _ => None,
    };
    (Some(to_value(&handler)), ports)
}

#[cfg(test)]
mod tests;
