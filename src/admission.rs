//! One review, end to end and transport-free: decode → decide against the cluster state → apply the
//! status writes the decision depends on → encode. The HTTPS server and `kruise admit` both call
//! [`Admission::answer`], so they give identical answers for the same review and state.

use std::{
    sync::RwLock,
    time::{Duration, Instant},
};

use kruise_core::{MemoryView, StatusWrite};
use kruise_webhooks::{
    AdmissionRequest, Decision, Review, ReviewError, ReviewResponse, Settings, Webhook, width,
};

use crate::cluster::{
    ClusterCache,
    status_writes::{WriteError, write_status},
};

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
    /// An admission over in-memory state.
    pub fn in_memory(view: MemoryView, settings: Settings) -> Self {
        Admission {
            state: StateSource::Memory(Box::new(RwLock::new(view))),
            settings,
        }
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

    /// Decides; writes the status the decision depends on with its resourceVersion precondition; on a
    /// conflict re-reads the object and decides again, at most [`MAX_WRITE_ATTEMPTS`] times.
    async fn decide_in_cluster(
        &self,
        cache: &ClusterCache,
        webhook: Webhook,
        request: &mut AdmissionRequest,
    ) -> Decision {
        let mut conflicted = None;
        let deadline = tokio::time::Instant::now() + WRITE_DEADLINE;
        for _ in 0..MAX_WRITE_ATTEMPTS {
            let decision = webhook.handle_mut(request, cache, &self.settings);
            if decision.writes.is_empty() || request.is_dry_run() || !decision.allowed() {
                return decision;
            }
            let Ok(written) = tokio::time::timeout_at(deadline, write_all(cache, &decision.writes)).await
            else {
                let message = format!(
                    "cannot record the decision within {} s: the API server is slow or throttling; retry",
                    WRITE_DEADLINE.as_secs()
                );
                return Decision::deny(429, "TooManyRequests", message);
            };
            match written {
                Ok(()) => return decision,
                Err((e, _)) if throttled(&e) => {
                    let message = format!("cannot record the decision: {e}; retry");
                    return Decision::deny(429, "TooManyRequests", message);
                }
                Err((WriteError::Conflict { .. }, write)) => {
                    if let Err(e) = cache.refresh(&write.target).await {
                        let t = &write.target;
                        let message = format!("cannot re-read {} {}/{}: {e}", t.kind, t.namespace, t.name);
                        return Decision::deny(500, "InternalError", message);
                    }
                    conflicted = Some(write);
                }
                Err((e, _)) => {
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
}

/// How often a decision is re-made after a status write conflict.
pub const MAX_WRITE_ATTEMPTS: usize = 10;

/// How long one admission may spend writing the statuses its decision depends on, conflicts included:
/// well inside the webhook's 10 s timeout. The kube client retries a 429 or 503 itself (with backoff,
/// honouring `Retry-After`); past this the review is refused with a 429 the caller can retry, and a
/// write that lands later only holds a budget unit until the controller releases it.
pub const WRITE_DEADLINE: Duration = Duration::from_secs(5);

/// The API server refused the write for its own load (API Priority and Fairness: 429, or 503).
fn throttled(e: &WriteError) -> bool {
    matches!(e, WriteError::Api { source, .. }
        if matches!(&**source, kube::Error::Api(s) if s.code == 429 || s.code == 503))
}

/// Writes every status, in order, remembering what the API server stored. A change decided on an object
/// the cache has replaced since is a conflict, as the API server would answer.
async fn write_all(cache: &ClusterCache, writes: &[StatusWrite]) -> Result<(), (WriteError, StatusWrite)> {
    for write in writes {
        let t = &write.target;
        let status = write.new_status(cache).map_err(|e| {
            let e = match e {
                kruise_core::view::WriteError::Conflict { .. } => WriteError::Conflict {
                    kind: t.kind.clone(),
                    namespace: t.namespace.clone(),
                    name: t.name.clone(),
                },
                other => WriteError::Invalid(other.to_string()),
            };
            (e, write.clone())
        })?;
        let stored = write_status(cache.client(), t, write.resource_version.as_deref(), &status)
            .await
            .map_err(|e| (e, write.clone()))?;
        cache.remember(&stored);
    }
    Ok(())
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
