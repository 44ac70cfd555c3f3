//! The ImagePullJob planner (`pkg/controller/imagepulljob`; docs/image-pull.md): the job's image is
//! written as a tag into the spec of the NodeImages it targets (at most `parallelism` nodes pulling at
//! once), and the job's counts are read back from those NodeImages' status.
//!
//! [`plan`] takes the job, every NodeImage, the pods of the job's namespace (for `podSelector`), the
//! clock and a jitter, and returns the [`TagRequest`]s to write, the status, whether the TTL deletes the
//! job, and when to look again. A request is re-applied by the loop to a fresh copy of the NodeImage
//! ([`TagRequest::apply`]) on a write conflict.

mod plan;
mod request;
pub mod secrets;

pub use plan::{Input, Plan, plan, targets};
pub use request::{TagRequest, derived_pull_policy};

#[cfg(test)]
mod tests;
