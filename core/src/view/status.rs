//! Status writes: what an admission decision records, and how an in-memory view applies one.

use serde_json::Value;

use crate::kinds::Kind;

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

/// A status the decision depends on, computed from the object at `resource_version`. The caller writes it
/// with that resourceVersion as a precondition (on 409 it refreshes the view and decides again) before it
/// answers "allowed"; in dry run it writes nothing.
#[derive(Clone, Debug, PartialEq)]
pub struct StatusWrite {
    pub target: WriteTarget,
    pub resource_version: Option<String>,
    /// The complete new `.status`.
    pub status: Value,
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
pub(crate) fn replace_status(mut value: Value, write: &StatusWrite) -> Result<Value, WriteError> {
    let t = &write.target;
    let actual = value
        .pointer("/metadata/resourceVersion")
        .and_then(Value::as_str)
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
    let next = actual.parse::<u64>().map_or(1, |v| v + 1);
    value["status"] = write.status.clone();
    if let Some(meta) = value.get_mut("metadata").and_then(Value::as_object_mut) {
        meta.insert("resourceVersion".into(), Value::String(next.to_string()));
    }
    Ok(value)
}

/// Replaces the status of a typed object through [`replace_status`].
pub(crate) fn replace_typed_status<K: Kind>(current: &K, write: &StatusWrite) -> Result<K, WriteError> {
    let t = &write.target;
    let invalid = |message: String| WriteError::Invalid {
        kind: t.kind.clone(),
        namespace: t.namespace.clone(),
        name: t.name.clone(),
        message,
    };
    let value = serde_json::to_value(current).map_err(|e| invalid(e.to_string()))?;
    K::decode(replace_status(value, write)?).map_err(|e| invalid(e.message))
}
