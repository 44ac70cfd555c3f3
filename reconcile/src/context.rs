//! What one reconcile knows, resolved once and shared by scale, update and status.

use std::collections::BTreeSet;

use k8s_openapi::api::apps::v1::ControllerRevision;
use k8s_openapi::api::core::v1::{PersistentVolumeClaim, PodTemplateSpec};
use k8s_openapi::jiff::Timestamp;
use kruise_api::PodRecord;
use kruise_api::apps_v1beta1::CloneSet;

use crate::arithmetic::{Params, PodFacts};
use crate::pods;

/// Feature gates and flags of the OpenKruise manager that change CloneSet decisions.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct Options {
    /// Gate `CloneSetPartitionRollback` (default off).
    pub partition_rollback: bool,
    /// Gate `PreparingUpdateAsUpdate` (default off): scale counts PreparingUpdate pods as updated.
    pub preparing_update_as_update: bool,
    /// Flag `--cloneset-scaling-exclude-preparing-delete`.
    pub scaling_exclude_preparing_delete: bool,
}

/// The resolved inputs of one reconcile.
pub struct Ctx<'a> {
    /// The CloneSet.
    pub cs: &'a CloneSet,
    /// Resolved knobs.
    pub params: Params,
    /// Active pods owned by the CloneSet and matching its selector.
    pub pods: Vec<&'a PodRecord>,
    /// PVCs owned by the CloneSet that are not being deleted.
    pub pvcs: Vec<&'a PersistentVolumeClaim>,
    /// Current revision name.
    pub current_name: &'a str,
    /// Update revision name.
    pub update_name: &'a str,
    /// Pod template of the current revision.
    pub current_template: PodTemplateSpec,
    /// Pod template of the update revision.
    pub update_template: PodTemplateSpec,
    /// All revisions (for in-place diffs against a pod's own revision).
    pub revisions: &'a [ControllerRevision],
    /// Now.
    pub now: Timestamp,
    /// Gates and flags.
    pub options: Options,
    /// `scaleStrategy.podsToDelete`.
    pub pods_to_delete: BTreeSet<&'a str>,
}

impl Ctx<'_> {
    /// `spec.minReadySeconds`.
    pub fn min_ready_seconds(&self) -> i32 {
        self.cs.spec.min_ready_seconds
    }

    /// Labelled `apps.kruise.io/specified-delete` or named in `podsToDelete`.
    pub fn is_specified_delete(&self, pod: &PodRecord) -> bool {
        pods::has_specified_delete_label(pod) || self.pods_to_delete.contains(pods::name(pod))
    }

    /// `IsPodAvailable` with `minReadySeconds`.
    pub fn is_available(&self, pod: &PodRecord) -> bool {
        pods::is_available(pod, self.min_ready_seconds(), self.now)
    }

    /// The Scale classifier (`revision.IsPodUpdate`).
    pub fn is_pod_update_for_scale(&self, pod: &PodRecord) -> bool {
        pods::is_at_revision(pod, self.update_name)
            || (self.options.preparing_update_as_update && pods::lifecycle_state(pod) == "PreparingUpdate")
    }

    /// What the arithmetic needs to know about `pod`.
    pub fn facts(&self, pod: &PodRecord, new: bool) -> PodFacts {
        PodFacts {
            new,
            preparing_delete: pods::lifecycle_state(pod) == "PreparingDelete",
            specified_delete: self.is_specified_delete(pod),
            available: self.is_available(pod),
        }
    }
}
