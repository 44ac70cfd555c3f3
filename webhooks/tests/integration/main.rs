//! Integration tests of the webhooks crate: fixtures, pipelines, properties and the module graph.
//!
//! One test binary (each former binary is a module): every binary links the whole
//! workspace, so one instead of dozens keeps the build's disk and link time small.

mod advancedcronjob;
mod broadcastjob;
mod common;
mod crd_fixtures;
mod crd_pipeline;
mod module_dag;
mod pod_mutate_fixtures;
mod pod_mutate_persistent_pod_state;
mod pod_mutate_pipeline;
mod pod_mutate_pod_probe_marker;
mod pod_mutate_properties;
mod pod_validate;
mod pod_validate_concurrency;
mod sidecarset;
mod sidecarset_index;
mod sidecarset_props;
mod workloadspread_replicas;
