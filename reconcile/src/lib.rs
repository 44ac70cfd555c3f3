//! The pure decision cores of the kruise-rs controllers: objects and a clock in, data out (actions, a
//! status, when to look again). No IO, no async, no Kubernetes client; the loops in the binary's
//! `src/controllers/` gather the inputs from their caches and carry the decisions out.
//!
//! - CloneSet: [`plan()`] takes a CloneSet, its pods, ControllerRevisions and PVCs and the time, and
//!   returns the [`Action`]s one reconcile should take and the status to write; the loop executes the
//!   actions in order and records them in its [`Expectations`] (OpenKruise's `pkg/controller/cloneset`; docs/cloneset-controller.md).
//! - [`pub_status`]: PodUnavailableBudget status (`pkg/controller/podunavailablebudget`).
//! - [`workload_spread`]: WorkloadSpread subset status, pod adoption, deletion cost and rescheduling
//!   (`pkg/controller/workloadspread`).
//!
//! Shared by the families: [`arithmetic`] (int-or-percent, on `kruise-core`'s rule), [`pods`],
//! [`rfc3339`]; label selectors are `kruise-core`'s.

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
pub mod pub_status;
pub mod refresh;
pub mod revision;
pub mod rfc3339;
pub mod scale;
pub mod scatter;
pub mod sidecarset;
pub mod status;
pub mod update;
pub mod workload_spread;

#[cfg(test)]
mod properties;
#[cfg(test)]
pub(crate) mod testing;

pub use action::Action;
pub use context::Options;
pub use expectations::Expectations;
pub use plan::{Input, Plan, PlanError, plan};
