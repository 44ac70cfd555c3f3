//! Scale (docs/cloneset-controller.md#scale): undo PreparingDelete when replicas went up, create missing pods
//! (and their
//! PVCs), delete specified and surplus pods — or mark them PreparingDelete when a preDelete hook holds.

use std::cmp::Reverse;
use std::collections::{BTreeMap, BTreeSet};

use k8s_openapi::jiff::Timestamp;
use kruise_api::PodRecord;
use kruise_api::apps_v1beta1::CLONESET_INSTANCE_ID;

use crate::action::Action;
use crate::cloneset::arithmetic::{self, Diffs};
use crate::cloneset::context::Ctx;
use crate::cloneset::pod_template::{available_ids, claims_for, new_pod};
use crate::lifecycle::{self, PRE_DELETE_HOOK_KEY};
use crate::pods::{self, POD_DELETION_COST};

/// What scale decided.
#[derive(Debug, Default)]
pub struct ScaleOutcome {
    /// The writes, in order.
    pub actions: Vec<Action>,
    /// The diffs it worked from (`None` when PreparingDelete pods were restored first).
    pub diffs: Option<Diffs>,
}

impl ScaleOutcome {
    /// Scale did something: the reconcile must not update in the same pass.
    pub fn scaling(&self) -> bool {
        self.actions.iter().any(|a| !matches!(a, Action::Event { .. }))
    }
}

/// Runs the scale step over the active pods.
pub fn scale(ctx: &Ctx<'_>, generate_id: &mut dyn FnMut() -> String) -> ScaleOutcome {
    let mut out = ScaleOutcome::default();
    let cs = ctx.cs;
    let (mut specified, mut pre_delete): (Vec<&PodRecord>, Vec<&PodRecord>) = (Vec::new(), Vec::new());
    for (p, v) in ctx.pods_with_views() {
        if v.specified_delete {
            specified.push(p);
        }
        if v.preparing_delete {
            pre_delete.push(p);
        }
    }
    let num_to_delete = specified
        .iter()
        .chain(pre_delete.iter())
        .map(|p| pods::name(p))
        .collect::<BTreeSet<_>>()
        .len() as i64;

    // 1. Replicas went back up: return PreparingDelete pods to PreparingNormal.
    let lc = cs.spec.lifecycle.as_ref();
    let mark_not_ready = lifecycle::marks_not_ready(lc.and_then(|l| l.pre_delete.as_ref()))
        || lifecycle::marks_not_ready(lc.and_then(|l| l.in_place_update.as_ref()));
    if !mark_not_ready {
        let mut diff = ctx.params.replicas - ctx.pods.len() as i64 + num_to_delete;
        for pod in &pre_delete {
            if diff <= 0 {
                break;
            }
            if ctx.is_specified_delete(pod) {
                continue;
            }
            out.actions
                .extend(lifecycle::set_state(pod, "PreparingNormal", ctx.now));
            diff -= 1;
        }
        if !out.actions.is_empty() {
            return out;
        }
    }

    // 2. The numbers.
    let facts: Vec<_> = ctx
        .pods_with_views()
        .map(|(_, v)| v.facts(ctx.is_pod_update_for_scale(&v)))
        .collect();
    let mut diffs = arithmetic::calculate(&ctx.params, &facts, ctx.current_name == ctx.update_name);
    out.diffs = Some(diffs);
    if diffs.scale_up_num > diffs.scale_up_limit {
        out.actions.push(Action::warning(
            "ScaleUpLimited",
            format!(
                "scaleUp is limited because of scaleStrategy.maxUnavailable, limit: {}",
                diffs.scale_up_limit
            ),
        ));
    }

    // 3. Scale up.
    if diffs.scale_up_num > 0 {
        let total = usize::try_from(diffs.scale_up_limit).unwrap_or(0);
        let old = usize::try_from(diffs.scale_up_num_old_revision.min(diffs.scale_up_limit)).unwrap_or(0);
        let ids = available_ids(total, &ctx.pods, &ctx.pvcs, generate_id);
        let existing: BTreeSet<&str> = ctx
            .pvcs
            .iter()
            .filter_map(|p| p.metadata.name.as_deref())
            .collect();
        for (i, id) in ids.iter().enumerate() {
            let (template, revision) = if i < old {
                (&ctx.current_template, ctx.current_name)
            } else {
                (&ctx.update_template, ctx.update_name)
            };
            for claim in claims_for(cs, id).into_values() {
                if !existing.contains(claim.metadata.name.as_deref().unwrap_or("")) {
                    out.actions.push(Action::CreatePvc(Box::new(claim)));
                }
            }
            out.actions.push(Action::CreatePod(Box::new(new_pod(
                cs, template, revision, id, ctx.now,
            ))));
        }
        return out;
    }

    // 4. Pods already PreparingDelete: delete those no longer hooked.
    if !pre_delete.is_empty() {
        let acts = delete_pods(ctx, &pre_delete);
        if !acts.is_empty() {
            out.actions.extend(acts);
            return out;
        }
    }

    // 5. Specified-delete pods: unready ones always, ready ones within deleteReadyLimit.
    let specified: Vec<&PodRecord> = specified
        .into_iter()
        .filter(|p| pods::lifecycle_state(p) != "PreparingDelete")
        .collect();
    if !specified.is_empty() {
        let chosen = limit_ready(ctx, specified, &mut diffs.delete_ready_limit);
        let acts = delete_pods(ctx, &chosen);
        if !acts.is_empty() {
            out.actions.extend(acts);
            return out;
        }
    }

    // 6. Scale down, never while specified deletions are pending.
    if diffs.scale_down_num > 0 && num_to_delete == 0 {
        let chosen = choose_pods_to_delete(ctx, diffs.scale_down_num, diffs.scale_down_num_old_revision);
        let chosen = limit_ready(ctx, chosen, &mut diffs.delete_ready_limit);
        out.actions.extend(delete_pods(ctx, &chosen));
    }
    out
}

