//! OpenKruise API types for `apps.kruise.io` (CloneSet, SidecarSet, WorkloadSpread, Advanced
//! StatefulSet, Advanced DaemonSet, ResourceDistribution, UnitedDeployment, PersistentPodState, …) and
//! `policy.kruise.io` (PodUnavailableBudget), in versions `v1alpha1` and `v1beta1`, with
//! their CustomResourceDefinitions and the conversion between the two versions.
//!
//! `v1beta1` is the storage version and the one the rest of kruise-rs works on; `v1alpha1`
//! objects reach it through [`convert_object`] (served at the CRD conversion webhook) or the
//! typed helpers such as [`cloneset_to_v1beta1`].

// Repeated `printcolumn(type_ = ..)` keys in `#[kube(..)]` trip this lint; they are distinct columns.
#![allow(clippy::duplicated_attributes)]
#![warn(missing_docs)]

pub mod apps;
pub mod common;
pub mod conversion;
pub mod crd;
pub mod pod;
pub mod policy;
mod serde_util;

pub use apps::v1alpha1 as apps_v1alpha1;
pub use apps::v1beta1 as apps_v1beta1;
pub use conversion::{
    ConversionError, cloneset_to_v1alpha1, cloneset_to_v1beta1, containerrecreaterequest_to_v1beta1,
    convert_object, daemonset_to_v1alpha1, daemonset_to_v1beta1, decode, imagelistpulljob_to_v1beta1,
    imagepulljob_to_v1beta1, nodeimage_to_v1beta1, persistentpodstate_to_v1alpha1,
    persistentpodstate_to_v1beta1, podunavailablebudget_to_v1alpha1, podunavailablebudget_to_v1beta1,
    resourcedistribution_to_v1alpha1, resourcedistribution_to_v1beta1, sidecarset_to_v1alpha1,
    sidecarset_to_v1beta1, statefulset_to_v1alpha1, statefulset_to_v1beta1, uniteddeployment_to_v1alpha1,
    uniteddeployment_to_v1beta1, workloadspread_to_v1alpha1, workloadspread_to_v1beta1,
};
pub use crd::{crds, crds_yaml};
pub use pod::PodRecord;
pub use policy::v1alpha1 as policy_v1alpha1;
pub use policy::v1beta1 as policy_v1beta1;
