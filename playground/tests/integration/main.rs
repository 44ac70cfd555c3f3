//! Integration tests of the playground: its API machinery, clients, kubectl and controllers.
//!
//! One test binary (each former binary is a module): every binary links the whole
//! workspace, so one instead of dozens keeps the build's disk and link time small.

mod admission;
mod api_machinery;
mod client_crud;
mod client_discovery;
mod client_lifecycle;
mod client_watch;
mod common;
mod controllers;
mod controllers_lifecycle;
mod data_plane;
mod kubectl;
mod kubectl_controllers;
mod kubectl_create;
mod kubectl_debug;
mod kubectl_fidelity;
mod restart;
mod speed;
mod webhooks;
