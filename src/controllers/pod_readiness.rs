//! `KruisePodReady`: pods that carry this readiness gate (injected by the pod webhook for pods of Kruise
//! workloads) stay unready until the condition exists. The controller initialises it to `True` once;
//! afterwards other writers (lifecycle hooks) flip it by adding "not ready" keys to its message, and the
//! controller never touches an existing condition.

use k8s_openapi::jiff::Timestamp;
use kruise_api::PodRecord;
use serde_json::{Value, json};

/// The readiness gate and condition type.
pub const KRUISE_POD_READY: &str = "KruisePodReady";

/// Whether the pod asks for the `KruisePodReady` gate.
pub fn has_gate(pod: &PodRecord) -> bool {
    pod.spec
        .as_ref()
        .and_then(|s| s.readiness_gates.as_ref())
        .is_some_and(|gates| gates.iter().any(|g| g.condition_type == KRUISE_POD_READY))
}

/// Whether the pod already has the condition (whatever its status).
pub fn has_condition(pod: &PodRecord) -> bool {
    pod.status
        .as_ref()
        .and_then(|s| s.conditions.as_ref())
        .is_some_and(|c| c.iter().any(|c| c.type_ == KRUISE_POD_READY))
}

/// The strategic-merge patch of `pods/status` that initialises the condition, or `None` when there is
/// nothing to do (no gate, condition present, pod terminating). The patch carries the pod's
/// resourceVersion: if another writer added the condition meanwhile, the API answers 409 and the next
/// pass sees theirs.
pub fn plan(pod: &PodRecord, now: Timestamp) -> Option<Value> {
    if pod.metadata.deletion_timestamp.is_some() || !has_gate(pod) || has_condition(pod) {
        return None;
    }
    let mut metadata = json!({});
    if let Some(rv) = &pod.metadata.resource_version {
        metadata["resourceVersion"] = json!(rv);
    }
    Some(json!({
        "metadata": metadata,
        "status": {"conditions": [{
            "type": KRUISE_POD_READY,
            "status": "True",
            "lastTransitionTime": now.strftime("%Y-%m-%dT%H:%M:%SZ").to_string(),
        }]},
    }))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn pod(value: Value) -> PodRecord {
        serde_json::from_value(value).unwrap()
    }

    fn now() -> Timestamp {
        "2026-01-02T03:04:05Z".parse().unwrap()
    }

    #[test]
    fn initialises_the_condition_of_gated_pods_only() {
        let gated = json!({"metadata": {"name": "a", "resourceVersion": "7"},
            "spec": {"containers": [], "readinessGates": [{"conditionType": "KruisePodReady"}]}});
        let cases = [
            (
                "gate, no condition",
                gated.clone(),
                Some(
                    json!({"metadata": {"resourceVersion": "7"}, "status": {"conditions": [
                    {"type": "KruisePodReady", "status": "True", "lastTransitionTime": "2026-01-02T03:04:05Z"}]}}),
                ),
            ),
            (
                "no gate",
                json!({"metadata": {"name": "a"}, "spec": {"containers": [],
                    "readinessGates": [{"conditionType": "InPlaceUpdateReady"}]}}),
                None,
            ),
            (
                "condition already False (a lifecycle hook holds it)",
                {
                    let mut p = gated.clone();
                    p["status"] = json!({"conditions": [{"type": "KruisePodReady", "status": "False",
                        "message": "[{\"userAgent\":\"Lifecycle\",\"key\":\"PreDelete\"}]"}]});
                    p
                },
                None,
            ),
            (
                "terminating",
                {
                    let mut p = gated.clone();
                    p["metadata"]["deletionTimestamp"] = json!("2026-01-02T03:00:00Z");
                    p
                },
                None,
            ),
        ];
        for (name, input, expected) in cases {
            assert_eq!(plan(&pod(input), now()), expected, "{name}");
        }
    }
}
