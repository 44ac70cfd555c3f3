//! `rollout status|history|undo|pause|resume|restart` for CloneSet, Advanced StatefulSet and Advanced
//! DaemonSet, `undo|pause|resume|approve` for Kruise Rollouts; built-in kinds are handed to kubectl's
//! own `rollout`.

pub mod approve;
pub mod history;
pub mod kruise_rollout;
pub mod pause;
pub mod status;
pub mod undo;
