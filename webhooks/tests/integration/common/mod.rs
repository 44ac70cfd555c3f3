//! Shared helpers of the webhooks' integration tests, one module per webhook family: fixtures,
//! requests, views and patch application.

#![allow(dead_code)]

pub mod crd;
pub mod pod_mutate;
pub mod sidecarset;
