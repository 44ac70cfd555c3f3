//! Table tests of the planner, with OpenKruise's worked examples (docs/uniteddeployment.md).

mod adaptive;
mod allocation;
mod pass;
mod reservation;
mod stuck;
mod workload;
