//! One review, end to end and transport-free: decode → decide against the cluster state → apply the
//! status writes the decision depends on → encode. The HTTPS server and `kruise admit` both call
//! [`Admission::answer`], so they give identical answers for the same review and state.

use std::{
    collections::HashSet,
    sync::{Arc, RwLock},
    time::{Duration, Instant},
};

use kruise_core::{MemoryView, StatusWrite, view::Overlay};
use kruise_webhooks::{
    AdmissionRequest, Decision, Review, ReviewError, ReviewResponse, Settings, Webhook, width,
};

use crate::cluster::{
    ClusterCache, ReadError, overloaded,
    status_writes::{WriteError, write_status},
};

mod group_commit;

pub use group_commit::{GroupCommit, Outcome};

/// Where the webhooks read cluster state from.
pub enum StateSource {
    /// Files (`kruise admit`, standalone `kruise serve --objects`); status writes are applied in memory.
    Memory(Box<RwLock<MemoryView>>),
    /// Reflector caches of a real cluster.
    Cluster(ClusterCache),
}

/// The admission logic with its state and switches.
pub struct Admission {
    pub state: StateSource,
    pub settings: Settings,
    /// Concurrent deltas to one object written together (cluster state only).
    groups: Arc<GroupCommit>,
}

/// Why a body was not decided (the server answers 400).
#[derive(Debug, thiserror::Error)]
pub enum AnswerError {
    #[error(transparent)]
    Review(#[from] ReviewError),
    #[error("request {which} is too wide: {reason}")]
    TooWide {
        which: &'static str,
        reason: width::TooWide,
    },
}

/// A decided review, with what the caller needs for logs and metrics.
pub struct Answer {
    pub request: AdmissionRequest,
    pub decision: Decision,
    pub review: ReviewResponse,
    pub elapsed: std::time::Duration,
}

impl Admission {
    /// An admission over `state`.
    pub fn new(state: StateSource, settings: Settings) -> Self {
        Admission {
            state,
            settings,
            groups: Arc::default(),
        }
    }

    /// An admission over in-memory state.
    pub fn in_memory(view: MemoryView, settings: Settings) -> Self {
        Self::new(StateSource::Memory(Box::new(RwLock::new(view))), settings)
    }

    /// Expires the records admission made that no controller will (standalone state only; in a cluster
    /// the controllers do it). Returns how many it dropped.
    pub fn expire_records(&self, now: k8s_openapi::jiff::Timestamp) -> usize {
        match &self.state {
            StateSource::Memory(lock) => lock
                .write()
                .unwrap_or_else(|p| p.into_inner())
                .expire_admission_records(now),
            StateSource::Cluster(_) => 0,
        }
    }

    /// Decodes `body`, decides it with `webhook` and encodes the answer. `Err` only when the body is not
    /// a usable AdmissionReview (the caller answers 400).
    pub async fn answer(&self, webhook: Webhook, body: &[u8]) -> Result<Answer, AnswerError> {
        let started = Instant::now();
        // A large body is judged before it is parsed: its tree would cost many times its size.
        if body.len() >= width::STREAMED_FROM {
            width::check_body(body).map_err(|(which, reason)| AnswerError::TooWide { which, reason })?;
        }
        let Review {
            api_version,
            mut request,
        } = Review::parse(body)?;
        for (which, object) in [("object", &request.object), ("oldObject", &request.old_object)] {
            if let Some(object) = object {
                width::check(object).map_err(|reason| AnswerError::TooWide { which, reason })?;
            }
        }
        let decision = match &self.state {
            StateSource::Memory(lock) => self.decide_in_memory(lock, webhook, &mut request),
            StateSource::Cluster(cache) => self.decide_in_cluster(cache, webhook, &mut request).await,
        };
        let response = decision.to_response(&request, webhook.is_mutating());
        let review = ReviewResponse::new(&api_version, response);
        Ok(Answer {
            request,
            decision,
            review,
            elapsed: started.elapsed(),
        })
    }

    /// Decides under the read lock; the status writes the decision needs are applied under the write
    /// lock with their resourceVersion preconditions, so two reviews never spend the same budget. When
    /// another review changed the object in between, decides again under the write lock.
    fn decide_in_memory(
        &self,
        lock: &RwLock<MemoryView>,
        webhook: Webhook,
        request: &mut AdmissionRequest,
    ) -> Decision {
        let decision = {
            let view = lock.read().unwrap_or_else(|p| p.into_inner());
            webhook.handle_mut(request, &*view, &self.settings)
        };
        if decision.writes.is_empty() || request.is_dry_run() || !decision.allowed() {
            return decision;
        }
        let mut view = lock.write().unwrap_or_else(|p| p.into_inner());
        if decision
            .writes
            .iter()
            .try_for_each(|w| view.apply_status(w))
            .is_ok()
        {
            return decision;
        }
        let decision = webhook.handle_mut(request, &*view, &self.settings);
        if decision.allowed() && !request.is_dry_run() {
            for write in &decision.writes {
                if let Err(e) = view.apply_status(write) {
                    return Decision::deny(409, "Conflict", e.to_string());
                }
            }
        }
        decision
    }

