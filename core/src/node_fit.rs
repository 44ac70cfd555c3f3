//! Whether a daemon pod belongs on a node: the one rule the node-wide workloads (Advanced
//! DaemonSet, BroadcastJob) share, as Kubernetes' DaemonSet controller decides it
//! (`pkg/controller/daemon` `NodeShouldRunDaemonPod`, which OpenKruise's
//! `pkg/controller/daemonset/daemonset_util.go` `nodeShouldRunDaemonPod` repeats):
//!
//! * a template `nodeName` other than the node's: never;
//! * `nodeSelector` and the required node affinity must select the node (an unparsable term
//!   selects nothing, as upstream ignores the parse error);
//! * the pod gets the tolerations every daemon pod gets ([`daemon_tolerations`]); a `NoSchedule` or
//!   `NoExecute` taint it still does not tolerate keeps a new pod off the node, and only an
//!   untolerated `NoExecute` taint also removes a pod already there.
//!
//! Resources and ports are not checked (upstream stopped in 1.18; the scheduler decides).
//!
//! A BroadcastJob pod ([`job_pod_fit`], OpenKruise's `checkNodeFitness` in
//! `pkg/controller/broadcastjob`) gets no added tolerations, and a cordoned node takes it only when
//! it tolerates the `node.kubernetes.io/unschedulable:NoSchedule` taint.

use std::borrow::Cow;

use k8s_openapi::api::core::v1::{Node, PodSpec, Taint, Toleration};

use crate::selector::node;

/// The answer for one node.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Fit {
    /// A pod should be created on the node if none runs there.
    pub should_run: bool,
    /// A pod already on the node may stay.
    pub should_continue_running: bool,
}

impl Fit {
    const NO: Fit = Fit {
        should_run: false,
        should_continue_running: false,
    };
    const YES: Fit = Fit {
        should_run: true,
        should_continue_running: true,
    };
}

/// Taint keys of the node lifecycle (`k8s.io/api/core/v1` `TaintNode…`).
pub mod taints {
    pub const NOT_READY: &str = "node.kubernetes.io/not-ready";
    pub const UNREACHABLE: &str = "node.kubernetes.io/unreachable";
    pub const DISK_PRESSURE: &str = "node.kubernetes.io/disk-pressure";
    pub const MEMORY_PRESSURE: &str = "node.kubernetes.io/memory-pressure";
    pub const PID_PRESSURE: &str = "node.kubernetes.io/pid-pressure";
    pub const UNSCHEDULABLE: &str = "node.kubernetes.io/unschedulable";
    pub const NETWORK_UNAVAILABLE: &str = "node.kubernetes.io/network-unavailable";
}

const NO_SCHEDULE: &str = "NoSchedule";
const NO_EXECUTE: &str = "NoExecute";

/// Whether a pod from `template` belongs on `node`.
pub fn daemon_pod_fit(template: &PodSpec, node: &Node) -> Fit {
    fit_with(template, node, || Cow::Owned(daemon_tolerations(template)))
}

/// Whether a BroadcastJob pod from `template` belongs on `node`: the template's own tolerations
/// only, and a cordoned (`spec.unschedulable`) node takes no new pod unless the template tolerates
/// `node.kubernetes.io/unschedulable:NoSchedule`. A pod already there may stay.
pub fn job_pod_fit(template: &PodSpec, node: &Node) -> Fit {
    let tolerations = template.tolerations.as_deref().unwrap_or_default();
    let mut fit = fit_with(template, node, || Cow::Borrowed(tolerations));
    let cordoned = node.spec.as_ref().and_then(|s| s.unschedulable) == Some(true);
    if cordoned && fit.should_run {
        let taint = Taint {
            key: taints::UNSCHEDULABLE.to_owned(),
            effect: NO_SCHEDULE.to_owned(),
            ..Default::default()
        };
        fit.should_run = tolerations.iter().any(|t| tolerates(t, &taint));
    }
    fit
}

