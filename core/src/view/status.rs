//! Status writes: what an admission decision records, and how an in-memory view applies one.

use serde_json::Value;

use std::sync::Arc;

use crate::kinds::{Kind, Registered};
use crate::pub_protection::BudgetSpend;
use crate::view::{ClusterView, get};
use crate::workload_spread::SubsetRecord;
use kruise_api::{apps_v1beta1::WorkloadSpread, policy_v1beta1::PodUnavailableBudget};

/// The object a status write targets.
#[derive(Clone, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct WriteTarget {
    /// e.g. `policy.kruise.io/v1beta1`.
    pub api_version: String,
    /// e.g. `PodUnavailableBudget`.
    pub kind: String,
    /// e.g. `podunavailablebudgets`.
    pub plural: String,
    pub namespace: String,
    pub name: String,
}

/// A status change the decision depends on, decided on the object at `resource_version`. The caller
/// writes it with that resourceVersion as a precondition (on 409 it refreshes the view and decides again)
/// before it answers "allowed"; in dry run it writes nothing.
#[derive(Clone, Debug, PartialEq)]
pub struct StatusWrite {
    pub target: WriteTarget,
    pub resource_version: Option<String>,
    pub change: StatusChange,
}

/// What a write changes in `.status`. Admission records one pod at a time as a delta, so deciding and
/// applying cost the same whatever the object already records; a controller replaces the whole status.
#[derive(Clone, Debug, PartialEq)]
pub enum StatusChange {
    /// The complete new `.status`.
    Replace(Value),
    /// A PodUnavailableBudget spends one unit on a pod.
    SpendBudget(Box<BudgetSpend>),
    /// A WorkloadSpread subset records a pod being created or deleted.
    RecordInSubset(Box<SubsetRecord>),
}

impl StatusWrite {
    /// The complete new `.status` of the target as stored in `view`, which must still be at the
    /// write's resourceVersion (else [`WriteError::Conflict`]): what a cluster write sends.
    pub fn new_status(&self, view: &(impl ClusterView + ?Sized)) -> Result<Value, WriteError> {
        match &self.change {
            StatusChange::Replace(status) => Ok(status.clone()),
            StatusChange::SpendBudget(spend) => {
                let budget = self.current::<PodUnavailableBudget>(view)?;
                let mut status = budget.status.clone().unwrap_or_default();
                spend.apply(&mut status);
                self.encode(&status)
            }
            StatusChange::RecordInSubset(record) => {
                let spread = self.current::<WorkloadSpread>(view)?;
                let mut status = spread.status.clone().unwrap_or_default();
                record.apply(&mut status);
                self.encode(&status)
            }
        }
    }

    fn encode(&self, status: &impl serde::Serialize) -> Result<Value, WriteError> {
        serde_json::to_value(status).map_err(|e| self.invalid(e.to_string()))
    }

    /// The stored target, which must still be at the write's resourceVersion.
    fn current<K: Registered>(&self, view: &(impl ClusterView + ?Sized)) -> Result<Arc<K>, WriteError> {
        let t = &self.target;
        let current = get::<K>(view, &t.namespace, &t.name).ok_or_else(|| WriteError::not_found(self))?;
        self.check_version(current.meta().resource_version.as_deref().unwrap_or(""))?;
        Ok(current)
    }

    /// [`WriteError::Conflict`] unless the object is at the write's resourceVersion (any, when unset).
    pub(crate) fn check_version(&self, actual: &str) -> Result<(), WriteError> {
        match self.resource_version.as_ref().filter(|e| *e != actual) {
            None => Ok(()),
            Some(expected) => Err(WriteError::Conflict {
                kind: self.target.kind.clone(),
                namespace: self.target.namespace.clone(),
                name: self.target.name.clone(),
                expected: expected.clone(),
                actual: actual.to_string(),
            }),
        }
    }

    pub(crate) fn invalid(&self, message: String) -> WriteError {
        WriteError::Invalid {
            kind: self.target.kind.clone(),
            namespace: self.target.namespace.clone(),
            name: self.target.name.clone(),
            message,
        }
    }
}

/// One status carrying several admission deltas to one object: what a grouped write sends.
#[derive(Debug, Clone, PartialEq)]
pub struct GroupedStatus {
    /// The complete new `.status`.
    pub status: Value,
    /// The resourceVersion of the stored object it was built from (the write's precondition).
    pub resource_version: String,
    /// Per change, in order: it still held and is in `status`; a change that did not hold must be
    /// decided again.
    pub accepted: Vec<bool>,
}

