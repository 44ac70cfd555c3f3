//! The PodProbeMarker planner (OpenKruise's `pkg/controller/podprobemarker`; docs/podprobemarker.md).
//!
//! A marker's probes are copied into the NodePodProbe of each matched pod's node, named
//! `<marker>#<probe>`, with named ports resolved from the pod's container ports (a probe whose port
//! cannot be resolved is left out for that pod). A pod matches when the selector selects it and it
//! is active, scheduled and `Initialized`. Unlike OpenKruise, the planner also takes this marker's
//! probes away from pods that no longer match and drops probes removed from the marker, so a
//! NodePodProbe holds exactly what the markers ask for. A missing NodePodProbe is skipped (the
//! NodePodProbe controller creates it once the node is Ready; its creation triggers this planner).
//!
//! The finalizer `kruise.io/node-pod-probe-cleanup` is added first; on deletion every NodePodProbe is
//! cleared of the marker's probes before the finalizer goes. The status counts the matched pods.
//!
//! Serverless (gate `EnablePodProbeMarkerOnServerless`): a pod on a virtual-kubelet node has no agent;
//! its provider runs the probes the pod webhook listed in `kruise.io/podprobe` and sets the pods'
//! `podConditionType` conditions. The planner then marks the pod from those conditions (True →
//! Succeeded, False → Failed; the policies as [`crate::node_pod_probe::policy_marks`]), and leaves it out
//! of every NodePodProbe.

use std::collections::{BTreeMap, BTreeSet};

use k8s_openapi::api::core::v1::Probe;
use k8s_openapi::apimachinery::pkg::util::intstr::IntOrString;
use kruise_api::PodRecord;
use kruise_api::apps_v1alpha1::{
    ContainerProbe, NodePodProbe, NodePodProbeSpec, POD_PROBE_MARKER_FINALIZER, PROBE_NAME_SEPARATOR,
    PodProbe, PodProbeMarker, PodProbeMarkerStatus, ProbeState,
};
use kruise_core::pod_state;

use crate::node_pod_probe::{Marks, changes, policy_marks};

/// What one pass sees.
pub struct Input<'a> {
    /// The marker.
    pub ppm: &'a PodProbeMarker,
    /// The pods of the marker's namespace.
    pub pods: &'a [&'a PodRecord],
    /// Every NodePodProbe.
    pub node_pod_probes: &'a [&'a NodePodProbe],
    /// The virtual-kubelet nodes whose pods are marked from their conditions; `None` when serverless
    /// marking is off.
    pub serverless_nodes: Option<&'a BTreeSet<String>>,
}

/// Labels and annotations to set on one serverless pod.
#[derive(Debug, PartialEq)]
pub struct PodMarks {
    /// The pod's name (in the marker's namespace).
    pub name: String,
    /// What changes; conditions stay as the provider set them.
    pub marks: Marks,
}

/// A NodePodProbe spec to write, with the resourceVersion it was computed from.
#[derive(Debug, PartialEq)]
pub struct SpecWrite {
    /// The NodePodProbe (node) name.
    pub name: String,
    /// Precondition of the write.
    pub resource_version: Option<String>,
    /// The new spec.
    pub spec: NodePodProbeSpec,
}

/// What to do: the finalizer change first (then look again), else the spec writes, then the status.
#[derive(Debug, Default, PartialEq)]
pub struct Plan {
    /// Add (`Some(true)`) or remove (`Some(false)`) the finalizer.
    pub finalizer: Option<bool>,
    /// NodePodProbe specs that change.
    pub writes: Vec<SpecWrite>,
    /// The status, when it changed.
    pub status: Option<PodProbeMarkerStatus>,
    /// Serverless pods whose labels or annotations change.
    pub pods: Vec<PodMarks>,
}

