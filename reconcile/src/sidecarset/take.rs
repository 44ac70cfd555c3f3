//! Which upgrade candidates a round takes: in order, the last `partition` kept; a candidate that is not
//! ready is always taken (it is unavailable already), a ready one while `maxUnavailable` lasts; a
//! PodUnavailableBudget refusal holds a pod back without spending anything.
//!
//! The order is the candidates' sort key, ties in the order given (a stable sort). [`walk`] goes through
//! candidates already in order (after `scatterStrategy`); [`select`] gives the same result from
//! candidates in any order without sorting them all: it only orders the pods a round can take, which is
//! what keeps a pass over thousands of candidates with a small `maxUnavailable` cheap.

use std::cmp::Ordering;

use kruise_api::PodRecord;

use super::{Refusal, SeenPod};

/// What a round takes, in candidate order.
pub(super) struct Taken<'a> {
    pub chosen: Vec<SeenPod<'a>>,
    /// Pods a PodUnavailableBudget held back, with the refusal.
    pub held: Vec<(SeenPod<'a>, Refusal)>,
}

/// The budget check of one pod.
pub(super) type Refused<'r> = &'r dyn Fn(&PodRecord) -> Option<Refusal>;

/// A candidate with its position among the candidates (the tie-breaker).
type Ranked<'a> = (usize, SeenPod<'a>);

fn cmp(a: &Ranked<'_>, b: &Ranked<'_>) -> Ordering {
    a.1.facts.order.cmp(&b.1.facts.order).then(a.0.cmp(&b.0))
}

/// Sorts candidates by their key, ties kept in the order given.
pub(super) fn sort(candidates: &mut [SeenPod<'_>]) {
    candidates.sort_by(|a, b| a.facts.order.cmp(&b.facts.order));
}

/// The round over `sorted` candidates: the last `kept` are left out; `unavailable` matched pods are
/// unavailable already.
pub(super) fn walk<'a>(
    sorted: &[SeenPod<'a>],
    kept: usize,
    mut unavailable: i64,
    max_unavailable: i64,
    refused: Refused<'_>,
) -> Taken<'a> {
    let mut out = Taken {
        chosen: Vec::new(),
        held: Vec::new(),
    };
    for p in &sorted[..sorted.len().saturating_sub(kept)] {
        let ready = p.facts.ready;
        if ready && unavailable >= max_unavailable {
            // Not-ready candidates further on are still taken.
            continue;
        }
        // Checked before the write, with the rule the pod webhook applies: a protected pod waits.
        if let Some(refusal) = refused(p.pod) {
            out.held.push((*p, refusal));
            continue;
        }
        if ready {
            unavailable += 1;
        }
        out.chosen.push(*p);
    }
    out
}

/// [`walk`] over `candidates` in sort order, without sorting all of them: the kept tail is split off by
/// selection, the not-ready candidates are sorted (all are taken or held), and of the ready ones only as
/// many as the budget has room for are selected and sorted, again after each refusal.
pub(super) fn select<'a>(
    candidates: &[SeenPod<'a>],
    kept: usize,
    unavailable: i64,
    max_unavailable: i64,
    refused: Refused<'_>,
) -> Taken<'a> {
    let mut ranked: Vec<Ranked<'a>> = candidates.iter().copied().enumerate().collect();
    let eligible = ranked.len().saturating_sub(kept);
    if eligible < ranked.len() {
        if eligible > 0 {
            ranked.select_nth_unstable_by(eligible, cmp);
        }
        ranked.truncate(eligible);
    }
    let (mut not_ready, mut ready): (Vec<Ranked<'a>>, Vec<Ranked<'a>>) =
        ranked.into_iter().partition(|(_, p)| !p.facts.ready);
    not_ready.sort_unstable_by(cmp);
    let (mut chosen, mut held) = (Vec::new(), Vec::new());
    for r in not_ready {
        match refused(r.1.pod) {
            Some(refusal) => held.push((r, refusal)),
            None => chosen.push(r),
        }
    }
    let mut room = max_unavailable.saturating_sub(unavailable);
    let mut rest: &mut [Ranked<'a>] = &mut ready;
    while room > 0 && !rest.is_empty() {
        let n = usize::try_from(room).unwrap_or(usize::MAX).min(rest.len());
        if n < rest.len() {
            rest.select_nth_unstable_by(n, cmp);
        }
        let (head, tail) = std::mem::take(&mut rest).split_at_mut(n);
        head.sort_unstable_by(cmp);
        for r in head.iter() {
            match refused(r.1.pod) {
                Some(refusal) => held.push((*r, refusal)),
                None => {
                    chosen.push(*r);
                    room -= 1;
                }
            }
        }
        rest = tail;
    }
    chosen.sort_unstable_by(cmp);
    held.sort_unstable_by(|a, b| cmp(&a.0, &b.0));
    Taken {
        chosen: chosen.into_iter().map(|(_, p)| p).collect(),
        held: held.into_iter().map(|((_, p), r)| (p, r)).collect(),
    }
}

#[cfg(test)]
mod tests;
