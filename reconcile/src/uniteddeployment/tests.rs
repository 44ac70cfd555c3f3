//! Table tests of the planner, with OpenKruise's worked examples (docs/uniteddeployment.md).

mod allocation;
mod pass;
mod workload;
