//! One review, end to end and transport-free: decode → decide against the cluster state → apply the
//! status writes the decision depends on → encode. The HTTPS server and `kruise admit` both call
//! [`Admission::answer`], so they give identical answers for the same review and state.

use std::{sync::RwLock, time::Instant};

use kruise_webhooks::{
    Decision, MemoryView, Settings, StatusWrite, Webhook,
    review::{AdmissionRequest, Review, ReviewError, ReviewResponse},
};
use serde_json::Value;

use crate::cluster::ClusterCache;

/// Where the webhooks read cluster state from.
pub enum StateSource {
    /// Files (`kruise admit`, standalone `kruise serve --objects`); status writes are applied in memory.
    Memory(RwLock<MemoryView>),
    /// Reflector caches of a real cluster.
    Cluster(ClusterCache),
}

/// The admission logic with its state and switches.
pub struct Admission {
    pub state: StateSource,
    pub settings: Settings,
}

/// A decided review, with what the caller needs for logs and metrics.
pub struct Answer {
    pub request: AdmissionRequest,
    pub decision: Decision,
    pub review: ReviewResponse,
    pub elapsed: std::time::Duration,
}

/// Why a status write could not be applied to the in-memory state.
#[derive(Debug, thiserror::Error, PartialEq, Eq)]
pub enum WriteError {
    #[error("{kind} {namespace}/{name} not found")]
    NotFound {
        kind: String,
        namespace: String,
        name: String,
    },
    #[error("{kind} {namespace}/{name} changed since it was read (resourceVersion {expected} != {actual})")]
    Conflict {
        kind: String,
        namespace: String,
        name: String,
        expected: String,
        actual: String,
    },
}

impl Admission {
    /// An admission over in-memory state.
    pub fn in_memory(view: MemoryView, settings: Settings) -> Self {
        Admission {
            state: StateSource::Memory(RwLock::new(view)),
            settings,
        }
    }

    /// Decodes `body`, decides it with `webhook` and encodes the answer. `Err` only when the body is not
    /// a usable AdmissionReview (the caller answers 400).
    pub fn answer(&self, webhook: Webhook, body: &[u8]) -> Result<Answer, ReviewError> {
        let started = Instant::now();
        let Review { api_version, request } = Review::parse(body)?;
        let decision = self.decide(webhook, &request);
        let response = decision.to_response(&request, webhook.is_mutating());
        let review = ReviewResponse::new(&api_version, response);
        Ok(Answer {
            request,
            decision,
            review,
            elapsed: started.elapsed(),
        })
    }

    fn decide(&self, webhook: Webhook, request: &AdmissionRequest) -> Decision {
        match &self.state {
            StateSource::Memory(lock) => {
                let decision = {
                    let view = lock.read().unwrap_or_else(|p| p.into_inner());
                    webhook.handle(request, &*view, &self.settings)
                };
                if decision.writes.is_empty() || request.is_dry_run() || !decision.allowed() {
                    return decision;
                }
                // Decide again under the write lock so two reviews never spend the same budget.
                let mut view = lock.write().unwrap_or_else(|p| p.into_inner());
                let decision = webhook.handle(request, &*view, &self.settings);
                if decision.allowed() {
                    for write in &decision.writes {
                        if let Err(e) = apply_write(&mut view, write) {
                            return Decision::deny(409, "Conflict", e.to_string());
                        }
                    }
                }
                decision
            }
            StateSource::Cluster(cache) => {
                let decision = webhook.handle(request, cache, &self.settings);
                if !decision.writes.is_empty() && !request.is_dry_run() && decision.allowed() {
                    return Decision::deny(
                        500,
                        "InternalError",
                        format!(
                            "{} needs status writes, which cluster mode does not make yet",
                            webhook.path()
                        ),
                    );
                }
                decision
            }
        }
    }
}

