//! The injection audit (kruise-rs; OpenKruise has none): pods the pod webhook would inject if they were
//! created now (active, selected by the selector and namespace, in a namespace the webhook sees, injection
//! not paused — OpenKruise's `PodMatchedSidecarSet` and `injectionStrategy.paused`) that do not hold the
//! SidecarSet's sidecars — created while the webhook was down, or admitted with `failurePolicy: Ignore`.
//! Pods left out by design (a label the selector excludes, a paused injection, `kube-system`) are not
//! reported: replacing them would only bring back another pod without sidecars. They are counted (`status.uninjectedPods`), named in an event, and, when the
//! SidecarSet opts in with [`REPLACE_UNINJECTED_PODS`], the CloneSet owning them is asked to replace them
//! (`apps.kruise.io/specified-delete`), never more than `maxUnavailable` unavailable at once.

use kruise_api::apps_v1beta1::SidecarSet;
use serde_json::{Value, json};

use super::derived::SeenPod;
use crate::pods::{self, SPECIFIED_DELETE};

/// SidecarSet annotation: `"true"` lets the controller ask a pod's CloneSet to replace uninjected pods.
pub const REPLACE_UNINJECTED_PODS: &str = "apps.kruise.io/replace-uninjected-pods";
/// How many pod names the audit event lists.
pub const NAMES_LISTED: usize = 10;

/// Pods the pod webhook would inject now ([`PodFacts::injectable`](super::PodFacts::injectable)) that do
/// not hold the SidecarSet's sidecars.
pub fn uninjected<'a>(pods: &[SeenPod<'a>]) -> Vec<SeenPod<'a>> {
    pods.iter()
        .copied()
        .filter(|p| p.facts.injectable && !p.facts.matched)
        .collect()
}

/// The audit event's message: the count and the first [`NAMES_LISTED`] pods (`namespace/name`).
pub fn message(uninjected: &[SeenPod<'_>]) -> String {
    let mut names: Vec<String> = uninjected
        .iter()
        .take(NAMES_LISTED)
        .map(|p| {
            format!(
                "{}/{}",
                p.pod.metadata.namespace.as_deref().unwrap_or_default(),
                pods::name(p.pod)
            )
        })
        .collect();
    if uninjected.len() > NAMES_LISTED {
        names.push("…".into());
    }
    format!(
        "{} pod(s) match this SidecarSet but lack its sidecars (created while the pod webhook was not called?): {}",
        uninjected.len(),
        names.join(", ")
    )
}

/// Whether the SidecarSet opts in to replacing uninjected pods.
pub fn replaces(set: &SidecarSet) -> bool {
    set.metadata
        .annotations
        .as_ref()
        .and_then(|a| a.get(REPLACE_UNINJECTED_PODS))
        .is_some_and(|v| v == "true")
}

/// The uninjected pods to label for replacement now, with the label patch each: only pods a CloneSet
/// controls (it honours `apps.kruise.io/specified-delete`). Labelled pods and pods not ready — among the
/// uninjected and the `matched` ones, where the replacements arrive — count against `max_unavailable`, so
/// a replacement must be ready before the next ready pod goes; a pod not ready is taken at once (first).
pub fn replacements<'a>(
    uninjected: &[SeenPod<'a>],
    matched: &[SeenPod<'_>],
    max_unavailable: i64,
) -> Vec<(SeenPod<'a>, Value)> {
    let mut unavailable = uninjected
        .iter()
        .chain(matched)
        .filter(|p| p.facts.specified_delete || !p.facts.pod_ready)
        .count() as i64;
    let mut candidates: Vec<SeenPod<'a>> = uninjected
        .iter()
        .copied()
        .filter(|p| p.facts.by_cloneset && !p.facts.specified_delete)
        .collect();
    candidates.sort_by_key(|p| p.facts.pod_ready);
    let mut out = Vec::new();
    for p in candidates {
        if p.facts.pod_ready {
            if unavailable >= max_unavailable {
                break;
            }
            unavailable += 1;
        }
        let patch = json!({"metadata": {
            "labels": {SPECIFIED_DELETE: "true"},
            "resourceVersion": p.pod.metadata.resource_version,
        }});
        out.push((p, patch));
    }
    out
}

#[cfg(test)]
mod tests;
