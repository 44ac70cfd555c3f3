//! The rolling update (docs/advanced-daemonset.md#rolling-update): the nodes the partition and the
//! rollout selector leave to update, then replacements within `maxUnavailable` (deleting, or updating
//! in place) or `maxSurge` (a new pod beside the old one).
//!
//! Unlike OpenKruise (openkruise/kruise#1323), an old pod that is already unavailable is replaced
//! within the budget: it takes a slot of `maxUnavailable` like any replacement in flight, and while
//! such pods fill the budget no available pod is touched.

use std::time::Duration;

use kruise_api::PodRecord;
use kruise_core::selector::{Selection, Selector};

use crate::action::Action;
use crate::cloneset::revision::template_of;
use crate::daemonset::manage::{delete_or_hold, min_delay, until_available};
use crate::daemonset::nodes::{Ctx, NodePods, PodView};
use crate::daemonset::pod::{in_place, new_pod};
use crate::daemonset::revision::hash_of;
use crate::inplace::{self, NotInPlace};
use crate::int_or_percent::InvalidIntOrPercent;
use crate::pods;

/// What the rolling update decided.
#[derive(Debug, Default)]
pub struct Rolled {
    /// Writes, in order.
    pub actions: Vec<Action>,
    /// Look again after this long (a new pod inside `minReadySeconds`).
    pub delay: Option<Duration>,
}

/// The live pods of a node by revision: the oldest current and old pod and how many of each.
struct Split<'n, 'a> {
    new: Option<&'n PodView<'a>>,
    old: Option<&'n PodView<'a>>,
    new_count: usize,
    old_count: usize,
}

fn split<'n, 'a>(node: &'n NodePods<'a>) -> Split<'n, 'a> {
    let mut s = Split {
        new: None,
        old: None,
        new_count: 0,
        old_count: 0,
    };
    for p in node.live() {
        if p.current {
            s.new = s.new.or(Some(p));
            s.new_count += 1;
        } else {
            s.old = s.old.or(Some(p));
            s.old_count += 1;
        }
    }
    s
}

/// The nodes the rollout may touch, highest names first: nodes already updated or updating, then
/// those the rollout selector picks (every other node without one), cut to `nodes − partition`.
pub fn chosen_nodes<'c, 'a>(ctx: &'c Ctx<'a>) -> Result<Vec<&'c NodePods<'a>>, InvalidIntOrPercent> {
    let selector = ctx.rolling().and_then(|r| r.selector.as_ref());
    let parsed = selector.map(|s| Selector::parse(Some(s)));
    let (mut updated, mut updating, mut picked) = (Vec::new(), Vec::new(), Vec::new());
    let mut total = 0usize;
    for node in ctx.nodes.iter().rev() {
        let has_pods = node.live().next().is_some();
        if !node.fit.should_run && !has_pods {
            continue;
        }
        total += 1;
        let s = split(node);
        if s.new_count > 0 || s.old_count > 1 {
            updated.push(node);
        } else if s.old.is_none_or(|o| o.preparing_delete) {
            updating.push(node);
        } else {
            let selected = match &parsed {
                None => true,
                Some(s) => {
                    let empty = Default::default();
                    let labels = node.node.metadata.labels.as_ref().unwrap_or(&empty);
                    s.evaluate(labels).is_ok_and(|m| m != Selection::NoMatch)
                }
            };
            if selected {
                picked.push(node);
            }
        }
    }
    let keep = total.saturating_sub(usize::try_from(ctx.partition()?).unwrap_or(0));
    let mut all = updated;
    all.extend(updating);
    all.extend(picked);
    all.truncate(keep);
    Ok(all)
}

/// Runs the rolling update.
pub fn rolling(ctx: &Ctx<'_>) -> Result<Rolled, InvalidIntOrPercent> {
    let chosen = chosen_nodes(ctx)?;
    if ctx.max_surge()? > 0 {
        surge(ctx, &chosen)
    } else {
        replace(ctx, &chosen)
    }
}

