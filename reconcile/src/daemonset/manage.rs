//! `manage`: which nodes get a pod and which pods go, per node (docs/advanced-daemonset.md#manage).
//! Every delete passes through the `preDelete` hook ([`delete_or_hold`]).

use std::time::Duration;

use k8s_openapi::jiff::SignedDuration;
use kruise_api::PodRecord;

use crate::action::Action;
use crate::daemonset::nodes::{Ctx, NodePods};
use crate::daemonset::pod::new_pod;
use crate::int_or_percent::InvalidIntOrPercent;
use crate::lifecycle::{self, PRE_DELETE_HOOK_KEY};
use crate::pods;

/// What `manage` decided.
#[derive(Debug, Default)]
pub struct Managed {
    /// Writes, in order: creates, then deletes and hook moves, then events.
    pub actions: Vec<Action>,
    /// Pods created or deleted (the rolling update waits for the next pass when any).
    pub changed: bool,
    /// Look again after this long (a surge pod inside `minReadySeconds`).
    pub delay: Option<Duration>,
}

/// The shorter of two delays.
pub fn min_delay(a: Option<Duration>, b: Option<Duration>) -> Option<Duration> {
    match (a, b) {
        (Some(a), Some(b)) => Some(a.min(b)),
        (a, b) => a.or(b),
    }
}

/// How long until `pod`, ready now, has been ready for `minReadySeconds`.
pub fn until_available(ctx: &Ctx<'_>, pod: &PodRecord) -> Option<Duration> {
    let since = pods::ready_since(pod)?;
    let at = since
        .checked_add(SignedDuration::from_secs(i64::from(
            ctx.ds.spec.min_ready_seconds,
        )))
        .ok()?;
    (at > ctx.now)
        .then(|| Duration::from_secs(u64::try_from(at.duration_since(ctx.now).as_secs()).unwrap_or(0) + 1))
}

/// The pod is in the lifecycle state `PreparingDelete`.
pub fn preparing_delete(pod: &PodRecord) -> bool {
    pods::lifecycle_state(pod) == "PreparingDelete"
}

/// Deletes `pod`, or holds it in `PreparingDelete` while the `preDelete` hook's labels or finalizers
/// are on it (a pod already held is left alone). Returns whether a delete was emitted.
pub fn delete_or_hold(ctx: &Ctx<'_>, pod: &PodRecord, actions: &mut Vec<Action>) -> bool {
    let hook = ctx.pre_delete();
    if hook.is_some() && lifecycle::is_hooked(hook, pod) {
        if !preparing_delete(pod) {
            if lifecycle::marks_not_ready(hook) {
                actions.extend(lifecycle::not_ready_key_patch(
                    pod,
                    PRE_DELETE_HOOK_KEY,
                    true,
                    ctx.now,
                ));
            }
            actions.extend(lifecycle::set_state(pod, "PreparingDelete", ctx.now));
        }
        return false;
    }
    actions.push(Action::DeletePod {
        name: pods::name(pod).to_owned(),
        uid: pod.metadata.uid.clone(),
    });
    true
}

/// Runs `manage` over every node; `orphans` are pods naming no listed node.
pub fn manage<'a>(
    ctx: &Ctx<'a>,
    orphans: &[&'a PodRecord],
    surge: bool,
) -> Result<Managed, InvalidIntOrPercent> {
    let mut out = Managed::default();
    let mut needy: Vec<&str> = Vec::new();
    let mut doomed: Vec<&PodRecord> = Vec::new();
    let mut events = Vec::new();
    for node in &ctx.nodes {
        per_node(
            ctx,
            node,
            surge,
            &mut needy,
            &mut doomed,
            &mut events,
            &mut out.delay,
        );
    }
    // Pods pinned to a node that no longer exists and never scheduled.
    doomed.extend(
        orphans
            .iter()
            .copied()
            .filter(|p| !crate::daemonset::nodes::terminating(p) && !pods::is_scheduled(p)),
    );
    let needy = partitioned(ctx, needy)?;
    let burst = ctx.burst()?;
    for node in needy.into_iter().take(burst) {
        out.actions.push(Action::CreatePod(Box::new(new_pod(
            ctx.ds, node, ctx.hash, ctx.now,
        ))));
        out.changed = true;
    }
    for pod in doomed.into_iter().take(burst) {
        out.changed |= delete_or_hold(ctx, pod, &mut out.actions);
    }
    out.changed |= out.actions.iter().any(|a| matches!(a, Action::PatchPod { .. }));
    out.actions.extend(events);
    Ok(out)
}

fn per_node<'a>(
    ctx: &Ctx<'_>,
    node: &NodePods<'a>,
    surge: bool,
    needy: &mut Vec<&'a str>,
    doomed: &mut Vec<&'a PodRecord>,
    events: &mut Vec<Action>,
    delay: &mut Option<Duration>,
) {
    if !node.fit.should_continue_running {
        doomed.extend(node.live().map(|p| p.pod));
        return;
    }
    let mut held = false;
    for view in node.live().filter(|p| p.failed || p.preparing_delete) {
        if view.failed {
            events.push(Action::warning(
                "FailedDaemonPod",
                format!(
                    "Found failed daemon pod {}/{} on node {}, will try to kill it",
                    view.pod.metadata.namespace.as_deref().unwrap_or(""),
                    pods::name(view.pod),
                    node.name
                ),
            ));
        } else {
            held = true;
        }
        doomed.push(view.pod);
    }
    let mut running = node.live().filter(|p| !p.failed && !p.preparing_delete);
    let Some(first) = running.next() else {
        // Without surge nothing replaces a pod held in PreparingDelete until it is gone.
        if node.fit.should_run && (surge || !held) {
            needy.push(node.name);
        }
        return;
    };
    if !surge {
        doomed.extend(running.map(|p| p.pod));
        return;
    }
    // With surge a node keeps its oldest current pod and its oldest old pod; the old one goes once
    // the current one is available (or at once when the old one is not ready).
    let (mut newest, mut oldest) = (None, None);
    for view in std::iter::once(first).chain(running) {
        let slot = if view.current { &mut newest } else { &mut oldest };
        if slot.is_none() {
            *slot = Some(view);
        } else {
            doomed.push(view.pod);
        }
    }
    if let (Some(new), Some(old)) = (newest, oldest) {
        if !old.ready || new.available {
            doomed.push(old.pod);
        } else if new.ready {
            *delay = min_delay(*delay, until_available(ctx, new.pod));
        }
    }
}

/// Partitioned creation: with `partitionedScaling` and a partition, at most
/// `desired − up-to-date nodes − partition` needy nodes get a pod, the lowest names first.
fn partitioned<'a>(ctx: &Ctx<'_>, needy: Vec<&'a str>) -> Result<Vec<&'a str>, InvalidIntOrPercent> {
    let enabled = ctx.is_rolling()
        && ctx
            .ds
            .spec
            .scale_strategy
            .as_ref()
            .is_some_and(|s| s.partitioned_scaling);
    let partition = ctx.partition()?;
    if !enabled || partition == 0 {
        return Ok(needy);
    }
    let updated = ctx
        .nodes
        .iter()
        .filter(|n| n.fit.should_run && n.live().any(|p| p.current))
        .count();
    let allowed = usize::try_from(ctx.desired - partition)
        .unwrap_or(0)
        .saturating_sub(updated);
    Ok(needy.into_iter().take(allowed).collect())
}
