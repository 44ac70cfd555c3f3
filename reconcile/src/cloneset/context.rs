//! What one reconcile knows, resolved once and shared by scale, update and status.

use std::collections::BTreeSet;

use k8s_openapi::api::apps::v1::ControllerRevision;
use k8s_openapi::api::core::v1::{PersistentVolumeClaim, PodTemplateSpec};
use k8s_openapi::jiff::Timestamp;
use kruise_api::PodRecord;
use kruise_api::apps_v1beta1::CloneSet;

use crate::cloneset::arithmetic::{Params, PodFacts};
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
    /// Gates `KruiseDaemon` and `InPlaceUpdateEnvFromMetadata` (default on): a change of env fed from
    /// metadata is applied in place on pods a node agent serves (docs/env-from-metadata.md).
    pub env_from_metadata: bool,
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
    /// Per-pod answers computed once ([`Ctx::index`]): `views[i]` is about `pods[i]`.
    pub views: Vec<PodView<'a>>,
    /// `(address, index in pods)` of every indexed pod, sorted by address.
    pub by_address: Vec<(usize, usize)>,
}

/// The answers about one pod that every step asks for, computed once per reconcile.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct PodView<'a> {
    /// The lifecycle state label, `""` when absent.
    pub state: &'a str,
    /// At the update revision.
    pub at_update: bool,
    /// Carries the `pod-template-hash` label.
    pub has_template_hash: bool,
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

impl PodView<'_> {
    /// What the arithmetic needs to know about the pod.
    pub fn facts(&self, new: bool) -> PodFacts {
        PodFacts {
            new,
            preparing_delete: self.preparing_delete,
            specified_delete: self.specified_delete,
            available: self.available,
        }
    }
}

fn address(pod: &PodRecord) -> usize {
    std::ptr::from_ref(pod) as usize
}

impl<'a> Ctx<'a> {
    /// Computes the [`PodView`] of every pod in `pods`.
    pub fn index(&mut self) {
        self.views = self.pods.iter().map(|p| self.compute_view(p)).collect();
        let mut by_address: Vec<(usize, usize)> = self
            .pods
            .iter()
            .enumerate()
            .map(|(i, p)| (address(p), i))
            .collect();
        by_address.sort_unstable();
        self.by_address = by_address;
    }

    fn compute_view(&self, pod: &'a PodRecord) -> PodView<'a> {
        let labels = pods::key_labels(pod);
        let state = labels.lifecycle_state;
        let normal = matches!(state, "" | "Normal");
        let update_ready = pods::is_update_ready(pod, 0, self.now);
        let min_ready = self.min_ready_seconds();
        let update_ready_min = if min_ready <= 0 {
            update_ready
        } else {
            pods::is_update_ready(pod, min_ready, self.now)
        };
        PodView {
            state,
            at_update: pods::revision_matches(labels.revision, self.update_name),
            has_template_hash: labels.has_template_hash,
            preparing_delete: state == "PreparingDelete",
            specified_delete: labels.specified_delete || self.pods_to_delete.contains(pods::name(pod)),
            available: normal && update_ready_min,
            available_now: normal && update_ready,
            update_ready,
        }
    }

    /// The pod's [`PodView`] (indexed, or computed when the pod is not among `pods`).
    pub fn view(&self, pod: &'a PodRecord) -> PodView<'a> {
        match self.by_address.binary_search_by_key(&address(pod), |(a, _)| *a) {
            Ok(i) => self.views[self.by_address[i].1],
            Err(_) => self.compute_view(pod),
        }
    }

    /// Every pod of `pods` with its [`PodView`], in order.
    pub fn pods_with_views(&self) -> impl Iterator<Item = (&'a PodRecord, PodView<'a>)> + '_ {
        let indexed = self.views.len() == self.pods.len();
        self.pods.iter().enumerate().map(move |(i, p)| {
            let view = if indexed {
                self.views[i]
            } else {
                self.compute_view(p)
            };
            (*p, view)
        })
    }

    /// `spec.minReadySeconds`.
    pub fn min_ready_seconds(&self) -> i32 {
        self.cs.spec.min_ready_seconds
    }

    /// Labelled `apps.kruise.io/specified-delete` or named in `podsToDelete`.
    pub fn is_specified_delete(&self, pod: &'a PodRecord) -> bool {
        self.view(pod).specified_delete
    }

    /// `IsPodAvailable` with `minReadySeconds`.
    pub fn is_available(&self, pod: &'a PodRecord) -> bool {
        self.view(pod).available
    }

    /// The Scale classifier (`revision.IsPodUpdate`) of a pod with view `v`.
    pub fn is_pod_update_for_scale(&self, v: &PodView<'_>) -> bool {
        v.at_update || (self.options.preparing_update_as_update && v.state == "PreparingUpdate")
    }
}
