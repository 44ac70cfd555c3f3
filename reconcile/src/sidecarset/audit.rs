//! The injection audit (kruise-rs; OpenKruise has none): active pods the SidecarSet selects (selector and
//! namespace) that do not hold its sidecars — created while the webhook was down, or admitted with
//! `failurePolicy: Ignore`. They are counted (`status.uninjectedPods`), named in an event, and, when the
//! SidecarSet opts in with [`REPLACE_UNINJECTED_PODS`], the CloneSet owning them is asked to replace them
//! (`apps.kruise.io/specified-delete`), never more than `maxUnavailable` unavailable at once.

use kruise_api::PodRecord;
use kruise_api::apps_v1beta1::SidecarSet;
use kruise_core::owner::controller_of_meta;
use kruise_core::pod_state;
use kruise_core::selector::selects_non_empty;
use serde_json::{Value, json};

use super::pod_facts::{self, SetFacts};
use crate::pods::{self, SPECIFIED_DELETE};

/// SidecarSet annotation: `"true"` lets the controller ask a pod's CloneSet to replace uninjected pods.
pub const REPLACE_UNINJECTED_PODS: &str = "apps.kruise.io/replace-uninjected-pods";
/// How many pod names the audit event lists.
pub const NAMES_LISTED: usize = 10;

/// Active pods `set` selects that it has not injected.
pub fn uninjected<'a>(set: &SidecarSet, facts: &SetFacts, pods: &[&'a PodRecord]) -> Vec<&'a PodRecord> {
    pods.iter()
        .copied()
        .filter(|p| {
            let labels = p.metadata.labels.clone().unwrap_or_default();
            selects_non_empty(set.spec.selector.as_ref(), &labels).unwrap_or(false)
                && pods::is_active(p)
                && !pod_facts::is_matched(set, facts, p)
        })
        .collect()
}

/// The audit event's message: the count and the first [`NAMES_LISTED`] pods (`namespace/name`).
pub fn message(uninjected: &[&PodRecord]) -> String {
    let mut names: Vec<String> = uninjected
        .iter()
        .take(NAMES_LISTED)
        .map(|p| {
            format!(
                "{}/{}",
                p.metadata.namespace.as_deref().unwrap_or_default(),
                pods::name(p)
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
    uninjected: &[&'a PodRecord],
    matched: &[&PodRecord],
    max_unavailable: i64,
) -> Vec<(&'a PodRecord, Value)> {
    let by_cloneset = |p: &PodRecord| controller_of_meta(&p.metadata).is_some_and(|o| o.kind == "CloneSet");
    let mut unavailable = uninjected
        .iter()
        .chain(matched)
        .filter(|p| pods::has_specified_delete_label(p) || !pod_state::is_ready(p))
        .count() as i64;
    let mut candidates: Vec<&PodRecord> = uninjected
        .iter()
        .copied()
        .filter(|p| by_cloneset(p) && !pods::has_specified_delete_label(p))
        .collect();
    candidates.sort_by_key(|p| pod_state::is_ready(p));
    let mut out = Vec::new();
    for p in candidates {
        if pod_state::is_ready(p) {
            if unavailable >= max_unavailable {
                break;
            }
            unavailable += 1;
        }
        let patch = json!({"metadata": {
            "labels": {SPECIFIED_DELETE: "true"},
            "resourceVersion": p.metadata.resource_version,
        }});
        out.push((p, patch));
    }
    out
}

#[cfg(test)]
mod tests;
