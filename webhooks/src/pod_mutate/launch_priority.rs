//! Step 4 of `/mutate-pod`: container launch priority (docs/launch-priority.md#webhook).
//!
//! Runs on the final container list (after SidecarSet injection, so sidecars take part):
//! * a pod with exactly one container is left alone;
//! * annotation `apps.kruise.io/container-launch-priority: Ordered` → container `i` gets priority `-i`;
//! * otherwise each container's literal env `KRUISE_CONTAINER_PRIORITY` (last one wins, missing = 0) is
//!   an integer; an unparsable value denies the pod (500, Go's `strconv.Atoi` message); all zero or all
//!   equal → nothing to do.
//!
//! Each container then gets env `KRUISE_CONTAINER_BARRIER` from `configMapKeyRef {name: <pod>-barrier,
//! key: p_<priority>}`. A pod that has only `generateName` is named here (the ConfigMap name needs it).
//! A container that already carries the barrier env is not given a second one, so running the step on
//! its own output adds nothing.

use serde_json::{Value, json};

use super::{PodContext, StepOutput, StepResult};
use crate::{Denial, patch, view::ClusterView};

/// Pod annotation asking for launch in container order.
pub const LAUNCH_PRIORITY_ANNOTATION: &str = "apps.kruise.io/container-launch-priority";
/// The only value of [`LAUNCH_PRIORITY_ANNOTATION`] that means something.
pub const ORDERED: &str = "Ordered";
/// Container env injected by the webhook; kubelet blocks the container until the key exists.
pub use kruise_core::names::CONTAINER_BARRIER_ENV as BARRIER_ENV;
/// Container env holding a user-chosen priority (higher starts first).
pub use kruise_core::names::CONTAINER_PRIORITY_ENV as PRIORITY_ENV;

/// Step of `/mutate-pod`.
pub fn mutate(context: &PodContext<'_, impl ClusterView>, pod: &Value) -> StepResult {
    if !super::pub_annotation::is_pods_resource(context.request) {
        return Ok(StepOutput::default());
    }
    let containers: &[Value] = pod
        .get("spec")
        .and_then(|s| s.get("containers"))
        .and_then(Value::as_array)
        .map_or(&[], Vec::as_slice);
    if containers.len() == 1 {
        return Ok(StepOutput::default());
    }
    let ordered = crate::patch::get(pod, &["metadata", "annotations"])
        .and_then(|a| a.get(LAUNCH_PRIORITY_ANNOTATION))
        .and_then(Value::as_str)
        == Some(ORDERED);
    let priorities: Vec<i64> = if ordered {
        (0..containers.len() as i64).map(|i| -i).collect()
    } else {
        let priorities = containers
            .iter()
            .map(declared_priority)
            .collect::<Result<Vec<_>, _>>()
            .map_err(|message| Denial::new(500, "", message))?;
        let any_set = priorities.iter().any(|p| *p != 0);
        let all_equal = priorities.windows(2).all(|w| w[0] == w[1]);
        if !any_set || all_equal {
            return Ok(StepOutput::default());
        }
        priorities
    };

    let meta = pod.get("metadata");
    let current_name = meta
        .and_then(|m| m.get("name"))
        .and_then(Value::as_str)
        .unwrap_or("");
    let generate_name = meta
        .and_then(|m| m.get("generateName"))
        .and_then(Value::as_str)
        .unwrap_or("");
    let missing: Vec<usize> = (0..containers.len())
        .filter(|&i| containers[i].is_object() && !has_env(&containers[i], BARRIER_ENV))
        .collect();
    let mut ops = Vec::new();
    let name = if current_name.is_empty() && !generate_name.is_empty() {
        let name = super::workloadspread::ids::generate_name(context.request, generate_name);
        if meta.is_some_and(Value::is_object) {
            ops.push(patch::add(["metadata", "name"], Value::String(name.clone())));
        }
        name
    } else {
        current_name.to_string()
    };
    for i in missing {
        let index = i.to_string();
        let env = barrier_env(&name, priorities[i]);
        match containers[i].get("env") {
            Some(Value::Array(_)) => {
                ops.push(patch::add(["spec", "containers", &index, "env", "-"], env));
            }
            _ => ops.push(patch::add(["spec", "containers", &index, "env"], json!([env]))),
        }
    }
    Ok(StepOutput {
        patch: ops,
        ..StepOutput::default()
    })
}

/// The barrier env of a container of priority `priority` in pod `pod_name`.
pub fn barrier_env(pod_name: &str, priority: i64) -> Value {
    json!({
        "name": BARRIER_ENV,
        "valueFrom": {"configMapKeyRef": {"name": format!("{pod_name}-barrier"), "key": format!("p_{priority}")}}
    })
}

fn has_env(container: &Value, name: &str) -> bool {
    container.get("env").and_then(Value::as_array).is_some_and(|env| {
        env.iter()
            .any(|e| e.get("name").and_then(Value::as_str) == Some(name))
    })
}

/// The container's `KRUISE_CONTAINER_PRIORITY` (0 when absent); every occurrence must parse, the last
/// one wins.
fn declared_priority(container: &Value) -> Result<i64, String> {
    let mut priority = 0;
    for env in container
        .get("env")
        .and_then(Value::as_array)
        .into_iter()
        .flatten()
    {
        if env.get("name").and_then(Value::as_str) == Some(PRIORITY_ENV) {
            let value = env.get("value").and_then(Value::as_str).unwrap_or("");
            priority = atoi(value)?;
        }
    }
    Ok(priority)
}

/// Go's `strconv.Atoi`: optional sign, decimal digits, 64-bit range; its error messages.
fn atoi(s: &str) -> Result<i64, String> {
    let digits = s.strip_prefix(['+', '-']).unwrap_or(s);
    if digits.is_empty() || !digits.bytes().all(|b| b.is_ascii_digit()) {
        return Err(format!("strconv.Atoi: parsing {s:?}: invalid syntax"));
    }
    s.parse::<i64>()
        .map_err(|_| format!("strconv.Atoi: parsing {s:?}: value out of range"))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn atoi_is_gos() {
        assert_eq!(atoi("+5"), Ok(5));
        assert_eq!(atoi("-3"), Ok(-3));
        assert_eq!(atoi("007"), Ok(7));
        assert_eq!(
            atoi("high").unwrap_err(),
            "strconv.Atoi: parsing \"high\": invalid syntax"
        );
        assert_eq!(
            atoi("").unwrap_err(),
            "strconv.Atoi: parsing \"\": invalid syntax"
        );
        assert!(atoi("-").is_err() && atoi(" 1").is_err() && atoi("1_0").is_err());
        assert_eq!(
            atoi("99999999999999999999").unwrap_err(),
            "strconv.Atoi: parsing \"99999999999999999999\": value out of range"
        );
    }
}
