//! The Advanced StatefulSet planner (OpenKruise's `pkg/controller/statefulset`;
//! docs/advanced-statefulset.md#controller): [`plan()`] takes a set, its pods, ControllerRevisions and
//! PVCs and the time, and returns the [`Action`](crate::Action)s of one reconcile and the status to
//! write.
//!
//! Modules, in the order a pass uses them: [`revision`] (current and update revisions), [`identity`]
//! (ordinals, names, new pods and claims, claim retention), [`context`] (what one pass knows),
//! [`refresh`] (in-place refresh and lifecycle moves, run every pass), [`scale`] (slots and condemned
//! pods), [`update`] (the rolling update), [`status`].

pub mod context;
pub mod identity;
pub mod plan;
pub mod refresh;
pub mod revision;
pub mod scale;
pub mod status;
pub mod update;

#[cfg(test)]
pub(crate) mod testing;

pub use plan::{Input, Plan, PlanError, plan};