/// Whether the marker's pods include `pod`: selected, active, scheduled and `Initialized`.
pub fn matches(ppm: &PodProbeMarker, pod: &PodRecord) -> bool {
    kruise_core::selector::selects(ppm.spec.selector.as_ref(), &pod.metadata.labels).unwrap_or(false)
        && pod_state::is_active(pod)
        && pod
            .spec
            .as_ref()
            .and_then(|s| s.node_name.as_deref())
            .is_some_and(|n| !n.is_empty())
        && pod_state::condition(pod, "Initialized").is_some_and(|c| c.status == "True")
}

/// `<marker>#<probe>`.
pub fn probe_name(ppm: &str, probe: &str) -> String {
    format!("{ppm}{PROBE_NAME_SEPARATOR}{probe}")
}

/// Whether a NodePodProbe probe name belongs to marker `ppm`.
pub fn owned_by(name: &str, ppm: &str) -> bool {
    name.split_once(PROBE_NAME_SEPARATOR)
        .is_some_and(|(owner, _)| owner == ppm)
}

/// A container port named `name` in the pod's container `container`.
fn named_port(pod: &PodRecord, container: &str, name: &str) -> Option<i32> {
    pod.spec
        .as_ref()?
        .containers
        .iter()
        .find(|c| c.name == container)?
        .ports
        .iter()
        .flatten()
        .find(|p| p.name.as_deref() == Some(name))
        .map(|p| p.container_port)
}

/// The probe with named ports replaced by numbers; `None` when a name does not resolve.
pub fn resolve_ports(probe: &Probe, pod: &PodRecord, container: &str) -> Option<Probe> {
    let mut out = probe.clone();
    let resolve = |port: &mut IntOrString| -> Option<()> {
        if let IntOrString::String(name) = port {
            // A numeric string is a number, as apimachinery's intstr parses it.
            let n = name
                .parse::<i32>()
                .ok()
                .or_else(|| named_port(pod, container, name))?;
            *port = IntOrString::Int(n);
        }
        Some(())
    };
    if let Some(http) = out.http_get.as_mut() {
        resolve(&mut http.port)?;
    }
    if let Some(tcp) = out.tcp_socket.as_mut() {
        resolve(&mut tcp.port)?;
    }
    Some(out)
}

/// The marker's probes for one pod.
pub fn probes_for(ppm: &PodProbeMarker, pod: &PodRecord) -> Vec<ContainerProbe> {
    let name = ppm.metadata.name.as_deref().unwrap_or_default();
    ppm.spec
        .probes
        .iter()
        .filter_map(|p| {
            Some(ContainerProbe {
                name: probe_name(name, &p.name),
                container_name: p.container_name.clone(),
                probe: resolve_ports(&p.probe, pod, &p.container_name)?,
            })
        })
        .collect()
}

/// The spec with marker `ppm`'s probes (of pods in `namespace`) set to `wanted`, keyed by pod uid:
/// other markers' probes are kept, a pod entry left without probes is dropped.
pub fn with_marker_probes(
    spec: &NodePodProbeSpec,
    namespace: &str,
    ppm: &str,
    wanted: &BTreeMap<&str, (&PodRecord, Vec<ContainerProbe>)>,
) -> NodePodProbeSpec {
    let mut seen = BTreeSet::new();
    let mut pod_probes: Vec<PodProbe> = Vec::new();
    for entry in &spec.pod_probes {
        let mut entry = entry.clone();
        if entry.namespace == namespace {
            entry.probes.retain(|p| !owned_by(&p.name, ppm));
            if let Some((pod, probes)) = wanted.get(entry.uid.as_str())
                && pod.metadata.name.as_deref() == Some(entry.name.as_str())
            {
                seen.insert(entry.uid.clone());
                if entry.ip.is_empty() {
                    entry.ip = pod_ip(pod);
                }
                entry.probes.extend(probes.iter().cloned());
            }
        }
        if !entry.probes.is_empty() {
            pod_probes.push(entry);
        }
    }
    for (uid, (pod, probes)) in wanted {
        if seen.contains(*uid) || probes.is_empty() {
            continue;
        }
        pod_probes.push(PodProbe {
            name: pod.metadata.name.clone().unwrap_or_default(),
            namespace: namespace.to_string(),
            uid: uid.to_string(),
            ip: pod_ip(pod),
            probes: probes.clone(),
        });
    }
    NodePodProbeSpec { pod_probes }
}

