//! The CloneSet planner (OpenKruise's `pkg/controller/cloneset`; docs/cloneset-controller.md):
//! [`plan()`] takes a CloneSet, its pods, ControllerRevisions and PVCs and the time, and returns the
//! [`Action`](crate::Action)s one reconcile should take and the status to write; the loop executes the
//! actions in order and records them in its [`Expectations`](crate::Expectations).
//!
//! One module per step of `doReconcile`: [`revision`] (which revisions are current and update),
//! [`context`] (what one pass knows), [`arithmetic`] (how many pods to create, delete, update),
//! [`scale`], [`refresh`] and [`update`] (the pod writes, with [`pod_template`] for new pods and
//! PVCs), [`status`].

pub mod arithmetic;
pub mod context;
pub mod plan;
pub mod pod_template;
pub mod refresh;
pub mod revision;
pub mod scale;
pub mod status;
pub mod update;

#[cfg(test)]
mod properties;
#[cfg(test)]
pub(crate) mod testing;

pub use context::Options;
pub use plan::{Input, Plan, PlanError, plan};
