//! Adoption of pods created before the WorkloadSpread (no matched-workloadspread annotation naming it):
//! a scheduled pod goes to the subset that fits its node best, and is patched with the matched annotation
//! and the subset patch's `metadata` (only the annotation when the WorkloadSpread has
//! [`IGNORE_PATCH_EXISTING_PODS_METADATA`] `"true"`). Unscheduled pods, pods on unknown nodes and pods no
//! subset fits stay in the fake subset.
//!
//! A subset fits when its tolerations tolerate every taint of the node and its `requiredNodeSelector`
//! matches the node. Among fitting subsets the score is
//! `100 × preferred-node score + 10 × (patch labels already on the pod) + (subset still missing replicas)`;
//! the first subset wins ties. Differences from OpenKruise: [`PodRecord`] keeps neither the pod's own
//! tolerations and required node affinity nor its full spec, so only the subset's are checked, and "patch
//! already reflected" compares the patch's labels (OpenKruise merges the whole patch, ignoring
//! annotations).

use std::collections::BTreeMap;

use k8s_openapi::api::core::v1::{Node, NodeSelectorTerm, Taint, Toleration};
use kruise_api::{
    PodRecord,
    apps_v1beta1::{MATCHED_WORKLOADSPREAD_ANNOTATION, WorkloadSpread, WorkloadSpreadSubset},
};
use kruise_core::selector::node;
use serde_json::{Map, Value, json};

pub const IGNORE_PATCH_EXISTING_PODS_METADATA: &str =
    "workloadspread.kruise.io/ignore-patch-existing-pods-metadata";

/// Kubernetes' node selector term matching on the node's labels and name
/// ([`kruise_core::selector::node`]); a term that cannot be evaluated (an invalid requirement) matches
/// nothing, as OpenKruise's lazy-error node selector does.
pub fn term_matches(term: &NodeSelectorTerm, node: &Node) -> bool {
    let name = node.metadata.name.as_deref().unwrap_or_default();
    node::term_matches(term, &node.metadata.labels.as_ref(), name).unwrap_or(false)
}

/// Kubernetes' `Toleration.ToleratesTaint`.
pub fn tolerates(toleration: &Toleration, taint: &Taint) -> bool {
    let effect = toleration.effect.as_deref().unwrap_or_default();
    if !effect.is_empty() && effect != taint.effect {
        return false;
    }
    let key = toleration.key.as_deref().unwrap_or_default();
    let operator = toleration.operator.as_deref().unwrap_or("Equal");
    if !key.is_empty() && key != taint.key {
        return false;
    }
    if key.is_empty() && operator != "Exists" {
        return false;
    }
    match operator {
        "Exists" => true,
        "Equal" | "" => {
            toleration.value.as_deref().unwrap_or_default() == taint.value.as_deref().unwrap_or_default()
        }
        _ => false,
    }
}

/// Whether the subset's tolerations tolerate every taint of the node and its required term matches it.
pub fn fits(subset: &WorkloadSpreadSubset, node: &Node) -> bool {
    let tolerations = subset.tolerations.as_deref().unwrap_or_default();
    let taints = node
        .spec
        .as_ref()
        .and_then(|s| s.taints.as_deref())
        .unwrap_or_default();
    taints
        .iter()
        .all(|taint| tolerations.iter().any(|t| tolerates(t, taint)))
        && subset
            .required_node_selector
            .as_ref()
            .is_none_or(|t| term_matches(t, node))
}

/// The summed weights of the subset's preferred terms that match the node.
pub fn preferred_score(subset: &WorkloadSpreadSubset, node: &Node) -> i64 {
    subset
        .preferred_node_selector
        .iter()
        .flatten()
        .filter(|p| term_matches(&p.preference, node))
        .map(|p| i64::from(p.weight))
        .sum()
}

fn patch_metadata(subset: &WorkloadSpreadSubset) -> Option<&Map<String, Value>> {
    subset.patch.as_ref()?.get("metadata")?.as_object()
}

/// Whether the labels of the subset patch are already the pod's (a subset with a patch without labels
/// counts as reflected; one without a patch does not score).
pub fn patch_reflected(subset: &WorkloadSpreadSubset, pod: &PodRecord) -> bool {
    if subset.patch.is_none() {
        return false;
    }
    let labels = &pod.metadata.labels;
    let patch_labels = patch_metadata(subset)
        .and_then(|m| m.get("labels"))
        .and_then(Value::as_object);
    patch_labels.into_iter().flatten().all(|(k, v)| match v {
        Value::Null => !labels.contains_key(k),
        Value::String(s) => labels.get(k) == Some(s.as_str()),
        _ => false,
    })
}

/// The index of the subset the pod on `node` is adopted into; `missing` is each subset's missing replicas
/// (by name).
pub fn choose(
    ws: &WorkloadSpread,
    pod: &PodRecord,
    node: &Node,
    missing: &BTreeMap<String, i64>,
) -> Option<usize> {
    let mut best: Option<(usize, i64)> = None;
    for (i, subset) in ws.spec.subsets.iter().enumerate() {
        if !fits(subset, node) {
            continue;
        }
        let score = 100 * preferred_score(subset, node)
            + 10 * i64::from(patch_reflected(subset, pod))
            + i64::from(missing.get(&subset.name).is_some_and(|m| *m > 0));
        if best.is_none_or(|(_, s)| score > s) {
            best = Some((i, score));
        }
    }
    best.map(|(i, _)| i)
}

/// The merge patch that adopts a pod into `subset`: the subset patch's `metadata` (unless the
/// WorkloadSpread says to ignore it) plus the matched annotation, `{"name", "subset"}` as OpenKruise
/// writes it for adopted pods.
pub fn adoption_patch(ws: &WorkloadSpread, subset: &WorkloadSpreadSubset) -> Value {
    let ignore = ws
        .metadata
        .annotations
        .as_ref()
        .and_then(|a| a.get(IGNORE_PATCH_EXISTING_PODS_METADATA))
        .is_some_and(|v| v.eq_ignore_ascii_case("true"));
    let mut metadata = if ignore {
        Map::new()
    } else {
        patch_metadata(subset).cloned().unwrap_or_default()
    };
    let matched =
        json!({"name": ws.metadata.name.as_deref().unwrap_or(""), "subset": subset.name}).to_string();
    let annotations = metadata.entry("annotations").or_insert_with(|| json!({}));
    if !annotations.is_object() {
        *annotations = json!({});
    }
    annotations[MATCHED_WORKLOADSPREAD_ANNOTATION] = Value::String(matched);
    json!({"metadata": metadata})
}

#[cfg(test)]
mod tests;
