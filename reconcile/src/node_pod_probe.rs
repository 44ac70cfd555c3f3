//! The NodePodProbe planner (OpenKruise's `pkg/controller/nodepodprobe`; docs/podprobemarker.md).
//!
//! - A Ready node that is not being deleted gets an empty NodePodProbe named after it
//!   ([`wants_node_pod_probe`]); a NodePodProbe whose node is gone or deleting is deleted.
//! - Pod entries whose pod is gone, inactive or replaced (another uid) leave the spec.
//! - Each remaining pod's probe results are marked on it ([`marks`]): the probe's `podConditionType`
//!   is True for Succeeded and False otherwise (times and message from the result); the labels and
//!   annotations of the policy for the state are set and those of the other policy removed. All of a
//!   pod's marks go in one `pods/status` write, made only when something changes ([`Marks::apply`]).

use std::collections::BTreeMap;

use k8s_openapi::api::core::v1::{Node, PodCondition};
use kruise_api::PodRecord;
use kruise_api::apps_v1alpha1::{
    NodePodProbe, NodePodProbeSpec, PROBE_NAME_SEPARATOR, PodContainerProbe, PodProbeMarker, PodProbeStatus,
    ProbeState,
};
use kruise_core::pod_state;

pub mod agent;

/// Whether `node` should have a NodePodProbe: Ready and not being deleted.
pub fn wants_node_pod_probe(node: &Node) -> bool {
    node.metadata.deletion_timestamp.is_none()
        && node
            .status
            .as_ref()
            .and_then(|s| s.conditions.as_ref())
            .into_iter()
            .flatten()
            .any(|c| c.type_ == "Ready" && c.status == "True")
}

/// What one pass over a NodePodProbe sees.
pub struct Input<'a, P, M>
where
    P: Fn(&str, &str) -> Option<&'a PodRecord>,
    M: Fn(&str, &str) -> Option<&'a PodProbeMarker>,
{
    /// The NodePodProbe.
    pub npp: &'a NodePodProbe,
    /// Its node, if it exists.
    pub node: Option<&'a Node>,
    /// A pod by namespace and name.
    pub pod: P,
    /// A PodProbeMarker by namespace and name.
    pub marker: M,
}

/// What to do.
#[derive(Debug, Default, PartialEq)]
pub struct Plan {
    /// Delete the NodePodProbe (its node is gone); nothing else is planned.
    pub delete: bool,
    /// The spec without the entries of gone pods, when it changes.
    pub spec: Option<NodePodProbeSpec>,
    /// The marks of each pod (namespace, name, uid) whose cached copy they would change.
    pub pods: Vec<(String, String, String, Marks)>,
}

/// The marks one pod's probe results ask for.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Marks {
    /// Conditions to set (replacing a condition of the type whose status or message differs).
    pub conditions: Vec<PodCondition>,
    /// Labels to set (`Some`) or remove (`None`).
    pub labels: BTreeMap<String, Option<String>>,
    /// Annotations to set (`Some`) or remove (`None`).
    pub annotations: BTreeMap<String, Option<String>>,
}

impl Marks {
    /// Applies the marks; true when anything changed.
    pub fn apply(
        &self,
        labels: &mut BTreeMap<String, String>,
        annotations: &mut BTreeMap<String, String>,
        conditions: &mut Vec<PodCondition>,
    ) -> bool {
        let mut changed = false;
        for (map, wanted) in [(labels, &self.labels), (annotations, &self.annotations)] {
            for (k, v) in wanted {
                changed |= match v {
                    Some(v) => map.insert(k.clone(), v.clone()).as_ref() != Some(v),
                    None => map.remove(k).is_some(),
                };
            }
        }
        for c in &self.conditions {
            match conditions.iter_mut().find(|have| have.type_ == c.type_) {
                Some(have) if have.status == c.status && have.message == c.message => {}
                Some(have) => {
                    *have = c.clone();
                    changed = true;
                }
                None => {
                    conditions.push(c.clone());
                    changed = true;
                }
            }
        }
        changed
    }

    fn is_empty(&self) -> bool {
        self.conditions.is_empty() && self.labels.is_empty() && self.annotations.is_empty()
    }
}