    /// Decides; writes the status the decision depends on with its resourceVersion precondition (deltas
    /// grouped with concurrent ones to the same object, [`GroupCommit`]); when the write conflicts or a
    /// delta no longer holds, decides again on the refreshed cache, at most [`MAX_WRITE_ATTEMPTS`] times.
    async fn decide_in_cluster(
        &self,
        cache: &ClusterCache,
        webhook: Webhook,
        request: &mut AdmissionRequest,
    ) -> Decision {
        let mut conflicted = None;
        let deadline = tokio::time::Instant::now() + WRITE_DEADLINE;
        let mut read = None;
        for _ in 0..MAX_WRITE_ATTEMPTS {
            let decision = decide_reading(cache, &mut read, deadline, webhook, request, &self.settings).await;
            if decision.writes.is_empty() || request.is_dry_run() || !decision.allowed() {
                return decision;
            }
            let Ok(recorded) = tokio::time::timeout_at(deadline, self.record(cache, &decision.writes)).await
            else {
                let message = format!(
                    "cannot record the decision within {} s: the API server is slow or throttling; retry",
                    WRITE_DEADLINE.as_secs()
                );
                return Decision::deny(429, "TooManyRequests", message);
            };
            match recorded {
                Ok(()) => return decision,
                Err(Retry::DecideAgain(write)) => conflicted = Some(write),
                Err(Retry::Failed(e)) if throttled(&e) => {
                    let message = format!("cannot record the decision: {e}; retry");
                    return Decision::deny(429, "TooManyRequests", message);
                }
                Err(Retry::Failed(e)) => {
                    return Decision::deny(500, "InternalError", format!("cannot record the decision: {e}"));
                }
            }
        }
        // Still contended: refuse (429, so clients retry) rather than proceed unprotected.
        conflicted.map_or_else(
            || Decision::deny(429, "TooManyRequests", "too many concurrent updates; retry"),
            |write| kruise_webhooks::conflict_denial(&write),
        )
    }

