//! The pure decision core of the kruise-rs CloneSet controller.
//!
//! [`plan()`] takes a CloneSet, its pods, ControllerRevisions and PVCs and the time, and returns the
//! [`Action`]s one reconcile should take and the status to write. No IO, no async, no Kubernetes client:
//! the controller loop lists from its caches, calls [`plan()`], executes the actions in order and records
//! them in its [`Expectations`]. Behaviour follows OpenKruise's CloneSet
//! controller (docs/cloneset-controller.md).

pub mod action;
pub mod arithmetic;
pub mod context;
pub mod expectations;
pub mod inplace;
pub mod inplace_state;
pub mod lifecycle;
pub mod plan;
pub mod pod_template;
pub mod pods;
pub mod refresh;
pub mod revision;
pub mod rfc3339;
pub mod scale;
pub mod scatter;
pub mod status;
pub mod update;

#[cfg(test)]
mod properties;
#[cfg(test)]
pub(crate) mod testing;

pub use action::Action;
pub use context::Options;
pub use expectations::Expectations;
pub use plan::{Input, Plan, PlanError, plan};