/// The marks of one pod's probe results; results of gone or deleting markers, or of probes no
/// longer in their marker, are ignored.
pub fn marks<'a>(
    namespace: &str,
    status: &PodProbeStatus,
    marker: impl Fn(&str, &str) -> Option<&'a PodProbeMarker>,
) -> Marks {
    let mut out = Marks::default();
    for state in &status.probe_states {
        if matches!(&state.state, ProbeState::Other(s) if s.is_empty()) {
            continue;
        }
        let Some((ppm_name, probe_name)) = state.name.split_once(PROBE_NAME_SEPARATOR) else {
            continue;
        };
        let Some(ppm) = marker(namespace, ppm_name).filter(|p| p.metadata.deletion_timestamp.is_none())
        else {
            continue;
        };
        let Some(probe) = ppm.spec.probes.iter().find(|p| p.name == probe_name) else {
            continue;
        };
        let condition = probe.pod_condition_type.as_str();
        if !condition.is_empty() && !out.conditions.iter().any(|c| c.type_ == condition) {
            out.conditions.push(PodCondition {
                type_: condition.to_string(),
                status: if state.state == ProbeState::Succeeded {
                    "True"
                } else {
                    "False"
                }
                .to_string(),
                last_probe_time: state.last_probe_time.clone(),
                last_transition_time: state.last_transition_time.clone(),
                message: (!state.message.is_empty()).then(|| state.message.clone()),
                ..PodCondition::default()
            });
        }
        policy_marks(probe, &state.state, &mut out);
    }
    out
}

/// The labels and annotations `probe`'s marker policies ask for in `state`: those of the policy for the
/// state set, those of the other policy (for Unknown, the last listed) removed.
pub fn policy_marks(probe: &PodContainerProbe, state: &ProbeState, out: &mut Marks) {
    let matched = probe.marker_policy.iter().find(|p| p.state == *state);
    let opposite = probe.marker_policy.iter().rev().find(|p| p.state != *state);
    if let Some(opposite) = opposite {
        for k in opposite.labels.keys() {
            out.labels.insert(k.clone(), None);
        }
        for k in opposite.annotations.keys() {
            out.annotations.insert(k.clone(), None);
        }
    }
    if let Some(matched) = matched {
        for (k, v) in &matched.labels {
            out.labels.insert(k.clone(), Some(v.clone()));
        }
        for (k, v) in &matched.annotations {
            out.annotations.insert(k.clone(), Some(v.clone()));
        }
    }
}

/// Whether the marks change the cached pod.
pub fn changes(marks: &Marks, pod: &PodRecord) -> bool {
    let mut labels = pod.metadata.labels.to_btree_map().unwrap_or_default();
    let mut annotations = pod.metadata.annotations.to_btree_map().unwrap_or_default();
    let mut conditions = conditions_of(pod);
    marks.apply(&mut labels, &mut annotations, &mut conditions)
}

/// The cached pod's conditions, as the marks apply to them.
pub fn conditions_of(pod: &PodRecord) -> Vec<PodCondition> {
    let recorded = pod.status.as_ref().and_then(|s| s.conditions.clone());
    recorded.into_iter().flatten().map(PodCondition::from).collect()
}

/// One pass.
pub fn plan<'a, P, M>(input: &Input<'a, P, M>) -> Plan
where
    P: Fn(&str, &str) -> Option<&'a PodRecord>,
    M: Fn(&str, &str) -> Option<&'a PodProbeMarker>,
{
    if input.node.is_none_or(|n| n.metadata.deletion_timestamp.is_some()) {
        return Plan {
            delete: true,
            ..Plan::default()
        };
    }
    let live = |ns: &str, name: &str, uid: &str| {
        (input.pod)(ns, name).filter(|p| pod_state::is_active(p) && p.metadata.uid.as_deref() == Some(uid))
    };
    let spec = &input.npp.spec;
    let kept: Vec<_> = spec
        .pod_probes
        .iter()
        .filter(|e| live(&e.namespace, &e.name, &e.uid).is_some())
        .cloned()
        .collect();
    let pruned = (kept.len() != spec.pod_probes.len()).then_some(NodePodProbeSpec { pod_probes: kept });
    let mut pods = Vec::new();
    for status in input.npp.status.iter().flat_map(|s| &s.pod_probe_statuses) {
        let Some(pod) = live(&status.namespace, &status.name, &status.uid) else {
            continue;
        };
        let marks = marks(&status.namespace, status, &input.marker);
        if !marks.is_empty() && changes(&marks, pod) {
            pods.push((
                status.namespace.clone(),
                status.name.clone(),
                status.uid.clone(),
                marks,
            ));
        }
    }
    Plan {
        delete: false,
        spec: pruned,
        pods,
    }
}

#[cfg(test)]
mod tests;
