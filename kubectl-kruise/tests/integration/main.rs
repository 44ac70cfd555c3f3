//! Integration tests of kubectl-kruise, driven through kubectl against the playground.
//!
//! One test binary (each former binary is a module): every binary links the whole
//! workspace, so one instead of dozens keeps the build's disk and link time small.

mod common;
mod plugin_create_get;
mod plugin_daemonset;
mod plugin_exec_expose;
mod plugin_explain;
mod plugin_kruise_rollout;
mod plugin_rollout;
mod plugin_set;
mod rollout_status_conflict;
