//! Scale (spec §B.7): undo PreparingDelete when replicas went up, create missing pods (and their
//! PVCs), delete specified and surplus pods — or mark them PreparingDelete when a preDelete hook holds.

use std::cmp::Ordering;
use std::collections::{BTreeMap, BTreeSet};

use kruise_api::PodRecord;
use kruise_api::apps_v1beta1::CLONESET_INSTANCE_ID;

use crate::action::Action;
use crate::arithmetic::{self, Diffs};
use crate::context::Ctx;
use crate::lifecycle::{self, PRE_DELETE_HOOK_KEY};
use crate::pod_template::{available_ids, claims_for, new_pod};
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
    let specified: Vec<&PodRecord> = ctx
        .pods
        .iter()
        .copied()
        .filter(|p| ctx.is_specified_delete(p))
        .collect();
    let pre_delete: Vec<&PodRecord> = ctx
        .pods
        .iter()
        .copied()
        .filter(|p| pods::lifecycle_state(p) == "PreparingDelete")
        .collect();
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
        .pods
        .iter()
        .map(|p| ctx.facts(p, ctx.is_pod_update_for_scale(p)))
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
    let per_node = pods_per_node(&ctx.pods);
    let take = |group: &mut Vec<&'a PodRecord>, n: i64| -> Vec<&'a PodRecord> {
        let n = usize::try_from(n).unwrap_or(0);
        if n < group.len() {
            group.sort_by(|a, b| deletion_order(a, b, &per_node));
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

fn pods_per_node<'a>(all: &[&'a PodRecord]) -> BTreeMap<&'a str, usize> {
    let mut m = BTreeMap::new();
    for p in all {
        let node = p.spec.as_ref().and_then(|s| s.node_name.as_deref()).unwrap_or("");
        *m.entry(node).or_default() += 1;
    }
    m
}

/// Kubernetes' `ActivePodsWithRanks` order ("delete first" first).
fn deletion_order(a: &PodRecord, b: &PodRecord, per_node: &BTreeMap<&str, usize>) -> Ordering {
    let cost = |p: &PodRecord| -> i64 {
        pods::annotation(p, POD_DELETION_COST)
            .and_then(|v| v.parse().ok())
            .unwrap_or(0)
    };
    let rank = |p: &PodRecord| {
        let node = p.spec.as_ref().and_then(|s| s.node_name.as_deref()).unwrap_or("");
        per_node.get(node).copied().unwrap_or(0)
    };
    let phase_rank = |p: &PodRecord| match pods::phase(p) {
        "Pending" => 0,
        "Unknown" => 1,
        "Running" => 2,
        _ => 3,
    };
    pods::is_scheduled(a)
        .cmp(&pods::is_scheduled(b))
        .then_with(|| phase_rank(a).cmp(&phase_rank(b)))
        .then_with(|| pods::is_ready(a).cmp(&pods::is_ready(b)))
        .then_with(|| cost(a).cmp(&cost(b)))
        .then_with(|| rank(b).cmp(&rank(a)))
        .then_with(|| match (pods::ready_since(a), pods::ready_since(b)) {
            (Some(x), Some(y)) => y.cmp(&x),
            _ => Ordering::Equal,
        })
        .then_with(|| pods::max_restarts(b).cmp(&pods::max_restarts(a)))
        .then_with(|| match (pods::created(a), pods::created(b)) {
            (Some(x), Some(y)) => y.cmp(&x),
            _ => Ordering::Equal,
        })
}

#[cfg(test)]
#[path = "scale_tests.rs"]
mod tests;
