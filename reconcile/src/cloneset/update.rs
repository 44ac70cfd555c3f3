//! Update (docs/cloneset-controller.md#update): refresh every pod, then pick which pods move to the target
//! revision this pass,
//! in what order and within what unavailability budget, and update each in place or by recreation.

use std::time::Duration;

use kruise_api::PodRecord;
use kruise_api::apps_v1beta1::{CloneSetPodUpdateStrategyType, CloneSetUpdateStrategyType};
use kruise_api::common::{UpdatePriorityOrderTerm, UpdatePriorityStrategy};
use serde_json::json;

use crate::action::Action;
use crate::cloneset::arithmetic::{self, Diffs, rolling_update};
use crate::cloneset::context::Ctx;
use crate::cloneset::refresh::refresh_pod;
use crate::cloneset::revision::template_of;
use crate::inplace::{self, NotInPlace};
use crate::pods::{self, SPECIFIED_DELETE};
use kruise_core::selector::{Selection, Selector};

/// Why a pod could not be updated (becomes a `FailedUpdate` condition).
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum UpdateError {
    /// InPlaceOnly, but the change touches more than images and metadata.
    #[error("find Pod {0} update strategy is InPlaceOnly but can not update in-place")]
    InPlaceOnly(String),
    /// InPlaceOnly, and a changed label/annotation feeds container env: it needs a container restart,
    /// which only the node agent can do, and none serves the pod (or the gates are off).
    #[error(
        "Pod {pod} needs containers {containers:?} restarted to pick up env from changed metadata; \
         no node agent serves it (no apps.kruise.io/runtime-containers-meta, or gate \
         InPlaceUpdateEnvFromMetadata off), recreate the pod or use InPlaceIfPossible"
    )]
    NeedsRestart {
        /// Pod name.
        pod: String,
        /// Containers whose env reads changed metadata.
        containers: Vec<String>,
    },
    /// A pod in a lifecycle state that cannot be updated in place.
    #[error("not allowed to in-place update pod {0} in state {1}")]
    BadState(String, String),
}

/// What update decided.
#[derive(Debug, Default)]
pub struct UpdateOutcome {
    /// Writes, in order.
    pub actions: Vec<Action>,
    /// Shortest requeue asked for (grace periods).
    pub delay: Option<Duration>,
    /// The first error; the pods before it were still updated.
    pub error: Option<UpdateError>,
    /// The diffs used (None when stopped before computing them).
    pub diffs: Option<Diffs>,
}

fn push_delay(slot: &mut Option<Duration>, d: Option<Duration>) {
    if let Some(d) = d.filter(|d| !d.is_zero()) {
        *slot = Some(slot.map_or(d, |s| s.min(d)));
    }
}

/// Runs the update step.
pub fn update(ctx: &Ctx<'_>) -> UpdateOutcome {
    let mut out = UpdateOutcome::default();
    let mut modified = false;
    for pod in &ctx.pods {
        let r = refresh_pod(ctx, pod);
        push_delay(&mut out.delay, r.delay);
        out.actions.extend(r.actions);
        modified |= r.modified;
    }
    if modified {
        return out;
    }
    let strategy = &ctx.cs.spec.update_strategy;
    if strategy.type_ == Some(CloneSetUpdateStrategyType::OnDelete)
        || rolling_update(ctx.cs).is_some_and(|r| r.paused)
    {
        return out;
    }
    let facts: Vec<_> = ctx.pods_with_views().map(|(_, v)| v.facts(v.at_update)).collect();
    let diffs = arithmetic::calculate(&ctx.params, &facts, ctx.current_name == ctx.update_name);
    out.diffs = Some(diffs);
    if diffs.update_num == 0 {
        return out;
    }
    let target = if diffs.update_num > 0 {
        ctx.update_name
    } else {
        ctx.current_name
    };
    let mut candidates: Vec<&PodRecord> = ctx
        .pods_with_views()
        .filter(|(_, v)| v.at_update != (diffs.update_num > 0))
        .filter(|(p, v)| match v.state {
            "PreparingDelete" => false,
            "Updated" => true,
            _ => !pods::in_grace_period(p),
        })
        .map(|(p, _)| p)
        .collect();
    sort_candidates(ctx, &mut candidates);
    let chosen = limit(ctx, &diffs, candidates, target);
    let mut shared = Shared::default();
    for pod in chosen {
        match update_pod(ctx, pod, target, &mut shared) {
            Ok((actions, delay)) => {
                out.actions.extend(actions);
                push_delay(&mut out.delay, delay);
            }
            Err(e) => {
                out.actions
                    .push(Action::warning("FailedUpdatePodInPlace", e.to_string()));
                out.error = Some(e);
                break;
            }
        }
    }
    out
}

