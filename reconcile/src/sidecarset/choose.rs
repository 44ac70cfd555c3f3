//! The choice of the pods to upgrade this round (`GetNextUpgradePods`) and their writes: candidates in
//! ActivePods order, `priorityStrategy`, `scatterStrategy`; the last `partition` kept; `maxUnavailable`
//! spent by matched pods not consistent and ready; a PodUnavailableBudget asked before each write.

use std::collections::HashMap;

use k8s_openapi::apimachinery::pkg::util::intstr::IntOrString;
use kruise_api::PodRecord;

use super::progress::Progress;
use super::take::{self, Taken};
use super::{
    BUDGET_RECHECK, Event, Input, Plan, PlanError, Refusal, SeenPod, SetFacts, Upgrade, names, pod_ref,
    upgrade,
};
use crate::cloneset::arithmetic::partition_replicas;
use crate::{int_or_percent, pods};

/// `GetNextUpgradePods` and the writes for the chosen pods.
pub(super) fn choose(
    input: &Input<'_>,
    facts: &SetFacts,
    matched: &[SeenPod<'_>],
    out: &mut Plan,
) -> Result<Progress, PlanError> {
    let set = input.sidecar_set;
    let strategy = &set.spec.update_strategy;
    let total = matched.len() as i32;
    let mut candidates = Vec::with_capacity(matched.len());
    let (mut not_upgradable, mut mid_upgrade) = (Vec::new(), Vec::new());
    let mut unselected = 0;
    for p in matched.iter().filter(|p| !p.facts.updated) {
        if !p.facts.update_selected {
            unselected += 1;
        } else if !p.facts.upgradable {
            not_upgradable.push(*p);
        } else if p.facts.mid_upgrade {
            mid_upgrade.push(*p);
        } else {
            candidates.push(*p);
        }
    }
    for p in &not_upgradable {
        if let Some(patch) = upgrade::upgradable_condition(p.pod, &facts.name, false, input.now) {
            out.not_upgradable.push((pod_ref(p.pod), patch));
        }
    }
    if !not_upgradable.is_empty() {
        out.events.push(Event {
            warning: false,
            reason: "NotUpgradablePods".into(),
            message: format!(
                "SidecarSet in-place update detected {} not upgradable pod(s) in this round, will skip them.",
                not_upgradable.len()
            ),
        });
    }
    let partition = partition_replicas(strategy.partition.as_ref(), total)? as usize;
    let kept = partition.min(candidates.len());
    let eligible = candidates.len() - kept;
    let max_unavailable = int_or_percent::scaled(
        strategy.max_unavailable.as_ref().unwrap_or(&IntOrString::Int(1)),
        total,
        true,
        "updateStrategy.maxUnavailable",
    )?;
    // Every matched pod not consistent and ready is unavailable, updated or not (a pod stuck on a bad
    // image stays unavailable after a fixed image makes it a candidate again): taking a not-ready
    // candidate costs nothing, a ready one costs one.
    let busy: Vec<SeenPod<'_>> = matched
        .iter()
        .copied()
        .filter(|p| !(p.facts.consistent && p.facts.ready))
        .collect();
    let unavailable = busy.len() as i64;
    // Checked before the write, with the rule the pod webhook applies: a protected pod waits.
    let refused = |p: &PodRecord| -> Option<Refusal> { input.budget.and_then(|check| check(p)) };
    let Taken { chosen, held } = match &strategy.scatter_strategy {
        Some(terms) => {
            take::sort(&mut candidates);
            let sorted = scatter(matched, candidates, terms);
            take::walk(&sorted, kept, unavailable, max_unavailable, &refused)
        }
        None => take::select(&candidates, kept, unavailable, max_unavailable, &refused),
    };
    if !held.is_empty() {
        out.requeue_after = Some(
            out.requeue_after
                .map_or(BUDGET_RECHECK, |r| r.min(BUDGET_RECHECK)),
        );
    }

    let sidecar_list = kruise_core::sidecarset::sidecar_list(&set.spec);
    let latest_revision = input
        .latest_revision
        .or_else(|| set.status.as_ref().and_then(|s| s.latest_revision.as_deref()))
        .unwrap_or("");
    for p in &chosen {
        let metadata = kruise_core::sidecarset::patch_pod_metadata(
            &set.spec,
            &p.pod.metadata.annotations.to_btree_map().unwrap_or_default(),
        )
        .map_err(PlanError::Spec)?;
        let cx = upgrade::UpgradeContext {
            latest_revision,
            sidecar_list: &sidecar_list,
            metadata,
            now: input.now,
        };
        out.upgrades.push(Upgrade {
            pod: pod_ref(p.pod),
            patch: upgrade::pod_patch(facts, p.pod, cx),
            condition: upgrade::upgradable_condition(p.pod, &facts.name, true, input.now),
        });
        if let Some(uid) = &p.pod.metadata.uid {
            out.in_flight
                .pods
                .insert(uid.clone(), (facts.hash.clone(), input.now));
        }
    }

    Ok(if !chosen.is_empty() {
        Progress::new(true, "Updating", format!("updating pod(s) {}", names(&chosen)))
    } else if let Some((_, refusal)) = held.first() {
        let pods: Vec<SeenPod<'_>> = held.iter().map(|(p, _)| *p).collect();
        Progress::new(
            true,
            "PodUnavailableBudgetReached",
            format!(
                "pod(s) {} wait for PodUnavailableBudget {}: {}",
                names(&pods),
                refusal.budget,
                refusal.message
            ),
        )
    } else if eligible > 0 && max_unavailable == 0 {
        Progress::new(
            false,
            "MaxUnavailableZero",
            format!(
                "maxUnavailable {} of {total} matched pod(s) is 0: ready pods are never updated",
                shown(strategy.max_unavailable.as_ref())
            ),
        )
    } else if eligible > 0 {
        Progress::new(
            true,
            "MaxUnavailableReached",
            format!(
                "waiting for {} pod(s) to become ready (maxUnavailable {max_unavailable}): {}",
                busy.len(),
                names(&busy)
            ),
        )
    } else if !mid_upgrade.is_empty() {
        Progress::new(
            true,
            "Updating",
            format!("waiting for kubelet to restart pod(s) {}", names(&mid_upgrade)),
        )
    } else if !not_upgradable.is_empty() {
        Progress::new(
            false,
            "NotUpgradablePods",
            format!(
                "{} pod(s) cannot be updated in place: a field other than an image changed, which running pods cannot take; they get it when recreated: {}",
                not_upgradable.len(),
                names(&not_upgradable)
            ),
        )
    } else if kept > 0 {
        Progress::new(
            true,
            "PartitionReached",
            format!("partition keeps {kept} pod(s) on older sidecars"),
        )
    } else {
        Progress::new(
            true,
            "SelectorReached",
            format!("{unselected} pod(s) are not selected by updateStrategy.selector"),
        )
    })
}

/// An int-or-percent as written (default 1).
fn shown(v: Option<&IntOrString>) -> String {
    match v {
        Some(IntOrString::Int(i)) => i.to_string(),
        Some(IntOrString::String(s)) => s.clone(),
        None => "1".into(),
    }
}

/// `scatterStrategy` over candidates sorted by priority and ActivePods order (terms with value `*`
/// expanded to every value of that label among the matched pods).
fn scatter<'a>(
    matched: &[SeenPod<'_>],
    candidates: Vec<SeenPod<'a>>,
    terms: &[kruise_api::common::UpdateScatterTerm],
) -> Vec<SeenPod<'a>> {
    let mut expanded: Vec<kruise_api::common::UpdateScatterTerm> = Vec::new();
    for term in terms {
        let values: Vec<String> = if term.value == "*" {
            matched
                .iter()
                .filter_map(|p| pods::label(p.pod, &term.key).map(str::to_string))
                .collect()
        } else {
            vec![term.value.clone()]
        };
        for value in values {
            let t = kruise_api::common::UpdateScatterTerm {
                key: term.key.clone(),
                value,
            };
            if !expanded.contains(&t) {
                expanded.push(t);
            }
        }
    }
    let all: Vec<&PodRecord> = matched.iter().map(|p| p.pod).collect();
    let by_address: HashMap<*const PodRecord, SeenPod<'a>> = candidates
        .iter()
        .map(|p| (std::ptr::from_ref(p.pod), *p))
        .collect();
    let records: Vec<&PodRecord> = candidates.iter().map(|p| p.pod).collect();
    crate::scatter::scatter(&all, records, &expanded)
        .into_iter()
        .filter_map(|p| by_address.get(&std::ptr::from_ref(p)).copied())
        .collect()
}

#[cfg(test)]
mod tests;
