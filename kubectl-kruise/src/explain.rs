//! `explain`: for every SidecarSet, PodUnavailableBudget and WorkloadSpread, and for the launch-priority
//! rule, whether it applies to a pod and, when it does not, why.
//!
//! Nothing here restates a rule. Each answer is a run of kruise-webhooks' own pure handlers on an
//! in-memory view (the same `MemoryView` `kruise admit` builds): the pod is admitted as a CREATE against
//! a view holding the one policy, and the result is read off the patched pod (the injected-list,
//! related-PUB and matched-WorkloadSpread annotations, the barrier env) or the eviction decision. The
//! reasons are counterfactuals, each one more run of the same code: "injection is paused" means that
//! the same SidecarSet without `injectionStrategy.paused` would be injected, and so on
//! (docs/kubectl-kruise.md, "explain").

mod cluster;
mod report;

use kruise_webhooks::{AdmissionRequest, Decision, MemoryView, Settings, Webhook, patch};
use serde_json::{Value, json};

pub use cluster::{cluster_objects, file_objects, read_pod_manifest};
pub use report::{Finding, Report};

use crate::Error;

/// The state explained against: every object but the policies, and the policies by kind.
pub struct State {
    pub base: Vec<Value>,
    pub sidecar_sets: Vec<Value>,
    pub budgets: Vec<Value>,
    pub spreads: Vec<Value>,
}

impl State {
    /// Sorts objects into the base and the three policy kinds.
    pub fn new(objects: Vec<Value>) -> State {
        let mut state = State {
            base: Vec::new(),
            sidecar_sets: Vec::new(),
            budgets: Vec::new(),
            spreads: Vec::new(),
        };
        for object in objects {
            match object.get("kind").and_then(Value::as_str) {
                Some("SidecarSet") => state.sidecar_sets.push(object),
                Some("PodUnavailableBudget") => state.budgets.push(object),
                Some("WorkloadSpread") => state.spreads.push(object),
                _ => state.base.push(object),
            }
        }
        let name = |o: &Value| {
            o.pointer("/metadata/name")
                .and_then(Value::as_str)
                .unwrap_or_default()
                .to_string()
        };
        state.sidecar_sets.sort_by_key(name);
        state.budgets.sort_by_key(name);
        state.spreads.sort_by_key(name);
        state
    }

    /// A view of the base objects, `extra` and the pod itself.
    fn view(&self, extra: &[&Value], pod: Option<&Value>) -> Result<MemoryView, Error> {
        let mut view = MemoryView::default();
        for object in self.base.iter().chain(extra.iter().copied()).chain(pod) {
            view.add(object.clone())
                .map_err(|e| Error::Failed(format!("cannot read the cluster state: {e}")))?;
        }
        Ok(view)
    }

    /// The pod as `/mutate-pod` leaves it on CREATE, with `policies` in the view (and everything for
    /// the other kinds when `all`).
    fn admit(&self, pod: &Value, policies: &[&Value]) -> Result<(Value, Decision), Error> {
        let view = self.view(policies, None)?;
        let decision = Webhook::from_path("/mutate-pod")
            .ok_or_else(|| Error::Failed("no /mutate-pod webhook".to_string()))?
            .handle(&create_request(pod)?, &view, &Settings::default());
        let admitted =
            patch::apply(pod, &decision.patch).map_err(|e| Error::Failed(format!("patch failed: {e}")))?;
        Ok((admitted, decision))
    }

    /// Every policy at once: what admission would really do.
    fn all_policies(&self) -> Vec<&Value> {
        self.sidecar_sets
            .iter()
            .chain(&self.budgets)
            .chain(&self.spreads)
            .collect()
    }
}

fn namespace_of(pod: &Value) -> &str {
    pod.pointer("/metadata/namespace")
        .and_then(Value::as_str)
        .filter(|n| !n.is_empty())
        .unwrap_or("default")
}

fn create_request(pod: &Value) -> Result<AdmissionRequest, Error> {
    Ok(serde_json::from_value(json!({
        "uid": "kubectl-kruise-explain",
        "kind": {"group": "", "version": "v1", "kind": "Pod"},
        "resource": {"group": "", "version": "v1", "resource": "pods"},
        "name": pod.pointer("/metadata/name").and_then(Value::as_str).unwrap_or_default(),
        "namespace": namespace_of(pod),
        "operation": "CREATE",
        "userInfo": {"username": "kubectl-kruise"},
        "object": pod,
        "dryRun": false,
    }))?)
}

fn eviction_request(pod: &Value) -> Result<AdmissionRequest, Error> {
    let name = pod
        .pointer("/metadata/name")
        .and_then(Value::as_str)
        .unwrap_or_default();
    let namespace = namespace_of(pod);
    Ok(serde_json::from_value(json!({
        "uid": "kubectl-kruise-explain",
        "kind": {"group": "policy", "version": "v1", "kind": "Eviction"},
        "resource": {"group": "", "version": "v1", "resource": "pods"},
        "subResource": "eviction",
        "name": name,
        "namespace": namespace,
        "operation": "CREATE",
        "userInfo": {"username": "kubectl-kruise"},
        "object": {"apiVersion": "policy/v1", "kind": "Eviction",
                   "metadata": {"name": name, "namespace": namespace}, "deleteOptions": {"dryRun": ["All"]}},
        "dryRun": true,
    }))?)
}

fn annotation<'a>(pod: &'a Value, key: &str) -> Option<&'a str> {
    pod.pointer("/metadata/annotations")
        .and_then(|a| a.get(key))
        .and_then(Value::as_str)
}

fn name(object: &Value) -> String {
    object
        .pointer("/metadata/name")
        .and_then(Value::as_str)
        .unwrap_or_default()
        .to_string()
}

/// The pod as if created now: what earlier injections recorded on it is removed, so that the
/// injected-list annotation after admission says what would be injected today.
fn as_new(pod: &Value) -> Value {
    let mut pod = pod.clone();
    if let Some(a) = pod
        .pointer_mut("/metadata/annotations")
        .and_then(Value::as_object_mut)
    {
        for key in [
            kruise_core::names::SIDECARSET_INJECTED_LIST_ANNOTATION,
            kruise_core::names::SIDECARSET_HASH_ANNOTATION,
            kruise_core::names::SIDECARSET_HASH_WITHOUT_IMAGE_ANNOTATION,
            report::RELATED_PUB,
        ] {
            a.remove(key);
        }
    }
    pod
}

/// Explains every policy for `pod`.
pub fn explain(state: &State, pod: &Value) -> Result<Report, Error> {
    let fresh = as_new(pod);
    let mut report = Report::new(pod);
    for s in &state.sidecar_sets {
        report.sidecar_sets.push(report::sidecar_set(state, &fresh, s)?);
    }
    for b in &state.budgets {
        report.budgets.push(report::budget(state, &fresh, b)?);
    }
    for w in &state.spreads {
        report.spreads.push(report::spread(state, pod, w)?);
    }
    report.launch_priority = Some(report::launch_priority(state, &fresh)?);
    Ok(report)
}

/// The pod admitted by every policy, and the eviction decision with `budget` in the view.
fn evict(state: &State, pod: &Value, budget: &Value) -> Result<Decision, Error> {
    let view = state.view(&[budget], Some(pod))?;
    Ok(Webhook::from_path("/validate-pod")
        .ok_or_else(|| Error::Failed("no /validate-pod webhook".to_string()))?
        .handle(&eviction_request(pod)?, &view, &Settings::default()))
}

#[cfg(test)]
#[path = "explain/tests.rs"]
mod tests;
