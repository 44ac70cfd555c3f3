//! What one Advanced StatefulSet reconcile knows, resolved once: the slots (one per ordinal in range,
//! filled or not), the condemned pods, the revisions and templates, the knobs.

use std::collections::BTreeMap;
use std::time::Duration;

use k8s_openapi::api::apps::v1::ControllerRevision;
use k8s_openapi::api::core::v1::{PersistentVolumeClaim, PodTemplateSpec};
use k8s_openapi::jiff::{SignedDuration, Timestamp};
use kruise_api::PodRecord;
use kruise_api::apps_v1beta1::{
    PodManagementPolicyType, PodUpdateStrategyType, RollingUpdateStatefulSetStrategy, StatefulSet,
    StatefulSetUpdateStrategyType,
};
use kruise_api::common::LifecycleHook;

use crate::pods;
use crate::statefulset::identity::{claim_name, set_name, template_claims};

/// One ordinal in range and its pod, if any.
#[derive(Debug, Clone, Copy)]
pub struct Slot<'a> {
    /// The ordinal.
    pub ordinal: i64,
    /// Position among the in-range ordinals (0 for the first).
    pub index: usize,
    /// The pod of that name, if it exists.
    pub pod: Option<&'a PodRecord>,
    /// The pod is available(m) ([`Ctx::available`]), asked once per pass.
    pub available: bool,
    /// The pod is [`healthy`], asked once per pass.
    pub healthy: bool,
}

/// The resolved inputs of one reconcile.
pub struct Ctx<'a> {
    /// The set.
    pub set: &'a StatefulSet,
    /// `spec.replicas` (default 1).
    pub replicas: i32,
    /// `ordinals.start`.
    pub start: i64,
    /// In-range ordinals, ascending, with their pods.
    pub slots: Vec<Slot<'a>>,
    /// Pods whose ordinal is out of range or reserved, by descending ordinal.
    pub condemned: Vec<(i64, &'a PodRecord)>,
    /// Claims by name.
    pub claims: BTreeMap<&'a str, &'a PersistentVolumeClaim>,
    /// Current revision name.
    pub current_name: &'a str,
    /// Update revision name.
    pub update_name: &'a str,
    /// Template of the current revision.
    pub current_template: PodTemplateSpec,
    /// Template of the update revision.
    pub update_template: PodTemplateSpec,
    /// Every revision (a pod's own revision is looked up by name).
    pub revisions: &'a [ControllerRevision],
    /// Now.
    pub now: Timestamp,
    /// In-place updates of env fed from metadata on pods a node agent serves.
    pub env_from_metadata: bool,
}

impl<'a> Ctx<'a> {
    /// `podManagementPolicy: Parallel`.
    pub fn parallel(&self) -> bool {
        self.set.spec.pod_management_policy == Some(PodManagementPolicyType::Parallel)
    }

    /// `updateStrategy.type: OnDelete`.
    pub fn on_delete(&self) -> bool {
        self.set.spec.update_strategy.type_ == Some(StatefulSetUpdateStrategyType::OnDelete)
    }

