//! `apps.kruise.io/v1alpha1`: the original API version, still served and converted.

pub mod cloneset;
pub mod daemonset;
pub mod resourcedistribution;
pub mod sidecarset;
pub mod statefulset;
pub mod workloadspread;

pub use cloneset::*;
pub use daemonset::*;
pub use resourcedistribution::*;
pub use sidecarset::*;
pub use statefulset::*;
pub use workloadspread::*;
