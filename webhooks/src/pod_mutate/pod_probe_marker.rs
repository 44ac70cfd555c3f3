//! The last step of `/mutate-pod` (OpenKruise's eighth): PodProbeMarker probes for serverless providers (gate
//! `EnablePodProbeMarkerOnServerless`, off by default; OpenKruise `pod_probe_marker.go` in
//! `pkg/webhook/pod/mutating`; docs/podprobemarker.md#serverless).
//!
//! The markers are those named by the pod's `kruise.io/podprobemarker-list` (missing ones skipped), or
//! else every marker of the namespace whose non-empty selector matches the pod. Their probes with a
//! `podConditionType`, on a container of the pod (or a native-sidecar init container), are listed —
//! without marker policies, the first of a container/probe name or of a condition type winning — in
//! `kruise.io/podprobe`, and the contributing markers in `kruise.io/podprobemarker-list`.

use std::collections::BTreeSet;
use std::sync::Arc;

use kruise_api::apps_v1alpha1::{PodContainerProbe, PodProbeMarker};
use kruise_core::Gate;
use kruise_core::names::{POD_PROBE_ANNOTATION, POD_PROBE_MARKER_LIST_ANNOTATION};
use serde_json::Value;

use super::pub_annotation::{is_pods_resource, set_annotations};
use super::{PodContext, StepOutput, StepResult};
use crate::{selector, view::ClusterView};

/// Step of `/mutate-pod`.
pub fn mutate(context: &PodContext<'_, impl ClusterView>, pod: &Value) -> StepResult {
    if !context.settings.enabled(Gate::EnablePodProbeMarkerOnServerless) || !is_pods_resource(context.request)
    {
        return Ok(StepOutput::default());
    }
    let markers = markers(context, pod);
    let containers = container_names(pod);
    let mut keys = BTreeSet::new();
    let mut conditions = BTreeSet::new();
    let mut names = BTreeSet::new();
    let mut probes: Vec<PodContainerProbe> = Vec::new();
    for marker in &markers {
        for probe in &marker.spec.probes {
            let key = format!("{}/{}", probe.container_name, probe.name);
            if probe.pod_condition_type.is_empty()
                || !containers.contains(probe.container_name.as_str())
                || keys.contains(&key)
                || conditions.contains(&probe.pod_condition_type)
            {
                continue;
            }
            keys.insert(key);
            conditions.insert(probe.pod_condition_type.clone());
            names.insert(marker.metadata.name.clone().unwrap_or_default());
            probes.push(PodContainerProbe {
                marker_policy: Vec::new(),
                ..probe.clone()
            });
        }
    }
    if probes.is_empty() {
        return Ok(StepOutput::default());
    }
    let listed = serde_json::to_string(&probes).unwrap_or_default();
    let names = names.into_iter().collect::<Vec<_>>().join(",");
    Ok(StepOutput {
        patch: set_annotations(
            pod,
            &[
                (POD_PROBE_ANNOTATION, &listed),
                (POD_PROBE_MARKER_LIST_ANNOTATION, &names),
            ],
        ),
        ..StepOutput::default()
    })
}

/// The markers named on the pod, or else those of the namespace selecting it.
fn markers(context: &PodContext<'_, impl ClusterView>, pod: &Value) -> Vec<Arc<PodProbeMarker>> {
    let all = &context.view.kinds().pod_probe_markers;
    let listed = crate::patch::get(
        pod,
        &["metadata", "annotations", POD_PROBE_MARKER_LIST_ANNOTATION],
    )
    .and_then(Value::as_str);
    if let Some(listed) = listed {
        return listed
            .split(',')
            .filter_map(|name| all.get(context.namespace, name))
            .collect();
    }
    let labels = selector::raw_labels(pod);
    all.list(Some(context.namespace))
        .into_iter()
        .filter(|m| selector::selects_non_empty(m.spec.selector.as_ref(), &labels).unwrap_or(false))
        .collect()
}

/// The pod's containers and native-sidecar init containers (`restartPolicy: Always`).
fn container_names(pod: &Value) -> BTreeSet<&str> {
    let names = |field: &str, sidecars_only: bool| {
        crate::patch::get(pod, &["spec", field])
            .and_then(Value::as_array)
            .into_iter()
            .flatten()
            .filter(move |c| {
                !sidecars_only || c.get("restartPolicy").and_then(Value::as_str) == Some("Always")
            })
            .filter_map(|c| c.get("name").and_then(Value::as_str))
    };
    names("containers", false)
        .chain(names("initContainers", true))
        .collect()
}
