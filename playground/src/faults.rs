//! Test hook: faults injected into the write path, for tests of how a client copes with an API
//! server that refuses a write (etcd unavailable, a webhook blocking updates: 500) or with another
//! writer getting in first (409 Conflict). kube-apiserver has no such switch.
//!
//! [`Faults`] is an [`AdmissionHook`]: install it with `PlaygroundOptions::admission`, keep the
//! `Arc`, and arm or clear faults while the test runs. It runs after the request's own checks (a
//! stale resourceVersion is refused first) and before the store write; no-op updates never reach it.

use std::sync::{Arc, Mutex};

use futures::future::BoxFuture;
use serde_json::Value;

use crate::api::admission::{AdmissionHook, Attributes, Operation};
use crate::error::ApiError;

/// Runs just before an injected conflict is answered: the other writer's write, made through the
/// API (e.g. with a captured `kube::Client`), so it changes the object's resourceVersion.
pub type Interleaved = Box<dyn FnOnce() -> BoxFuture<'static, ()> + Send>;

/// Which writes a fault hits.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Target {
    /// `None`: creates, updates and deletes.
    pub operation: Option<Operation>,
    /// API group ("" for core).
    pub group: String,
    /// Plural resource.
    pub resource: String,
    /// Exact subresource (`None`: the main resource only).
    pub subresource: Option<String>,
    /// `None`: every namespace.
    pub namespace: Option<String>,
    /// `None`: every object.
    pub name: Option<String>,
}

impl Target {
    /// Every write of the main resource `group`/`resource`.
    pub fn writes(group: &str, resource: &str) -> Self {
        Target {
            operation: None,
            group: group.into(),
            resource: resource.into(),
            subresource: None,
            namespace: None,
            name: None,
        }
    }

    /// Only creates.
    pub fn creates(self) -> Self {
        Target {
            operation: Some(Operation::Create),
            ..self
        }
    }

    /// Only the object `namespace`/`name` ("" for cluster-scoped).
    pub fn object(self, namespace: &str, name: &str) -> Self {
        Target {
            namespace: Some(namespace.into()),
            name: Some(name.into()),
            ..self
        }
    }

    /// The subresource (`status`, `scale`, …) instead of the main resource.
    pub fn subresource(self, subresource: &str) -> Self {
        Target {
            subresource: Some(subresource.into()),
            ..self
        }
    }

    fn matches(&self, a: &Attributes<'_>) -> bool {
        self.operation.is_none_or(|o| o == a.operation)
            && self.group == a.resource.group
            && self.resource == a.resource.plural
            && self.subresource.as_deref() == a.subresource
            && self.namespace.as_deref().is_none_or(|ns| ns == a.namespace)
            && self.name.as_deref().is_none_or(|n| n == a.name)
    }
}

enum Fault {
    /// 500 `Internal error occurred: injected failure`, until cleared.
    Fail,
    /// One 409 Conflict, after the interleaved write.
    Conflict(Option<Interleaved>),
}

/// The armed faults (see the module documentation).
#[derive(Default)]
pub struct Faults {
    rules: Mutex<Vec<(Target, Fault)>>,
}

impl std::fmt::Debug for Faults {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Faults").field("armed", &self.armed()).finish()
    }
}

impl Faults {
    /// A hook with nothing armed, shared between the options and the test.
    pub fn new() -> Arc<Self> {
        Arc::default()
    }

    /// Writes hitting `target` fail with 500 until [`Self::clear`].
    pub fn fail(&self, target: Target) {
        self.lock().push((target, Fault::Fail));
    }

    /// The next write hitting `target` runs `interleaved` (if any), then answers 409 Conflict.
    pub fn conflict_once(&self, target: Target, interleaved: Option<Interleaved>) {
        self.lock().push((target, Fault::Conflict(interleaved)));
    }

    /// Removes every fault on `target`.
    pub fn clear(&self, target: &Target) {
        self.lock().retain(|(t, _)| t != target);
    }

    /// How many faults are armed (a conflict counts until it has happened).
    pub fn armed(&self) -> usize {
        self.lock().len()
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, Vec<(Target, Fault)>> {
        self.rules.lock().unwrap_or_else(|e| e.into_inner())
    }
}

impl AdmissionHook for Faults {
    fn admit<'a>(&'a self, attributes: Attributes<'a>) -> BoxFuture<'a, Result<Option<Value>, ApiError>> {
        Box::pin(async move {
            let interleaved = {
                let mut rules = self.lock();
                let Some(i) = rules.iter().position(|(t, _)| t.matches(&attributes)) else {
                    return Ok(None);
                };
                let Fault::Conflict(interleaved) = &mut rules[i].1 else {
                    return Err(ApiError::internal("injected failure"));
                };
                let interleaved = interleaved.take();
                rules.remove(i);
                interleaved
            };
            if let Some(write) = interleaved {
                write().await;
            }
            Err(ApiError::stale(
                &attributes.resource.group_resource(),
                attributes.name,
            ))
        })
    }
}

#[cfg(test)]
mod tests {
    use std::sync::atomic::{AtomicBool, Ordering};

    use serde_json::json;

    use super::*;
    use crate::api::Api;

    fn attributes<'a>(
        api: &'a Api,
        def: &'a crate::resources::ResourceDef,
        sub: Option<&'a str>,
    ) -> Attributes<'a> {
        Attributes {
            api,
            operation: Operation::Update,
            resource: def,
            subresource: sub,
            namespace: "ns",
            name: "web",
            object: None,
            old_object: None,
            dry_run: false,
        }
    }

    #[tokio::test]
    async fn a_failure_lasts_until_cleared_and_a_conflict_happens_once_after_its_write() {
        let api = Api::new(10, vec![]);
        let def = api.registry.find("", "v1", "pods").unwrap();
        let faults = Faults::new();
        let status = Target::writes("", "pods")
            .object("ns", "web")
            .subresource("status");
        faults.fail(Target::writes("", "pods").creates());
        assert!(
            faults
                .admit(attributes(&api, &def, None))
                .await
                .unwrap()
                .is_none(),
            "an update is no create"
        );

        let wrote = Arc::new(AtomicBool::new(false));
        let flag = wrote.clone();
        faults.conflict_once(
            status.clone(),
            Some(Box::new(move || {
                Box::pin(async move { flag.store(true, Ordering::SeqCst) })
            })),
        );
        assert!(
            faults
                .admit(attributes(&api, &def, None))
                .await
                .unwrap()
                .is_none(),
            "main resource"
        );
        let err = faults
            .admit(attributes(&api, &def, Some("status")))
            .await
            .unwrap_err();
        assert_eq!((err.code, err.reason), (409, "Conflict"));
        assert!(wrote.load(Ordering::SeqCst), "the other writer got in first");
        assert!(
            faults
                .admit(attributes(&api, &def, Some("status")))
                .await
                .unwrap()
                .is_none()
        );

        let create = Attributes {
            operation: Operation::Create,
            object: Some(&json!({})),
            ..attributes(&api, &def, None)
        };
        assert_eq!(faults.admit(create).await.unwrap_err().code, 500);
        faults.clear(&Target::writes("", "pods").creates());
        assert!(faults.admit(create).await.unwrap().is_none());
        assert_eq!(faults.armed(), 0);
    }
}
