//! `apps.kruise.io/v1beta1`: the storage version, which controllers and webhooks work on.

pub mod cloneset;
pub mod containerrecreaterequest;
pub mod daemonset;
pub mod imagepull;
pub mod persistentpodstate;
pub mod resourcedistribution;
pub mod sidecarset;
pub mod statefulset;
pub mod uniteddeployment;
pub mod workloadspread;

pub use cloneset::*;
pub use containerrecreaterequest::*;
pub use daemonset::*;
pub use imagepull::*;
pub use persistentpodstate::*;
pub use resourcedistribution::*;
pub use sidecarset::*;
pub use statefulset::*;
pub use uniteddeployment::*;
pub use workloadspread::*;
