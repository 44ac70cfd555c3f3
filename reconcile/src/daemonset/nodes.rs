//! What one pass knows: the pods of each node (each read once, [`PodView`]) and whether the node
//! should run one, in node-name order, and the DaemonSet's parameters resolved against the live
//! desired count.

use foldhash::HashMap;
use k8s_openapi::api::apps::v1::ControllerRevision;
use k8s_openapi::api::core::v1::{Node, PodSpec, PodTemplateSpec};
use k8s_openapi::jiff::Timestamp;
use kruise_api::PodRecord;
use kruise_api::apps_v1beta1::{
    DEFAULT_BURST_REPLICAS, DEPRECATED_TEMPLATE_GENERATION_ANNOTATION, DaemonSet,
    DaemonSetUpdateStrategyType, POD_TEMPLATE_GENERATION_LABEL, RollingUpdateDaemonSet,
};
use kruise_api::common::LifecycleHook;
use kruise_core::node_fit::{Fit, daemon_pod_fit};
use smallvec::SmallVec;

use crate::int_or_percent::{InvalidIntOrPercent, scaled_i32};
use crate::pods;

/// The node a pod runs on or is pinned to (`spec.nodeName`, else its node affinity's single name).
pub fn node_of(pod: &PodRecord) -> Option<&str> {
    let spec = pod.spec.as_ref()?;
    spec.node_name
        .as_deref()
        .filter(|n| !n.is_empty())
        .or(spec.pinned_node.as_deref())
}

/// The pod is being deleted.
pub fn terminating(pod: &PodRecord) -> bool {
    pod.metadata.deletion_timestamp.is_some()
}

/// What a pass asks of one pod, read from it once: manage, the rolling update and the status all
/// ask the same questions of every pod.
#[derive(Debug, Clone, Copy)]
pub struct PodView<'a> {
    /// The pod.
    pub pod: &'a PodRecord,
    /// At the current revision.
    pub current: bool,
    /// Ready.
    pub ready: bool,
    /// Ready for `minReadySeconds`, with `InPlaceUpdateReady` absent or True ([`Ctx::available`]).
    pub available: bool,
    /// Being deleted.
    pub terminating: bool,
    /// In the lifecycle state `PreparingDelete` (held by the `preDelete` hook).
    pub preparing_delete: bool,
    /// In phase `Failed`.
    pub failed: bool,
}

/// One node and the DaemonSet's pods on it.
#[derive(Debug)]
pub struct NodePods<'a> {
    /// The node.
    pub node: &'a Node,
    /// Its name.
    pub name: &'a str,
    /// Whether a daemon pod belongs there.
    pub fit: Fit,
    /// Every pod on the node, terminating ones included, oldest first: scheduled pods before
    /// unscheduled ones, then by creation time, then by name. (Almost every node has one.)
    pub pods: SmallVec<[PodView<'a>; 1]>,
}

impl<'a> NodePods<'a> {
    /// The pods that are not being deleted, oldest first.
    pub fn live(&self) -> impl Iterator<Item = &PodView<'a>> + '_ {
        self.pods.iter().filter(|p| !p.terminating)
    }
}

/// The sort key of "oldest first".
fn age_key(pod: &PodRecord) -> (bool, Option<Timestamp>, &str) {
    (!pods::is_scheduled(pod), pods::created(pod), pods::name(pod))
}

/// What one pass knows.
#[derive(Debug)]
pub struct Ctx<'a> {
    /// The DaemonSet.
    pub ds: &'a DaemonSet,
    /// Every node with the DaemonSet's pods on it, by name.
    pub nodes: Vec<NodePods<'a>>,
    /// The current revision's hash.
    pub hash: &'a str,
    /// The DaemonSet's generation, where it still uses upstream's legacy template-generation annotation.
    pub legacy_generation: Option<String>,
    /// The revisions (to find a pod's old template).
    pub revisions: &'a [ControllerRevision],
    /// Nodes that should run a pod, now (the denominator of every int-or-percent here).
    pub desired: i32,
    /// Now.
    pub now: Timestamp,
    /// The current revision's template as stored (what in-place updates compare old revisions with).
    pub update_template: Option<PodTemplateSpec>,
    /// Env fed from metadata may change in place on pods the node agent serves ([`super::Input`]).
    pub env_from_metadata: bool,
}

impl<'a> Ctx<'a> {
    /// The context of a pass, before [`Ctx::place`] puts the nodes and pods in.
    pub fn new(
        ds: &'a DaemonSet,
        hash: &'a str,
        revisions: &'a [ControllerRevision],
        now: Timestamp,
    ) -> Self {
        let legacy = ds
            .metadata
            .annotations
            .as_ref()
            .is_some_and(|a| a.contains_key(DEPRECATED_TEMPLATE_GENERATION_ANNOTATION));
        Ctx {
            ds,
            nodes: Vec::new(),
            hash,
            legacy_generation: ds.metadata.generation.filter(|_| legacy).map(|g| g.to_string()),
            revisions,
            desired: 0,
            now,
            update_template: None,
            env_from_metadata: false,
        }
    }