/// Without surge: delete (or update in place) old pods within `maxUnavailable`.
fn replace(ctx: &Ctx<'_>, chosen: &[&NodePods<'_>]) -> Result<Rolled, InvalidIntOrPercent> {
    let mut out = Rolled::default();
    let budget = usize::try_from(ctx.max_unavailable()?).unwrap_or(0);
    let mut in_flight = 0usize;
    let (mut unavailable_old, mut available_old) = (Vec::new(), Vec::new());
    for node in chosen {
        let s = split(node);
        match (s.new_count, s.old_count, s.new, s.old) {
            (0, 0, ..) => in_flight += usize::from(node.fit.should_run),
            (1, 0, Some(n), _) => {
                if !n.available || n.preparing_delete {
                    in_flight += 1;
                    if n.ready {
                        out.delay = min_delay(out.delay, until_available(ctx, n.pod));
                    }
                }
            }
            (0, 1, _, Some(o)) if o.preparing_delete => in_flight += 1,
            (0, 1, _, Some(o)) if o.available => available_old.push(o.pod),
            (0, 1, _, Some(o)) => unavailable_old.push(o.pod),
            _ => in_flight += 1,
        }
    }
    let slots = budget.saturating_sub(in_flight);
    let from_unavailable = unavailable_old.len().min(slots);
    let from_available = budget.saturating_sub(in_flight + unavailable_old.len());
    let victims = unavailable_old
        .into_iter()
        .take(from_unavailable)
        .chain(available_old.into_iter().take(from_available));
    let mut shared = Shared::default();
    let mut in_place_left = ctx.burst()?;
    for pod in victims {
        if in_place_left > 0
            && let Some(actions) = try_in_place(ctx, pod, &mut shared)
        {
            in_place_left -= 1;
            out.actions.extend(actions);
            continue;
        }
        delete_or_hold(ctx, pod, &mut out.actions);
    }
    Ok(out)
}

/// With surge: start a new pod beside old ones within `maxSurge` (an unavailable old pod at once);
/// `manage` removes the old pod once the new one is available.
fn surge(ctx: &Ctx<'_>, chosen: &[&NodePods<'_>]) -> Result<Rolled, InvalidIntOrPercent> {
    let mut out = Rolled::default();
    let budget = usize::try_from(ctx.max_surge()?).unwrap_or(0);
    let mut in_use = 0usize;
    let (mut now, mut candidates) = (Vec::new(), Vec::new());
    for node in chosen {
        let s = split(node);
        if s.new_count > 1 || s.new.is_some_and(|n| !n.available || n.preparing_delete) {
            in_use += 1;
            continue;
        }
        let Some(old) = s.old else { continue };
        if s.new_count > 0 {
            continue;
        }
        if old.available {
            candidates.push(node.name);
        } else {
            now.push(node.name);
        }
    }
    let extra = budget.saturating_sub(in_use);
    for node in now.into_iter().chain(candidates.into_iter().take(extra)) {
        out.actions.push(Action::CreatePod(Box::new(new_pod(
            ctx.ds, node, ctx.hash, ctx.now,
        ))));
    }
    Ok(out)
}

#[derive(Default)]
struct Shared<'a> {
    specs: inplace::SpecCache<'a>,
    texts: inplace::StateText,
    not_ready: [Option<std::sync::Arc<serde_json::Value>>; 2],
}

/// The writes that update `pod` in place, when the rollout is in place, the pod was born with the
/// `InPlaceUpdateReady` gate and only images or metadata changed since its revision (or env fed from
/// metadata, on a pod the node agent serves, with [`Ctx::env_from_metadata`]).
fn try_in_place<'a>(ctx: &Ctx<'_>, pod: &'a PodRecord, shared: &mut Shared<'a>) -> Option<Vec<Action>> {
    let new = ctx.update_template.as_ref()?;
    if !in_place(ctx.ds) || !inplace::has_gate(pod) {
        return None;
    }
    let own = pods::label(pod, pods::CONTROLLER_REVISION_HASH).unwrap_or("");
    let verdict = inplace::cached_spec(&mut shared.specs, own, || {
        ctx.revisions
            .iter()
            .find(|r| hash_of(r) == own)
            .map_or(Err(NotInPlace::SpecChanged), |old| match template_of(old) {
                Ok(t) => inplace::calculate_spec(&t, new, ctx.hash),
                Err(_) => Err(NotInPlace::SpecChanged),
            })
    });
    let spec = inplace::for_pod(verdict, pod, ctx.env_from_metadata).ok()?;
    inplace::start_hooked(
        pod,
        spec,
        None,
        0,
        ctx.now,
        &mut shared.texts,
        &mut shared.not_ready,
    )
    .ok()
    .map(|(actions, _)| actions)
}
