//! Group commit of admission's status deltas in cluster mode (docs/pod-admission.md#group-commit):
//! concurrent reviews that spend the same PodUnavailableBudget or book the same WorkloadSpread are
//! written as one status write per round trip instead of one each.
//!
//! The first review to find no write under way for its object starts a leader task. The leader takes
//! every delta waiting at that moment, builds one status from the cached object
//! ([`kruise_core::view::grouped_status`], which takes each delta only while it still holds on what the
//! ones before it recorded), writes it with the cached resourceVersion as precondition, and answers them
//! all; then it takes what queued meanwhile, until nothing waits.
//!
//! A delta decided on an older resourceVersion is accepted only when every write since that version
//! was one of this leader's (so the object differs only by deltas it checked itself); otherwise, or
//! when it no longer holds, or when the write conflicts, its review decides again on the refreshed
//! cache. Nothing is answered before the write that records it has been stored.

use std::collections::{HashMap, VecDeque};
use std::sync::{Arc, Mutex};

use kruise_core::{StatusChange, StatusWrite, WriteTarget, view::grouped_status};
use tokio::sync::oneshot;

use crate::cluster::{
    ClusterCache,
    status_writes::{WriteError, write_status},
};

/// How many of its own resourceVersions the leader of one object remembers.
const CHAIN_LIMIT: usize = 64;

/// How a submitted delta ended.
#[derive(Debug)]
pub enum Outcome {
    /// Stored with the others of its round.
    Recorded,
    /// Not written: it no longer holds, was decided on a version someone else changed, or the write
    /// conflicted. The cache has been brought up to date; decide again.
    DecideAgain,
    /// The write failed for another reason (shared by the round's members).
    Failed(Arc<WriteError>),
}

/// The deltas waiting per object, and whether a leader is writing them.
#[derive(Default)]
pub struct GroupCommit {
    objects: Mutex<HashMap<WriteTarget, Queue>>,
}

#[derive(Default)]
struct Queue {
    waiting: Vec<Member>,
    leading: bool,
    /// resourceVersions the object went through by this process's grouped writes alone, oldest first.
    chain: VecDeque<String>,
}

struct Member {
    write: StatusWrite,
    reply: oneshot::Sender<Outcome>,
}

impl GroupCommit {
    /// The change can be grouped: an admission delta, not a complete status.
    pub fn groups(change: &StatusChange) -> bool {
        matches!(
            change,
            StatusChange::SpendBudget(_) | StatusChange::RecordInSubset(_)
        )
    }

    /// Queues `write` (a delta) and waits until a grouped write has stored it or refused it.
    pub async fn submit(self: &Arc<Self>, cache: &ClusterCache, write: StatusWrite) -> Outcome {
        let (reply, answer) = oneshot::channel();
        let target = write.target.clone();
        let lead = {
            let mut objects = self.objects.lock().unwrap_or_else(|p| p.into_inner());
            let queue = objects.entry(target.clone()).or_default();
            queue.waiting.push(Member { write, reply });
            !std::mem::replace(&mut queue.leading, true)
        };
        if lead {
            tokio::spawn(self.clone().lead(cache.clone(), target));
        }
        answer.await.unwrap_or_else(|_| {
            Outcome::Failed(Arc::new(WriteError::Invalid(
                "the grouped write was abandoned".into(),
            )))
        })
    }

    /// Writes rounds for `target` until nothing waits.
    async fn lead(self: Arc<Self>, cache: ClusterCache, target: WriteTarget) {
        loop {
            let (members, mut chain) = {
                let mut objects = self.objects.lock().unwrap_or_else(|p| p.into_inner());
                let Some(queue) = objects.get_mut(&target) else {
                    return;
                };
                if queue.waiting.is_empty() {
                    queue.leading = false;
                    if !chain_still_current(&cache, &target, &queue.chain) {
                        objects.remove(&target);
                    }
                    return;
                }
                (
                    std::mem::take(&mut queue.waiting),
                    std::mem::take(&mut queue.chain),
                )
            };
            round(&cache, &target, members, &mut chain).await;
            let mut objects = self.objects.lock().unwrap_or_else(|p| p.into_inner());
            if let Some(queue) = objects.get_mut(&target) {
                queue.chain = chain;
            }
        }
    }
}

