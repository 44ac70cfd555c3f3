//! The UnitedDeployment planner (OpenKruise's `pkg/controller/uniteddeployment`;
//! docs/uniteddeployment.md): a UnitedDeployment and its subset workloads in → the replicas of each
//! subset ([`allocator`]), the workload each subset should run ([`workload`]), the writes that get
//! there and the status.

pub mod adaptive;
pub mod allocator;
pub mod claim;
pub mod plan;
pub mod reservation;
pub mod revision;
pub mod workload;

pub use allocator::{AllocError, Allocator, SubsetState, allocate};
pub use claim::{Claim, claim, claimed};
pub use plan::{Event, Input, Plan, SubsetWrite, failed, plan};
pub use reservation::PodLabel;
pub use revision::{RevisionWrite, Revisions, revision_data, revisions};
pub use workload::{
    Desired, WorkloadError, apply_subset_template, kind_of, name_prefix, set_max_unavailable,
};

#[cfg(test)]
mod tests;
