//! The core arithmetic of the CloneSet controller (OpenKruise's `calculateDiffsWithExpectation`):
//! how many pods to create, delete and update in this pass, and how much unavailability each may cost.

use k8s_openapi::apimachinery::pkg::util::intstr::IntOrString;
use kruise_api::apps_v1beta1::{CloneSet, DEFAULT_CLONESET_MAX_UNAVAILABLE};
use kruise_core::intstr::{self, Round};

use crate::int_or_percent::{InvalidIntOrPercent, invalid, scaled};

/// OpenKruise's `CalculatePartitionReplicas`: rounded up and clamped to `[0, replicas]`; a percentage
/// other than `"100%"` that would keep every pod (with more than one replica) keeps `replicas - 1`, so
/// at least one pod is updated.
pub fn partition_replicas(
    partition: Option<&IntOrString>,
    replicas: i32,
) -> Result<i64, InvalidIntOrPercent> {
    let Some(partition) = partition else { return Ok(0) };
    let replicas_i = i64::from(replicas);
    // OpenKruise's own `util.GetScaledValueFromIntOrPercent`: the percentage may be a fraction.
    let mut value = intstr::kruise_scaled(partition, replicas_i, Round::Up)
        .map_err(|_| invalid(partition, "updateStrategy.rollingUpdate.partition"))?;
    if replicas > 1 && value == replicas_i && matches!(partition, IntOrString::String(s) if s != "100%") {
        value = replicas_i - 1;
    }
    Ok(value.clamp(0, replicas_i.max(0)))
}

/// The resolved knobs the arithmetic works with.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct Params {
    /// `spec.replicas`.
    pub replicas: i64,
    /// Pods kept at the current revision.
    pub partition: i64,
    /// Extra pods allowed during an update (0 when paused).
    pub max_surge: i64,
    /// Pods that may be unavailable during an update.
    pub max_unavailable: i64,
    /// Unavailable pods above which scale-up stops (`scaleStrategy.maxUnavailable`, default unlimited).
    pub scale_max_unavailable: i64,
    /// Scale counts leave out PreparingDelete pods.
    pub exclude_preparing_delete: bool,
    /// Gate `CloneSetPartitionRollback`: pods may go back to the current revision.
    pub partition_rollback: bool,
}

impl Params {
    /// Resolves the CloneSet's strategies as OpenKruise does. `exclude_preparing_delete_flag` is the
    /// controller flag `--cloneset-scaling-exclude-preparing-delete`.
    pub fn resolve(
        cs: &CloneSet,
        exclude_preparing_delete_flag: bool,
        partition_rollback: bool,
    ) -> Result<Params, InvalidIntOrPercent> {
        let replicas = cs.spec.replicas.unwrap_or(1);
        let default_unavailable = IntOrString::String(DEFAULT_CLONESET_MAX_UNAVAILABLE.into());
        let mut p = Params {
            replicas: i64::from(replicas),
            exclude_preparing_delete: exclude_preparing_delete_flag
                || cs.spec.scale_strategy.exclude_preparing_delete
                || cs
                    .metadata
                    .labels
                    .as_ref()
                    .and_then(|l| {
                        l.get(kruise_api::apps_v1beta1::CLONESET_SCALING_EXCLUDE_PREPARING_DELETE_KEY)
                    })
                    .is_some_and(|v| v == "true"),
            partition_rollback,
            ..Params::default()
        };
        match rolling_update(cs) {
            Some(ru) => {
                p.partition = partition_replicas(ru.partition.as_ref(), replicas)?;
                if let Some(surge) = &ru.max_surge {
                    p.max_surge = scaled(surge, replicas, true, "updateStrategy.rollingUpdate.maxSurge")?;
                    if ru.paused {
                        p.max_surge = 0;
                    }
                }
                let unavailable = ru.max_unavailable.as_ref().unwrap_or(&default_unavailable);
                p.max_unavailable = scaled(
                    unavailable,
                    replicas,
                    p.max_surge == 0,
                    "updateStrategy.rollingUpdate.maxUnavailable",
                )?;
            }
            None => p.max_unavailable = scaled(&default_unavailable, replicas, false, "")?,
        }
        p.scale_max_unavailable = match &cs.spec.scale_strategy.max_unavailable {
            Some(v) => scaled(v, replicas, true, "scaleStrategy.maxUnavailable")?,
            None => i64::from(i32::MAX),
        };
        Ok(p)
    }
}

/// `updateStrategy.rollingUpdate`. OpenKruise reads it whatever the strategy type: an OnDelete CloneSet
/// with the field set still has its partition and budgets counted (only the update step stops).
pub fn rolling_update(cs: &CloneSet) -> Option<&kruise_api::apps_v1beta1::RollingUpdateCloneSetStrategy> {
    cs.spec.update_strategy.rolling_update.as_ref()
}

/// What the arithmetic needs to know about one active pod.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct PodFacts {
    /// Counted on the update revision by the classifier in use.
    pub new: bool,
    /// Lifecycle `PreparingDelete`.
    pub preparing_delete: bool,
    /// Label `apps.kruise.io/specified-delete` or listed in `scaleStrategy.podsToDelete`.
    pub specified_delete: bool,
    /// `IsPodAvailable` with `minReadySeconds`.
    pub available: bool,
}