    /// Groups `all` by node (nodes sorted by name) with each node's fit for `template`, and counts the
    /// desired nodes. Returns the pods naming no listed node.
    pub fn place(
        &mut self,
        template: &PodSpec,
        nodes: &'a [Node],
        all: &'a [PodRecord],
    ) -> Vec<&'a PodRecord> {
        let mut out: Vec<NodePods<'a>> = nodes
            .iter()
            .map(|node| NodePods {
                node,
                name: node.metadata.name.as_deref().unwrap_or(""),
                fit: daemon_pod_fit(template, node),
                pods: SmallVec::new(),
            })
            .collect();
        out.sort_unstable_by(|a, b| a.name.cmp(b.name));
        let index: HashMap<&str, usize> = out.iter().enumerate().map(|(i, n)| (n.name, i)).collect();
        let mut orphans = Vec::new();
        for pod in all {
            let at = node_of(pod).and_then(|n| index.get(n).copied());
            match at {
                Some(i) => out[i].pods.push(self.view(pod)),
                None => orphans.push(pod),
            }
        }
        for n in &mut out {
            if n.pods.len() > 1 {
                n.pods.sort_by(|a, b| age_key(a.pod).cmp(&age_key(b.pod)));
            }
        }
        let desired = out.iter().filter(|n| n.fit.should_run).count();
        self.desired = i32::try_from(desired).unwrap_or(i32::MAX);
        self.nodes = out;
        orphans
    }

    /// What this pass asks of `pod`.
    pub fn view<'p>(&self, pod: &'p PodRecord) -> PodView<'p> {
        let keys = pods::key_labels(pod);
        PodView {
            pod,
            current: self.is_current_with(pod, keys.revision),
            ready: pods::is_ready(pod),
            available: self.available(pod),
            terminating: terminating(pod),
            preparing_delete: keys.lifecycle_state == "PreparingDelete",
            failed: pods::phase(pod) == "Failed",
        }
    }

    /// The pod (whose hash label is `revision`) is at the current revision: that hash, or the template
    /// generation label where the DaemonSet still uses upstream's legacy annotation.
    fn is_current_with(&self, pod: &PodRecord, revision: &str) -> bool {
        revision == self.hash
            || self
                .legacy_generation
                .as_deref()
                .is_some_and(|g| pods::label(pod, POD_TEMPLATE_GENERATION_LABEL) == Some(g))
    }

    /// Ready for `minReadySeconds`, with `InPlaceUpdateReady` absent or True.
    pub fn available(&self, pod: &PodRecord) -> bool {
        pods::is_update_ready(pod, self.ds.spec.min_ready_seconds, self.now)
    }

    /// The `preDelete` hook, if the spec has one.
    pub fn pre_delete(&self) -> Option<&'a LifecycleHook> {
        self.ds
            .spec
            .lifecycle
            .as_ref()
            .and_then(|l| l.pre_delete.as_ref())
    }

    /// The rolling-update parameters, when the strategy is `RollingUpdate` (the default).
    pub fn rolling(&self) -> Option<&'a RollingUpdateDaemonSet> {
        let strategy = &self.ds.spec.update_strategy;
        match strategy.type_ {
            None | Some(DaemonSetUpdateStrategyType::RollingUpdate) => strategy.rolling_update.as_ref(),
            Some(_) => None,
        }
    }

    /// The strategy is `RollingUpdate` (the default).
    pub fn is_rolling(&self) -> bool {
        matches!(
            self.ds.spec.update_strategy.type_,
            None | Some(DaemonSetUpdateStrategyType::RollingUpdate)
        )
    }

    /// `maxSurge` resolved against the desired count (rounding up); 0 without a rolling update.
    pub fn max_surge(&self) -> Result<i32, InvalidIntOrPercent> {
        match self.rolling().and_then(|r| r.max_surge.as_ref()) {
            Some(v) if self.is_rolling() => {
                scaled_i32(v, self.desired, true, "updateStrategy.rollingUpdate.maxSurge")
            }
            _ => Ok(0),
        }
    }

    /// `maxUnavailable` resolved against the desired count (rounding up): 1 when both it and
    /// `maxSurge` are unset, and 1 when both resolve to 0 while nodes should run pods.
    pub fn max_unavailable(&self) -> Result<i32, InvalidIntOrPercent> {
        let rolling = self.rolling();
        let surge = self.max_surge()?;
        let unavailable = match rolling.and_then(|r| r.max_unavailable.as_ref()) {
            Some(v) => scaled_i32(
                v,
                self.desired,
                true,
                "updateStrategy.rollingUpdate.maxUnavailable",
            )?,
            None if rolling.and_then(|r| r.max_surge.as_ref()).is_some() => 0,
            None => 1,
        };
        Ok(if unavailable == 0 && surge == 0 && self.desired > 0 {
            1
        } else {
            unavailable
        })
    }

    /// `partition` resolved against the desired count ([`partition_of`]).
    pub fn partition(&self) -> Result<i32, InvalidIntOrPercent> {
        partition_of(self.rolling(), self.desired)
    }

    /// `burstReplicas` (default 250) resolved against the desired count (rounding down), at least 1.
    pub fn burst(&self) -> Result<usize, InvalidIntOrPercent> {
        let burst = match &self.ds.spec.burst_replicas {
            Some(v) => scaled_i32(v, self.desired, false, "burstReplicas")?,
            None => DEFAULT_BURST_REPLICAS,
        };
        Ok(usize::try_from(burst.max(1)).unwrap_or(1))
    }
}

/// How many of `desired` nodes `rollingUpdate.partition` keeps at old revisions: an int or a percent
/// (rounding down), at most `desired`.
pub fn partition_of(
    rolling: Option<&RollingUpdateDaemonSet>,
    desired: i32,
) -> Result<i32, InvalidIntOrPercent> {
    match rolling.and_then(|r| r.partition.as_ref()) {
        Some(v) => {
            Ok(scaled_i32(v, desired, false, "updateStrategy.rollingUpdate.partition")?.clamp(0, desired))
        }
        None => Ok(0),
    }
}
