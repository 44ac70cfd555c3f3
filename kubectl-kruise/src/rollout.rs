//! `rollout status|history|undo|pause|resume|restart` for CloneSet, Advanced StatefulSet and Advanced
//! DaemonSet; built-in kinds are handed to kubectl's own `rollout`.

pub mod history;
pub mod pause;
pub mod status;
pub mod undo;
