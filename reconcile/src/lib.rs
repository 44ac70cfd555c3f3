//! The pure decision core of the kruise-rs CloneSet controller.
//!
//! [`plan`] takes a CloneSet, its pods, ControllerRevisions and PVCs and the time, and returns the
//! [`Action`]s one reconcile should take and the status to write. No IO, no async, no Kubernetes client:
//! the controller loop lists from its caches, calls [`plan`], executes the actions in order and records
//! them in its [`Expectations`]. Behaviour follows OpenKruise's CloneSet controller (spec §B).

pub mod arithmetic;
pub mod pods;
pub mod revision;

#[cfg(test)]
pub(crate) mod testing;
