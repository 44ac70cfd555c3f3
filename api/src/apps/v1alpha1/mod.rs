//! `apps.kruise.io/v1alpha1`: the original API version, still served and converted.

pub mod advancedcronjob;
pub mod broadcastjob;
pub mod cloneset;
pub mod containerrecreaterequest;
pub mod daemonset;
pub mod ephemeraljob;
pub mod imagepull;
pub mod persistentpodstate;
pub mod podprobe;
pub mod resourcedistribution;
pub mod sidecarset;
pub mod statefulset;
pub mod uniteddeployment;
pub mod workloadspread;

pub use advancedcronjob::*;
pub use broadcastjob::*;
pub use cloneset::*;
pub use containerrecreaterequest::*;
pub use daemonset::*;
pub use ephemeraljob::*;
pub use imagepull::*;
pub use persistentpodstate::*;
pub use podprobe::*;
pub use resourcedistribution::*;
pub use sidecarset::*;
pub use statefulset::*;
pub use uniteddeployment::*;
pub use workloadspread::*;
