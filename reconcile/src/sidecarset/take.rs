//! Which upgrade candidates a round takes: in order, the last `partition` kept; a candidate that is not
//! ready is always taken (it is unavailable already), a ready one while `maxUnavailable` lasts; a
//! PodUnavailableBudget refusal holds a pod back without spending anything.
//!
//! The order is the candidates' sort key, ties in the order given (a stable sort). [`walk`] goes through
//! candidates already in order (after `scatterStrategy`); [`select`] gives the same result from
//! candidates in any order without sorting them all: it only orders the pods a round can take, which is
//! what keeps a pass over thousands of candidates with a small `maxUnavailable` cheap.

use std::cmp::Ordering;
use std::collections::BinaryHeap;

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

/// A candidate ordered by [`cmp`], for the heap.
struct ByOrder<'a>(Ranked<'a>);

impl PartialEq for ByOrder<'_> {
    fn eq(&self, other: &Self) -> bool {
        cmp(&self.0, &other.0) == Ordering::Equal
    }
}
impl Eq for ByOrder<'_> {}
impl PartialOrd for ByOrder<'_> {
    fn partial_cmp(&self, other: &Self) -> Option<Ordering> {
        Some(self.cmp(other))
    }
}
impl Ord for ByOrder<'_> {
    fn cmp(&self, other: &Self) -> Ordering {
        cmp(&self.0, &other.0)
    }
}

/// Moves the first `n` of `items` in order out of it, sorted; the others stay, unordered. A few of many
/// go through a bounded heap (about one comparison per item), more by selection.
fn first<'a>(items: &mut Vec<Ranked<'a>>, n: usize) -> Vec<Ranked<'a>> {
    if n >= items.len() {
        let mut all = std::mem::take(items);
        all.sort_unstable_by(cmp);
        return all;
    }
    if n.saturating_mul(16) > items.len() {
        items.select_nth_unstable_by(n, cmp);
        let mut head: Vec<Ranked<'a>> = items.drain(..n).collect();
        head.sort_unstable_by(cmp);
        return head;
    }
    let mut heap: BinaryHeap<ByOrder<'a>> = BinaryHeap::with_capacity(n + 1);
    for r in items.iter() {
        if heap.len() < n {
            heap.push(ByOrder(*r));
        } else if heap.peek().is_some_and(|top| cmp(r, &top.0) == Ordering::Less) {
            heap.pop();
            heap.push(ByOrder(*r));
        }
    }
    let head: Vec<Ranked<'a>> = heap.into_sorted_vec().into_iter().map(|b| b.0).collect();
    let mut taken = vec![false; items.iter().map(|r| r.0 + 1).max().unwrap_or(0)];
    for r in &head {
        taken[r.0] = true;
    }
    items.retain(|r| !taken[r.0]);
    head
}

/// Sorts candidates by their key, ties kept in the order given.
pub(super) fn sort(candidates: &mut [SeenPod<'_>]) {
    candidates.sort_by_key(|a| a.facts.order);
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
    let mut not_ready: Vec<Ranked<'a>> = ranked.iter().copied().filter(|(_, p)| !p.facts.ready).collect();
    ranked.retain(|(_, p)| p.facts.ready);
    let mut ready = ranked;
    not_ready.sort_unstable_by(cmp);
    let (mut chosen, mut held) = (Vec::new(), Vec::new());
    for r in not_ready {
        match refused(r.1.pod) {
            Some(refusal) => held.push((r, refusal)),
            None => chosen.push(r),
        }
    }
    let mut room = max_unavailable.saturating_sub(unavailable);
    while room > 0 && !ready.is_empty() {
        let head = first(&mut ready, usize::try_from(room).unwrap_or(usize::MAX));
        for r in &head {
            match refused(r.1.pod) {
                Some(refusal) => held.push((*r, refusal)),
                None => {
                    chosen.push(*r);
                    room -= 1;
                }
            }
        }
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
