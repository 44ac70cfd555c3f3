//! The Advanced DaemonSet planner (OpenKruise's `pkg/controller/daemonset`;
//! docs/advanced-daemonset.md): [`plan()`] takes a DaemonSet, the nodes, its pods and
//! ControllerRevisions and the time, and returns the [`Action`](crate::Action)s of one reconcile and the
//! status to write.
//!
//! Modules, in the order a pass uses them: [`revision`] (the current hash), [`nodes`] (the pods of each
//! node and whether the node should run one), [`pod`] (a new daemon pod), [`manage`] (creates and
//! deletes per node, partitioned creation, burst, the `preDelete` hook), [`rolling`] (the rolling
//! update), [`status`].

pub mod manage;
pub mod nodes;
pub mod plan;
pub mod pod;
pub mod revision;
pub mod rolling;
pub mod status;

pub use plan::{Input, Plan, PlanError, plan};

#[cfg(test)]
mod tests;