/// Replaces the status of the stored object named by `write`, checking its resourceVersion and bumping
/// it, as the apiserver would.
pub fn apply_write(view: &mut MemoryView, write: &StatusWrite) -> Result<(), WriteError> {
    let t = &write.target;
    let group = t.api_version.rsplit_once('/').map_or("", |(g, _)| g);
    let not_found = || WriteError::NotFound {
        kind: t.kind.clone(),
        namespace: t.namespace.clone(),
        name: t.name.clone(),
    };
    let map = view
        .others
        .get_mut(&format!("{group}/{}", t.kind))
        .ok_or_else(not_found)?;
    let current = map.get(&t.namespace, &t.name).ok_or_else(not_found)?;
    let actual = current["metadata"]["resourceVersion"]
        .as_str()
        .unwrap_or("")
        .to_string();
    if let Some(expected) = write.resource_version.as_ref().filter(|e| **e != actual) {
        return Err(WriteError::Conflict {
            kind: t.kind.clone(),
            namespace: t.namespace.clone(),
            name: t.name.clone(),
            expected: expected.clone(),
            actual,
        });
    }
    let mut updated = (*current).clone();
    let next = actual.parse::<u64>().map_or(1, |v| v + 1);
    updated["status"] = write.status.clone();
    if let Some(meta) = updated.get_mut("metadata").and_then(Value::as_object_mut) {
        meta.insert("resourceVersion".into(), Value::String(next.to_string()));
    }
    map.insert(&t.namespace, &t.name, updated);
    Ok(())
}

#[cfg(test)]
mod tests {
    use kruise_webhooks::WriteTarget;
    use serde_json::json;

    use super::*;

    fn view_with_budget() -> MemoryView {
        let mut view = MemoryView::default();
        view.add(
            json!({"apiVersion": "policy.kruise.io/v1beta1", "kind": "PodUnavailableBudget",
            "metadata": {"name": "web", "namespace": "shop", "resourceVersion": "7"},
            "status": {"unavailableAllowed": 1}}),
        )
        .unwrap();
        view
    }

    fn write(resource_version: Option<&str>, allowed: u32) -> StatusWrite {
        StatusWrite {
            target: WriteTarget {
                api_version: "policy.kruise.io/v1beta1".into(),
                kind: "PodUnavailableBudget".into(),
                plural: "podunavailablebudgets".into(),
                namespace: "shop".into(),
                name: "web".into(),
            },
            resource_version: resource_version.map(String::from),
            status: json!({"unavailableAllowed": allowed}),
        }
    }

    #[test]
    fn a_write_replaces_status_and_bumps_the_resource_version() {
        let mut view = view_with_budget();
        apply_write(&mut view, &write(Some("7"), 0)).unwrap();
        let stored = view
            .others_of("policy.kruise.io", "PodUnavailableBudget")
            .unwrap()
            .get("shop", "web")
            .unwrap();
        assert_eq!(stored["status"]["unavailableAllowed"], 0);
        assert_eq!(stored["metadata"]["resourceVersion"], "8");
    }

    #[test]
    fn a_stale_write_conflicts_and_changes_nothing() {
        let mut view = view_with_budget();
        apply_write(&mut view, &write(Some("7"), 0)).unwrap();
        let err = apply_write(&mut view, &write(Some("7"), 5)).unwrap_err();
        assert!(matches!(err, WriteError::Conflict { .. }), "{err}");
        let stored = view
            .others_of("policy.kruise.io", "PodUnavailableBudget")
            .unwrap()
            .get("shop", "web")
            .unwrap();
        assert_eq!(stored["status"]["unavailableAllowed"], 0);
        let missing = StatusWrite {
            target: WriteTarget {
                name: "gone".into(),
                ..write(None, 0).target
            },
            ..write(None, 0)
        };
        assert!(matches!(
            apply_write(&mut view, &missing),
            Err(WriteError::NotFound { .. })
        ));
    }

    #[test]
    fn no_input_makes_it_panic() {
        let reviews: [&[u8]; 3] = [
            include_bytes!("../examples/reviews/delete-namespace-shop.json"),
            include_bytes!("../examples/reviews/delete-namespace-default.json"),
            include_bytes!("../examples/reviews/create-deployment-bad-label.json"),
        ];
        let mut view = view_with_budget();
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
                    let _ = admission.answer(webhook, &review[..end]);
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
                    let _ = admission.answer(webhook, &mutated);
                }
            }
        }
    }
}