/// Worst first (`ActivePods`), then `priorityStrategy`, then `scatterStrategy`, then PreparingUpdate
/// pods to the front; every step after the first is stable.
pub fn sort_candidates(ctx: &Ctx<'_>, candidates: &mut Vec<&PodRecord>) {
    let ru = rolling_update(ctx.cs);
    let priority = ru.and_then(|r| r.priority_strategy.as_ref()).map(Priority::new);
    // A stable sort by priority of pods in ActivePods order is one sort by (priority, ActivePods order).
    candidates.sort_by_cached_key(|p| {
        (
            priority.as_ref().map_or((0, 0), |s| s.key(p)),
            pods::active_order_key(p),
        )
    });
    if let Some(terms) = ru.and_then(|r| r.scatter_strategy.as_ref()) {
        *candidates = crate::scatter::scatter(&ctx.pods, std::mem::take(candidates), terms);
    }
    let (mut preparing, rest): (Vec<&PodRecord>, Vec<&PodRecord>) = candidates
        .iter()
        .partition(|p| ctx.view(p).state == "PreparingUpdate");
    preparing.extend(rest);
    *candidates = preparing;
}

/// A `priorityStrategy` with its selectors read once.
pub struct Priority<'a> {
    weights: Vec<(Selector<'a>, i64)>,
    orders: &'a [UpdatePriorityOrderTerm],
}

impl<'a> Priority<'a> {
    /// Reads the strategy's selectors once.
    pub fn new(s: &'a UpdatePriorityStrategy) -> Self {
        Priority {
            weights: s
                .weight_priority
                .iter()
                .flatten()
                .map(|t| (Selector::parse(Some(&t.match_selector)), i64::from(t.weight)))
                .collect(),
            orders: s.order_priority.as_deref().unwrap_or_default(),
        }
    }

    /// The sort key: smaller first. Weights: the negated sum of matching weights. Order keys: the index
    /// of the first key the pod has (-1 without any, so those go first, as in OpenKruise), then the
    /// negated integer suffix of its value.
    pub fn key(&self, p: &PodRecord) -> (i64, i64) {
        if !self.weights.is_empty() {
            let w: i64 = self
                .weights
                .iter()
                .filter(|(sel, _)| {
                    // A selector with an unknown operator gives no weight.
                    sel.evaluate(&p.metadata.labels)
                        .is_ok_and(|s| s != Selection::NoMatch)
                })
                .map(|(_, w)| w)
                .sum();
            return (-w, 0);
        }
        for (i, t) in self.orders.iter().enumerate() {
            if let Some(v) = pods::label(p, &t.ordered_key) {
                return (i as i64, -int_suffix(v));
            }
        }
        if self.orders.is_empty() { (0, 0) } else { (-1, 0) }
    }
}

/// The integer formed by the trailing digits of `v` (`"sts-10"` → 10), 0 without.
pub fn int_suffix(v: &str) -> i64 {
    let digits = v.len() - v.bytes().rev().take_while(u8::is_ascii_digit).count();
    v[digits..].parse().unwrap_or(0)
}

/// `limitUpdateIndexes`: at most `|updateNum|`, and never more unavailable than `updateMaxUnavailable`.
fn limit<'a>(
    ctx: &Ctx<'_>,
    diffs: &Diffs,
    mut candidates: Vec<&'a PodRecord>,
    target: &str,
) -> Vec<&'a PodRecord> {
    candidates.truncate(usize::try_from(diffs.update_num.abs()).unwrap_or(0));
    let mut unavailable = 0i64;
    let mut target_unavailable = 0i64;
    for (p, v) in ctx.pods_with_views() {
        if !v.available {
            unavailable += 1;
            if pods::is_at_revision(p, target) {
                target_unavailable += 1;
            }
        }
    }
    let mut can = 0usize;
    for p in &candidates {
        if target_unavailable + can as i64 >= diffs.update_max_unavailable {
            break;
        }
        if ctx.is_available(p) {
            if unavailable >= diffs.update_max_unavailable {
                break;
            }
            unavailable += 1;
        }
        can += 1;
    }
    candidates.truncate(can);
    candidates
}

fn policy(ctx: &Ctx<'_>) -> CloneSetPodUpdateStrategyType {
    rolling_update(ctx.cs)
        .and_then(|r| r.pod_update_policy.clone())
        .unwrap_or(CloneSetPodUpdateStrategyType::ReCreate)
}

use inplace::SpecCache;

/// What the pods updated in one pass share, computed once.
#[derive(Default)]
struct Shared<'a> {
    /// In-place verdicts.
    specs: SpecCache<'a>,
    /// Texts of the in-place state annotation.
    texts: inplace::StateText,
    /// The `InPlaceUpdateReady=False` status patch, for a pod that is not ready and for one that is.
    not_ready: [Option<std::sync::Arc<serde_json::Value>>; 2],
}

