//! The ResourceDistribution planner (OpenKruise's `pkg/controller/resourcedistribution`;
//! docs/resource-distribution.md): a distribution, the namespaces and the copies that exist in → the
//! writes that make every targeted namespace hold an up-to-date copy, the deletions of copies no longer
//! targeted, and the failures already known. The loop carries the writes out, reports what failed, and
//! [`status`] turns it all into the distribution's status.
//!
//! - targets ([`targets`]): (all | included | selector) − excluded − {kube-system, kube-public};
//!   included namespaces that do not exist (or are being deleted) are targets reported as
//!   `NamespaceNotExists`;
//! - a namespace without the object: create it from the template ([`Template::body`]);
//! - a namespace whose object this distribution does not control: `ConflictOccurred`, never touched;
//! - a controlled copy that differs from the template in its fields or in the template's labels,
//!   annotations or finalizers (hand edits, or a template change — metadata included, where OpenKruise
//!   waits for a data change): update it; the copy's own extra labels and annotations stay;
//! - a controlled copy in a namespace no longer targeted (and not being deleted): delete it.
//!
//! Every copy is built from the distribution's own `spec.resource` and nothing else: an existing
//! object of the same name elsewhere is never read for content (openkruise/kruise#1612).

pub mod copy;
pub mod status;
pub mod targets;

use std::collections::BTreeSet;

use foldhash::{HashMap, HashMapExt as _};

use k8s_openapi::api::core::v1::Namespace;
use kruise_api::apps_v1beta1::ResourceDistribution;
use serde_json::Value;

pub use copy::{COPY_LABEL, InvalidResource, Template, resource_hash};
pub use status::{CONFLICT_REASON, Failure, FailureKind, MISSING_NAMESPACE_REASON, status};
pub use targets::{InvalidSelector, SYSTEM_NAMESPACES, Targets, terminating};

/// Why no plan can be made; the distribution waits for a spec change.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum PlanError {
    #[error(transparent)]
    Resource(#[from] InvalidResource),
    #[error(transparent)]
    Selector(#[from] InvalidSelector),
}

/// One write.
#[derive(Debug, Clone, PartialEq)]
pub enum Step {
    /// POST this object (an AlreadyExists means a copy the cache did not show: read it and [`decide`]).
    Create { namespace: String, body: Value },
    /// PUT this object (its resourceVersion is the precondition).
    Update { namespace: String, body: Value },
    /// DELETE the copy (with its UID as the precondition).
    Delete { namespace: String, uid: Option<String> },
}

/// What to do in one targeted namespace, given what it holds.
#[derive(Debug, Clone, PartialEq)]
pub enum Decision {
    Create(Value),
    Update(Value),
    InSync,
    Conflict,
}

/// A pass's plan.
#[derive(Debug, Clone)]
pub struct Plan {
    pub template: Template,
    /// The targeted namespaces (`status.desired` counts them).
    pub desired: BTreeSet<String>,
    pub steps: Vec<Step>,
    /// Conflicts and missing namespaces, known without writing.
    pub failures: Vec<Failure>,
}

/// What a targeted namespace holding `existing` (or nothing) needs.
pub fn decide(template: &Template, namespace: &str, existing: Option<&Value>) -> Decision {
    match existing {
        None => Decision::Create(template.body(namespace, None)),
        Some(object) if !template.controls(object) => Decision::Conflict,
        Some(object) if template.in_sync(object) => Decision::InSync,
        Some(object) => Decision::Update(template.body(namespace, Some(object))),
    }
}

/// `metadata.<key>` as a string (without `Value::pointer`, which allocates per token).
fn meta_str<'a>(object: &'a Value, key: &str) -> Option<&'a str> {
    object.get("metadata")?.get(key)?.as_str()
}

/// Plans one pass. `copies` are the objects of the template's kind and name the loop found (the ones
/// carrying [`COPY_LABEL`], and any other it read); others are ignored.
pub fn plan<'n>(
    rd: &ResourceDistribution,
    namespaces: impl IntoIterator<Item = &'n Namespace> + Clone,
    copies: &[Value],
) -> Result<Plan, PlanError> {
    let template = Template::new(rd)?;
    let targets = Targets::new(&rd.spec.targets)?;
    let desired = targets.matched(namespaces.clone());
    let live: HashMap<&str, &Namespace> = namespaces
        .into_iter()
        .filter_map(|ns| Some((ns.metadata.name.as_deref()?, ns)))
        .collect();
    let mut existing: HashMap<&str, &Value> = HashMap::with_capacity(copies.len());
    for copy in copies {
        let named = meta_str(copy, "name") == Some(template.name.as_str());
        let kind = copy
            .get("kind")
            .and_then(Value::as_str)
            .is_none_or(|k| k == template.kind);
        if let (true, true, Some(ns)) = (named, kind, meta_str(copy, "namespace")) {
            existing.insert(ns, copy);
        }
    }
    let mut steps = Vec::new();
    let mut failures = Vec::new();
    for namespace in &desired {
        if live.get(namespace.as_str()).is_none_or(|ns| terminating(ns)) {
            failures.push(Failure {
                namespace: namespace.clone(),
                kind: FailureKind::NamespaceNotExists,
                reason: MISSING_NAMESPACE_REASON.into(),
            });
            continue;
        }
        match decide(&template, namespace, existing.get(namespace.as_str()).copied()) {
            Decision::Create(body) => steps.push(Step::Create {
                namespace: namespace.clone(),
                body,
            }),
            Decision::Update(body) => steps.push(Step::Update {
                namespace: namespace.clone(),
                body,
            }),
            Decision::InSync => {}
            Decision::Conflict => failures.push(Failure {
                namespace: namespace.clone(),
                kind: FailureKind::ConflictOccurred,
                reason: CONFLICT_REASON.into(),
            }),
        }
    }
    // Copies left in namespaces no longer targeted, deleted in namespace order.
    let mut stale: Vec<(&str, &Value)> = existing
        .into_iter()
        .filter(|(namespace, copy)| {
            let gone = live.get(namespace).is_none_or(|ns| terminating(ns));
            !desired.contains(*namespace) && !gone && template.controls(copy)
        })
        .collect();
    stale.sort_unstable_by_key(|(namespace, _)| *namespace);
    for (namespace, copy) in stale {
        steps.push(Step::Delete {
            namespace: namespace.to_string(),
            uid: meta_str(copy, "uid").map(str::to_string),
        });
    }
    Ok(Plan {
        template,
        desired,
        steps,
        failures,
    })
}

#[cfg(test)]
mod tests;
