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
    /// Per-pod answers computed once ([`Ctx::index`]), sorted by the pod's address.
    pub views: Vec<(usize, PodView)>,
}

/// The answers about one pod that every step asks for, computed once per reconcile.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct PodView {
    /// At the update revision.
    pub at_update: bool,
    /// Lifecycle `PreparingDelete`.
    pub preparing_delete: bool,
    /// Specified for deletion.
    pub specified_delete: bool,
    /// `IsPodAvailable` with `minReadySeconds`.
    pub available: bool,
    /// `IsPodAvailable` with 0 seconds (what scale calls "ready").
    pub available_now: bool,
    /// `IsPodUpdateReady` with 0 seconds.
    pub update_ready: bool,
}

fn address(pod: &PodRecord) -> usize {
    std::ptr::from_ref(pod) as usize
}

impl Ctx<'_> {
    /// Computes the [`PodView`] of every pod in `pods`.
    pub fn index(&mut self) {
        let mut views: Vec<(usize, PodView)> = self
            .pods
            .iter()
            .map(|p| (address(p), self.compute_view(p)))
            .collect();
        views.sort_unstable_by_key(|(a, _)| *a);
        self.views = views;
    }

    fn compute_view(&self, pod: &PodRecord) -> PodView {
        let state = pods::lifecycle_state(pod);
        let normal = matches!(state, "" | "Normal");
        let update_ready = pods::is_update_ready(pod, 0, self.now);
        let min_ready = self.min_ready_seconds();
        let update_ready_min = if min_ready <= 0 {
            update_ready
        } else {
            pods::is_update_ready(pod, min_ready, self.now)
        };
        PodView {
            at_update: pods::is_at_revision(pod, self.update_name),
            preparing_delete: state == "PreparingDelete",
            specified_delete: pods::has_specified_delete_label(pod)
                || self.pods_to_delete.contains(pods::name(pod)),
            available: normal && update_ready_min,
            available_now: normal && update_ready,
            update_ready,
        }
    }

    /// The pod's [`PodView`] (indexed, or computed when the pod is not among `pods`).
    pub fn view(&self, pod: &PodRecord) -> PodView {
        match self.views.binary_search_by_key(&address(pod), |(a, _)| *a) {
            Ok(i) => self.views[i].1,
            Err(_) => self.compute_view(pod),
        }
    }

    /// `spec.minReadySeconds`.
    pub fn min_ready_seconds(&self) -> i32 {
        self.cs.spec.min_ready_seconds
    }

    /// Labelled `apps.kruise.io/specified-delete` or named in `podsToDelete`.
    pub fn is_specified_delete(&self, pod: &PodRecord) -> bool {
        self.view(pod).specified_delete
    }

    /// `IsPodAvailable` with `minReadySeconds`.
    pub fn is_available(&self, pod: &PodRecord) -> bool {
        self.view(pod).available
    }

    /// The Scale classifier (`revision.IsPodUpdate`).
    pub fn is_pod_update_for_scale(&self, pod: &PodRecord) -> bool {
        self.view(pod).at_update
            || (self.options.preparing_update_as_update && pods::lifecycle_state(pod) == "PreparingUpdate")
    }

    /// What the arithmetic needs to know about `pod`.
    pub fn facts(&self, pod: &PodRecord, new: bool) -> PodFacts {
        let v = self.view(pod);
        PodFacts {
            new,
            preparing_delete: v.preparing_delete,
            specified_delete: v.specified_delete,
            available: v.available,
        }
    }
}