/// Keeps unready pods, and ready ones while the budget lasts.
fn limit_ready<'a>(ctx: &Ctx<'_>, candidates: Vec<&'a PodRecord>, budget: &mut i64) -> Vec<&'a PodRecord> {
    candidates
        .into_iter()
        .filter(|p| {
            if !ctx.view(p).available_now {
                return true;
            }
            if *budget > 0 {
                *budget -= 1;
                return true;
            }
            false
        })
        .collect()
}

/// `deletePods`: hooked pods go to PreparingDelete (with the not-ready key under markPodNotReady),
/// others are deleted together with the PVCs of their instance id.
pub fn delete_pods(ctx: &Ctx<'_>, chosen: &[&PodRecord]) -> Vec<Action> {
    let hook = ctx.cs.spec.lifecycle.as_ref().and_then(|l| l.pre_delete.as_ref());
    let mut actions = Vec::new();
    for pod in chosen {
        if lifecycle::is_hooked(hook, pod) {
            if let Some(state) = lifecycle::set_state(pod, "PreparingDelete", ctx.now) {
                if lifecycle::marks_not_ready(hook) {
                    actions.extend(lifecycle::not_ready_key_patch(
                        pod,
                        PRE_DELETE_HOOK_KEY,
                        true,
                        ctx.now,
                    ));
                }
                actions.push(state);
            }
            continue;
        }
        actions.push(Action::DeletePod {
            name: pods::name(pod).to_owned(),
            uid: pod.metadata.uid.clone(),
        });
        let id = pods::label(pod, CLONESET_INSTANCE_ID);
        for pvc in &ctx.pvcs {
            let pvc_id = pvc
                .metadata
                .labels
                .as_ref()
                .and_then(|l| l.get(CLONESET_INSTANCE_ID));
            if pvc_id.map(String::as_str) == id {
                actions.push(Action::DeletePvc {
                    name: pvc.metadata.name.clone().unwrap_or_default(),
                });
            }
        }
    }
    actions
}