    /// Writes every status, in order: deltas through the group commit, complete statuses alone.
    async fn record(&self, cache: &ClusterCache, writes: &[StatusWrite]) -> Result<(), Retry> {
        for write in writes {
            if GroupCommit::groups(&write.change) {
                match self.groups.submit(cache, write.clone()).await {
                    Outcome::Recorded => continue,
                    Outcome::DecideAgain => return Err(Retry::DecideAgain(write.clone())),
                    Outcome::Failed(e) => return Err(Retry::Failed(e)),
                }
            }
            write_one(cache, write).await?;
        }
        Ok(())
    }
}

/// Decides `request` over the cache; while the decision says it was denied only for an object the
/// cache does not have yet (an owner created a moment ago, [`Decision::missing`]), reads that object
/// from the API server once — within `deadline`, no retry of our own — and decides again over the
/// cache with the objects read laid under it ([`Overlay`]). `read` keeps them for the caller's later
/// re-decisions (after a write conflict), and is dropped with the review: nothing read here enters
/// the cache. A 404 keeps the decision (the owner does not exist: OpenKruise's 500); another failure
/// refuses with what went wrong (429 when the API server is throttling or slow, else 500).
async fn decide_reading(
    cache: &ClusterCache,
    read: &mut Option<MemoryView>,
    deadline: tokio::time::Instant,
    webhook: Webhook,
    request: &mut AdmissionRequest,
    settings: &Settings,
) -> Decision {
    let mut tried = HashSet::new();
    loop {
        let decision = match read {
            None => webhook.handle_mut(request, cache, settings),
            Some(read) => webhook.handle_mut(request, &Overlay::new(cache, read), settings),
        };
        let Some(missing) = decision.missing().cloned() else {
            return decision;
        };
        if tried.len() >= MAX_OBJECTS_READ || !tried.insert(missing.clone()) {
            return decision;
        }
        let get = cache.read(&missing.group, &missing.kind, &missing.namespace, &missing.name);
        match tokio::time::timeout_at(deadline, get).await {
            Ok(Ok(Some(object))) => {
                if let Err(e) = read.get_or_insert_default().add(object) {
                    let message = format!("cannot use {missing} as read from the API server: {e}");
                    return Decision::deny(500, "InternalError", message);
                }
                tracing::debug!(object = %missing, "not yet in the cache; read from the API server");
            }
            Ok(Ok(None)) => return decision,
            Ok(Err(ReadError::Api(e))) if overloaded(&e) => {
                let message = format!("{missing} is not in the cache yet and cannot be read: {e}; retry");
                return Decision::deny(429, "TooManyRequests", message);
            }
            Ok(Err(e)) => {
                let message = format!("{missing} is not in the cache yet and cannot be read: {e}");
                return Decision::deny(500, "InternalError", message);
            }
            Err(_) => {
                let message = format!(
                    "{missing} is not in the cache yet and was not read within {} s: the API server is slow or throttling; retry",
                    WRITE_DEADLINE.as_secs()
                );
                return Decision::deny(429, "TooManyRequests", message);
            }
        }
    }
}

/// How many distinct objects one review may read from the API server (an owner chain is at most a
/// few long; the WorkloadSpread walk stops at 8).
const MAX_OBJECTS_READ: usize = 8;

/// Why a decision's writes were not all stored.
enum Retry {
    /// Decide again: the object changed (the cache has been refreshed) or a delta no longer holds.
    DecideAgain(StatusWrite),
    /// Shared: a grouped write's failure is every member's.
    Failed(Arc<WriteError>),
}

/// How often a decision is re-made after a status write conflict.
pub const MAX_WRITE_ATTEMPTS: usize = 10;

/// How long one admission may spend writing the statuses its decision depends on, conflicts included
/// (and reading the owners its decision needed that were not cached yet, `decide_reading`):
/// well inside the webhook's 10 s timeout. The kube client retries a 429 or 503 itself (with backoff,
/// honouring `Retry-After`); past this the review is refused with a 429 the caller can retry, and a
/// write that lands later only holds a budget unit until the controller releases it.
pub const WRITE_DEADLINE: Duration = Duration::from_secs(5);

/// The API server refused the write for its own load (API Priority and Fairness: 429, or 503).
fn throttled(e: &WriteError) -> bool {
    matches!(e, WriteError::Api { source, .. } if overloaded(source))
}

/// Writes one complete status, remembering what the API server stored. A change decided on an object
/// the cache has replaced since is a conflict, as the API server would answer; on a conflict the object
/// is read again.
async fn write_one(cache: &ClusterCache, write: &StatusWrite) -> Result<(), Retry> {
    let t = &write.target;
    let status = match write.new_status(cache) {
        Ok(status) => status,
        Err(kruise_core::view::WriteError::Conflict { .. }) => return Err(reread(cache, write).await),
        Err(other) => return Err(Retry::Failed(Arc::new(WriteError::Invalid(other.to_string())))),
    };
    match write_status(cache.client(), t, write.resource_version.as_deref(), &status).await {
        Ok(stored) => {
            cache.remember(&stored);
            Ok(())
        }
        Err(WriteError::Conflict { .. }) => Err(reread(cache, write).await),
        Err(e) => Err(Retry::Failed(Arc::new(e))),
    }
}

/// After a conflict: the target read again into the cache, so the decision is made again on it.
async fn reread(cache: &ClusterCache, write: &StatusWrite) -> Retry {
    match cache.refresh(&write.target).await {
        Ok(()) => Retry::DecideAgain(write.clone()),
        Err(e) => {
            let t = &write.target;
            Retry::Failed(Arc::new(WriteError::Invalid(format!(
                "cannot re-read {} {}/{}: {e}",
                t.kind, t.namespace, t.name
            ))))
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn no_input_makes_it_panic() {
        let reviews: [&[u8]; 3] = [
            include_bytes!("../examples/reviews/delete-namespace-shop.json"),
            include_bytes!("../examples/reviews/delete-namespace-default.json"),
            include_bytes!("../examples/reviews/create-deployment-bad-label.json"),
        ];
        let mut view = MemoryView::default();
        for object in
            crate::objects::load_paths(&[concat!(env!("CARGO_MANIFEST_DIR"), "/examples/cluster").into()])
                .unwrap()
        {
            view.add(object).unwrap();
        }
        let admission = Admission::in_memory(view, Settings::default());
        let mut seed = 0x9e37_79b9_7f4a_7c15_u64;
        for review in reviews {
            for &webhook in Webhook::ALL {
                // Every truncation, and bytes flipped at pseudo-random places.
                for end in (0..review.len()).step_by(7) {
                    let _ = futures::executor::block_on(admission.answer(webhook, &review[..end]));
                }
                for _ in 0..200 {
                    let mut mutated = review.to_vec();
                    for _ in 0..3 {
                        seed ^= seed << 13;
                        seed ^= seed >> 7;
                        seed ^= seed << 17;
                        let at = (seed % mutated.len() as u64) as usize;
                        mutated[at] = (seed >> 32) as u8;
                    }
                    let _ = futures::executor::block_on(admission.answer(webhook, &mutated));
                }
            }
        }
    }
}