fn pod_ip(pod: &PodRecord) -> String {
    pod.status
        .as_ref()
        .and_then(|s| s.pod_ip.clone())
        .unwrap_or_default()
}

/// The marks a serverless pod's conditions ask for: for each probe with a condition type, True means
/// Succeeded and False Failed; a probe whose condition is missing or Unknown marks nothing.
pub fn serverless_marks(ppm: &PodProbeMarker, pod: &PodRecord) -> Marks {
    let mut out = Marks::default();
    for probe in ppm
        .spec
        .probes
        .iter()
        .filter(|p| !p.pod_condition_type.is_empty())
    {
        let state = match pod_state::condition(pod, &probe.pod_condition_type).map(|c| c.status.as_str()) {
            Some("True") => ProbeState::Succeeded,
            Some("False") => ProbeState::Failed,
            _ => continue,
        };
        policy_marks(probe, &state, &mut out);
    }
    out
}

fn node_of(pod: &PodRecord) -> &str {
    pod.spec
        .as_ref()
        .and_then(|s| s.node_name.as_deref())
        .unwrap_or_default()
}

/// One pass.
pub fn plan(input: &Input) -> Plan {
    let ppm = input.ppm;
    let name = ppm.metadata.name.as_deref().unwrap_or_default();
    let namespace = ppm.metadata.namespace.as_deref().unwrap_or_default();
    let has_finalizer = ppm
        .metadata
        .finalizers
        .iter()
        .flatten()
        .any(|f| f == POD_PROBE_MARKER_FINALIZER);
    let deleting = ppm.metadata.deletion_timestamp.is_some();
    if deleting && !has_finalizer {
        return Plan::default();
    }
    if !deleting && !has_finalizer {
        return Plan {
            finalizer: Some(true),
            ..Plan::default()
        };
    }
    let matched: Vec<&PodRecord> = if deleting {
        Vec::new()
    } else {
        input.pods.iter().copied().filter(|p| matches(ppm, p)).collect()
    };
    let mut by_node: BTreeMap<&str, BTreeMap<&str, (&PodRecord, Vec<ContainerProbe>)>> = BTreeMap::new();
    let mut pods = Vec::new();
    for pod in &matched {
        let node = node_of(pod);
        if input.serverless_nodes.is_some_and(|nodes| nodes.contains(node)) {
            let marks = serverless_marks(ppm, pod);
            if changes(&marks, pod) {
                pods.push(PodMarks {
                    name: pod.metadata.name.clone().unwrap_or_default(),
                    marks,
                });
            }
            continue;
        }
        let uid = pod.metadata.uid.as_deref().unwrap_or_default();
        by_node
            .entry(node)
            .or_default()
            .insert(uid, (pod, probes_for(ppm, pod)));
    }
    let empty = BTreeMap::new();
    let writes: Vec<SpecWrite> = input
        .node_pod_probes
        .iter()
        .filter_map(|npp| {
            let node = npp.metadata.name.as_deref().unwrap_or_default();
            let wanted = by_node.get(node).unwrap_or(&empty);
            let spec = with_marker_probes(&npp.spec, namespace, name, wanted);
            (spec != npp.spec).then(|| SpecWrite {
                name: node.to_string(),
                resource_version: npp.metadata.resource_version.clone(),
                spec,
            })
        })
        .collect();
    if deleting {
        return Plan {
            finalizer: writes.is_empty().then_some(false),
            writes,
            ..Plan::default()
        };
    }
    let status = PodProbeMarkerStatus {
        observed_generation: ppm.metadata.generation.unwrap_or(0),
        matched_pods: matched.len() as i64,
    };
    Plan {
        finalizer: None,
        writes,
        status: (ppm.status.as_ref() != Some(&status)).then_some(status),
        pods,
    }
}

#[cfg(test)]
mod tests;