/// Builds one status for `changes` (deltas to `target`) from the object stored in `view`, applying
/// each in order only when it still holds on what the ones before it recorded
/// ([`BudgetSpend::holds`], [`SubsetRecord::holds`]), so a batch never spends a budget twice or fills
/// a subset past its limit. A `Replace` or a change of another kind is not accepted.
pub fn grouped_status(
    view: &(impl ClusterView + ?Sized),
    target: &WriteTarget,
    changes: &[&StatusChange],
) -> Result<GroupedStatus, WriteError> {
    let not_found = || WriteError::NotFound {
        kind: target.kind.clone(),
        namespace: target.namespace.clone(),
        name: target.name.clone(),
    };
    let invalid = |e: serde_json::Error| WriteError::Invalid {
        kind: target.kind.clone(),
        namespace: target.namespace.clone(),
        name: target.name.clone(),
        message: e.to_string(),
    };
    let mut accepted = Vec::with_capacity(changes.len());
    let (status, resource_version) = match target.kind.as_str() {
        "PodUnavailableBudget" => {
            let budget =
                get::<PodUnavailableBudget>(view, &target.namespace, &target.name).ok_or_else(not_found)?;
            let mut status = budget.status.clone().unwrap_or_default();
            for change in changes {
                let holds = matches!(change, StatusChange::SpendBudget(spend) if spend.holds(&status));
                if let (true, StatusChange::SpendBudget(spend)) = (holds, change) {
                    spend.apply(&mut status);
                }
                accepted.push(holds);
            }
            let status = serde_json::to_value(&status).map_err(invalid)?;
            (status, budget.metadata.resource_version.clone())
        }
        "WorkloadSpread" => {
            let spread =
                get::<WorkloadSpread>(view, &target.namespace, &target.name).ok_or_else(not_found)?;
            let mut status = spread.status.clone().unwrap_or_default();
            for change in changes {
                let holds = matches!(change, StatusChange::RecordInSubset(record) if record.holds(&status));
                if let (true, StatusChange::RecordInSubset(record)) = (holds, change) {
                    record.apply(&mut status);
                }
                accepted.push(holds);
            }
            let status = serde_json::to_value(&status).map_err(invalid)?;
            (status, spread.metadata.resource_version.clone())
        }
        _ => {
            return Err(WriteError::NoStatus {
                kind: target.kind.clone(),
            });
        }
    };
    Ok(GroupedStatus {
        status,
        resource_version: resource_version.unwrap_or_default(),
        accepted,
    })
}

/// The resourceVersion after `actual`, as the in-memory view counts (a number; `1` after anything else).
pub(crate) fn next_resource_version(actual: &str) -> String {
    actual.parse::<u64>().map_or(1, |v| v + 1).to_string()
}

/// Why a status write could not be applied to a [`MemoryView`](super::MemoryView).
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
    #[error("{kind} {namespace}/{name}: the new status is not valid: {message}")]
    Invalid {
        kind: String,
        namespace: String,
        name: String,
        message: String,
    },
    #[error("{kind} has no status kruise-rs writes")]
    NoStatus { kind: String },
}

impl WriteError {
    pub(crate) fn not_found(write: &StatusWrite) -> Self {
        let t = &write.target;
        WriteError::NotFound {
            kind: t.kind.clone(),
            namespace: t.namespace.clone(),
            name: t.name.clone(),
        }
    }
}

/// The JSON form of an object with `.status` replaced by the write's, as the apiserver would: the object
/// must still be at the write's resourceVersion (else [`WriteError::Conflict`]); the result's
/// resourceVersion is bumped. Works on the JSON form, so one function serves every kind.
pub(crate) fn replace_status(
    mut value: Value,
    write: &StatusWrite,
    status: &Value,
) -> Result<Value, WriteError> {
    let actual = value
        .pointer("/metadata/resourceVersion")
        .and_then(Value::as_str)
        .unwrap_or("");
    write.check_version(actual)?;
    let next = next_resource_version(actual);
    value["status"] = status.clone();
    if let Some(meta) = value.get_mut("metadata").and_then(Value::as_object_mut) {
        meta.insert("resourceVersion".into(), Value::String(next));
    }
    Ok(value)
}

/// Replaces the status of a typed object through [`replace_status`].
pub(crate) fn replace_typed_status<K: Kind>(
    current: &K,
    write: &StatusWrite,
    status: &Value,
) -> Result<K, WriteError> {
    let value = serde_json::to_value(current).map_err(|e| write.invalid(e.to_string()))?;
    K::decode(replace_status(value, write, status)?).map_err(|e| write.invalid(e.message))
}
