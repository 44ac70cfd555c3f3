//! What a pass reads of each pod, derived once per pod version (docs/sidecarset-controller.md, "Facts
//! per pod version"). Every verdict comes from the checks of [`pod_facts`]; a pass only reads fields.
//!
//! The verdicts depend on the pod and on the SidecarSet's spec and hashes, never on the time or on other
//! pods, so they hold as long as the pod's `resourceVersion` and the SidecarSet's [`SetKey`] do.

use kruise_api::PodRecord;
use kruise_api::apps_v1beta1::SidecarSet;
use kruise_core::names::EXCLUDED_NAMESPACES;
use kruise_core::owner::controller_of_meta;
use kruise_core::pod_state;
use kruise_core::selector::{selects, selects_non_empty};

use super::hot;
use super::pod_facts::{self, SetFacts};
use crate::cloneset::update::Priority;
use crate::pods::{self, ActiveOrderKey};

/// What the facts of a pod were derived against: they are reused while it does not change.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SetKey {
    pub uid: Option<String>,
    /// `metadata.generation`: moves with every spec change (selectors, containers, strategy).
    pub generation: Option<i64>,
    pub hash: String,
    pub hash_without_image: String,
}

/// The sort key of an upgrade candidate: `priorityStrategy`, then ActivePods order.
pub type OrderKey = ((i64, i64), ActiveOrderKey);

/// One pod as the SidecarSet's checks see it.
#[derive(Debug, Clone, PartialEq)]
pub struct PodFacts {
    /// `metadata.uid` (`""` without one).
    pub uid: String,
    /// `metadata.resourceVersion` derived from (`""` without one).
    pub resource_version: String,
    /// The pod webhook would inject it if it were created now: active, selected by `spec.selector`, in a
    /// namespace the webhook sees, the SidecarSet's injection not paused. The audit's scope.
    pub injectable: bool,
    /// [`pod_facts::is_matched`].
    pub matched: bool,
    /// [`pod_facts::is_updated`].
    pub updated: bool,
    /// [`pod_facts::is_upgradable`].
    pub upgradable: bool,
    /// [`pod_facts::is_consistent`] over every sidecar.
    pub consistent: bool,
    /// [`pod_facts::is_ready`].
    pub ready: bool,
    /// [`pod_facts::is_mid_upgrade`].
    pub mid_upgrade: bool,
    /// Selected by `updateStrategy.selector` (every pod without one).
    pub update_selected: bool,
    /// [`hot::is_hot_upgrading`].
    pub hot_upgrading: bool,
    /// [`hot::is_due_flip`].
    pub due_flip: bool,
    /// The pod's own Ready condition (the audit's unavailability).
    pub pod_ready: bool,
    /// Labelled `apps.kruise.io/specified-delete`.
    pub specified_delete: bool,
    /// Controlled by a CloneSet.
    pub by_cloneset: bool,
    /// Where the pod sorts among upgrade candidates.
    pub order: OrderKey,
    /// The `controllerRevision` the pod records for this SidecarSet (`""` without one).
    pub revision: String,
}

/// A pod and its facts, as a pass reads them.
#[derive(Debug, Clone, Copy)]
pub struct SeenPod<'a> {
    pub pod: &'a PodRecord,
    pub facts: &'a PodFacts,
}

/// Derives the facts of pods for one SidecarSet; built once per pass or per batch.
pub struct Deriver<'a> {
    set: &'a SidecarSet,
    facts: SetFacts,
    priority: Option<Priority<'a>>,
}

impl<'a> Deriver<'a> {
    pub fn new(set: &'a SidecarSet) -> Self {
        Deriver {
            set,
            facts: SetFacts::of(set),
            priority: set
                .spec
                .update_strategy
                .priority_strategy
                .as_ref()
                .map(Priority::new),
        }
    }

    /// What the facts derived here depend on.
    pub fn key(&self) -> SetKey {
        SetKey {
            uid: self.set.metadata.uid.clone(),
            generation: self.set.metadata.generation,
            hash: self.facts.hash.clone(),
            hash_without_image: self.facts.hash_without_image.clone(),
        }
    }

    /// The facts of `pod`.
    pub fn pod(&self, pod: &PodRecord) -> PodFacts {
        let (set, facts) = (self.set, &self.facts);
        let labels = &pod.metadata.labels;
        let strategy = &set.spec.update_strategy;
        PodFacts {
            uid: pod.metadata.uid.clone().unwrap_or_default(),
            resource_version: pod.metadata.resource_version.clone().unwrap_or_default(),
            injectable: !set.spec.injection_strategy.paused
                && !EXCLUDED_NAMESPACES.contains(&pod.metadata.namespace.as_deref().unwrap_or_default())
                && selects_non_empty(set.spec.selector.as_ref(), labels).unwrap_or(false)
                && pods::is_active(pod),
            matched: pod_facts::is_matched(set, facts, pod),
            updated: pod_facts::is_updated(facts, pod),
            upgradable: pod_facts::is_upgradable(facts, pod),
            consistent: pod_facts::is_consistent(facts, pod, &[]),
            ready: pod_facts::is_ready(facts, pod),
            mid_upgrade: pod_facts::is_mid_upgrade(facts, pod),
            update_selected: strategy.selector.is_none()
                || selects(strategy.selector.as_ref(), labels).unwrap_or(false),
            hot_upgrading: hot::is_hot_upgrading(facts, pod),
            due_flip: hot::is_due_flip(facts, pod),
            pod_ready: pod_state::is_ready(pod),
            specified_delete: pods::has_specified_delete_label(pod),
            by_cloneset: controller_of_meta(&pod.metadata).is_some_and(|o| o.kind == "CloneSet"),
            order: (
                self.priority.as_ref().map_or((0, 0), |p| p.key(pod)),
                pods::active_order_key(pod),
            ),
            revision: pod_facts::recorded_revision(pod, &facts.name),
        }
    }
}

/// The facts of every pod, derived now (tests and one-off callers; the controller keeps a
/// [`super::cache::FactsCache`]).
pub fn derive_all(set: &SidecarSet, pods: &[&PodRecord]) -> Vec<PodFacts> {
    let deriver = Deriver::new(set);
    pods.iter().map(|p| deriver.pod(p)).collect()
}

/// Pairs pods with their facts (`facts[i]` belongs to `pods[i]`).
pub fn seen<'a, F: AsRef<PodFacts>>(pods: &[&'a PodRecord], facts: &'a [F]) -> Vec<SeenPod<'a>> {
    pods.iter()
        .zip(facts)
        .map(|(pod, facts)| SeenPod {
            pod,
            facts: facts.as_ref(),
        })
        .collect()
}

impl AsRef<PodFacts> for PodFacts {
    fn as_ref(&self) -> &PodFacts {
        self
    }
}