/// The in-place verdict for moving `pod` to `target`, computed once per old revision.
fn verdict<'c, 'a>(
    ctx: &Ctx<'a>,
    pod: &PodRecord,
    target: &str,
    specs: &'c mut SpecCache<'a>,
) -> Option<&'c Result<inplace::UpdateSpec, NotInPlace>> {
    let old = ctx
        .revisions
        .iter()
        .find(|r| pods::is_at_revision(pod, r.metadata.name.as_deref().unwrap_or("")))?;
    let old_name = old.metadata.name.as_deref().unwrap_or("");
    Some(inplace::cached_spec(specs, old_name, || {
        let target_template = if target == ctx.update_name {
            &ctx.update_template
        } else {
            &ctx.current_template
        };
        match template_of(old) {
            Ok(t) => inplace::calculate_spec(&t, target_template, target),
            Err(_) => Err(NotInPlace::SpecChanged),
        }
    }))
}

/// `updatePod`: in place when the policy allows and the change permits, else mark for recreation.
fn update_pod<'a>(
    ctx: &Ctx<'a>,
    pod: &PodRecord,
    target: &str,
    shared: &mut Shared<'a>,
) -> Result<(Vec<Action>, Option<Duration>), UpdateError> {
    let name = pods::name(pod).to_owned();
    let policy = policy(ctx);
    let in_place_policy = matches!(
        policy,
        CloneSetPodUpdateStrategyType::InPlaceIfPossible | CloneSetPodUpdateStrategyType::InPlaceOnly
    );
    let verdict = if in_place_policy {
        verdict(ctx, pod, target, &mut shared.specs)
    } else {
        None
    };
    let verdict = verdict.unwrap_or(&Err(NotInPlace::SpecChanged));
    match inplace::for_pod(verdict, pod, ctx.options.env_from_metadata) {
        Ok(spec) => in_place(ctx, pod, spec, &mut shared.texts, &mut shared.not_ready),
        Err(NotInPlace::EnvFromMetadata { containers, .. })
            if policy == CloneSetPodUpdateStrategyType::InPlaceOnly =>
        {
            Err(UpdateError::NeedsRestart {
                pod: name,
                containers: containers.clone(),
            })
        }
        Err(_) if policy == CloneSetPodUpdateStrategyType::InPlaceOnly => Err(UpdateError::InPlaceOnly(name)),
        Err(why) => Ok((
            recreate_notice(why, &name, &policy)
                .into_iter()
                // A pod already labelled is not patched again (the event is still emitted, as OpenKruise).
                .chain(
                    (!pods::has_specified_delete_label(pod)).then(|| Action::PatchPod {
                        name: name.clone(),
                        reason: "specifiedDelete",
                        patch: json!({"metadata": {"labels": {SPECIFIED_DELETE: "true"}}}),
                    }),
                )
                .chain([Action::normal(
                    "SuccessfulUpdatePodReCreate",
                    format!("succeed to update pod {name} by recreate"),
                )])
                .collect(),
            None,
        )),
    }
}

/// The explicit word when an in-place policy recreates because env read from changed metadata needs
/// a container restart and no node agent serves the pod.
fn recreate_notice(why: &NotInPlace, pod: &str, policy: &CloneSetPodUpdateStrategyType) -> Option<Action> {
    match (why, policy) {
        (
            NotInPlace::EnvFromMetadata { containers, .. },
            CloneSetPodUpdateStrategyType::InPlaceIfPossible,
        ) => Some(Action::normal(
            "RecreateForEnvFromMetadata",
            format!(
                "pod {pod}: containers {containers:?} read changed labels/annotations into env \
                     (or are restarted by kubectl.kubernetes.io/restartedAt); they need a restart and \
                     no node agent serves the pod, so the pod is recreated"
            ),
        )),
        _ => None,
    }
}

fn in_place(
    ctx: &Ctx<'_>,
    pod: &PodRecord,
    spec: &inplace::UpdateSpec,
    texts: &mut inplace::StateText,
    not_ready: &mut [Option<std::sync::Arc<serde_json::Value>>; 2],
) -> Result<(Vec<Action>, Option<Duration>), UpdateError> {
    let hook = ctx
        .cs
        .spec
        .lifecycle
        .as_ref()
        .and_then(|l| l.in_place_update.as_ref());
    let grace = rolling_update(ctx.cs)
        .and_then(|r| r.in_place_update_strategy.as_ref())
        .and_then(|s| s.grace_period_seconds)
        .unwrap_or(0);
    inplace::start_hooked(pod, spec, hook, grace, ctx.now, texts, not_ready)
        .map_err(|e| UpdateError::BadState(e.pod, e.state))
}

#[cfg(test)]
mod tests;
