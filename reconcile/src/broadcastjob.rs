//! The BroadcastJob planner (`pkg/controller/broadcastjob`; docs/broadcastjob.md): one pod per
//! eligible node, run to completion, with parallelism, completion and failure policies.
//!
//! [`plan`] takes the job, its pods, the nodes, the clock and the loop's [`NodeExpectations`], and
//! returns the pod creates and deletes, the status to write, whether the job is to be deleted (TTL)
//! and when to look again. Counts are recomputed from the pods on every pass; a create the API
//! server refused is never counted.

mod expectations;
mod plan;
mod pod;

pub use expectations::NodeExpectations;
pub use plan::{Input, Plan, plan};
pub use pod::{assigned_node, new_pod};

#[cfg(test)]
mod tests;