/// The object is still cached at the last version this leader wrote. Otherwise (someone else wrote
/// it, or it was deleted) the next round would start a new chain anyway, so the idle entry is dropped:
/// the map holds at most one entry per live object.
fn chain_still_current(cache: &ClusterCache, target: &WriteTarget, chain: &VecDeque<String>) -> bool {
    let Some(last) = chain.back() else {
        return false;
    };
    grouped_status(cache, target, &[]).is_ok_and(|now| &now.resource_version == last)
}

/// One round: one status from the cached object and the members' deltas, one write, every member
/// answered.
async fn round(
    cache: &ClusterCache,
    target: &WriteTarget,
    members: Vec<Member>,
    chain: &mut VecDeque<String>,
) {
    let changes: Vec<&StatusChange> = members.iter().map(|m| &m.write.change).collect();
    let grouped = match grouped_status(cache, target, &changes) {
        Ok(grouped) => grouped,
        Err(e) => {
            let failure = Arc::new(WriteError::Invalid(e.to_string()));
            for member in members {
                let _ = member.reply.send(Outcome::Failed(failure.clone()));
            }
            return;
        }
    };
    if chain.back() != Some(&grouped.resource_version) {
        chain.clear();
        chain.push_back(grouped.resource_version.clone());
    }
    // A delta decided on a version this leader did not lead to from its own writes is decided again.
    let accepted: Vec<bool> = members
        .iter()
        .zip(&grouped.accepted)
        .map(|(m, &holds)| {
            holds
                && m.write
                    .resource_version
                    .as_ref()
                    .is_none_or(|rv| chain.contains(rv))
        })
        .collect();
    let result = if !accepted.iter().any(|a| *a) {
        Ok(())
    } else if accepted.iter().zip(&grouped.accepted).all(|(a, g)| a == g) {
        write(cache, target, &grouped.resource_version, &grouped.status, chain).await
    } else {
        // Some deltas held only on a version someone else changed: build the status without them.
        let kept: Vec<&StatusChange> = members
            .iter()
            .zip(&accepted)
            .filter(|(_, a)| **a)
            .map(|(m, _)| &m.write.change)
            .collect();
        match grouped_status(cache, target, &kept) {
            Ok(regrouped) => {
                write(
                    cache,
                    target,
                    &regrouped.resource_version,
                    &regrouped.status,
                    chain,
                )
                .await
            }
            Err(e) => Err(WriteError::Invalid(e.to_string())),
        }
    };
    let conflicted = matches!(result, Err(WriteError::Conflict { .. }));
    if conflicted && let Err(e) = cache.refresh(target).await {
        tracing::warn!(kind = %target.kind, namespace = %target.namespace, name = %target.name,
            error = %e, "cannot re-read after a conflicting grouped write");
    }
    let failure = match result {
        Err(e) if !conflicted => Some(Arc::new(e)),
        _ => None,
    };
    for (member, accepted) in members.into_iter().zip(accepted) {
        let outcome = match (&failure, accepted, conflicted) {
            (Some(failure), true, _) => Outcome::Failed(failure.clone()),
            (None, true, false) => Outcome::Recorded,
            _ => Outcome::DecideAgain,
        };
        let _ = member.reply.send(outcome);
    }
}

/// Writes `status` with `resource_version` as precondition; remembers what was stored, in the cache
/// and in the chain of this leader's versions.
async fn write(
    cache: &ClusterCache,
    target: &WriteTarget,
    resource_version: &str,
    status: &serde_json::Value,
    chain: &mut VecDeque<String>,
) -> Result<(), WriteError> {
    let stored = write_status(cache.client(), target, Some(resource_version), status).await?;
    cache.remember(&stored);
    if let Some(version) = stored
        .pointer("/metadata/resourceVersion")
        .and_then(|v| v.as_str())
    {
        if chain.len() == CHAIN_LIMIT {
            chain.pop_front();
        }
        chain.push_back(version.to_string());
    }
    Ok(())
}