/// `choosePodsToDelete`: old-revision pods first (up to `old_num`), each group "most deletable first".
fn choose_pods_to_delete<'a>(ctx: &Ctx<'a>, num: i64, old_num: i64) -> Vec<&'a PodRecord> {
    let (mut updated, mut not_updated): (Vec<&PodRecord>, Vec<&PodRecord>) =
        ctx.pods.iter().copied().partition(|p| ctx.view(p).at_update);
    let take = |group: &mut Vec<&'a PodRecord>, n: i64| -> Vec<&'a PodRecord> {
        let n = usize::try_from(n).unwrap_or(0);
        if n < group.len() {
            let ranks = same_node_ranks(group);
            group.sort_by_cached_key(|p| {
                let at = std::ptr::from_ref::<PodRecord>(p) as usize;
                let rank = ranks
                    .binary_search_by_key(&at, |(a, _)| *a)
                    .map_or(0, |i| ranks[i].1);
                deletion_key(p, Some(ctx.is_available(p)), rank)
            });
        }
        group.iter().copied().take(n).collect()
    };
    if num > old_num {
        let mut chosen = take(&mut not_updated, old_num);
        chosen.extend(take(&mut updated, num - old_num));
        chosen
    } else {
        take(&mut not_updated, num)
    }
}

/// OpenKruise's same-node ranker: on a node holding several pods of the group, all but the best one
/// (by the plain active order) get a rank, the worst the highest, so doubled-up pods go first.
fn same_node_ranks(group: &[&PodRecord]) -> Vec<(usize, i64)> {
    let mut by_node: BTreeMap<&str, Vec<&PodRecord>> = BTreeMap::new();
    for p in group {
        let node = p.spec.as_ref().and_then(|s| s.node_name.as_deref()).unwrap_or("");
        if !node.is_empty() {
            by_node.entry(node).or_default().push(p);
        }
    }
    let mut ranks = Vec::new();
    for mut on_node in by_node.into_values().filter(|v| v.len() > 1) {
        on_node.sort_by_cached_key(|p| deletion_key(p, None, 0));
        on_node.pop();
        let n = on_node.len() as i64;
        let at = |p: &PodRecord| std::ptr::from_ref::<PodRecord>(p) as usize;
        ranks.extend(
            on_node
                .into_iter()
                .enumerate()
                .map(|(i, p)| (at(p), n - i as i64)),
        );
    }
    ranks.sort_unstable();
    ranks
}

/// The key of `ActivePodsWithRanks` ("delete first" sorts first): unscheduled, Pending < Unknown <
/// Running (others count as Pending), unavailable, not ready, lower deletion cost, higher rank, ready
/// more recently, more restarts, newer.
type DeletionKey = (
    bool,
    u8,
    Option<bool>,
    bool,
    i32,
    Reverse<i64>,
    Option<Reverse<Timestamp>>,
    Reverse<i32>,
    Option<Reverse<Timestamp>>,
);

fn deletion_key(p: &PodRecord, available: Option<bool>, rank: i64) -> DeletionKey {
    let phase = match pods::phase(p) {
        "Unknown" => 1,
        "Running" => 2,
        _ => 0,
    };
    let cost = pods::annotation(p, POD_DELETION_COST)
        .and_then(|v| v.parse().ok())
        .unwrap_or(0);
    let ready = pods::is_ready(p);
    (
        pods::is_scheduled(p),
        phase,
        available,
        ready,
        cost,
        Reverse(rank),
        ready.then(|| pods::ready_since(p).map(Reverse)).flatten(),
        Reverse(pods::max_restarts(p)),
        pods::created(p).map(Reverse),
    )
}

#[cfg(test)]
mod tests;