/// `tolerations` are only built for a tainted node (most nodes have no taint).
fn fit_with<'t>(template: &PodSpec, node: &Node, tolerations: impl FnOnce() -> Cow<'t, [Toleration]>) -> Fit {
    let name = node.metadata.name.as_deref().unwrap_or_default();
    if template
        .node_name
        .as_deref()
        .is_some_and(|n| !n.is_empty() && n != name)
    {
        return Fit::NO;
    }
    if !selects(template, node) {
        return Fit::NO;
    }
    let node_taints = node
        .spec
        .as_ref()
        .and_then(|s| s.taints.as_deref())
        .unwrap_or_default();
    if node_taints.is_empty() {
        return Fit::YES;
    }
    let tolerations = tolerations();
    let untolerated = |effects: &[&str]| {
        node_taints.iter().any(|taint| {
            effects.contains(&taint.effect.as_str()) && !tolerations.iter().any(|t| tolerates(t, taint))
        })
    };
    if !untolerated(&[NO_SCHEDULE, NO_EXECUTE]) {
        return Fit::YES;
    }
    Fit {
        should_run: false,
        should_continue_running: !untolerated(&[NO_EXECUTE]),
    }
}

/// `nodeSelector` and required node affinity (`nodeaffinity.GetRequiredNodeAffinity(pod).Match`).
fn selects(template: &PodSpec, node: &Node) -> bool {
    let empty = Default::default();
    let labels = node.metadata.labels.as_ref().unwrap_or(&empty);
    let selector_ok = template
        .node_selector
        .iter()
        .flatten()
        .all(|(key, value)| labels.get(key) == Some(value));
    let required = template
        .affinity
        .as_ref()
        .and_then(|a| a.node_affinity.as_ref())
        .and_then(|a| a.required_during_scheduling_ignored_during_execution.as_ref());
    let affinity_ok = match required {
        None => true,
        Some(selector) => {
            let name = node.metadata.name.as_deref().unwrap_or_default();
            node::matches(&selector.node_selector_terms, labels, name).unwrap_or(false)
        }
    };
    selector_ok && affinity_ok
}

/// The template's tolerations plus those every daemon pod gets
/// (`pkg/controller/daemon/util` `AddOrUpdateDaemonPodTolerations`): not-ready and unreachable
/// (`NoExecute`), disk, memory and PID pressure and unschedulable (`NoSchedule`), and network
/// unavailable (`NoSchedule`) for host-network pods.
pub fn daemon_tolerations(template: &PodSpec) -> Vec<Toleration> {
    let mut all = template.tolerations.clone().unwrap_or_default();
    let exists = |key: &str, effect: &str| Toleration {
        key: Some(key.to_owned()),
        operator: Some("Exists".to_owned()),
        effect: Some(effect.to_owned()),
        ..Default::default()
    };
    let mut added = vec![
        exists(taints::NOT_READY, NO_EXECUTE),
        exists(taints::UNREACHABLE, NO_EXECUTE),
        exists(taints::DISK_PRESSURE, NO_SCHEDULE),
        exists(taints::MEMORY_PRESSURE, NO_SCHEDULE),
        exists(taints::PID_PRESSURE, NO_SCHEDULE),
        exists(taints::UNSCHEDULABLE, NO_SCHEDULE),
    ];
    if template.host_network == Some(true) {
        added.push(exists(taints::NETWORK_UNAVAILABLE, NO_SCHEDULE));
    }
    // Added, or updated in place where the template has one with the same key, operator, value and
    // effect (`v1.Toleration.MatchToleration`): its `tolerationSeconds` goes.
    for toleration in added {
        let same = |t: &Toleration| {
            t.key == toleration.key
                && t.operator == toleration.operator
                && t.value == toleration.value
                && t.effect == toleration.effect
        };
        let mut found = false;
        for existing in all.iter_mut().filter(|t| same(t)) {
            existing.clone_from(&toleration);
            found = true;
        }
        if !found {
            all.push(toleration);
        }
    }
    all
}

/// Whether `toleration` tolerates `taint` (`v1.Toleration.ToleratesTaint`): an empty effect matches
/// every effect, an empty key with `Exists` every key, `Exists` any value, `Equal` (the default) the
/// same value.
pub fn tolerates(toleration: &Toleration, taint: &Taint) -> bool {
    let effect = toleration.effect.as_deref().unwrap_or_default();
    if !effect.is_empty() && effect != taint.effect {
        return false;
    }
    let key = toleration.key.as_deref().unwrap_or_default();
    if !key.is_empty() && key != taint.key {
        return false;
    }
    match toleration.operator.as_deref().unwrap_or_default() {
        "Exists" => true,
        "" | "Equal" => {
            toleration.value.as_deref().unwrap_or_default() == taint.value.as_deref().unwrap_or_default()
        }
        _ => false,
    }
}

#[cfg(test)]
#[path = "node_fit_tests.rs"]
mod tests;
