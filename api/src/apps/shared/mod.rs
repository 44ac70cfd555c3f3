//! Parts of the `apps.kruise.io` kinds whose shape does not differ between versions.
//! Each version module re-exports the ones it uses.

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
