//! The SidecarSet controller's planner (OpenKruise's `pkg/controller/sidecarset`, docs/sidecarset-controller.md):
//! a SidecarSet, the pods of the namespaces it selects, its latest revision, the upgrades still in
//! flight and the time in; the status, the pods to upgrade in place (image-only patches), the pod
//! conditions and the events out.
//!
//! Steps as `Processor.UpdateSidecarSet`: matched pods, status, upgrades in flight,
//! `NotUpdate` / `paused`, all updated, then the choice (`GetNextUpgradePods`: not updated, selected by
//! `updateStrategy.selector`, upgradable, not mid-upgrade; ActivePods order, `priorityStrategy`,
//! `scatterStrategy`; the last `partition` kept; `maxUnavailable`, rounded up, over matched pods that
//! are not consistent and ready). Beyond OpenKruise: the `Progressing` status condition says why a
//! rollout does not move, and upgrades in flight time out and are dropped with their pod.

pub mod audit;
pub mod cache;
mod choose;
pub mod derived;
pub mod hot;
pub mod pod_facts;
mod progress;
pub mod revision;
mod take;
pub mod upgrade;

use std::collections::{BTreeMap, HashMap, HashSet};
use std::time::Duration;

use k8s_openapi::apimachinery::pkg::util::intstr::IntOrString;
use k8s_openapi::jiff::{SignedDuration, Timestamp};
use kruise_api::PodRecord;
use kruise_api::apps_v1beta1::{
    SIDECARSET_PROGRESSING, SidecarSet, SidecarSetStatus, SidecarSetUpdateStrategyType,
};

use crate::int_or_percent::{self, InvalidIntOrPercent};
use crate::pods;
use choose::choose;
use progress::{Progress, condition};

pub use cache::FactsCache;
pub use derived::{PodFacts, SeenPod, derive_all, seen};
pub use pod_facts::{SIDECARSET_INPLACE_UPDATE_STATE, SetFacts};
pub use upgrade::SIDECARSET_UPGRADABLE;

/// How long an upgrade may stay unseen in the cache before it is forgotten (OpenKruise waits forever,
/// openkruise/kruise#1168).
pub const IN_FLIGHT_TIMEOUT: Duration = Duration::from_secs(60);
/// While an upgrade is in flight, look again this soon.
pub const IN_FLIGHT_RECHECK: Duration = Duration::from_secs(1);
/// How many pod names a condition message lists.
const NAMES_SHOWN: usize = 5;

/// A pod upgraded and not yet seen with the new hash, by pod UID (`UpdateExpectations`).
#[derive(Debug, Clone, Default, PartialEq)]
pub struct InFlight {
    /// Pod UID → (the hash it was upgraded to, when).
    pub pods: BTreeMap<String, (String, Timestamp)>,
}

/// What one pass plans from.
pub struct Input<'a> {
    pub sidecar_set: &'a SidecarSet,
    /// The pods of the namespaces `namespaceSelector` selects (all namespaces without one), with their
    /// facts derived for this SidecarSet ([`FactsCache`], [`derive_all`]).
    pub pods: &'a [SeenPod<'a>],
    /// The latest ControllerRevision's name, if one is kept.
    pub latest_revision: Option<&'a str>,
    /// The collision count the revision was named with.
    pub collision_count: i32,
    /// The upgrades the previous passes made.
    pub in_flight: &'a InFlight,
    pub now: Timestamp,
    /// The PodUnavailableBudget check of a pod update (the pod webhook's rule, run dry); `None` checks
    /// nothing.
    pub budget: Option<BudgetCheck<'a>>,
}

/// Whether a PodUnavailableBudget refuses updating a pod now.
pub type BudgetCheck<'a> = &'a dyn Fn(&PodRecord) -> Option<Refusal>;

/// A PodUnavailableBudget refusing a pod update.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Refusal {
    /// `namespace/name` of the PodUnavailableBudget.
    pub budget: String,
    /// The webhook's message.
    pub message: String,
}

/// How soon a pass retries pods a PodUnavailableBudget held back (its status changes trigger no pass).
pub const BUDGET_RECHECK: Duration = Duration::from_secs(5);

/// A pod by identity.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PodRef {
    pub namespace: String,
    pub name: String,
    pub uid: String,
}

/// One in-place upgrade: the pod patch, then the `SidecarSetUpgradable` status patch (if it changes).
#[derive(Debug, Clone, PartialEq)]
pub struct Upgrade {
    pub pod: PodRef,
    pub patch: serde_json::Value,
    pub condition: Option<serde_json::Value>,
}

