//! The replica count a WorkloadSpread scales its percent `maxReplicas` against, as OpenKruise's
//! `getWorkloadReplicas` reads it (`pkg/util/workloadspread/workloadspread.go`).
//!
//! OpenKruise decodes the target by its exact apiVersion and kind (`GenerateEmptyWorkloadObject`):
//! `apps/v1` Deployment, ReplicaSet and StatefulSet, `batch/v1` Job, `apps.kruise.io/v1alpha1` CloneSet
//! and `apps.kruise.io/v1alpha1` or `v1beta1` StatefulSet are typed; anything else is a custom
//! workload, counted only through OpenKruise's custom-workload whitelist in the `kruise-configuration`
//! ConfigMap, which kruise-rs does not read: such a target counts 0, unless
//! `targetFilter.replicasPathList` names where its replicas are.
//!
//! kruise-rs also serves CloneSet as `apps.kruise.io/v1beta1` (its storage version, the one kubectl
//! prefers), so a target naming that version is a CloneSet too, not a custom workload counting 0 (a
//! deviation listed in the README).

use kruise_api::apps_v1beta1::WorkloadSpread;
use serde_json::Value;

use super::{api_group, fetch_workload};
use crate::{go, intstr, view::ClusterView};

/// Why a `targetFilter.replicasPathList` entry does not lead to a replica count, worded as
/// OpenKruise's `NestedField`.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum ReplicasPathError {
    #[error("path \"{0}\" not exists")]
    Missing(String),
    #[error("{0}")]
    BadIndex(String),
    #[error("index {0} out of range")]
    OutOfRange(i64),
    #[error("object is not deep enough")]
    NotDeepEnough,
    #[error("object type error")]
    NotAnInteger,
}

/// The replicas of the WorkloadSpread's target, in `namespace` (the WorkloadSpread's): 0 without a
/// target, without a percent subset, or when the target does not exist; the sum of
/// `targetFilter.replicasPathList` when set (int32 arithmetic, as Go's); else `spec.replicas` (Job:
/// `spec.parallelism`, defaulted to 1 as the apiserver would) for the typed kinds, and 0 for custom
/// workloads.
pub fn workload_replicas(
    view: &impl ClusterView,
    ws: &WorkloadSpread,
    namespace: &str,
) -> Result<i32, ReplicasPathError> {
    let Some(target) = ws.spec.target_reference.as_ref() else {
        return Ok(0);
    };
    let has_percent = ws
        .spec
        .subsets
        .iter()
        .any(|s| s.max_replicas.as_ref().is_some_and(intstr::is_percent));
    if !has_percent {
        return Ok(0);
    }
    let Ok(group) = api_group(&target.api_version) else {
        return Ok(0);
    };
    let Some(workload) = fetch_workload(view, group, &target.kind, namespace, &target.name) else {
        return Ok(0);
    };
    let paths = ws
        .spec
        .target_filter
        .as_ref()
        .and_then(|f| f.replicas_path_list.as_deref())
        .unwrap_or_default();
    if !paths.is_empty() {
        let object = workload.to_json();
        return paths.iter().try_fold(
            0i32,
            |sum, path| Ok(sum.wrapping_add(replicas_at(&object, path)?)),
        );
    }
    if !is_typed(&target.api_version, &target.kind) {
        return Ok(0);
    }
    Ok(workload.replicas().unwrap_or(0) as i32)
}

/// The kinds OpenKruise decodes into their Go types, by exact apiVersion.
fn is_typed(api_version: &str, kind: &str) -> bool {
    matches!(
        (api_version, kind),
        ("apps/v1", "Deployment" | "ReplicaSet" | "StatefulSet")
            | ("batch/v1", "Job")
            | (
                "apps.kruise.io/v1alpha1" | "apps.kruise.io/v1beta1",
                "CloneSet" | "StatefulSet"
            )
    )
}

/// The integer at a dot path (`spec.replicas`, `spec.list.0.replicas`), as OpenKruise's
/// `GetReplicasFromObject`: an empty path is 0, the value is narrowed to int32.
fn replicas_at(object: &Value, path: &str) -> Result<i32, ReplicasPathError> {
    if path.is_empty() {
        return Ok(0);
    }
    let mut current = object;
    for token in path.split('.') {
        current = match current {
            Value::Object(map) => map
                .get(token)
                .ok_or_else(|| ReplicasPathError::Missing(token.to_string()))?,
            Value::Array(items) => {
                let index = go::atoi(token).map_err(|(_, e)| ReplicasPathError::BadIndex(e))?;
                usize::try_from(index)
                    .ok()
                    .and_then(|i| items.get(i))
                    .ok_or(ReplicasPathError::OutOfRange(index))?
            }
            _ => return Err(ReplicasPathError::NotDeepEnough),
        };
    }
    current
        .as_i64()
        .map(|v| v as i32)
        .ok_or(ReplicasPathError::NotAnInteger)
}

#[cfg(test)]
mod tests;
