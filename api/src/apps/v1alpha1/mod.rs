//! `apps.kruise.io/v1alpha1`: the original API version, still served and converted.

pub mod cloneset;
pub mod sidecarset;
pub mod workloadspread;

pub use cloneset::{CloneSet, CloneSetSpec};
pub use sidecarset::{SidecarSet, SidecarSetSpec};
pub use workloadspread::{WorkloadSpread, WorkloadSpreadSpec};