/// An event on the SidecarSet.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Event {
    pub warning: bool,
    pub reason: String,
    pub message: String,
}

/// What one pass does.
#[derive(Debug, Clone, PartialEq)]
pub struct Plan {
    pub status: SidecarSetStatus,
    /// The status differs from the stored one.
    pub status_changed: bool,
    /// `SidecarSetUpgradable=False` patches for pods that cannot be upgraded in place.
    pub not_upgradable: Vec<(PodRef, serde_json::Value)>,
    pub upgrades: Vec<Upgrade>,
    /// Uninjected pods labelled `apps.kruise.io/specified-delete` for their CloneSet to replace (opt-in).
    pub replacements: Vec<(PodRef, serde_json::Value)>,
    /// Hot-upgrade flips (idle twins back to the empty image), each conditional on the pod's resourceVersion.
    pub flips: Vec<(PodRef, serde_json::Value)>,
    pub events: Vec<Event>,
    /// The upgrades in flight after this pass (the loop adds none: the planner already did).
    pub in_flight: InFlight,
    pub requeue_after: Option<Duration>,
}

/// A SidecarSet the planner cannot work with.
#[derive(Debug, thiserror::Error)]
pub enum PlanError {
    #[error(transparent)]
    IntOrPercent(#[from] InvalidIntOrPercent),
    #[error("spec: {0}")]
    Spec(String),
}

fn pod_ref(p: &PodRecord) -> PodRef {
    PodRef {
        namespace: p.metadata.namespace.clone().unwrap_or_default(),
        name: pods::name(p).to_string(),
        uid: p.metadata.uid.clone().unwrap_or_default(),
    }
}

fn names(pods: &[SeenPod<'_>]) -> String {
    let mut shown: Vec<&str> = pods.iter().take(NAMES_SHOWN).map(|p| pods::name(p.pod)).collect();
    if pods.len() > NAMES_SHOWN {
        shown.push("…");
    }
    shown.join(", ")
}

/// Plans one pass.
pub fn plan(input: &Input<'_>) -> Result<Plan, PlanError> {
    let set = input.sidecar_set;
    let facts = SetFacts::of(set);
    let mut matched: Vec<SeenPod<'_>> = Vec::with_capacity(input.pods.len());
    matched.extend(input.pods.iter().copied().filter(|p| p.facts.matched));
    let (mut updated, mut ready, mut updated_ready) = (0, 0, 0);
    for p in &matched {
        let healthy = p.facts.consistent && p.facts.ready;
        updated += i32::from(p.facts.updated);
        ready += i32::from(healthy);
        updated_ready += i32::from(p.facts.updated && healthy);
    }
    let mut status = SidecarSetStatus {
        observed_generation: set.metadata.generation.unwrap_or(0),
        matched_pods: matched.len() as i32,
        updated_pods: updated,
        ready_pods: ready,
        updated_ready_pods: updated_ready,
        latest_revision: input
            .latest_revision
            .map(str::to_string)
            .or_else(|| set.status.as_ref().and_then(|s| s.latest_revision.clone())),
        collision_count: Some(input.collision_count),
        uninjected_pods: 0,
        conditions: None,
    };
    let uninjected = audit::uninjected(input.pods);
    status.uninjected_pods = uninjected.len() as i32;

    let mut out = Plan {
        status: SidecarSetStatus::default(),
        status_changed: false,
        not_upgradable: Vec::new(),
        upgrades: Vec::new(),
        flips: Vec::new(),
        replacements: Vec::new(),
        events: Vec::new(),
        in_flight: observe(input, &facts, &matched),
        requeue_after: None,
    };
    let strategy = &set.spec.update_strategy;
    let stored_uninjected = set.status.as_ref().map_or(0, |s| s.uninjected_pods);
    if !uninjected.is_empty() && stored_uninjected != status.uninjected_pods {
        out.events.push(Event {
            warning: true,
            reason: "UninjectedPods".into(),
            message: audit::message(&uninjected),
        });
    }
    if audit::replaces(set) && !strategy.paused {
        let total = (matched.len() + uninjected.len()) as i32;
        let max_unavailable = int_or_percent::scaled(
            strategy.max_unavailable.as_ref().unwrap_or(&IntOrString::Int(1)),
            total,
            true,
            "updateStrategy.maxUnavailable",
        )?;
        out.replacements = audit::replacements(&uninjected, &matched, max_unavailable)
            .into_iter()
            .map(|(p, patch)| (pod_ref(p.pod), patch))
            .collect();
    }
    let stopped = strategy.type_ == Some(SidecarSetUpdateStrategyType::NotUpdate) || strategy.paused;
    if out.in_flight.pods.is_empty() && !stopped && facts.has_hot_upgrade() {
        for p in matched.iter().filter(|p| p.facts.due_flip) {
            if let Some(patch) = upgrade::flip_patch(&facts, p.pod, input.now) {
                out.flips.push((pod_ref(p.pod), patch));
            }
        }
    }
    let flipped: Vec<SeenPod<'_>> = if out.flips.is_empty() {
        Vec::new()
    } else {
        let uids: HashSet<&str> = out.flips.iter().map(|(r, _)| r.uid.as_str()).collect();
        matched
            .iter()
            .copied()
            .filter(|p| uids.contains(p.facts.uid.as_str()))
            .collect()
    };
    let hot_waiting: Vec<SeenPod<'_>> = matched
        .iter()
        .copied()
        .filter(|p| p.facts.hot_upgrading)
        .collect();
    let progress = if !out.in_flight.pods.is_empty() {
        out.requeue_after = Some(IN_FLIGHT_RECHECK);
        Progress::new(
            true,
            "Updating",
            format!(
                "waiting for the cache to show {} upgraded pod(s)",
                out.in_flight.pods.len()
            ),
        )
    } else if !flipped.is_empty() {
        // Flips first (OpenKruise's `flipHotUpgradingContainers`), no upgrades this round.
        out.requeue_after = Some(IN_FLIGHT_RECHECK);
        Progress::new(
            true,
            "Updating",
            format!(
                "resetting the idle hot-upgrade twins of pod(s) {}",
                names(&flipped)
            ),
        )
    } else if status.updated_pods >= status.matched_pods && !hot_waiting.is_empty() {
        Progress::new(
            true,
            "Updating",
            format!(
                "waiting for the new hot-upgrade twins of pod(s) {} to become consistent and ready",
                names(&hot_waiting)
            ),
        )
    } else if status.updated_pods >= status.matched_pods {
        Progress::new(
            true,
            "Complete",
            format!(
                "all {} matched pod(s) run the latest sidecars",
                status.matched_pods
            ),
        )
    } else if strategy.type_ == Some(SidecarSetUpdateStrategyType::NotUpdate) {
        Progress::new(
            false,
            "NotUpdate",
            format!(
                "updateStrategy.type is NotUpdate: {} pod(s) keep older sidecars; only new pods get the latest",
                status.matched_pods - status.updated_pods
            ),
        )
    } else if strategy.paused {
        Progress::new(
            false,
            "Paused",
            format!(
                "updateStrategy.paused: {} pod(s) wait for the latest sidecars",
                status.matched_pods - status.updated_pods
            ),
        )
    } else {
        choose(input, &facts, &matched, &mut out)?
    };
    let condition = condition(set.status.as_ref(), progress, input.now);
    let previous = set
        .status
        .as_ref()
        .and_then(|s| s.conditions.as_ref())
        .and_then(|c| c.iter().find(|c| c.type_ == SIDECARSET_PROGRESSING));
    let moved = previous.is_none_or(|p| p.status != condition.status || p.reason != condition.reason);
    if moved && condition.status == "False" {
        out.events.push(Event {
            warning: true,
            reason: condition.reason.clone().unwrap_or_default(),
            message: condition.message.clone().unwrap_or_default(),
        });
    }
    status.conditions = Some(vec![condition]);
    out.status_changed = set.status.as_ref() != Some(&status);
    out.status = status;
    Ok(out)
}

/// `UpdateExpectations.ObserveUpdated` with a timeout: an upgrade is done once the pod shows the hash
/// it was upgraded to; it is forgotten when the pod is gone or no longer matched, when the SidecarSet
/// moved to another hash, or after [`IN_FLIGHT_TIMEOUT`].
fn observe(input: &Input<'_>, facts: &SetFacts, matched: &[SeenPod<'_>]) -> InFlight {
    let mut next = input.in_flight.clone();
    if next.pods.is_empty() {
        return next;
    }
    let by_uid: HashMap<&str, &PodFacts> = matched
        .iter()
        .filter(|p| !p.facts.uid.is_empty())
        .map(|p| (p.facts.uid.as_str(), p.facts))
        .collect();
    next.pods.retain(|uid, (hash, at)| {
        let Some(pod) = by_uid.get(uid.as_str()) else {
            return false;
        };
        let fresh = at
            .checked_add(SignedDuration::try_from(IN_FLIGHT_TIMEOUT).unwrap_or_default())
            .is_ok_and(|deadline| input.now < deadline);
        *hash == facts.hash && fresh && !pod.updated
    });
    next
}

#[cfg(test)]
mod tests;