    /// `updateStrategy.rollingUpdate`.
    pub fn rolling(&self) -> Option<&'a RollingUpdateStatefulSetStrategy> {
        self.set.spec.update_strategy.rolling_update.as_ref()
    }

    /// Updates in priority order (`Parallel` with `rollingUpdate.unorderedUpdate`).
    pub fn unordered(&self) -> bool {
        self.parallel() && self.rolling().is_some_and(|r| r.unordered_update.is_some())
    }

    /// `rollingUpdate.partition` (0 without).
    pub fn partition(&self) -> i32 {
        self.rolling().and_then(|r| r.partition).unwrap_or(0).max(0)
    }

    /// `rollingUpdate.minReadySeconds` (0 without).
    pub fn min_ready(&self) -> i32 {
        self.rolling().and_then(|r| r.min_ready_seconds).unwrap_or(0)
    }

    /// `rollingUpdate.podUpdatePolicy` (ReCreate without).
    pub fn pod_update_policy(&self) -> PodUpdateStrategyType {
        self.rolling()
            .and_then(|r| r.pod_update_policy.clone())
            .unwrap_or(PodUpdateStrategyType::ReCreate)
    }

    /// A lifecycle hook of the set.
    pub fn hook(
        &self,
        which: fn(&'a kruise_api::common::Lifecycle) -> Option<&'a LifecycleHook>,
    ) -> Option<&'a LifecycleHook> {
        self.set.spec.lifecycle.as_ref().and_then(which)
    }

    /// Fills the slots' `available` and `healthy`.
    pub fn with_facts(mut self) -> Self {
        let facts: Vec<(bool, bool)> = self
            .slots
            .iter()
            .map(|s| s.pod.map_or((false, false), |p| (self.available(p), healthy(p))))
            .collect();
        for (slot, (available, healthy)) in self.slots.iter_mut().zip(facts) {
            slot.available = available;
            slot.healthy = healthy;
        }
        self
    }

    /// Every existing pod: the slots' then the condemned.
    pub fn pods(&self) -> impl Iterator<Item = &'a PodRecord> + '_ {
        self.slots
            .iter()
            .filter_map(|s| s.pod)
            .chain(self.condemned.iter().map(|(_, p)| *p))
    }

    /// The claims of `ordinal` that exist.
    pub fn claims_of(&self, ordinal: i64) -> impl Iterator<Item = &'a PersistentVolumeClaim> + '_ {
        template_claims(self.set).filter_map(move |(vct, _)| {
            self.claims
                .get(claim_name(vct, set_name(self.set), ordinal).as_str())
                .copied()
        })
    }

    /// available(m): lifecycle absent or `Normal`, running and Ready for `minReadySeconds`.
    pub fn available(&self, pod: &PodRecord) -> bool {
        matches!(pods::lifecycle_state(pod), "" | "Normal")
            && pods::is_running_and_available(pod, self.min_ready(), self.now)
    }

    /// How long until an unavailable but ready pod becomes available (for a requeue).
    pub fn until_available(&self, pod: &PodRecord) -> Option<Duration> {
        let since = pods::ready_since(pod)?;
        if pods::phase(pod) != "Running" || self.min_ready() <= 0 {
            return None;
        }
        let at = since
            .checked_add(SignedDuration::from_secs(i64::from(self.min_ready())))
            .ok()?;
        (at >= self.now).then(|| {
            let left = at.duration_since(self.now);
            Duration::from_secs(u64::try_from(left.as_secs()).unwrap_or(0) + 1)
        })
    }
}

/// Phase `Running` and `Ready=True`.
pub fn running_ready(pod: &PodRecord) -> bool {
    pods::phase(pod) == "Running" && pods::is_ready(pod)
}

/// Being deleted.
pub fn terminating(pod: &PodRecord) -> bool {
    pod.metadata.deletion_timestamp.is_some()
}

/// Has a phase (the kubelet or scheduler has seen it).
pub fn created(pod: &PodRecord) -> bool {
    !pods::phase(pod).is_empty()
}

/// Lifecycle absent or `Normal`, running-ready, not terminating.
pub fn healthy(pod: &PodRecord) -> bool {
    matches!(pods::lifecycle_state(pod), "" | "Normal") && running_ready(pod) && !terminating(pod)
}

/// Phase `Failed` or `Succeeded`.
pub fn finished(pod: &PodRecord) -> bool {
    matches!(pods::phase(pod), "Failed" | "Succeeded")
}

/// The earlier of two delays.
pub fn min_delay(a: Option<Duration>, b: Option<Duration>) -> Option<Duration> {
    match (a, b) {
        (Some(a), Some(b)) => Some(a.min(b)),
        (a, b) => a.or(b),
    }
}