/// The result: what to scale and update in this pass (field meanings as in OpenKruise).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct Diffs {
    /// Pods to create (before `scale_up_limit`).
    pub scale_up_num: i64,
    /// Of those, how many should be at the current revision (may exceed `scale_up_num`).
    pub scale_up_num_old_revision: i64,
    /// Pods to delete, beyond those already specified for deletion.
    pub scale_down_num: i64,
    /// Of those, how many should come from old revisions.
    pub scale_down_num_old_revision: i64,
    /// Pods that may be created now (`scaleStrategy.maxUnavailable`).
    pub scale_up_limit: i64,
    /// Ready pods that may be deleted now (`maxUnavailable`).
    pub delete_ready_limit: i64,
    /// Extra pods used above `replicas`.
    pub use_surge: i64,
    /// Of those, how many at the current revision.
    pub use_surge_old_revision: i64,
    /// Pods to move to the update revision (> 0) or back to the current one (< 0).
    pub update_num: i64,
    /// Unavailable pods allowed while updating.
    pub update_max_unavailable: i64,
}

/// Computes the [`Diffs`] for `pods` (the active pods). `same_revision` is "current == update".
pub fn calculate(p: &Params, pods: &[PodFacts], same_revision: bool) -> Diffs {
    let (mut new_count, mut new_active, mut old_count, mut old_active) = (0i64, 0i64, 0i64, 0i64);
    let (mut unavailable_new, mut unavailable_old) = (0i64, 0i64);
    let (mut to_delete_new, mut to_delete_old, mut pre_deleting_new, mut pre_deleting_old) = (0i64, 0, 0, 0);
    for pod in pods {
        let (count, active, unavailable, to_delete, pre_deleting) = if pod.new {
            (
                &mut new_count,
                &mut new_active,
                &mut unavailable_new,
                &mut to_delete_new,
                &mut pre_deleting_new,
            )
        } else {
            (
                &mut old_count,
                &mut old_active,
                &mut unavailable_old,
                &mut to_delete_old,
                &mut pre_deleting_old,
            )
        };
        *count += 1;
        if pod.preparing_delete {
            *pre_deleting += 1;
        } else {
            *active += 1;
            if pod.specified_delete {
                *to_delete += 1;
            } else if !pod.available {
                *unavailable += 1;
            }
        }
    }

    let mut res = Diffs::default();
    let total = pods.len() as i64;
    let mut update_old_diff = old_active - p.partition;
    let mut update_new_diff = new_active - (p.replicas - p.partition);
    let total_unavailable = pre_deleting_new + pre_deleting_old + unavailable_new + unavailable_old;
    if same_revision || !p.partition_rollback {
        update_old_diff = update_old_diff.max(0);
        update_new_diff = update_new_diff.min(0);
    }

    if p.max_surge > 0 {
        let (mut scale_surge, mut scale_old_surge) = (0, 0);
        let to_delete = to_delete_new + to_delete_old;
        if to_delete > 0 {
            scale_surge = (total_unavailable + to_delete - p.max_unavailable)
                .max(0)
                .min(to_delete);
            if scale_surge > to_delete_new {
                scale_old_surge = scale_surge - to_delete_new;
            }
        }
        let (mut update_surge, mut update_old_surge) = (0, 0);
        if (update_old_diff > 0 && update_new_diff < 0) || (update_old_diff < 0 && update_new_diff > 0) {
            if update_old_diff.abs() <= update_new_diff.abs() {
                update_surge = update_old_diff.abs();
                if update_old_diff < 0 {
                    update_old_surge = update_surge;
                }
            } else {
                update_surge = update_new_diff.abs();
                if update_new_diff > 0 {
                    update_old_surge = update_surge;
                }
            }
        }
        let (surge, old_surge) = if scale_surge >= update_surge {
            (scale_surge, scale_old_surge)
        } else {
            (update_surge, update_old_surge)
        };
        res.use_surge = p.max_surge.min(surge);
        res.use_surge_old_revision = res.use_surge.min(old_surge);
    }

    let (mut current_total, mut current_total_old) = (total, old_count);
    if p.exclude_preparing_delete {
        current_total -= pre_deleting_old + pre_deleting_new;
        current_total_old -= pre_deleting_old;
    }
    let expected_total = p.replicas + res.use_surge;
    let expected_total_old = p.partition + res.use_surge_old_revision;

    let up = expected_total - current_total;
    if up > 0 {
        res.scale_up_num = up;
        res.scale_up_num_old_revision = (expected_total_old - current_total_old).max(0);
        res.scale_up_limit = up.min((p.scale_max_unavailable - total_unavailable).max(0));
    }
    let down = current_total - to_delete_old - to_delete_new - expected_total;
    if down > 0 {
        res.scale_down_num = down;
        res.scale_down_num_old_revision = (current_total_old - to_delete_old - expected_total_old).max(0);
    }
    if to_delete_new > 0 || to_delete_old > 0 || res.scale_down_num > 0 {
        res.delete_ready_limit = (p.max_unavailable + (total - p.replicas) - total_unavailable).max(0);
    }

    res.update_num = if update_old_diff.abs() <= update_new_diff.abs() {
        update_old_diff
    } else {
        -update_new_diff
    };
    if res.update_num != 0 {
        res.update_max_unavailable = p.max_unavailable + total - p.replicas;
    }
    res
}

#[cfg(test)]
mod tests;
