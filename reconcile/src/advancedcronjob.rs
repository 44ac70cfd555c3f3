//! The AdvancedCronJob planner (`pkg/controller/advancedcronjob`; docs/advancedcronjob.md): Jobs or
//! BroadcastJobs created on a cron schedule.
//!
//! [`plan`] takes the AdvancedCronJob, its children and the clock, and returns the children to create
//! and delete, the status, and when to look again. `lastScheduleTime` only moves forward: it is the
//! latest of the stored value, the newest child's scheduled time and the run created now, so a deleted
//! finished child never makes its run happen again (openkruise/kruise#792, #1488).

mod plan;

pub use kruise_core::cron::{Schedule, ScheduleError};
pub use plan::{Child, ChildKind, Input, NewChild, Plan, Step, plan};

#[cfg(test)]
mod tests;
